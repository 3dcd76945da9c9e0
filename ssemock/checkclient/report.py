"""The report of a ``check-client`` run: the terminal table, the JSON document (``--json``), JUnit XML
(``--junit``) and the comparison with an earlier JSON report (``--compare``)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .grade import FAIL, NOT_GRADED, PASS, Grade

__all__ = ["FORMAT_KEY", "Report", "compare_lines", "junit_xml", "load_report", "table_lines"]

FORMAT_KEY = "ssemock_check_client"
"""The key (and version) that starts a JSON report."""
MAX_REPORT = 64 * 1024 * 1024
"""Largest JSON report ``--compare`` reads, in bytes."""
_VERDICTS = (PASS, FAIL, NOT_GRADED)


@dataclass(frozen=True)
class Entry:
    """One case of the report: its grade, rule, the command reproducing it, and for a failed conformance
    case the fewest steps (and chunk boundaries) of its scenario that still fail (:mod:`.shrink`), or None."""

    grade: Grade
    cassette: str
    scenario: str | None
    rule: str
    reproduce: str
    shrunk: str | None = None


@dataclass(frozen=True)
class Report:
    """A run's report: the command graded and one entry per case, in run order."""

    command: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def failed(self) -> list[Entry]:
        """The entries that failed."""
        return [e for e in self.entries if e.grade.verdict == FAIL]

    def counts(self, category: str | None = None) -> Counter[str]:
        """Verdicts counted (of one category, or all)."""
        return Counter(e.grade.verdict for e in self.entries if category in (None, e.grade.category))

    def summary(self) -> str:
        """``conformance: 30 pass, 1 fail, 2 n/a; resilience: ...`` in one line."""
        parts = []
        for name in ("conformance", "resilience"):
            counts = self.counts(name)
            parts.append(f"{name}: " + ", ".join(f"{counts[v]} {v}" for v in _VERDICTS))
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The JSON document of ``--json``."""
        return {
            FORMAT_KEY: 1,
            "command": list(self.command),
            "summary": {v: self.counts()[v] for v in _VERDICTS},
            "cases": [
                {
                    "case": e.grade.case,
                    "cassette": e.cassette,
                    "scenario": e.scenario,
                    "rule": e.rule,
                    "category": e.grade.category,
                    "verdict": e.grade.verdict,
                    "reason": e.grade.reason,
                    "output": e.grade.mode,
                    "exit_status": e.grade.status,
                    "seconds": round(e.grade.seconds, 3),
                    "reproduce": e.reproduce,
                    "shrunk": e.shrunk,
                }
                for e in self.entries
            ],
        }


def table_lines(report: Report, width: int | None = None) -> Iterator[str]:
    """The terminal report: one row per case (case, category, grade, reason), each failure's reproduce
    command under it, then the summary."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    names = max((len(e.grade.case) for e in report.entries), default=4)
    yield f"{'CASE':{names}}  {'CATEGORY':11}  {'GRADE':5}  REASON"
    for entry in report.entries:
        grade = entry.grade
        head = f"{grade.case:{names}}  {grade.category:11}  {grade.verdict.upper():5}  "
        room = max(20, width - len(head))
        reason = grade.reason if len(grade.reason) <= room or grade.verdict == FAIL else grade.reason[: room - 1] + "…"
        yield head + reason
        if grade.verdict == FAIL:
            yield f"{'':{names}}  reproduce: {entry.reproduce}"
            for shrunk in (entry.shrunk or "").splitlines():
                yield f"{'':{names}}  {shrunk}"
    yield report.summary()


def junit_xml(report: Report) -> str:
    """The report as JUnit XML: a test case per case (class name its category), a failure per failed case
    (the reason; the reproduce command as its text), ``skipped`` for the cases not graded."""
    from xml.etree import ElementTree  # here: importing ssemock does not import it

    counts = report.counts()
    suites = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name="ssemock check-client",
        tests=str(len(report.entries)),
        failures=str(counts[FAIL]),
        skipped=str(counts[NOT_GRADED]),
        errors="0",
        time=f"{sum(e.grade.seconds for e in report.entries):.3f}",
    )
    for entry in report.entries:
        grade = entry.grade
        case = ElementTree.SubElement(
            suite, "testcase", classname=grade.category, name=grade.case, time=f"{grade.seconds:.3f}"
        )
        if grade.verdict == FAIL:
            text = f"reproduce: {entry.reproduce}" + (f"\n{entry.shrunk}" if entry.shrunk else "")
            ElementTree.SubElement(case, "failure", message=grade.reason).text = text
        elif grade.verdict == NOT_GRADED:
            ElementTree.SubElement(case, "skipped", message=grade.reason)
    return ElementTree.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def load_report(path: Path) -> dict[str, str]:
    """An earlier ``--json`` report's verdict of each case. Raises :class:`ConfigError` naming the file."""
    try:
        if path.stat().st_size > MAX_REPORT:
            raise ConfigError(f"--compare {path}: larger than {MAX_REPORT} bytes")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--compare {path}: expected a JSON report of ssemock check-client --json ({exc})") from None
    if not isinstance(doc, dict) or doc.get(FORMAT_KEY) != 1 or not isinstance(doc.get("cases"), list):
        raise ConfigError(f"--compare {path}: expected a JSON report with {FORMAT_KEY}: 1 and cases")
    out = {}
    for number, case in enumerate(doc["cases"]):
        if not isinstance(case, dict) or not isinstance(case.get("case"), str) or case.get("verdict") not in _VERDICTS:
            raise ConfigError(
                f"--compare {path}: cases[{number}]: expected case (a string) and verdict ({', '.join(_VERDICTS)})"
            )
        out[case["case"]] = case["verdict"]
    return out


def compare_lines(old: dict[str, str], report: Report) -> Iterable[str]:
    """What changed since ``old`` (:func:`load_report`): ``CASE: pass -> fail`` per changed case, the cases
    new or gone, then a count."""
    new = {e.grade.case: e.grade.verdict for e in report.entries}
    changed = [
        f"{case}: {old[case]} -> {verdict}" for case, verdict in new.items() if case in old and old[case] != verdict
    ]
    added = [f"{case}: new ({verdict})" for case, verdict in new.items() if case not in old]
    gone = [f"{case}: gone (was {verdict})" for case, verdict in old.items() if case not in new]
    yield from changed + added + gone
    fixed = sum(1 for case, v in new.items() if old.get(case) == FAIL and v != FAIL)
    broke = sum(1 for case, v in new.items() if v == FAIL and old.get(case, FAIL) != FAIL)
    yield (
        f"compared with the earlier report: {len(changed)} changed ({fixed} fixed, {broke} newly failing), "
        f"{len(added)} new, {len(gone)} gone"
    )


def write_text(path: Path, text: str) -> None:
    """Write a report file atomically."""
    from ..cassette import atomic_write

    atomic_write(path, text)
