"""Write the figures of a run into the docs page of benchmarks (:data:`PAGE`), between two marker lines,
so that the table shown is the one a run printed, never typed by hand.

``python -m benchmarks --json out.json --page`` runs and writes;
``python -m benchmarks.page [--quick] out.json [PAGE.md]`` writes the figures of an earlier run
(``--quick``: that run was a quick one).
The block between :data:`BEGIN` and :data:`END` is replaced; the rest of the file is kept.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from ssemock.cassette.append import atomic_file

from . import cell

__all__ = ["BEGIN", "END", "PAGE", "markdown_table", "write_page"]

PAGE = Path(__file__).resolve().parent.parent / "docs" / "explanation" / "benchmarks.md"
"""The page the table is written into: the site's *Benchmarks* explanation."""
BEGIN = "<!-- benchmarks: begin (written by python -m benchmarks --page; do not edit) -->"
END = "<!-- benchmarks: end -->"


def markdown_table(figures: list[dict[str, Any]], *, note: str) -> str:
    """The figures as a Markdown table, after one line saying when and where they were measured."""
    lines = [note, "", "| figure | ssemock | unit | baseline | ratio | goal | met | min/median/max |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for fig in figures:
        cells = [fig.get(k) for k in ("name", "value", "unit", "baseline", "ratio", "goal", "met", "spread")]
        lines.append("| " + " | ".join(cell(c, markdown=True) for c in cells) + " |")
    return "\n".join(lines)


def write_page(
    figures: list[dict[str, Any]], page: Path = PAGE, *, quick: bool, duration: float | None = None,
    load_start: float | None = None,
) -> None:
    """Replace the block between :data:`BEGIN` and :data:`END` in ``page`` by the table of ``figures``,
    after a line saying when, how (quick or full, the run's ``duration`` in seconds) and under what
    load (the 1-minute load average at the start, ``load_start``, and at the end).

    Raises:
        ValueError: ``page`` has no such block (both marker lines, in order).
    """
    text = page.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{page}: expected the lines {BEGIN!r} and {END!r}, in that order")
    cores = len(os.sched_getaffinity(0))
    load = f"{os.getloadavg()[0]:.1f} at the end"
    if load_start is not None:
        load = f"{load_start:.1f} at the start and {load}"
    took = "" if duration is None else f", in {duration:.0f} s"
    note = (f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} by `python -m benchmarks"
            f"{' --quick' if quick else ''}` ({'quick: smaller loads, fewer repeats' if quick else 'full'} run"
            f"{took}) on {cores} core(s), Python {platform.python_version()}, load average {load} "
            f"(other work on the machine slows ours and the baselines alike, not equally).")
    block = f"{BEGIN}\n{markdown_table(figures, note=note)}\n"
    with atomic_file(page) as out:
        out.write(text[:start] + block + text[end:])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args  # the figures came from a quick run
    args = [a for a in args if a != "--quick"]
    if not 1 <= len(args) <= 2:
        print("usage: python -m benchmarks.page [--quick] FIGURES.json [PAGE.md]", file=sys.stderr)
        return 2
    figures = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    write_page(figures, Path(args[1]) if len(args) > 1 else PAGE, quick=quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
