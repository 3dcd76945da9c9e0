"""Which interactions a request that matched none is compared with, to name the closest.

At most :data:`REPORT_BUDGET` of them, chosen through the indexes (:mod:`ssemock.match_index`): first
those of the request's own route, of its method and path, and of the placeholder routes it fits, then
those of its path with another method, then the others in cassette order. A miss therefore costs the
same whatever the size of the cassettes.
"""

from __future__ import annotations

from collections.abc import Iterable

from .cassette import Cassette, Request
from .match_index import IndexCache, route_key
from .placeholder_routes import aligned_path

__all__ = ["LIKENESS_CHARS", "LIKENESS_SLACK", "REPORT_BUDGET", "path_likeness", "report_sample"]

REPORT_BUDGET = 32
"""At most this many interactions are compared with a request that matched none, to name
the closest: first those of its own route and of its method and path, then the others in
cassette order. A miss therefore costs O(1) lookups per cassette plus 32 comparisons,
whatever the size of the cassettes."""


def report_sample(
    pool: list[Cassette],
    received: Request,
    fields: frozenset[str],
    indexes: IndexCache | None,
) -> list[tuple[int, Cassette, int]]:
    """Up to :data:`REPORT_BUDGET` ``(position, cassette, index)`` to compare for the report, by position
    (across ``pool``, in order); ``fields``: the required matchers among method, path and query."""
    chosen: dict[tuple[int, int], tuple[int, Cassette, int]] = {}
    offsets = []
    total = 0
    for cassette in pool:
        offsets.append(total)
        total += len(cassette.interactions)

    def take(order: int, indexes_: Iterable[int]) -> None:
        for i in indexes_:
            if len(chosen) >= REPORT_BUDGET:
                return
            chosen.setdefault((order, i), (offsets[order] + i, pool[order], i))

    if indexes is not None and total > REPORT_BUDGET:
        for order, cassette in enumerate(pool):
            index = indexes.get(cassette, fields, False)
            route = index.routes.get(route_key(received, fields))
            if route is not None:
                take(order, route.bodied[:3] + route.wildcard[:3])
            take(order, index.sites.get((received.method, received.path), [])[:3])
            for other in index.routes_for(received):
                take(order, other.bodied[:3] + other.wildcard[:3])
        for order, cassette in enumerate(pool):
            index = indexes.get(cassette, fields, False)
            for method in index.methods.get(received.path, ()):
                if method != received.method:
                    take(order, index.sites[(method, received.path)][:3])
    for order, cassette in enumerate(pool):
        take(order, range(min(len(cassette.interactions), REPORT_BUDGET)))
    return sorted(chosen.values(), key=lambda c: c[0])


LIKENESS_CHARS = 128
"""Characters of a recorded path :func:`path_likeness` compares at most: a longer path is compared by
its first and last half of that (difflib's ratio takes time that grows with the product of the
lengths: 32 request paths of 8 KB took 0.3 s against distinct recorded paths)."""
LIKENESS_SLACK = 32
"""Characters of a received path compared beyond the recorded path's length (cut as above): a request
path that long is more than unlike the recording already, and a long one costs no more than a short one."""


def path_likeness(received: str, recorded: str) -> float:
    """How alike two paths are, from 0 to 1 (:meth:`difflib.SequenceMatcher.ratio`), ``received`` written
    with the segments that fit a placeholder of ``recorded`` as recorded (:func:`aligned_path`), each path
    cut to :data:`LIKENESS_CHARS` characters, ``received`` to :data:`LIKENESS_SLACK` more than ``recorded``."""
    from difflib import SequenceMatcher  # only a request that matched nothing needs it

    mine = _clipped(aligned_path(received, recorded), min(LIKENESS_CHARS, len(recorded) + LIKENESS_SLACK))
    return SequenceMatcher(None, mine, _clipped(recorded, LIKENESS_CHARS)).ratio()


def _clipped(text: str, most: int) -> str:
    """``text``, or its first and last ``most // 2`` characters when it is longer than ``most``."""
    half = most // 2
    return text if len(text) <= most else text[:half] + text[len(text) - half :]
