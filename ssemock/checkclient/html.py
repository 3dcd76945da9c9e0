"""The report of a ``check-client`` run as one self-contained HTML page (``--html FILE``).

The page holds the overall result, the grades counted per category, one row per case (recording ×
preset) with its grade and reason, and for each failed case its first difference (the reason), the
shrunk scenario as a scenario file (when :mod:`.shrink` found one) and the reproduce command. It is
rendered with Jinja2 from ``templates/report.html.j2``, autoescaped: the reasons quote what the client
printed, which is untrusted. Styles are inline; the page loads nothing (no script, style sheet, font or
image from elsewhere) and needs no JavaScript.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..version import __version__
from .grade import FAIL, NOT_GRADED, PASS
from .report import Entry, Report

__all__ = ["TEMPLATE", "html_page", "shrunk_scenario"]

TEMPLATE = "report.html.j2"
"""The page's template, in the package's ``templates`` folder."""
_CATEGORIES = ("conformance", "resilience")
_PRESERVES = ("events", "payloads")  # the rules named after what their preset preserves


@dataclass(frozen=True)
class _Row:
    """One case as the template shows it (``number`` from 1, in run order)."""

    number: int
    entry: Entry
    shrunk_note: str | None
    shrunk_yaml: str | None


def shrunk_scenario(entry: Entry) -> tuple[str, str] | None:
    """The shrunk steps of a failed case as ``(note, scenario file YAML)``, or None when not shrunk.

    ``note`` is the first line of :meth:`.shrink.Shrunk.describe` (``shrunk to N step(s) (R runs)``); the
    YAML is a scenario file (``ssemock_scenario: 1``, ``name: PRESET-shrunk``, the preset's ``preserves``
    for the ``events`` and ``payloads`` rules, the steps, then each chunk boundary kept shown in context as a
    YAML comment) that ``ssemock scenarios check`` accepts.
    """
    if not entry.shrunk:
        return None
    note, _, steps = entry.shrunk.partition("\n")
    lines = ["ssemock_scenario: 1", f"name: {entry.scenario or 'clean'}-shrunk"]
    if entry.rule in _PRESERVES:
        lines.append(f"preserves: {entry.rule}")
    lines += ["steps:", steps.rstrip("\n")]
    return note.rstrip(":"), "\n".join(lines) + "\n"


def html_page(report: Report) -> str:
    """The HTML page of ``report``: a complete document (``<!DOCTYPE html>``), UTF-8 text.

    Raises:
        jinja2.TemplateError: the packaged template is missing or broken (an installation fault).
    """
    import jinja2  # here: importing ssemock does not import it

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("ssemock.checkclient", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    rows = []
    for number, entry in enumerate(report.entries, 1):
        shrunk = shrunk_scenario(entry) if entry.grade.verdict == FAIL else None
        rows.append(_Row(number, entry, *(shrunk or (None, None))))
    grades = [(name, report.counts(name)) for name in _CATEGORIES]
    return environment.get_template(TEMPLATE).render(
        version=__version__,
        command=shlex.join(report.command),
        result=FAIL if report.failed else PASS,
        verdicts=(PASS, FAIL, NOT_GRADED),
        grades=grades,
        total=report.counts(),
        rows=rows,
        failed=[row for row in rows if row.entry.grade.verdict == FAIL],
    )
