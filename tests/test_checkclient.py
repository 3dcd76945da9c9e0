"""``ssemock check-client``: real client processes graded against the real replay server.

The reference reader (the WHATWG decoder over aiohttp) must pass every case with no false alarm; a client
with a known public bug must fail exactly the cases of that bug, and its fixed release pass them:
httpx-sse 0.4.1 split lines at U+2028/U+2029/U+0085 (florimondmanca/httpx-sse#34, fixed by #37 in
0.4.2), which the ``line-separators`` preset puts inside data and ``torture`` inside comments. Both
releases also fail what tests/test_conformance.py keeps as findings of 0.4.3: a leading BOM is kept
(``bom``) and a block holding only ``retry:``/``id:`` is dispatched with empty data (``meta-blocks``).
The same holds for openai-python 0.27.8 / 0.28.1 (``data:`` without a space) and eventsource-parser
3.0.3 / 3.0.5 (a CRLF split between its CR and its LF), below.
"""

from __future__ import annotations

import sys

import pytest

from ssemock.checkclient.cases import RULES, Rule
from ssemock.mockserver import collect_scenarios

from .checkclients import EXAMPLES, READER, check_client, failing, release_node, release_reports, verdicts
from .conftest import NODE_MODULES

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
