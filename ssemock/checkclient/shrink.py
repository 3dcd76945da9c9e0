"""Shrinking a failed conformance case to the fewest scenario steps that still fail.

Each step alone is tried first (most failures hinge on one), then, when none fails alone, the steps are
dropped one at a time while the rest still fails (a 1-minimal set: dropping any one more step makes the
case pass). Each try is a run of the client, graded by the case's own rule; the search stops when its
time budget (seconds, ``--shrink-budget``) is spent and says so. It is deterministic: the same steps are
tried in the same order, and the scenario seed is the run's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import yaml

from ..scenario import Scenario
from ..scenario.base import Step
from .cases import Case

__all__ = ["Shrunk", "shrink", "steps_yaml"]


@dataclass(frozen=True)
class Shrunk:
    """The result of shrinking: the steps that still fail, as YAML (one line each), how many runs it
    took, and whether the budget ran out first (``stopped_early``)."""

    steps: tuple[Step, ...]
    runs: int
    stopped_early: bool

    def describe(self) -> str:
        """``shrunk to 1 step of 7 (9 runs): - line-separators: {...}``, the steps one per line."""
        early = ", stopped early: the budget ran out" if self.stopped_early else ""
        return f"shrunk to {len(self.steps)} step(s) ({self.runs} runs{early}):\n{steps_yaml(self.steps)}"


def steps_yaml(steps: Sequence[Step]) -> str:
    """The steps as scenario YAML, one ``- name: {fields}`` line each."""
    return "\n".join(
        "- " + yaml.safe_dump(s.describe(), default_flow_style=True, width=10_000).strip()[1:-1] for s in steps
    )


def shrink(case: Case, fails: Callable[[Case], bool], budget: float) -> Shrunk | None:
    """The fewest steps of ``case.scenario`` for which ``fails(case with those steps)`` still holds;
    None when the scenario has fewer than 2 steps. ``budget``: seconds to spend at most."""
    scenario = case.scenario
    if scenario is None or len(scenario.steps) < 2:
        return None
    deadline, runs = time.monotonic() + budget, 0

    def tried(steps: list[Step]) -> bool:
        nonlocal runs
        runs += 1
        candidate = Scenario(f"{scenario.name}-shrunk-{runs}", list(steps), preserves=scenario.preserves)
        return fails(Case(case.cassette, candidate, case.rule, bundled=False))

    for step in scenario.steps:
        if time.monotonic() > deadline:
            return Shrunk(tuple(scenario.steps), runs, True)
        if tried([step]):
            return Shrunk((step,), runs, False)
    kept = list(scenario.steps)
    index = 0
    while index < len(kept):
        if time.monotonic() > deadline:
            return Shrunk(tuple(kept), runs, True)
        rest = kept[:index] + kept[index + 1 :]
        if tried(rest):
            kept = rest
        else:
            index += 1
    return Shrunk(tuple(kept), runs, False)
