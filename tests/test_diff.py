"""``ssemock diff A B``: a bundled recording against re-recordings made by ssemock's recorder
(a real reverse proxy, read with httpx) in front of the replay server, some under scenarios that
change known events or inject a known stall: the differences to find are the ones injected."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssemock import Cassette, MockServer, Recorder, Scenario
from ssemock.cassette import Chunk, Interaction, Request, Response
from ssemock.cli import main
from ssemock.diff import diff_cassettes
from ssemock.mockserver import collect_cassettes
from ssemock.sse import encode

from .docs_examples import ROOT, page_blocks

CHAT = "openai-chat-finish-length-usage"
SSE = [("content-type", "text/event-stream")]


def rerecord(tmp_path: Path, name: str, steps: list[object] | None = None) -> Path:
    """Record the bundled chat stream again through the recorder, replayed under ``steps``."""
    original = collect_cassettes(None)[CHAT].interactions[0].request
    scenarios = [Scenario.from_dict({"ssemock_scenario": 1, "steps": steps}, name="changes")] if steps else []
    with MockServer([collect_cassettes(None)[CHAT]], scenarios=scenarios, scenario="changes" if steps else None,
                    timing_scale=1) as server, \
            Recorder(server.url, tmp_path, cassette=name) as recorder:
        answer = httpx.post(recorder.url + original.path, content=original.body,
                            headers={"content-type": "application/json"}, timeout=60)
        assert answer.status_code == 200
    return tmp_path / f"{name}.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    try:
        status = main(["diff", *argv])
    except SystemExit as exc:  # argparse's own errors
        status = int(exc.code or 0)
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err


def test_a_faithful_rerecording_is_equal_and_injected_changes_are_listed_event_by_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = rerecord(tmp_path, "same")
    assert run(capsys, CHAT, str(same), "--no-timing") == (0, ["equal: 1 interaction(s), 5 event(s)"], "")
    changed = rerecord(tmp_path, "changed", [
        {"drop": {"where": {"index": 2}}},
        {"edit": {"where": {"index": 1}, "set": {"choices[0].finish_reason": "stop"}}},
    ])
    status, lines, _ = run(capsys, CHAT, str(changed), "--no-timing")
    where = "#0 POST /v1/chat/completions: "
    assert status == 1
    assert lines[:-1] == [
        where + 'event 1: choices[0].finish_reason: "stop" != recorded null',
        where + "event 2: only in A: message '{\"id\":\"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh\",\"object\":"
                "\"chat.completion.chunk\"…'",
    ]
    assert lines[-1] == f"2 difference(s) between A ({CHAT}) and B ({changed})"
    # the ignored key hides the edit; the dropped event stays
    status, lines, _ = run(capsys, CHAT, str(changed), "--no-timing", "--ignore", "finish_reason")
    assert status == 1 and len(lines) == 2 and "event 2: only in A" in lines[0]


def test_timing_differences_beyond_the_tolerance_are_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = rerecord(tmp_path, "plain")
    stalled = rerecord(tmp_path, "stalled", [{"timing": {"mode": "fixed", "interval": 0.05}},
                                             {"stall": {"after_events": 2, "seconds": 2}}])
    timed = rerecord(tmp_path, "timed", [{"timing": {"mode": "fixed", "interval": 0.05}}])
    status, lines, _ = run(capsys, str(timed), str(stalled))
    assert status == 1
    late = [line for line in lines if " s in B (+" in line]
    # events 2, 3, 4 and the end come at least 2 s later (a busy machine only adds to it)
    assert [line.split(": ")[1].split(" at ")[0] for line in late] == ["event 2", "event 3", "event 4", "end"]
    assert all(float(line.rsplit("(+", 1)[1].split(" s)")[0]) >= 1.9 for line in late)
    assert run(capsys, str(timed), str(stalled), "--tolerance", "30")[0] == 0
    # untimed A (imported from raw bodies) against a timed re-recording: only the events count
    assert run(capsys, CHAT, str(plain))[0] == 0


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("ssemock_cassette: 9\n", encoding="utf-8")
    for argv in (("nope", CHAT), (CHAT, str(broken)), (CHAT, CHAT, "--tolerance", "-1"),
                 (CHAT, CHAT, *[x for i in range(65) for x in ("--ignore", f"k{i}")])):
        status, lines, err = run(capsys, *argv)
        assert status == 2 and lines == [] and err.count("\n") == 1, argv


def _cassette(datas: list[str]) -> Cassette:
    chunks = [Chunk(0.1 * i, encode(d)) for i, d in enumerate(datas)]
    return Cassette("x", [Interaction(Request("GET", "/s"), Response(headers=SSE, chunks=chunks))])


texts = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=10), min_size=1, max_size=8)


@given(raw=texts, drop=st.integers(0, 7))
def test_any_stream_equals_itself_and_one_lost_event_is_one_difference(raw: list[str], drop: int) -> None:
    # distinct events, JSON and not (difflib's alignment is minimal for distinct events)
    datas = [json.dumps({"n": i, "v": x}) if i % 2 else f"{i} {x}" for i, x in enumerate(raw)]
    assert diff_cassettes(_cassette(datas), _cassette(datas)) == []
    drop = min(drop, len(datas) - 1)
    shorter = datas[:drop] + datas[drop + 1 :]
    found = diff_cassettes(_cassette(datas), _cassette(shorter), timing=False)
    assert len(found) == 1 and found[0].what.startswith(f"event {drop}: only in A")


def test_the_docs_examples_print_what_the_page_shows(capsys: pytest.CaptureFixture[str]) -> None:
    page = "docs/how-to/compare-and-plot.md"
    equal, different = page_blocks(page, "sh")[0].splitlines()
    equal_shown, shown = (block.splitlines() for block in page_blocks(page, "text")[:2])
    assert run(capsys, *shlex.split(equal)[2:]) == (0, equal_shown, "")
    status, lines, _ = run(capsys, *shlex.split(different)[2:])
    # The page shows the first lines, then "…", and says how many differences there are in all.
    assert shown[-1] == "…" and status == 1 and lines[: len(shown) - 1] == shown[:-1]
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    assert f"differs in {len(lines) - 1} places" in text
