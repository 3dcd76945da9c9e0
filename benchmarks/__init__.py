"""Benchmarks: speed and scale of ssemock, each figure measured against a baseline in the same run.

``python -m benchmarks [--quick] [--json FILE]`` runs every figure and prints a table.
A figure is a dict ``{"name", "value", "unit", "baseline", "ratio", "goal", "met"}``:

* ``value``: what ssemock achieved, in ``unit``;
* ``baseline``: the same quantity for the baseline named in the figure's module
  (usually a bare aiohttp handler doing the same work), measured in the same run,
  interleaved with ours so that a busy machine slows both alike; None for a count;
* ``ratio``: ``value / baseline`` (None for a count);
* ``goal``: the goal as text, e.g. ``"ratio >= 0.9"`` or ``"<= 2 ms"``; ``met``: bool.

Each figure module exposes ``run(quick: bool) -> list[dict]`` and runs on its own as
``python -m benchmarks.NAME [--quick]``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FIGURE_KEYS", "figure"]

FIGURE_KEYS = ("name", "value", "unit", "baseline", "ratio", "goal", "met")


def figure(
    name: str, value: float, unit: str, *, baseline: float | None, goal: str, met: bool,
    ratio: float | None = None,
) -> dict[str, Any]:
    """One figure; ``ratio`` defaults to ``value / baseline`` when a baseline is given."""
    if ratio is None and baseline:
        ratio = value / baseline
    return {
        "name": name,
        "value": round(float(value), 6),
        "unit": unit,
        "baseline": None if baseline is None else round(float(baseline), 6),
        "ratio": None if ratio is None else round(float(ratio), 4),
        "goal": goal,
        "met": bool(met),
    }
