"""tools/report_card.py, the report card of SSE clients (docs/reference/report-card.md): its rows are the
check-client JSON reports of the same clients and presets, and the committed page holds a row, or the
reason it has none, for every client the card covers."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import ssemock

from .checkclients import EXAMPLES, READER, ROOT, check_client, release_python
from .tool_scripts import load_tool

TOOL: Any = load_tool("report_card")
CARD = ["openai-python", "openai-node", "anthropic", "google-genai", "httpx-sse", "eventsource-parser",
        "eventsource", "@microsoft/fetch-event-source", "sseclient-py", "requests-sse", "aiohttp-sse-client2"]
"""The clients the card is asked to cover, as the request for it names them."""


def table(text: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The block between the markers: client -> the other cells of its row; client -> reason left out."""
    start, end = text.index(TOOL.BEGIN), text.index(TOOL.END)
    assert start < end
    rows, left_out = {}, {}
    for line in text[start:end].splitlines():
        if line.startswith("| ") and not line.startswith(("| client ", "| --- ")):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0]] = cells[1:]
        elif line.startswith("- ") and ": " in line:
            name, reason = line[2:].split(": ", 1)
            left_out[name] = reason
    return rows, left_out


def expected_cells(report: dict[str, Any]) -> list[str]:
    """The recording, counts and fails cells of a client, computed here from its JSON report."""
    counts = Counter((case["category"], case["verdict"]) for case in report["cases"])
    fails = [case["scenario"] or "clean" for case in report["cases"] if case["verdict"] == "fail"]
    return [
        f"`{report['cases'][0]['cassette']}`",
        *(" / ".join(str(counts[cat, v]) for v in ("pass", "fail", "n/a")) for cat in ("conformance", "resilience")),
        ", ".join(f"`{name}`" for name in fails) or "nothing",
    ]


def test_quick_rows_are_the_check_client_reports_of_the_same_clients(tmp_path: Path) -> None:
    """The reference reader and httpx-sse 0.4.3 (httpx 0.28.1) under the quick presets: each row's cells are
    those of ``ssemock check-client --json`` run apart on the same recording and presets. httpx-sse keeps a
    leading U+FEFF in the first field name, so under ``bom`` the first event is lost (docs/how-to)."""
    python = release_python("httpx-sse", "0.4.3", "httpx==0.28.1")  # the cached release the tool finds
    page = tmp_path / "card.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "report_card.py"), "--quick", "--client", "reference reader",
         "--client", "httpx-sse=0.4.3", "--write", str(page), "-j", "1"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    rows, left_out = table(page.read_text(encoding="utf-8"))
    assert list(rows) == ["reference reader", "httpx-sse"] and not left_out
    quick = ",".join(TOOL.QUICK)
    args = ("--cassette", TOOL.CHAT, "--client-timeout", "1.5", "--shrink-budget", "0", "--scenario", quick)
    _, reference = check_client(tmp_path, *args, command=[*READER, "--timeout", "1.5"])
    _, httpx_sse = check_client(tmp_path, *args, command=[str(python), str(EXAMPLES / "httpx_sse_reader.py"),
                                                          "--timeout", "1.5"])
    assert rows["reference reader"] == [ssemock.__version__, *expected_cells(reference)]
    assert rows["httpx-sse"] == ["0.4.3 (httpx 0.28.1)", *expected_cells(httpx_sse)]
    assert rows["httpx-sse"][-1] == "`bom`"
    assert rows["reference reader"][-1] == "nothing"


def test_the_committed_page_has_a_row_or_a_reason_for_every_client() -> None:
    text = (ROOT / "docs" / "reference" / "report-card.md").read_text(encoding="utf-8")
    assert text.count(TOOL.BEGIN) == 1 and text.count(TOOL.END) == 1
    assert "- Report card of SSE clients: reference/report-card.md" in (ROOT / "mkdocs.yml").read_text()
    rows, left_out = table(text)
    assert set(CARD) <= {client.name for client in TOOL.CLIENTS}
    for name in CARD:
        assert (name in rows) != (name in left_out), name
        if name in rows:
            version, recording, conformance, resilience, _ = rows[name]
            assert version and recording.startswith("`"), rows[name]
            assert conformance.count(" / ") == 2 and resilience.count(" / ") == 2, rows[name]
        else:
            assert left_out[name], name
    assert "reference reader" in rows and rows["reference reader"][-1] == "nothing"


def test_an_unknown_client_is_bad_usage() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "report_card.py"), "--client", "sseclient"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "--client 'sseclient': expected one of reference reader, openai-python" in done.stderr
