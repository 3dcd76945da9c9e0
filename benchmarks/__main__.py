"""``python -m benchmarks [--quick] [--json FILE] [--page [FILE]] [--only NAME,…]``: run every figure,
print a table; ``--page`` writes it into the marked block of docs/explanation/benchmarks.md (:mod:`benchmarks.page`).

The last line printed is the run's duration and, with ``--quick`` over every module, whether it
kept within :data:`QUICK_BUDGET` (60 s), with the three slowest modules.

Exit status 0 when every figure module ran (goals met or not), 1 when one failed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import FIGURE_KEYS, cell
from .page import PAGE, write_page

# In the order of the figures in the issue; each module exposes run(quick) -> list[dict].
MODULES = (
    "replay_throughput",
    "h2_throughput",
    "concurrent_streams",
    "fixture_overhead",
    "fragment_delivery",
    "timing_fidelity",
    "recorder_overhead",
    "cold_start",
    "recorder_kill",
    "match_100k",
    "placeholder_routes",
    "abort_storm",
    "hostile_bodies",
    "stub_synthesis",
    "aimock_peer",
    "big_cassette",
    "memory_after_load",
    "check_client",
)
_ENTRY_POINTS = ("run", "figures", "measure", "benchmark")
QUICK_BUDGET = 60.0
"""Seconds a ``--quick`` run of every module should take at most."""


def entry_point(name: str) -> Callable[[bool], list[dict[str, Any]]]:
    """The figure function of module ``benchmarks.NAME``, called as ``fn(quick)``."""
    module = importlib.import_module(f"{__package__}.{name}")
    fn = next((getattr(module, n) for n in _ENTRY_POINTS if callable(getattr(module, n, None))), None)
    if fn is None:
        raise RuntimeError(f"benchmarks.{name} has none of {', '.join(_ENTRY_POINTS)}()")
    if "quick" in inspect.signature(fn).parameters:
        return lambda quick: fn(quick=quick)  # type: ignore[no-any-return]
    return lambda quick: fn()  # type: ignore[no-any-return]


def named(module: str, fig: dict[str, Any], *, quick: bool = False) -> dict[str, Any]:
    """``fig`` with exactly the figure keys, its name prefixed by ``module`` unless it starts with it;
    from a ``quick`` run, its unit ends with ``(quick)`` unless the module's unit already says quick."""
    out = {k: fig.get(k) for k in FIGURE_KEYS}
    if quick and "quick" not in str(out["unit"] or ""):
        out["unit"] = f"{out['unit'] or '-'} (quick)"
    if not str(out["name"]).startswith(module):
        out["name"] = f"{module}: {out['name']}"
    return out


def table(figures: list[dict[str, Any]]) -> str:
    """The figures as an aligned plain-text table."""
    header = ["figure", "value", "unit", "baseline", "ratio", "goal", "met", "spread"]
    rows = [[cell(f.get(k)) for k in FIGURE_KEYS] for f in figures]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller loads (goal: under 60 s on 2 cores)")
    parser.add_argument("--json", metavar="FILE", help="write the figures as a JSON list to FILE")
    parser.add_argument("--page", nargs="?", const=str(PAGE), metavar="FILE",
                        help=f"write the table into FILE's marked block (default {PAGE.relative_to(PAGE.parents[2])})")
    parser.add_argument("--only", metavar="NAMES", help=f"comma-separated modules among {', '.join(MODULES)}")
    args = parser.parse_args(argv)
    wanted = [n.strip() for n in args.only.split(",")] if args.only else list(MODULES)
    figures: list[dict[str, Any]] = []
    failed: list[str] = []
    took: dict[str, float] = {}
    load_start = os.getloadavg()[0]
    run_started = time.perf_counter()
    for name in wanted:
        started, cpu_started = time.perf_counter(), cpu_seconds()
        if importlib.util.find_spec(f"{__package__}.{name}") is None:
            print(f"{name}: module benchmarks.{name} not found", file=sys.stderr)
            failed.append(name)
            continue
        try:
            found = entry_point(name)(args.quick)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            continue
        figures.extend(named(name, f, quick=args.quick) for f in found)
        took[name] = time.perf_counter() - started
        print(f"{name}: {len(found)} figure(s) in {took[name]:.1f} s, CPU {cpu_seconds() - cpu_started:.1f} s "
              f"(all its processes)", file=sys.stderr)
    duration = time.perf_counter() - run_started
    print(table(figures))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(figures, fh, indent=2)
            fh.write("\n")
    if args.page:
        write_page(figures, Path(args.page), quick=args.quick, duration=duration, load_start=load_start)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    print(duration_line(duration, took, quick=args.quick, every=not args.only))
    return 1 if failed else 0


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of its child processes that have ended."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def duration_line(duration: float, took: dict[str, float], *, quick: bool, every: bool) -> str:
    """One line: the run's duration (seconds), the slowest modules, and for a quick run of every
    module whether it kept within :data:`QUICK_BUDGET`."""
    slowest = ", ".join(f"{n} {t:.0f} s" for n, t in sorted(took.items(), key=lambda item: -item[1])[:3])
    text = f"{'quick' if quick else 'full'} run: {duration:.0f} s (slowest: {slowest or '-'})"
    if quick and every:
        met = "met" if duration <= QUICK_BUDGET else "NOT met"
        text += f"; goal <= {QUICK_BUDGET:.0f} s: {met}, load average {os.getloadavg()[0]:.1f}"
    return text


if __name__ == "__main__":
    sys.exit(main())
