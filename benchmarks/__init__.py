"""Benchmarks: speed and scale of ssemock, each figure measured against a baseline in the same run.

``python -m benchmarks [--quick] [--json FILE]`` runs every figure and prints a table.
A figure is a dict ``{"name", "value", "unit", "baseline", "ratio", "goal", "met"}``:

* ``value``: what ssemock achieved, in ``unit``;
* ``baseline``: the same quantity for the baseline named in the figure's module
  (usually a bare aiohttp handler doing the same work), measured in the same run,
  interleaved with ours so that a busy machine slows both alike; None for a count;
* ``ratio``: ``value / baseline`` (None for a count);
* ``goal``: the goal as text, e.g. ``"ratio >= 0.9"`` or ``"<= 2 ms"``; ``met``: bool;
* ``spread``: for a figure repeated several times, the min/median/max of ours and of the
  baseline as text (``"ours 0.21/0.24/0.29, baseline 0.05/0.06/0.07 (5 runs)"``), else None;
  ``"; noisy: met in 2 of 5 paired runs"`` follows when the runs, taken pair by pair, disagree on
  the goal (:func:`noisy`): such a figure's met/unmet may change from one run of the benchmarks to
  the next.

Each figure module exposes ``run(quick: bool) -> list[dict]`` and runs on its own as
``python -m benchmarks.NAME [--quick]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FIGURE_KEYS", "cell", "figure", "noisy", "spread"]

FIGURE_KEYS = ("name", "value", "unit", "baseline", "ratio", "goal", "met", "spread")


def figure(
    name: str, value: float, unit: str, *, baseline: float | None, goal: str, met: bool,
    ratio: float | None = None, spread: str | None = None,
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
        "spread": spread,
    }


def spread(ours: list[float], baseline: list[float] | None = None, digits: int = 3) -> str:
    """``"ours MIN/MEDIAN/MAX, baseline MIN/MEDIAN/MAX (N runs)"`` of repeated measurements."""
    from .common import median

    def three(values: list[float]) -> str:
        return "/".join(f"{v:.{digits}g}" for v in (min(values), median(values), max(values)))

    text = f"ours {three(ours)}"
    if baseline:
        text += f", baseline {three(baseline)}"
    return f"{text} ({len(ours)} runs)"


def noisy(ours: list[float], baseline: list[float], met: Callable[[float, float], bool]) -> str:
    """``"; noisy: met in K of N paired runs"`` when ``met(ours[i], baseline[i])`` holds for some of the
    interleaved runs and not for others, else ``""`` (appended to a figure's ``spread``)."""
    verdicts = [met(o, b) for o, b in zip(ours, baseline)]
    held = sum(verdicts)
    return f"; noisy: met in {held} of {len(verdicts)} paired runs" if 0 < held < len(verdicts) else ""


def cell(value: Any, *, markdown: bool = False) -> str:
    """A figure's field as a table cell: for the terminal (``-`` when none, ``yes``/``NO``) or, with
    ``markdown``, for the docs page (``–``, ``yes``/``no``, thousands separated, ``|`` escaped); floats
    to 4 significant digits below 100,000."""
    if value is None:
        return "–" if markdown else "-"
    if isinstance(value, bool):
        return "yes" if value else "no" if markdown else "NO"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}" if markdown else f"{value:.0f}"
    return str(value).replace("|", "\\|") if markdown else str(value)
