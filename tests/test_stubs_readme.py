"""Every example of the README section "Fake provider without a recording" runs."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from ssemock import MockServer
from ssemock.cli import build_parser, main
from ssemock.stubs import parse_stubs

from .sessions import INI, preload_clients
from .test_readme import blocks, section

pytest_plugins = ["pytester"]
preload_clients()
SECTION = section("Fake provider without a recording")


def test_the_python_example_runs() -> None:
    code = blocks(SECTION, "python")[0]
    exec(compile(code, "README.md", "exec"), {})


def test_the_pytest_example_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_example=blocks(SECTION, "python")[1])
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=1)


def test_the_stub_file_serves_and_inspects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (text,) = blocks(SECTION, "yaml")
    stubs = parse_stubs(yaml.safe_load(text), "README.md")
    assert [s.name for s in stubs] == ["weather step 1", "weather step 2", "rate-limited", "hello"]
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        limited = httpx.post(server.url + "/v1/chat/completions", json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]})
        hello = httpx.post(server.url + "/v1/messages", json={
            "model": "claude", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}).json()
    assert limited.status_code == 429
    assert limited.json()["error"]["message"] == "Rate limit reached"
    assert [b["type"] for b in hello["content"]] == ["thinking", "text"]
    assert hello["content"][1]["text"] == "Hello there!" and hello["usage"]["output_tokens"] == 3
    (commands,) = blocks(SECTION, "sh")
    serve, inspect = (line.split("#")[0].split()[1:] for line in commands.strip().splitlines())
    assert build_parser().parse_args(serve).stubs == [Path("stubs/")]
    stub_dir = tmp_path / "stubs"
    stub_dir.mkdir()
    (stub_dir / "weather.yaml").write_text(text)
    assert main([str(tmp_path / a) if a.startswith("stubs/") else a for a in inspect]) == 0
    shown = capsys.readouterr().out
    assert "#0 POST /v1/messages -> 200 text/event-stream; charset=utf-8" in shown
    assert "#2 POST /v1/messages -> 429 application/json" in shown


def test_the_recording_example_writes_the_stub_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ssemock import Cassette
    from ssemock.sse import Event, decode

    code = blocks(SECTION, "python")[2]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    [interaction] = Cassette.load(tmp_path / "recorded" / "hello.yaml").interactions
    assert interaction.request.path == "/v1/messages"
    events = [e for e in decode(interaction.response.body) if isinstance(e, Event)]
    assert [e.type for e in events][:2] == ["message_start", "content_block_start"]
    import json

    deltas = [json.loads(e.data)["delta"] for e in events if e.type == "content_block_delta"]
    assert "".join(d["text"] for d in deltas) == "Hello!"
