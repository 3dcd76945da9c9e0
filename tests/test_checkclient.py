"""``ssemock check-client``: real client processes graded against the real replay server.

The reference reader (the WHATWG decoder over aiohttp) must pass every case with no false alarm; a client
with a known public bug must fail exactly the cases of that bug, and its fixed release pass them:
httpx-sse 0.4.1 split lines at U+2028/U+2029/U+0085 (florimondmanca/httpx-sse#34, fixed by #37 in
0.4.2), which the ``line-separators`` preset puts inside data and ``torture`` inside comments. Both
releases also fail what tests/test_conformance.py keeps as findings of 0.4.3: a leading BOM is kept
(``bom``) and a block holding only ``retry:``/``id:`` is dispatched with empty data (``meta-blocks``).
The same holds for openai-python 0.27.8 / 0.28.1 (``data:`` without a space) and eventsource-parser
3.0.3 / 3.0.5 (a CRLF split between its CR and its LF), below.

sseclient 0.0.24 makes a new incremental UTF-8 decoder on each call of ``__next__``, so the bytes of a
character left at the end of the read that completed an event are dropped, and its continuation bytes
decode as U+FFFD (btubbs/sseclient#38, fixed by #39 in 0.0.25). It shows only where sseclient decodes
UTF-8 at all (requests takes ISO-8859-1 for a ``text/*`` type without charset) and reads the body
unframed: it reads the socket beneath requests, so chunked framing puts chunk sizes into its text and
never ends the stream. ``split-utf8-event-end`` makes that case; its adapter is run directly against
the replay server, since under chunked framing sseclient fails every clean case of check-client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ssemock import MockServer, Scenario, conformance_matrix
from ssemock.checkclient.cases import RULES, Rule
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.sse import Event, decode

from .checkclients import (
    EXAMPLES,
    READER,
    check_client,
    failing,
    release_node,
    release_python,
    release_reports,
    verdicts,
)
from .conftest import NODE_MODULES
from .rawclient import raw_request

CASSETTE = "openai-chat-finish-length-usage"  # text content: line-separators puts U+2028 inside its data
PRESETS = sorted(name for name, s in collect_scenarios(None).items()
                 if not (s.needs_http2 or s.needs_tls))  # served over plain HTTP/1.1
TIMED = ("stall", "slow-first-byte")  # replaced by waits longer than the client timeout: 4 s for 1.5 s
HTTPX_SSE_043 = {"bom", "meta-blocks"}
APPLICATION = {name for name, rule in RULES.items() if rule in (Rule.APPLICATION, Rule.RESUME)}


def test_reference_reader_passes_every_case(tmp_path) -> None:
    done, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--client-timeout", "1.5", command=[*READER, "--timeout", "1.5"]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = verdicts(report)
    assert set(seen) == {"clean", *(p for p in PRESETS if p not in TIMED), "stall-4s", "slow-first-byte-4s"}
    assert {name for name, verdict in seen.items() if verdict != "pass"} == APPLICATION  # SSE-level: not judged
    assert report["summary"] == {"pass": len(seen) - len(APPLICATION), "fail": 0, "n/a": len(APPLICATION)}


def test_httpx_sse_041_fails_u2028_and_043_passes(tmp_path) -> None:
    reports = release_reports(tmp_path, "httpx-sse", ("0.4.1", "0.4.3"), EXAMPLES / "httpx_sse_reader.py",
                              "httpx==0.28.1")
    assert failing(reports["0.4.3"]) == HTTPX_SSE_043
    assert failing(reports["0.4.1"]) == HTTPX_SSE_043 | {"line-separators", "torture"}
    reason = {c["scenario"]: c["reason"] for c in reports["0.4.1"]["cases"]}["line-separators"]
    assert "\\u2028" in reason  # the character it hinges on, shown
    assert all("ssemock serve --port 8765 --timing-scale 0" in c["reproduce"] for c in reports["0.4.1"]["cases"])


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--scenario", "no-such-preset", "--", sys.executable, "-c", "pass"],
        ["--cassette", "no-such-cassette", "--", sys.executable, "-c", "pass"],
        ["--scenario", "h2-split-crlf", "--", sys.executable, "-c", "pass"],  # HTTP/2 frames: not over HTTP/1.1
    ],
)
def test_bad_usage_exits_2(tmp_path, argv) -> None:
    done, _ = check_client(tmp_path, *argv[:-3], command=argv[-2:]) if argv else check_client(tmp_path, command=[])
    assert done.returncode == 2
    assert done.stderr.startswith("ssemock: error: ") and "Traceback" not in done.stderr


def test_a_client_that_fails_before_asking_anything_is_named_with_its_own_error(tmp_path) -> None:
    done, _ = check_client(tmp_path, command=[sys.executable, "-c", "import no_such_module_here"])
    assert done.returncode == 2
    assert ("the client's first run asked for no recorded interaction (it exited with status 1: "
            "ModuleNotFoundError: No module named 'no_such_module_here')") in done.stderr


def test_openai_python_fails_meta_blocks_and_accepts_incomplete_answers(tmp_path) -> None:
    done, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--client-timeout",
        "1.5",
        command=[sys.executable, str(EXAMPLES / "openai_chat_answer.py"), "--timeout", "1.5"],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert {c["output"] for c in report["cases"] if c["exit_status"] == 0} == {"answer"}
    conformance = {c["scenario"] for c in report["cases"] if c["verdict"] == "fail" and c["category"] == "conformance"}
    assert conformance == {"meta-blocks"}  # json.loads('') of a data-less block (tests/test_conformance.py)
    # The SDK ends its iteration at the end of the body whether [DONE] or a finish_reason came or not; it
    # raises APIError on an error event.
    assert failing(report) - conformance == APPLICATION - {"error-mid-stream"}
    assert verdicts(report)["wrong-content-type"] == "n/a"


def test_eventsource_parser_fails_a_final_bare_cr(tmp_path, node) -> None:
    adapter = tmp_path / "eventsource_parser_reader.mjs"
    adapter.write_bytes((EXAMPLES / adapter.name).read_bytes())
    (tmp_path / "node_modules").symlink_to(NODE_MODULES)  # ESM resolves packages beside the script
    done, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--client-timeout", "1.5", command=[node, str(adapter), "1.5"]
    )
    assert done.returncode == 1, done.stdout + done.stderr
    # eventsource-parser 3.1.1 holds a final bare CR waiting for an LF (tests/test_conformance.py); under
    # mixed-eol this recording's last line end is no CR (seed 0)
    assert failing(report) == {"cr"}
    assert verdicts(report)["clean"] == "pass"


# openai-python 0.x hands each data line to json.loads alone (parse_stream_helper reads line by line), so
# a payload over several data lines raises; and, like 1.x, it ends at the end of the body, finished or not.
OPENAI_V0 = {"multiline-data", "split-crlf-multiline", "torture"} | APPLICATION - {"error-mid-stream"}


def test_openai_python_0278_fails_no_space_and_0281_passes(tmp_path) -> None:
    """openai-python 0.27.8 keeps only lines starting ``data: `` (with the space), so under ``no-space``
    (``data:{...}``, the same events per WHATWG: one leading space is optional) it assembles an empty answer:
    openai/openai-python#498, fixed by #559 in 0.28.1. Over every HTTP/1.1 preset the two releases differ
    by exactly ``no-space``; both fail what ``OPENAI_V0`` lists (measured, the same for both)."""
    reports = release_reports(tmp_path, "openai", ("0.27.8", "0.28.1"), EXAMPLES / "openai_v0_chat_answer.py")
    assert {verdicts(report)["clean"] for report in reports.values()} == {"pass"}
    assert failing(reports["0.28.1"]) == OPENAI_V0
    assert failing(reports["0.27.8"]) == OPENAI_V0 | {"no-space"}
    reason = {c["scenario"]: c["reason"] for c in reports["0.27.8"]["cases"]}["no-space"]
    assert reason.startswith("answer differs from the clean run's: text: ''"), reason


def test_eventsource_parser_303_fails_split_crlf_and_305_passes(tmp_path, node) -> None:
    """eventsource-parser 3.0.3 ends a line at a CR that ends a read, so the LF of a CRLF split between two
    reads is one more line, a blank one, which dispatches the event early: under ``split-crlf-multiline``
    (each payload over 3 data lines) an event comes in pieces, and under ``torture`` an empty first data
    line is dispatched alone. rexxars/eventsource-parser#17, fixed in 3.0.4 (commit 85f4519), so 3.0.5
    passes both. That fix holds a CR ending a read until the next one, and the stream's last CR is held for
    good: 3.0.5 fails ``cr`` (the last event is lost), which 3.0.3 passes; no upstream report of it found.
    Over every HTTP/1.1 preset these are the only failures."""
    (tmp_path / "eventsource_parser_reader.mjs").write_bytes((EXAMPLES / "eventsource_parser_reader.mjs").read_bytes())
    reports = {}
    for version in ("3.0.3", "3.0.5"):
        (tmp_path / "node_modules").unlink(missing_ok=True)
        (tmp_path / "node_modules").symlink_to(release_node("eventsource-parser", version))
        done, reports[version] = check_client(
            tmp_path,
            "--cassette",
            CASSETTE,
            "--client-timeout",
            "1.5",
            command=[node, str(tmp_path / "eventsource_parser_reader.mjs"), "1.5"],
        )
        assert done.returncode == 1, done.stdout + done.stderr
        assert verdicts(reports[version])["clean"] == "pass"
    assert failing(reports["3.0.3"]) == {"split-crlf-multiline", "torture"}
    assert failing(reports["3.0.5"]) == {"cr"}


# ---- sseclient: a character split in the read that ends an event -----------------------------------------
QWEN = "alibaba-qwen-chat-emoji-split"  # recorded without charset; 12 events hold multi-byte characters
QWEN_PATH = "/compatible-mode/v1/chat/completions"
UTF8 = {"content-type": {"value": "text/event-stream; charset=utf-8"}}
CLOSE = {"framing": {"mode": "close"}}
SPLIT = [{"fragment": {"mode": "coalesce"}}, {"fragment": {"mode": "utf8"}}]
WITHOUT = {"without-charset": [CLOSE, *SPLIT], "without-close": [UTF8, *SPLIT], "without-split": [UTF8, CLOSE]}
"""The preset with one of its three parts left out: each one is needed for 0.0.24 to differ from 0.0.25."""


def read_with_sseclient(python: Path, url: str, scenario: str) -> tuple[int, list[dict[str, str]]]:
    """The exit status and the events sseclient_reader.py prints for ``QWEN`` under ``scenario``."""
    env = {**os.environ, "SSEMOCK_METHOD": "POST",
           "SSEMOCK_STREAM_URL": f"{url}/_ssemock/c/{QWEN}/_ssemock/s/{scenario}{QWEN_PATH}"}
    done = subprocess.run([str(python), str(EXAMPLES / "sseclient_reader.py"), "--timeout", "1.5"], env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=60, check=False)
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()]


def first_character_lost(data: str) -> str:
    """``data`` as 0.0.24 reads it when every read holding the lead byte of the first multi-byte character
    also completed an event: that byte is lost with the decoder, each continuation byte becomes U+FFFD."""
    char = next((c for c in data if ord(c) > 0x7F), None)
    return data if char is None else data.replace(char, "\ufffd" * (len(char.encode()) - 1), 1)


@pytest.fixture(scope="module")
def sseclient_server() -> Iterator[MockServer]:
    extra = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in WITHOUT.items()]
    extra.append(Scenario.from_dict({"name": "utf8-close", "steps": [UTF8, CLOSE]}))
    with MockServer(scenarios=[*collect_scenarios(None).values(), *extra], timing_scale=0) as server:
        yield server


def test_sseclient_0024_loses_a_character_split_in_the_read_that_ends_an_event(sseclient_server) -> None:
    body = collect_cassettes(None)[QWEN].interactions[0].response.body
    truth = [{"type": e.type, "data": e.data} for e in decode(body) if isinstance(e, Event)]
    runs = ("split-utf8-event-end", "http10", "split-utf8", *WITHOUT)
    got = {(version, name): read_with_sseclient(release_python("sseclient", version, "requests"),
                                                sseclient_server.url, name)
           for version in ("0.0.24", "0.0.25") for name in runs}
    assert got["0.0.25", "split-utf8-event-end"] == (0, truth)
    lost = [{"type": e["type"], "data": first_character_lost(e["data"])} for e in truth]
    assert sum(a != b for a, b in zip(lost, truth)) == 12
    assert got["0.0.24", "split-utf8-event-end"] == (0, lost)
    assert [name for name in runs if got["0.0.24", name] != got["0.0.25", name]] == ["split-utf8-event-end"]
    assert got["0.0.25", "without-split"] == (0, truth)
    arrow = next(e["data"] for e in truth if "\u2192" in e["data"])  # U+2192, E2 86 92 in UTF-8
    for name in ("without-charset", "http10"):  # decoded as ISO-8859-1
        status, events = got["0.0.25", name]
        assert status == 0 and arrow.replace("\u2192", "\u00e2\x86\x92") in [e["data"] for e in events]
    assert got["0.0.25", "without-close"][0] == got["0.0.25", "split-utf8"][0] == 1  # chunked: never ends


def test_no_other_preset_of_the_matrix_tells_sseclient_0024_from_0025(sseclient_server) -> None:
    """Each preset of the conformance matrix with charset=utf-8 and close-delimited framing added (so that
    sseclient reads it at all): only split-utf8-event-end is read differently by the two releases."""
    matrix = conformance_matrix()
    got = {version: [read_with_sseclient(release_python("sseclient", version, "requests"), sseclient_server.url,
                                         f"{name},utf8-close") for name in matrix]
           for version in ("0.0.24", "0.0.25")}
    assert [name for name, a, b in zip(matrix, got["0.0.24"], got["0.0.25"]) if a != b] == ["split-utf8-event-end"]


def test_split_utf8_event_end_on_the_wire() -> None:
    body = collect_cassettes(None)[QWEN].interactions[0].response.body
    with MockServer(timing_scale=0) as server:
        r = raw_request(server.url, "POST", QWEN_PATH, b"{}",
                        {"X-SSEMock-Cassette": QWEN, "X-SSEMock-Scenario": "split-utf8-event-end"})
        framing = server.requests[0]["framing"]
    assert r.status == 200 and r.ending == "complete" and r.body == body and framing == "close"
    assert r.header("content-type") == "text/event-stream; charset=utf-8"
    assert r.header("content-length") is None and r.header("transfer-encoding") is None
    assert r.header("connection") == "close"
    # reads that complete an event and end on the lead byte of a multi-byte character (0b11xxxxxx)
    split = [c for c in r.chunks if b"\n\n" in c and c[-1] >= 0xC0]
    assert len(split) >= 12, [c[-20:] for c in r.chunks]


def test_reference_reader_passes_split_utf8_event_end(tmp_path) -> None:
    done, report = check_client(tmp_path, "--cassette", QWEN, "--scenario", "split-utf8-event-end",
                                command=[*READER, "--timeout", "5"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert verdicts(report) == {"clean": "pass", "split-utf8-event-end": "pass"}


def test_check_client_grades_sseclient_0024_failing_exactly_the_split_after_an_event(tmp_path) -> None:
    """With ``--base`` every case, the clean one included, is served with ``charset=utf-8`` and close-delimited
    framing (sseclient reads the socket beneath requests: chunked framing never ends its stream), so
    check-client grades sseclient itself: 0.0.24 fails exactly ``split-utf8-event-end`` (btubbs/sseclient#38)
    among these presets, and 0.0.25 passes them all."""
    (tmp_path / "utf8-close.yaml").write_text(yaml.safe_dump(
        {"ssemock_scenario": 1, "name": "utf8-close", "preserves": "events", "steps": [UTF8, CLOSE]}))
    reports = {}
    for version in ("0.0.24", "0.0.25"):
        python = release_python("sseclient", version, "requests")
        done, reports[version] = check_client(
            tmp_path, "--cassette", QWEN, "--scenarios", str(tmp_path / "utf8-close.yaml"), "--base", "utf8-close",
            "--scenario", "split-utf8-event-end,split-utf8,http10,crlf", "--shrink-budget", "0",
            command=[str(python), str(EXAMPLES / "sseclient_reader.py"), "--timeout", "2"],
        )
        assert verdicts(reports[version])["clean"] == "pass", done.stdout + done.stderr
    assert failing(reports["0.0.24"]) == {"split-utf8-event-end"}
    assert failing(reports["0.0.25"]) == set()
    line = next(c for c in reports["0.0.24"]["cases"] if c["scenario"] == "split-utf8-event-end")["reproduce"]
    assert "--scenarios " + str(tmp_path / "utf8-close.yaml") in line
    assert f"/_ssemock/c/{QWEN}/_ssemock/s/split-utf8-event-end,utf8-close" in line


def test_under_a_close_delimited_base_a_cut_is_not_held_against_the_reader(tmp_path) -> None:
    """A close-delimited body ends where the connection does (RFC 9112 section 6.3): a cut inside an event is
    then a clean end to the HTTP layer, and the reference reader accepting it is not graded; over chunked
    framing the same reader reports it."""
    (tmp_path / "utf8-close.yaml").write_text(yaml.safe_dump(
        {"ssemock_scenario": 1, "name": "utf8-close", "preserves": "events", "steps": [UTF8, CLOSE]}))
    done, report = check_client(tmp_path, "--cassette", CASSETTE, "--scenarios", str(tmp_path / "utf8-close.yaml"),
                                "--base", "utf8-close", "--scenario", "cut-mid-event,crlf",
                                command=[*READER, "--timeout", "5"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert verdicts(report) == {"clean": "pass", "crlf": "pass", "cut-mid-event": "n/a"}
    reason = next(c["reason"] for c in report["cases"] if c["scenario"] == "cut-mid-event")
    assert reason.endswith("the body is close-delimited, so its early end is the connection's end to the HTTP "
                           "layer (RFC 9112 section 6.3)"), reason
    done, report = check_client(tmp_path, "--cassette", CASSETTE, "--scenario", "cut-mid-event",
                                command=[*READER, "--timeout", "5"])
    assert verdicts(report) == {"clean": "pass", "cut-mid-event": "pass"}
