"""``ssemock check-client``: real client processes graded against the real replay server.

The reference reader (the WHATWG decoder over aiohttp) must pass every case with no false alarm; a client
with a known public bug must fail exactly the cases of that bug, and its fixed release pass them:
httpx-sse 0.4.1 split lines at U+2028/U+2029/U+0085 (florimondmanca/httpx-sse#34, fixed by #37 in
0.4.2), which the ``line-separators`` preset puts inside data and ``torture`` inside comments. Both
releases also fail what tests/test_conformance.py keeps as findings of 0.4.3: a leading BOM is kept
(``bom``) and a block holding only ``retry:``/``id:`` is dispatched with empty data (``meta-blocks``).
"""

from __future__ import annotations

import sys

import pytest

from ssemock.checkclient.cases import RULES, Rule
from ssemock.mockserver import collect_scenarios

from .checkclients import EXAMPLES, READER, check_client, failing, release_python, verdicts

CASSETTE = "openai-chat-finish-length-usage"  # text content: line-separators puts U+2028 inside its data
PRESETS = sorted(collect_scenarios(None))
HTTPX_SSE_043 = {"bom", "meta-blocks"}
APPLICATION = {name for name, rule in RULES.items() if rule in (Rule.APPLICATION, Rule.RESUME)}


def test_reference_reader_passes_every_case(tmp_path) -> None:
    done, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--client-timeout", "1.5", command=[*READER, "--timeout", "1.5"]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = verdicts(report)
    assert set(seen) == {"clean", *(p for p in PRESETS if p != "stall"), "stall-4s"}
    assert {name for name, verdict in seen.items() if verdict != "pass"} == APPLICATION  # SSE-level: not judged
    assert report["summary"] == {"pass": len(seen) - len(APPLICATION), "fail": 0, "n/a": len(APPLICATION)}


def test_httpx_sse_041_fails_u2028_and_043_passes(tmp_path) -> None:
    adapter = str(EXAMPLES / "httpx_sse_reader.py")
    reports = {}
    for version in ("0.4.1", "0.4.3"):
        python = release_python("httpx-sse", version, "httpx==0.28.1")
        done, reports[version] = check_client(
            tmp_path,
            "--cassette",
            CASSETTE,
            "--client-timeout",
            "1.5",
            command=[str(python), adapter, "--timeout", "1.5"],
        )
        assert done.returncode == 1, done.stdout + done.stderr
    assert failing(reports["0.4.3"]) == HTTPX_SSE_043
    assert failing(reports["0.4.1"]) == HTTPX_SSE_043 | {"line-separators", "torture"}
    reason = {c["scenario"]: c["reason"] for c in reports["0.4.1"]["cases"]}["line-separators"]
    assert "\\u2028" in reason  # the character it hinges on, shown
    assert all(c["reproduce"].startswith("ssemock serve --port") for c in reports["0.4.1"]["cases"])


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--scenario", "no-such-preset", "--", sys.executable, "-c", "pass"],
        ["--cassette", "no-such-cassette", "--", sys.executable, "-c", "pass"],
    ],
)
def test_bad_usage_exits_2(tmp_path, argv) -> None:
    done, _ = check_client(tmp_path, *argv[:-3], command=argv[-2:]) if argv else check_client(tmp_path, command=[])
    assert done.returncode == 2
    assert done.stderr.startswith("ssemock: error: ") and "Traceback" not in done.stderr
