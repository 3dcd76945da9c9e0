"""Delta debugging: the smallest part of a failing input that still fails (Zeller and Hildebrandt,
"Simplifying and Isolating Failure-Inducing Input", IEEE TSE 28(2), 2002, the ``ddmin`` algorithm).

The input is cut into ``n`` parts (2 at first): a part that fails alone is kept (``n`` back to 2), else
a complement (the input but one part) that fails is kept (``n - 1`` parts); when neither fails, the parts
are halved (``n`` doubled) until each holds one item. The result is 1-minimal: removing any one item of
it makes the input pass. The order is fixed: parts are contiguous runs of the input in its order, tried
first to last, so the same input and the same answers give the same result.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["ddmin"]

T = TypeVar("T")


def ddmin(
    items: Sequence[T], fails: Callable[[tuple[T, ...]], bool], out_of_time: Callable[[], bool] = lambda: False
) -> tuple[tuple[T, ...], bool]:
    """The 1-minimal failing subsequence of ``items`` that ``ddmin`` finds, and whether it stopped early.

    Args:
        items: the failing input (``fails(tuple(items))`` is taken to hold; it is not asked).
        fails: whether a non-empty subsequence of ``items`` (in their order) still fails; the empty one
            is taken to pass (never asked).
        out_of_time: asked before each call of ``fails``; True stops the search with the smallest failing
            subsequence found so far (then not necessarily 1-minimal).

    Returns:
        ``(subsequence, stopped_early)``: a subsequence of ``items`` for which ``fails`` held (``items``
        itself when no smaller one did), and True when ``out_of_time`` stopped the search.
    """
    current, parts = tuple(items), 2
    while len(current) >= 2:
        for candidate, next_parts in _candidates(current, parts):
            if out_of_time():
                return current, True
            if fails(candidate):
                current, parts = candidate, next_parts
                break
        else:
            if parts >= len(current):
                return current, False
            parts = min(2 * parts, len(current))
    return current, False


def _candidates(items: tuple[T, ...], n: int) -> Iterator[tuple[tuple[T, ...], int]]:
    """Each of the ``n`` parts of ``items`` (then tried with 2 parts), then each complement (``n - 1``
    parts); with 2 parts the complements are the parts again and are not tried twice."""
    bounds = [len(items) * i // n for i in range(n + 1)]
    parts = [items[a:b] for a, b in itertools.pairwise(bounds)]
    for part in parts:
        yield part, 2
    if n > 2:
        for a, b in itertools.pairwise(bounds):
            yield items[:a] + items[b:], n - 1
