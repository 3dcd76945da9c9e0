"""How far a recorded request is from a received one: the ranking of the closest matches in a 404.

A request that matches nothing is answered ``404 ssemock_no_match`` with the closest interactions
(:mod:`ssemock.matching`), ranked by the number of matchers they fail, then by their distance: the
sum, over the failing matchers, of a number from 0 (alike) to 1 (nothing alike):

* ``method``: 1;
* ``path``: 1 minus the paths' likeness (:func:`~ssemock.match_sample.path_likeness`);
* ``query``: the share of ``(name, value)`` pairs that are not in both;
* ``body``, both JSON: the mean over the leaves of either body (``messages.0.content`` and its
  value) of how much they differ: 0 for an equal leaf, 1 for a missing one or another type, for
  two strings 1 minus their likeness (difflib's quick ratio, on at most :data:`TEXT_CHARS`
  characters); bodies of more than :data:`MAX_LEAVES` leaves, and bodies that are not JSON over
  :data:`TEXT_CHARS` bytes, by size only; other bodies by their bytes' likeness;
* ``body`` recorded by digest (``sha256`` + ``size``): at least 0.5 (a digest says only that the
  bytes differ), more as the sizes differ.

Body fields ignored in matching (:mod:`ssemock.body_paths`) are deleted from both bodies before
their leaves are compared.

So a one-character edit of a prompt (``"hellp"`` for ``"hello"``: 0.2) ranks before a 5 MB body
known only by its digest, whatever the cassette order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .body_paths import BodyPath, without
from .cassette import Request
from .match_sample import path_likeness

__all__ = ["MAX_LEAVES", "TEXT_CHARS", "Closeness"]

MAX_LEAVES = 10_000
"""Most leaves of a JSON body compared one by one; a larger body is compared by size."""
TEXT_CHARS = 64 * 1024
"""Most characters of a string (and bytes of a body that is not JSON) whose likeness is measured."""


class Closeness:
    """The distances of recorded requests from one received ``request`` (its leaves are read once)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self._leaves: dict[str, Any] | None = None
        self._read = False
        self._likeness: dict[str, float] = {}  # by recorded path: candidates often share one

    def distance(self, recorded: Request, failing: Iterable[str], ignore: Sequence[BodyPath] = ()) -> float:
        """The sum of the distances (0 to 1 each) of the matchers ``failing`` (see the module docstring);
        the body fields ``ignore`` names are deleted from both JSON bodies first."""
        total = 0.0
        for name in failing:
            if name == "path":
                if recorded.path not in self._likeness:
                    self._likeness[recorded.path] = path_likeness(self.request.path, recorded.path)
                total += 1.0 - self._likeness[recorded.path]
            elif name == "query":
                total += _pairs_distance(self.request.query, recorded.query)
            elif name == "body":
                total += self._body(recorded, tuple(ignore))
            else:
                total += 1.0
        return total

    def _body(self, recorded: Request, ignore: tuple[BodyPath, ...]) -> float:
        mine = self.request.body or b""
        if recorded.body_sha256 is not None:
            return 0.5 + 0.5 * _size_distance(len(mine), recorded.body_size or 0)
        theirs = recorded.body or b""
        leaves = self._received_leaves(ignore)
        recorded_leaves = _leaves(without(recorded.json_view(), ignore)) if leaves is not None else None
        if leaves is not None and recorded_leaves is not None:
            keys = leaves.keys() | recorded_leaves.keys()
            if not keys:
                return 0.0
            far = sum(_leaf_distance(leaves.get(k, _MISSING), recorded_leaves.get(k, _MISSING)) for k in keys)
            return far / len(keys)
        if len(mine) > TEXT_CHARS or len(theirs) > TEXT_CHARS:
            return _size_distance(len(mine), len(theirs))
        return 1.0 - _likeness(mine, theirs)

    def _received_leaves(self, ignore: tuple[BodyPath, ...]) -> dict[str, Any] | None:
        if ignore:
            return _leaves(without(self.request.json_view(), ignore))
        if not self._read:
            self._leaves, self._read = _leaves(self.request.json_view()), True
        return self._leaves


_MISSING = object()


def _leaves(value: Any) -> dict[str, Any] | None:
    """``{"a.0.b": leaf}`` of a parsed JSON value (None: not JSON, or more than :data:`MAX_LEAVES` leaves)."""
    if value is None:
        return None
    out: dict[str, Any] = {}
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        prefix, node = stack.pop()
        if (isinstance(node, (dict, list))) and node:
            if len(out) + len(stack) + len(node) > MAX_LEAVES:  # before any item is walked: bounded work
                return None
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((f"{prefix}.{k}", v) for k, v in items)
        else:
            out[prefix] = node
    return out


def _leaf_distance(a: Any, b: Any) -> float:
    if a is _MISSING or b is _MISSING or type(a) is not type(b):
        return 1.0
    if a == b:
        return 0.0
    if isinstance(a, str):
        return 1.0 - _likeness(a[:TEXT_CHARS], b[:TEXT_CHARS])
    return 1.0


def _likeness(a: Any, b: Any) -> float:
    """difflib's quick ratio of two strings or byte strings, 0 to 1."""
    from difflib import SequenceMatcher  # only a request that matched nothing needs it

    return SequenceMatcher(None, a, b, autojunk=False).quick_ratio()


def _pairs_distance(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> float:
    mine, theirs = set(a), set(b)
    union = mine | theirs
    return len(mine ^ theirs) / len(union) if union else 0.0


def _size_distance(a: int, b: int) -> float:
    return 0.0 if a == b else 1.0 - min(a, b) / max(a, b)
