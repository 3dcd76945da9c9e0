"""The chunk boundaries that a scenario's ``fragment`` steps make, as one ``fragment: {mode: offsets}`` step,
so that shrinking can drop boundaries one by one (:mod:`.shrink`, :mod:`.ddmin`).

The boundaries are read from plans, never recomputed: the steps are applied to the case's recording as
the server applies them (:func:`.reference.sent_plan`, the run's seed), with and without the ``fragment``
steps; the body offsets where a chunk begins in the first and not in the second are the ones they make.
The ``offsets`` step is used only when it makes the very same chunks (bytes and times) and pacing as the
steps it replaces: not for ``mode: buffer``, which drops the recorded boundaries, nor ``coalesce``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..plan import Plan
from ..scenario.base import Step
from ..scenario.chunk_steps import Fragment

__all__ = ["CONTEXT_BYTES", "Offsets", "as_offsets", "chunk_starts", "in_context"]

CONTEXT_BYTES = 12
"""Bytes shown on each side of a chunk boundary by :func:`in_context`."""
_SHOWN = {0x0D: "\\r", 0x0A: "\\n", 0x09: "\\t", 0x5C: "\\\\", 0x7C: "\\x7c"}  # "|" marks the boundary


def chunk_starts(plan: Plan) -> set[int]:
    """The body offsets (bytes) where a chunk of ``plan`` begins, but the first (0)."""
    starts = set(itertools.accumulate(len(chunk.data) for chunk in plan.response.chunks))
    return starts - {0, len(plan.response.body)}


@dataclass(frozen=True)
class Offsets:
    """Steps whose ``fragment`` steps are replaced by one ``fragment: {mode: offsets}`` step.

    Attributes:
        steps: the steps, the ``offsets`` step at ``index`` (where the first ``fragment`` step was).
        index: where the ``offsets`` step is in ``steps``.
        offsets: the chunk boundaries the ``fragment`` steps made (body offsets in bytes, increasing).
    """

    steps: tuple[Step, ...]
    index: int
    offsets: tuple[int, ...]

    def keeping(self, offsets: Sequence[int]) -> list[Step]:
        """The steps with only ``offsets`` (non-empty) as chunk boundaries of the ``offsets`` step."""
        step = self.steps[self.index]
        assert isinstance(step, Fragment)
        kept = Fragment(mode="offsets", offsets=list(offsets), pace=step.pace, budget=step.budget)
        return [*self.steps[: self.index], kept, *self.steps[self.index + 1 :]]


def as_offsets(steps: Sequence[Step], plan_of: Callable[[Sequence[Step]], Plan]) -> Offsets | None:
    """``steps`` with their ``fragment`` steps as one ``offsets`` step making the same chunks.

    Args:
        steps: a scenario's steps.
        plan_of: the plan the server sends for the case's recording under some steps.

    Returns:
        The :class:`Offsets`, or None when no ``fragment`` step adds a chunk boundary, when other steps'
        body depends on them, or when an ``offsets`` step does not make the same chunks and pacing.
    """
    fragments = [step for step in steps if isinstance(step, Fragment)]
    if not fragments:
        return None
    whole = plan_of(steps)
    bare = plan_of([step for step in steps if not isinstance(step, Fragment)])
    offsets = tuple(sorted(chunk_starts(whole) - chunk_starts(bare)))
    if not offsets or whole.response.body != bare.response.body:
        return None
    index = next(i for i, step in enumerate(steps) if isinstance(step, Fragment))
    pace, budget = max(f.pace for f in fragments), max(f.budget for f in fragments)
    rest = [step for i, step in enumerate(steps) if i == index or not isinstance(step, Fragment)]
    rest[index] = Fragment(mode="offsets", offsets=list(offsets), pace=pace, budget=budget)
    made = Offsets(tuple(rest), index, offsets)
    return made if _sent(plan_of(made.steps)) == _sent(whole) else None


def _sent(plan: Plan) -> tuple[object, ...]:
    """What the server writes of ``plan`` and when: the chunks (time, bytes) and the pacing."""
    return [(chunk.t, chunk.data) for chunk in plan.response.chunks], plan.pace, plan.budget, plan.pauses


def in_context(body: bytes, offset: int, width: int = CONTEXT_BYTES) -> str:
    """``offset 21: ...essage_start\\r|\\ndata: {"type...``: up to ``width`` bytes of ``body`` on each side of
    the chunk boundary at ``offset``, escaped (CR, LF, tab, backslash, ``|``, bytes outside printable ASCII
    as ``\\xNN``), the boundary marked ``|``; ``...`` where the body goes on."""
    start, end = max(offset - width, 0), min(offset + width, len(body))
    before = ("..." if start > 0 else "") + _escaped(body[start:offset])
    after = _escaped(body[offset:end]) + ("..." if end < len(body) else "")
    return f"offset {offset}: {before}|{after}"


def _escaped(data: bytes) -> str:
    return "".join(_SHOWN.get(b, chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}") for b in data)
