"""Shrinking a failed conformance case to the fewest scenario steps, and chunk boundaries, that still fail.

Each step alone is tried first (most failures hinge on one), then, when none fails alone, the steps are
dropped one at a time while the rest still fails (a 1-minimal set: dropping any one more step makes the
case pass). When the steps left include ``fragment`` steps, they are replaced by one
``fragment: {mode: offsets}`` step making the same chunk boundaries (:mod:`.chunking`, read from the plan
the server sends for the case's recording), and its boundaries are shrunk by delta debugging
(:func:`.ddmin.ddmin`) to a 1-minimal set: the bytes the failure hinges on, shown in context. Each try is
a run of the client, graded by the case's own rule; the search stops when its time budget (seconds,
``--shrink-budget``, both searches together) is spent and says so. It is deterministic: the same steps and
boundaries are tried in the same order, and the scenario seed is the run's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..plan import Plan
from ..scenario import Scenario
from ..scenario.base import Step
from ..scenario.chunk_steps import Fragment
from .cases import Case
from .chunking import as_offsets, in_context
from .ddmin import ddmin

__all__ = ["Shrunk", "shrink", "steps_yaml"]


@dataclass(frozen=True)
class Shrunk:
    """The result of shrinking: the steps that still fail, as YAML (one line each), how many runs it
    took, whether the budget ran out first (``stopped_early``), and when a ``fragment`` step is left, the
    chunk boundaries kept (body offsets in bytes) of the ``boundaries_made`` that its steps made, each
    shown in context (``context``, :func:`.chunking.in_context`)."""

    steps: tuple[Step, ...]
    runs: int
    stopped_early: bool
    boundaries: tuple[int, ...] = ()
    boundaries_made: int = 0
    context: tuple[str, ...] = ()

    def describe(self) -> str:
        """``shrunk to 2 step(s) (12 runs, 1 of 354 chunk boundaries):``, the steps one per line, then each
        chunk boundary kept in context as a YAML comment (``# offset 21: ...start\\r|\\ndata...``)."""
        cut = f", {len(self.boundaries)} of {self.boundaries_made} chunk boundaries" if self.boundaries_made else ""
        early = ", stopped early: the budget ran out" if self.stopped_early else ""
        head = f"shrunk to {len(self.steps)} step(s) ({self.runs} runs{cut}{early}):"
        return "\n".join([head, steps_yaml(self.steps), *(f"# {line}" for line in self.context)])


def steps_yaml(steps: Sequence[Step]) -> str:
    """The steps as scenario YAML, one ``- name: {fields}`` line each (an ``offsets`` fragment with its
    mode, offsets and the pacing fields that differ from their defaults)."""
    return "\n".join(
        "- " + yaml.safe_dump(_described(s), default_flow_style=True, width=10_000).strip()[1:-1] for s in steps
    )


def _described(step: Step) -> dict[str, Any]:
    if not (isinstance(step, Fragment) and step.mode == "offsets"):
        return step.describe()
    fields: dict[str, Any] = {"mode": "offsets", "offsets": list(step.offsets)}
    fields.update({k: getattr(step, k) for k in ("pace", "budget") if getattr(step, k) != getattr(Fragment, k)})
    return {step.name: fields}


class _Search:
    """The tries of one shrinking: runs counted, against one deadline (``time.monotonic()`` seconds)."""

    def __init__(self, case: Case, fails: Callable[[Case], bool], deadline: float) -> None:
        assert case.scenario is not None
        self.case, self.scenario, self.fails, self.deadline, self.runs = case, case.scenario, fails, deadline, 0

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def of(self, steps: Sequence[Step], tag: str = "plan") -> Scenario:
        return Scenario(f"{self.scenario.name}-shrunk-{tag}", list(steps), preserves=self.scenario.preserves)

    def tried(self, steps: Sequence[Step]) -> bool:
        self.runs += 1
        return self.fails(Case(self.case.cassette, self.of(steps, str(self.runs)), self.case.rule, bundled=False))


def shrink(
    case: Case, fails: Callable[[Case], bool], budget: float, plan_of: Callable[[Scenario], Plan] | None = None
) -> Shrunk | None:
    """The fewest steps of ``case.scenario`` for which ``fails(case with those steps)`` still holds, then
    the fewest chunk boundaries of its ``fragment`` steps; None when there is nothing to shrink (one step
    and no chunk boundary that ``plan_of`` shows).

    Args:
        case: the failed case.
        fails: one run of the client on a case, graded by its rule: True when it fails.
        budget: seconds to spend at most (both searches).
        plan_of: the plan the server sends for the case's recording under a scenario (None: no
            chunk boundaries shrunk).
    """
    scenario = case.scenario
    if scenario is None or not scenario.steps:
        return None
    search = _Search(case, fails, time.monotonic() + budget)
    several = len(scenario.steps) >= 2
    kept, early = _fewest_steps(search, list(scenario.steps)) if several else (list(scenario.steps), False)
    found = None if early or plan_of is None else _fewest_boundaries(search, kept, plan_of)
    if found is not None:
        return found
    return Shrunk(tuple(kept), search.runs, early) if several else None


def _fewest_steps(search: _Search, steps: list[Step]) -> tuple[list[Step], bool]:
    """Each step alone, then one-at-a-time removal; the steps kept and whether the budget ran out."""
    for step in steps:
        if search.out_of_time():
            return steps, True
        if search.tried([step]):
            return [step], False
    kept, index = list(steps), 0
    while index < len(kept):
        if search.out_of_time():
            return kept, True
        rest = kept[:index] + kept[index + 1 :]
        if search.tried(rest):
            kept = rest
        else:
            index += 1
    return kept, False


def _fewest_boundaries(search: _Search, steps: list[Step], plan_of: Callable[[Scenario], Plan]) -> Shrunk | None:
    """The ``fragment`` steps of ``steps`` as one ``offsets`` step with a 1-minimal set of its chunk
    boundaries (ddmin); None when they make no boundary an ``offsets`` step can make."""
    offsets = as_offsets(steps, lambda some: plan_of(search.of(some)))
    if offsets is None:
        return None
    kept, early = ddmin(offsets.offsets, lambda some: search.tried(offsets.keeping(some)), search.out_of_time)
    shrunk = offsets.keeping(kept)
    body = plan_of(search.of(shrunk)).response.body
    context = tuple(in_context(body, offset) for offset in kept)
    return Shrunk(tuple(shrunk), search.runs, early, kept, len(offsets.offsets), context)
