"""The ``ssemock`` command: serve (as a process), inspect, scenarios, and its error contract."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ssemock.cli import main
from ssemock.sse import decode

from .processes import reap


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline().strip()
    try:
        yield proc, first
    finally:
        reap(proc)


def test_serve_prints_its_url_first_and_streams_a_real_recording(
    serve_process: tuple[subprocess.Popen[str], str],
) -> None:
    proc, first = serve_process
    assert first.startswith("ssemock serving on http://127.0.0.1:")
    url = first.rsplit(" ", 1)[1]
    # What the README's curl example sends.
    with httpx.stream("POST", url + "/v1/chat/completions", json={
        "model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}],
    }) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
        body = r.read()
    real = (Path(__file__).parent / "data" / "realworld" / "openai-chat-finish-length-usage.sse.bin").read_bytes()
    assert body == real
    assert decode(body)[-1].data == "[DONE]"  # type: ignore[union-attr]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0


def test_serve_stops_cleanly_on_sigint(serve_process: tuple[subprocess.Popen[str], str]) -> None:
    proc, first = serve_process
    assert first.startswith("ssemock serving on ")
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(10) == 0
    assert proc.stderr is not None and "Traceback" not in proc.stderr.read()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["serve", "--cassettes", "/nonexistent/dir"], "/nonexistent/dir"),
        (["serve", "--scenario", "no-such-scenario"], "no-such-scenario"),
        (["serve", "--match-on", "method,color"], "color"),
        (["serve", "--port", "notaport"], "--port"),
        (["serve", "--port", "99999"], "0-65535"),
        (["serve", "--port", "-1"], "0-65535"),
        (["serve", "--timing-scale", "inf"], "finite number"),
        (["serve", "--timing-scale", "nan"], "finite number"),
        (["serve", "--match-on", "method,,path"], "--match-on"),
        (["serve", "--match-on", ""], "--match-on"),
        (["import", "vcr", "tests/data/realworld/gemini-streamgeneratecontent-crlf.vcr.yaml", "-o", "README.md"],
         "expected a directory"),
        (["inspect", "no-such-cassette"], "no-such-cassette"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_broken_cassette_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.yaml").write_text("ssemock_cassette: 1\ninteractions: [{response: {status: 99}}]\n")
    assert main(["serve", "--cassettes", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "bad.yaml") in err and "interactions[0].response.status" in err


def test_inspect_shows_events_chunks_and_provenance(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "openrouter-chat-keepalive-midstream-error", "--chunks"]) == 0
    out = capsys.readouterr().out
    assert "POST /api/v1/chat/completions -> 200" in out
    assert out.splitlines().count("    : OPENROUTER PROCESSING") == 17  # SOURCES.md: 17 comment events
    assert "source_repository: pydantic/pydantic-ai" in out and "licence: MIT" in out
    assert "timing: none" in out


def test_inspect_decodes_gzip_bodies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "anthropic-messages-tool-use-gzip"]) == 0
    out = capsys.readouterr().out
    assert "7 event(s)" in out and "message_stop:" in out
