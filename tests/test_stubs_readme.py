"""What the examples of docs/how-to/stubs.md promise beyond running (Sybil runs them: tests/docs_examples.py):
the stub file's answers, ``inspect`` of it, and ``ssemock record --stubs`` as the page shows it."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from ssemock import MockServer
from ssemock.cli import build_parser, main
from ssemock.stubs import parse_stubs

from .docs_examples import page_blocks
from .processes import reap

PAGE = "docs/how-to/stubs.md"


def test_the_stub_file_serves_and_inspects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (text,) = page_blocks(PAGE, "yaml")
    stubs = parse_stubs(yaml.safe_load(text), PAGE)
    assert [s.name for s in stubs] == ["weather step 1", "weather step 2", "rate-limited", "hello"]
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        limited = httpx.post(server.url + "/v1/chat/completions", json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]})
        hello = httpx.post(server.url + "/v1/messages", json={
            "model": "claude", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}).json()
        gemini = httpx.post(server.url + "/v1beta/models/gemini-2.5-flash:generateContent", json={
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).json()
    assert limited.status_code == 429
    assert limited.json()["error"]["message"] == "Rate limit reached"
    assert [b["type"] for b in hello["content"]] == ["thinking", "text"]
    # "Hello there!" is 3 token-like pieces ("Hello", " there", "!"), the reasoning "A greeting." 3 more:
    # output_tokens 6 counts both; Gemini splits them into candidates and thoughts.
    assert hello["content"][1]["text"] == "Hello there!" and hello["usage"]["output_tokens"] == 6
    assert gemini["usageMetadata"]["candidatesTokenCount"] == 3 and gemini["usageMetadata"]["thoughtsTokenCount"] == 3
    commands = page_blocks(PAGE, "sh")[0]
    serve, inspect = (line.split("#")[0].split()[1:] for line in commands.strip().splitlines())
    assert build_parser().parse_args(serve).stubs == [Path("stubs/")]
    stub_dir = tmp_path / "stubs"
    stub_dir.mkdir()
    (stub_dir / "weather.yaml").write_text(text)
    assert main([str(tmp_path / a) if a.startswith("stubs/") else a for a in inspect]) == 0
    shown = capsys.readouterr().out
    assert "#0 POST /v1/messages -> 200 text/event-stream; charset=utf-8" in shown
    assert "#2 POST /v1/messages -> 429 application/json" in shown


def _events(body: bytes) -> list[tuple[str, str]]:
    from ssemock.sse import Event, decode

    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def _ssemock(*argv: str) -> tuple[subprocess.Popen[str], str]:
    """``python -m ssemock ARGV`` started, and the URL its first stdout line names."""
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    assert first.startswith("ssemock "), (first, proc.stderr.read() if proc.poll() is not None else "")
    return proc, first


def test_record_stubs_writes_each_stub_hit_as_a_cassette_that_replays_the_same_events(tmp_path: Path) -> None:
    import anthropic

    from ssemock.cassette import load

    (text,) = page_blocks(PAGE, "yaml")
    record, send, _ = page_blocks(PAGE, "sh")[1].strip().splitlines()
    argv = shlex.split(record.split("#")[0])[1:]
    assert argv == ["record", "--stubs", "stubs/", "--cassettes", "review", "--cassette", "hello"]
    (tmp_path / "stubs").mkdir()
    (tmp_path / "stubs" / "weather.yaml").write_text(text)
    review = tmp_path / "review"
    banner = record.split("#")[1].strip()  # the first line, as the page shows it: the paths as typed
    assert banner.split(" -> ")[1] == "stubs stubs/"
    argv = [f"{tmp_path}/{a}" if a in ("stubs/", "review") else a for a in argv]
    curl = shlex.split(send)
    path = curl[curl.index("-sN") + 1].removeprefix("http://127.0.0.1:8080")
    body = json.loads(curl[curl.index("-d") + 1])
    key = "sk-ant-api03-" + "k" * 40  # a credential the recording must not keep

    proc, first = _ssemock(*argv, "--port", "0")
    try:
        assert first.endswith(f" -> stubs {tmp_path}/stubs/")
        url = first.split()[3]
        with httpx.Client(timeout=30) as client:
            sent = client.post(url + path, json=body, headers={"x-api-key": key})
        assert sent.status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert proc.stderr is not None
        log = proc.stderr.read()
    finally:
        reap(proc)
    assert "stub hello" in log and "1 recorded" in log
    # the hello stub's answer (the page's stub file): its thinking, then its text
    events = _events(sent.content)
    deltas = [json.loads(data)["delta"] for kind, data in events if kind == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas) == "A greeting."
    assert "".join(d.get("text", "") for d in deltas) == "Hello there!"

    assert sorted(p.name for p in review.iterdir()) == ["hello.yaml"]  # written whole, no temporary left
    saved = (review / "hello.yaml").read_text()
    assert key not in saved
    cassette = load(review / "hello.yaml")
    assert cassette.provenance["target"] == f"stubs {tmp_path}/stubs/"  # as typed, like the first line
    [interaction] = cassette.interactions
    assert interaction.request.path == path

    proc, first = _ssemock("serve", "--cassettes", str(review), "--port", "0", "--timing-scale", "0")
    try:
        url = first.split()[-1]
        with httpx.Client(timeout=30) as client:
            replayed = client.post(url + path, json=body, headers={"x-api-key": key})
        with anthropic.Anthropic(base_url=url, api_key=key, max_retries=0) as sdk, \
                sdk.messages.stream(model=body["model"], max_tokens=body["max_tokens"],
                                    messages=body["messages"]) as stream:
            message = stream.get_final_message()
    finally:
        reap(proc)
    assert _events(replayed.content) == events
    assert [block.type for block in message.content] == ["thinking", "text"]
    assert message.content[1].text == "Hello there!"  # type: ignore[union-attr]
