"""The ``ssemock`` command: serve (as a process), inspect, scenarios, and its error contract."""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ssemock.argtypes import body_path, matcher_names, scenario_list
from ssemock.cli import build_parser, main
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
        (["serve", "--scenario", "crlf,"], "--scenario"),
        (["record", "--match-on", "method,,path"], "--match-on"),
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


NAME_TYPES = (str, Path, matcher_names, scenario_list, body_path)  # the option types that read no number


def number_options() -> list[tuple[str, ...]]:
    """Every option of every command whose value is a number: (command words…, option)."""
    found: list[tuple[str, ...]] = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*words, name))
            elif action.type is not None and action.option_strings and action.type not in NAME_TYPES:
                found.append((*words, action.option_strings[-1]))

    walk(build_parser(), ())
    return found


NUMBER_OPTIONS = number_options()


def test_the_number_options_are_all_found_and_none_reads_its_text_with_int_or_float() -> None:
    parser = build_parser()
    for words in NUMBER_OPTIONS:
        *command, option = words
        sub = parser
        for word in command:
            sub = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
        action = next(a for a in sub._actions if option in a.option_strings)
        assert action.type not in (int, float), words
    assert {("serve", "--workers"), ("serve", "--port"), ("serve", "--seed"), ("serve", "--backlog"),
            ("record", "--port"), ("record", "--read-timeout"), ("check", "--max-size"),
            ("diff", "--tolerance"), ("inspect", "--interaction")} <= set(NUMBER_OPTIONS)


@pytest.mark.parametrize("text", [" 2", "+2", "2 ", "\u0662", "1_0", "\uff12", "0x10", ""])
@pytest.mark.parametrize("words", NUMBER_OPTIONS, ids=" ".join)
def test_a_number_option_takes_ascii_digits_only(
    words: tuple[str, ...], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Python's int() and float() take spaces, '+', '_' and the digits of any script ('\u0662' is 2): the
    options do not, and say which option and what it expected."""
    *command, option = words
    with pytest.raises(SystemExit) as exc:
        build_parser(command[0]).parse_args([*command, option, text])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and re.search(rf"argument (-\w/)?{option}: expected ", err) and repr(text) in err


@pytest.mark.parametrize(
    ("option", "text", "value"),
    [("--workers", "2", 2), ("--workers", "256", 256), ("--port", "0", 0), ("--port", "65535", 65535),
     ("--seed", "-3", -3), ("--seed", "0", 0), ("--timing-scale", "0.5", 0.5), ("--timing-scale", "1e-3", 0.001),
     ("--timing-scale", ".5", 0.5), ("--timing-scale", "2.", 2.0), ("--grace", "0", 0.0),
     ("--header-timeout", "1.5", 1.5), ("--backlog", "128", 128), ("--max-json-depth", "0", 0)],
)
def test_a_number_option_keeps_its_valid_values(option: str, text: str, value: float) -> None:
    args = build_parser("serve").parse_args(["serve", option, text])
    assert getattr(args, option[2:].replace("-", "_")) == value


def test_workers_auto_and_its_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser("serve").parse_args(["serve", "--workers", "auto"]).workers == min(256, len(
        os.sched_getaffinity(0)))
    with pytest.raises(SystemExit):
        build_parser("serve").parse_args(["serve", "--workers", "257"])
    assert "argument --workers: expected a number of processes 1-256 or 'auto', got '257'" in capsys.readouterr().err


def test_name_lists_are_read_once_into_tuples() -> None:
    """``--scenario`` and ``--match-on`` are comma-separated on the command line and tuples past it."""
    args = build_parser("serve").parse_args(["serve", "--scenario", "crlf, keepalive", "--match-on", "method,path"])
    assert (args.scenario, args.match_on) == (("crlf", "keepalive"), ("method", "path"))
    assert build_parser("serve").parse_args(["serve"]).match_on == ("method", "path", "body")
    assert build_parser("record").parse_args(["record"]).match_on == ("method", "path", "body")


def test_the_logs_go_to_stderr_as_it_is_at_each_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line's log handler follows ``sys.stderr``: a stream swapped in (by a test runner's capture)
    and closed since is never written to, so a server thread logging later writes to the current one."""
    import io
    import logging

    from ssemock import MockServer
    from ssemock.edge.logs import configure_logging

    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging(quiet=False)
    first.close()
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    with MockServer(scenarios=[]) as server:  # its thread logs one access line per request
        httpx.get(server.url + "/_ssemock/health")
    for name in ("ssemock", "asyncio"):  # as before the test: no handler of the command line's
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True
    text = second.getvalue()
    assert "Logging error" not in text  # logging's own report of a write to a closed stream
    assert re.search(r"^\d\d:\d\d:\d\d GET /_ssemock/health -> 200 ", text, re.M), text
