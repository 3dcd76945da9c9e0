"""Shrinking a failed case down to the chunk boundaries it hinges on, on real runs of a client process: a
reader that splits each read into lines on its own fails only where a read ends between a CR and its LF
after a field line that another field line follows (the event type is lost)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

import yaml

from ssemock.bundled import bundled_scenarios
from ssemock.cassette import Cassette, load
from ssemock.checkclient.chunking import as_offsets, chunk_starts
from ssemock.checkclient.reference import sent_plan, stream_interaction
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.plan import Plan
from ssemock.scenario import Scenario
from ssemock.scenario.base import Step
from ssemock.scenario.chunk_steps import Fragment

from .checkclients import ROOT, check_client

CASSETTE = "anthropic-messages-thinking"

# http.client's read1 returns one read of the stream (at most one HTTP chunk). The bug: each read is split
# into lines on its own, so a CR that ends a read ends its line and the LF that starts the next read is
# taken for an empty line, which dispatches the event (WHATWG: a CR LF is one line end, even split).
SPLIT_READS = """
import http.client, json, os, re, sys, urllib.parse
url = urllib.parse.urlsplit(os.environ["SSEMOCK_STREAM_URL"])
body_file = os.environ.get("SSEMOCK_BODY_FILE")
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
connection.request(os.environ["SSEMOCK_METHOD"], url.path + (f"?{url.query}" if url.query else ""),
                   body=open(body_file, "rb").read() if body_file else None,
                   headers={"Accept": "text/event-stream", "Content-Type": "application/json"})
response = connection.getresponse()
if response.status != 200:
    sys.exit(f"HTTP {response.status}")
kind, data, last_id, rest = "", [], "", b""
while read := response.read1(65536):
    *lines, rest = re.split(rb"\\r\\n|\\r|\\n", rest + read)
    for line in (text.decode() for text in lines):
        if not line:
            if data:
                print(json.dumps({"type": kind or "message", "data": "\\n".join(data), "id": last_id}))
            kind, data = "", []
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            kind = value
        elif name == "data":
            data.append(value)
        elif name == "id" and "\\0" not in value:
            last_id = value
"""


def test_a_fragmentation_failure_is_shrunk_to_the_chunk_boundary_it_hinges_on(tmp_path) -> None:
    client = tmp_path / "split_reads.py"
    client.write_text(SPLIT_READS)
    page = tmp_path / "report.html"
    started = time.monotonic()
    done, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--scenario", "split-crlf", "--html", str(page),
        command=[sys.executable, str(client)],
    )
    seconds = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    (case,) = [c for c in report["cases"] if c["verdict"] == "fail"]
    assert case["reason"] == "event 1 of 118: type 'message', expected 'message_start'"
    # The recording: its first line is the first event's `event:` line, and a `data:` line follows it.
    cassette = load(ROOT / "cassettes" / f"{CASSETTE}.yaml")
    index = stream_interaction(cassette)
    assert index is not None
    body = cassette.interactions[index].response.body
    first_lf = body.index(b"\n")
    assert body.startswith(b"event: message_start\n") and body[first_lf + 1 :].startswith(b"data: ")
    # split-crlf writes CR LF for each LF (no LF before the first), then cuts between each CR and LF
    offset, made = first_lf + 1, body.count(b"\n")
    head, *steps, context = case["shrunk"].splitlines()
    match = re.fullmatch(r"shrunk to 2 step\(s\) \((\d+) runs, 1 of (\d+) chunk boundaries\):", head)
    assert match and int(match[2]) == made, head
    assert yaml.safe_load("\n".join(steps)) == [
        {"line-endings": {"blank": None, "by_field": {}, "eol": "crlf"}},
        {"fragment": {"mode": "offsets", "offsets": [offset]}},
    ]
    # 12 bytes each side of the boundary, escaped, the boundary marked
    assert context == f"# offset {offset}: ...ssage_start\\r|\\ndata: {{\"typ..."
    print(f"shrunk in {seconds:.1f} s for the whole run, {match[1]} runs, {made} boundaries made")
    shrunk = re.search(r'<pre class="shrunk">(.*?)</pre>', page.read_text(), re.S)
    assert shrunk is not None
    shrunk_file = tmp_path / "shrunk.yaml"
    shrunk_file.write_text(html.unescape(shrunk[1]))
    assert yaml.safe_load(shrunk_file.read_text())["steps"][1] == {"fragment": {"mode": "offsets", "offsets": [offset]}}
    checked = subprocess.run(
        [sys.executable, "-m", "ssemock", "scenarios", "check", str(shrunk_file)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_shrinking_says_when_its_budget_ran_out(tmp_path) -> None:
    client = tmp_path / "split_reads.py"
    client.write_text(SPLIT_READS)
    _, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--scenario", "split-crlf", "--shrink-budget", "0.001",
        command=[sys.executable, str(client)],
    )
    (case,) = [c for c in report["cases"] if c["verdict"] == "fail"]
    head, *steps = case["shrunk"].splitlines()
    assert re.fullmatch(r"shrunk to 2 step\(s\) \([01] runs, stopped early: the budget ran out\):", head), head
    assert [next(iter(yaml.safe_load(s)[0])) for s in steps] == ["line-endings", "fragment"]


def test_each_fragmenting_preset_as_one_offsets_step_sends_the_same_chunks() -> None:
    presets = {n: s for n, s in collect_scenarios([bundled_scenarios()]).items()
               if any(isinstance(step, Fragment) for step in s.steps)}
    assert {"split-crlf", "split-bytes", "split-random", "proxy-rechunk", "buffer-4k", "torture"} <= set(presets)
    shrinkable = 0
    for cassette in collect_cassettes(None).values():
        index = stream_interaction(cassette)
        if index is None:
            continue
        for name, preset in presets.items():
            plan_of = _plan_of(cassette, index, preset)
            offsets = as_offsets(preset.steps, plan_of)
            modes = {step.mode for step in preset.steps if isinstance(step, Fragment)}
            if "buffer" in modes:  # drops the recorded boundaries: no offsets step makes the same chunks
                assert offsets is None, name
                continue
            if offsets is None:
                continue
            shrinkable += 1
            sent, made = plan_of(preset.steps), plan_of(offsets.steps)
            assert [(c.t, c.data) for c in made.response.chunks] == [(c.t, c.data) for c in sent.response.chunks]
            assert sum(isinstance(step, Fragment) for step in offsets.steps) == 1
            if name == "split-crlf":  # a boundary between each CR and its LF of the body sent
                body = sent.response.body
                crlf = {m.start() + 1 for m in re.finditer(rb"\r\n", body)}
                unfragmented = plan_of([step for step in preset.steps if not isinstance(step, Fragment)])
                assert set(offsets.offsets) == crlf - chunk_starts(unfragmented)
    assert shrinkable >= 50


def _plan_of(cassette: Cassette, index: int, preset: Scenario) -> Callable[[Sequence[Step]], Plan]:
    """The plan the server sends for interaction ``index`` of ``cassette`` under some steps."""
    return lambda steps: sent_plan(cassette, index, Scenario(preset.name, list(steps), preserves=preset.preserves))
