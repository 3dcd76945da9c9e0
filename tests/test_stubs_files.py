"""Stub files: YAML with named errors and bounds, ``MockServer(stubs=...)``, ``serve --stubs``,
``inspect`` of a stub file, timing, and the journal of a stubbed answer."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ssemock import MockServer
from ssemock.cli import main
from ssemock.errors import StubError
from ssemock.sse import Event, decode
from ssemock.stubs import Timing, load_stubs, on, reply

from .processes import reap

WEATHER = """\
ssemock_stubs: 1
stubs:
  - name: weather
    match: {contains: weather}
    steps:
      - tool_calls: [{name: get_weather, arguments: {city: Paris}}]
      - text: Sunny in Paris.
  - name: hello
    match: {provider: anthropic}
    reply: {text: "Hello there!", usage: {input_tokens: 4, output_tokens: 3}}
"""
CHAT = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "weather in Paris?"}]}


def chat_payloads(body: bytes) -> list[object]:
    import json

    return [json.loads(e.data) for e in decode(body) if isinstance(e, Event) and e.data != "[DONE]"]


@pytest.fixture
def stub_dir(tmp_path: Path) -> Path:
    (tmp_path / "weather.yaml").write_text(WEATHER)
    return tmp_path


def test_a_stub_file_answers_a_tool_loop_and_the_journal_names_the_stub(stub_dir: Path) -> None:
    with MockServer(cassettes=[], stubs=stub_dir, timing_scale=0) as server:
        first = httpx.post(server.url + "/v1/chat/completions", json=CHAT)
        calls = [c["delta"]["tool_calls"][0] for p in chat_payloads(first.content) for c in p["choices"]  # type: ignore[index]
                 if c["delta"].get("tool_calls")]
        assert calls[0]["function"]["name"] == "get_weather"
        assert "".join(c["function"]["arguments"] for c in calls) == '{"city":"Paris"}'
        follow = {**CHAT, "messages": [*CHAT["messages"],  # type: ignore[list-item]
                                       {"role": "assistant", "tool_calls": [{"id": calls[0]["id"], "type": "function",
                                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
                                       {"role": "tool", "tool_call_id": calls[0]["id"], "content": "sunny"}]}
        second = httpx.post(server.url + "/v1/chat/completions", json=follow)
        text = "".join(c["delta"].get("content") or "" for p in chat_payloads(second.content)
                       for c in p["choices"])  # type: ignore[index]
        assert text == "Sunny in Paris."
        journal = server.requests
    assert [e["stub"] for e in journal] == ["weather step 1", "weather step 2"]
    assert [e["outcome"] for e in journal] == ["complete", "complete"]


def test_provider_condition_and_usage(stub_dir: Path) -> None:
    with MockServer(cassettes=[], stubs=[stub_dir], timing_scale=0) as server:
        answer = httpx.post(server.url + "/v1/messages", json={
            "model": "claude", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}).json()
        refused = httpx.post(server.url + "/v1/chat/completions", json={**CHAT, "messages": [
            {"role": "user", "content": "hi"}]})
    assert answer["content"] == [{"type": "text", "text": "Hello there!"}]
    assert (answer["usage"]["input_tokens"], answer["usage"]["output_tokens"]) == (4, 3)
    closest = refused.json()["error"]["closest_stub"]  # one difference each: the first stub in order
    assert closest == {"stub": "weather step 1", "match": "contains='weather', step=0",
                       "differences": ["last user message 'hi' does not contain 'weather'"]}


@pytest.mark.parametrize(("text", "field", "expected"), [
    ("stubs: []\n", "ssemock_stubs", "a stub file starting with `ssemock_stubs: 1`"),
    ("ssemock_stubs: 1\nstubs: [{reply: {txt: hi}}]\n", "stubs[0].reply.txt", "one of the keys text,"),
    ("ssemock_stubs: 1\nstubs: [{match: {turn: 0}, reply: {text: a}}]\n", "stubs[0].match.turn", "an integer >= 1"),
    ("ssemock_stubs: 1\nstubs: [{match: {regex: '('}, reply: {text: a}}]\n", "stubs[0].match.regex",
     "a regular expression RE2"),
    ("ssemock_stubs: 1\nstubs: [{reply: {error: {status: 200}}}]\n", "stubs[0].reply.error.status",
     "an HTTP error status from 400 to 599"),
    ("ssemock_stubs: 1\nstubs: [{reply: {text: a}, timing: {jitter: 2}}]\n", "stubs[0].timing.jitter",
     "a number from 0 to 1"),
    ("ssemock_stubs: 1\nstubs: [{reply: {finish_reason: done}}]\n", "stubs[0].reply.finish_reason", "one of stop,"),
    ("ssemock_stubs: 1\nstubs: [{reply: {tool_calls: [{name: ''}]}}]\n", "stubs[0].reply.tool_calls[0].name",
     "a non-empty string"),
    ("ssemock_stubs: 1\nstubs: [{reply: {text: a}, steps: []}]\n", "stubs[0]", "exactly one of `reply` or `steps`"),
    ("ssemock_stubs: 1\nstubs: [{reply: {text: a}}\n", "line 3, column 1", "valid YAML"),
])
def test_a_bad_stub_file_is_refused_naming_the_file_and_field(
    tmp_path: Path, text: str, field: str, expected: str,
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(StubError) as caught:
        load_stubs(bad)
    assert str(caught.value).startswith(f"{bad}: {field}: expected {expected}" if field else f"{bad}: expected")
    assert caught.value.field.endswith(field)


def test_bounds(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("ssemock_stubs: 1\n#" + "x" * (1024 * 1024))
    with pytest.raises(StubError, match=r"expected a file of at most 1048576 \(1 MiB\) bytes"):
        load_stubs(big)
    with pytest.raises(StubError, match="text: expected a string of at most 1048576 characters"):
        reply("x" * (1024 * 1024 + 1))
    with pytest.raises(StubError, match=r"match\.regex: expected a string of at most 1000 characters"):
        on(regex="a" * 1001)


def test_timing_first_token_rate_and_seeded_jitter() -> None:
    stub = reply("one two three four five", timing=Timing(first_token=0.2, tokens_per_second=50, jitter=0.5))
    with MockServer(cassettes=[], stubs=stub, seed=3) as server:
        start = time.monotonic()  # before the request: no chunk is due before start + 0.2 s
        with httpx.stream("POST", server.url + "/v1/chat/completions", json=CHAT) as response:
            arrivals = [time.monotonic() - start for _ in response.iter_raw()]
    # The role chunk and the first token come together at 0.2 s; then 4 more tokens, each ~20 ms * (1 ± 0.5).
    assert arrivals[0] >= 0.2
    assert arrivals[-1] >= 0.2 + 4 * 0.01
    from ssemock.cassette import Request
    from ssemock.stubs import read_conversation, synthesize

    conv = read_conversation(Request("POST", "/v1/chat/completions", body=b'{"model":"m","stream":true}'))
    assert conv is not None
    times = [[c.t for c in synthesize(stub, conv, seed=s).chunks] for s in (3, 3, 4)]
    assert times[0] == times[1] != times[2]  # seeded
    gaps = [b - a for a, b in zip(times[0][1:], times[0][2:-2])]
    assert times[0][:2] == [0.2, 0.2] and all(0.01 <= g <= 0.03 for g in gaps), gaps


def test_serve_stubs_and_inspect(stub_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--stubs", str(stub_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[1]
        response = httpx.post(url + "/v1/chat/completions", json=CHAT)
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert chat_payloads(response.content)[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == \
            "get_weather"  # type: ignore[index]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        log = proc.stderr.read()
        assert "2 stub(s) (3 steps in all), tried first" in log  # weather's two steps, hello
        assert "POST /v1/chat/completions -> 200 complete" in log and "; stub weather step 1; from 127.0.0.1" in log
    finally:
        reap(proc)
    assert main(["inspect", str(stub_dir / "weather.yaml"), "--provider", "openai-responses"]) == 0
    shown = capsys.readouterr().out
    assert "#0 POST /v1/responses -> 200 text/event-stream; charset=utf-8" in shown
    assert "response.function_call_arguments.delta" in shown and "response.output_text.delta" in shown
    assert main(["inspect", str(stub_dir / "weather.yaml"), "--provider", "nope"]) == 2
    assert "expected one of openai-chat" in capsys.readouterr().err
    assert main(["inspect", str(stub_dir)]) == 0  # a directory of stub files, as serve --stubs reads it
    assert f"cassette {stub_dir}: " in capsys.readouterr().out
    bad = stub_dir / "bad.yaml"
    bad.write_text("ssemock_stubs: 1\nstubs: [{reply: {usage: {input_tokens: -1}}}]\n")
    assert main(["inspect", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"ssemock: error: inspect: {bad}: stubs[0].reply.usage.input_tokens: ")


def test_record_stubs_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ssemock_stubs: 2\n")
    record = ["record", "--cassettes", str(tmp_path / "out"), "--port", "0"]
    assert main([*record, "--stubs", str(bad)]) == 2
    assert capsys.readouterr().err == (f"ssemock: error: {bad}: ssemock_stubs: expected a stub file starting with "
                                       "`ssemock_stubs: 1`\n")
    assert main([*record, "--stubs", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: expected an existing stub file or directory" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main([*record, "--stubs", str(bad), "--target", "http://127.0.0.1:9"])
    assert exited.value.code == 2
    assert "argument --target: not allowed with argument --stubs" in capsys.readouterr().err
    monkeypatch.delenv("SSEMOCK_TARGET", raising=False)
    assert main(["record"]) == 2
    assert "record needs --target URL, --stubs PATH or the SSEMOCK_TARGET environment variable" in (
        capsys.readouterr().err)
    assert not (tmp_path / "out").exists()
