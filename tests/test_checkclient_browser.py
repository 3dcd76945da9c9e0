"""``ssemock check-client`` with a browser's own ``EventSource``: examples/check-client/eventsource_browser_reader.mjs
in headless Chromium (Debian ``chromium``, driven by playwright-core), over bundled recordings whose stream
request is made a ``GET`` (EventSource sends nothing else; the bodies are the recorded bytes).

What is asserted comes from the recordings, decoded by ``ssemock.sse``, and from WHATWG HTML 9.2: every
event type reaches the adapter (EventSource dispatches a named event only to listeners of that name: the
adapter reads the dispatches from the DevTools protocol); an ``event: error`` block is a MessageEvent, not
the end; an event left unfinished at the end of the stream is discarded (``no-final-blank-line``: the last
event is lost, which an SSE-level reader accepts by design: ``N/A``); a status other than 200 and a
content type other than ``text/event-stream`` fail the connection (readyState CLOSED), with no retry. A
cut body (``cut-mid-event``, ``reset-mid-event``) gives the page what a clean end gives, an ``error`` event
with readyState CONNECTING (9.2.3: reestablished either way): only the browser's network log, which the
adapter reads, tells them apart (read by the page alone, both cases fail as "accepted the broken answer").
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ssemock import MockServer
from ssemock.cassette import Cassette, load, save
from ssemock.checkclient.cases import Case, Rule
from ssemock.checkclient.run import case_environment, case_url
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.sse import Event, decode

from .checkclients import EXAMPLES, case_verdicts, check_client
from .conftest import NODE_MODULES

CASSETTES = ("anthropic-messages-thinking", "openai-chat-finish-length-usage")
PRESETS = ("bom cr split-crlf-multiline meta-blocks error-mid-stream no-final-blank-line cut-mid-event "
           "reset-mid-event wrong-content-type http-429 stall")
NOT_JUDGED = {"error-mid-stream", "no-final-blank-line"}  # the stream ends cleanly: not an SSE-level reader's to judge


def get_recordings(directory: Path) -> Path:
    """The bundled ``CASSETTES`` with their stream request (the first interaction) made a ``GET`` without a
    body, written into ``directory`` as ``NAME-get``."""
    directory.mkdir()
    for name in CASSETTES:
        bundled = collect_cassettes(None)[name]
        first = bundled.interactions[0]
        request = dataclasses.replace(first.request, method="GET", body=None, headers=[])
        get = Cassette(f"{name}-get", [dataclasses.replace(first, request=request)], dict(bundled.provenance))
        save(get, directory / f"{name}-get.yaml")
    return directory


def recorded(name: str) -> list[dict[str, str]]:
    """The events a WHATWG parser dispatches from the bundled recording's stream, as the adapter prints them."""
    body = collect_cassettes(None)[name].interactions[0].response.body
    return [{"type": e.type, "data": e.data, "id": e.last_event_id} for e in decode(body) if isinstance(e, Event)]


def adapter(tmp_path: Path) -> Path:
    """The adapter copied into ``tmp_path`` beside tests/node's ``node_modules`` (playwright-core)."""
    copy = tmp_path / "eventsource_browser_reader.mjs"
    copy.write_bytes((EXAMPLES / copy.name).read_bytes())
    (tmp_path / "node_modules").symlink_to(NODE_MODULES)
    return copy


def browser_run(command: list[str], cassette: Path, scenario: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """``command`` run once as check-client runs it, against ``cassette`` (under ``scenario``) served by a real
    replay server on 127.0.0.1; its exit status and the events it printed."""
    loaded = load(cassette)
    preset = collect_scenarios(None)[scenario] if scenario else None
    with MockServer([loaded], scenarios=[preset] if preset else [], timing_scale=0) as server:
        case = Case(loaded.name, preset, Rule.APPLICATION if preset else Rule.CLEAN)
        env = {**os.environ, **case_environment(case_url(server.url, case), case, loaded, None)}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert not done.stdout or done.stdout.endswith("\n"), done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def test_browser_eventsource_prints_every_event_of_every_type(tmp_path, node, chromium) -> None:
    command = [node, str(adapter(tmp_path)), "5"]
    directory = get_recordings(tmp_path / "get")
    for name in CASSETTES:
        assert browser_run(command, directory / f"{name}-get.yaml") == (0, recorded(name)), name
    types = {e["type"] for e in recorded("anthropic-messages-thinking")}
    assert {"message_start", "content_block_delta", "message_stop"} <= types and "message" not in types
    # WHATWG 9.2.6: at the end of the stream, an event without its blank line is not dispatched
    anthropic = directory / "anthropic-messages-thinking-get.yaml"
    assert browser_run(command, anthropic, "no-final-blank-line") == (0, recorded("anthropic-messages-thinking")[:-1])
    # Anthropic's error event (Messages streaming docs: event: error) is a MessageEvent of type "error"
    status, events = browser_run(command, anthropic, "error-mid-stream")
    assert status == 0 and events[:2] == recorded("anthropic-messages-thinking")[:2]
    assert events[-1]["type"] == "error" and json.loads(events[-1]["data"])["type"] == "error"


def test_browser_eventsource_grades(tmp_path, node, chromium) -> None:
    directory = get_recordings(tmp_path / "get")
    options = [arg for name in CASSETTES for arg in ("--cassette", f"{name}-get")]
    done, report = check_client(
        tmp_path, "--cassettes", str(directory), *options, "--scenario", PRESETS.replace(" ", ","),
        "--client-timeout", "1.5", "--shrink-budget", "0", command=[node, str(adapter(tmp_path)), "1.5"],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    cases = ["clean", *(name.replace("stall", "stall-4s") for name in PRESETS.split())]  # outlasts 1.5 s
    assert case_verdicts(report) == {
        (f"{cassette}-get", name): "n/a" if name in NOT_JUDGED else "pass" for cassette in CASSETTES for name in cases
    }
    reasons = {c["scenario"]: c["reason"] for c in report["cases"] if c["cassette"] == f"{CASSETTES[0]}-get"}
    assert reasons["http-429"] == "reported (exit status 1)"  # the connection failed: no retry
