"""Indexes that find the interaction answering a request without comparing it to every one.

An interaction is filed under its *route*: the request parts compared for equality by the
matchers in use (method, path, the query parameters in sorted order; each only when its
matcher is required). Within a route, an interaction recorded with a body is filed under
its *body key*:

* a JSON body: a digest of its canonical text (keys sorted, no spaces, a number with an
  integral value written as an integer), so that two bodies equal as JSON values, which
  the ``body`` matcher treats as equal, have equal keys (``1`` and ``1.0`` included);
* any other body: a digest of its bytes;
* a body stored by digest (``{sha256: …}``): that SHA-256, looked up with the received
  body's SHA-256;
* a JSON body holding the filter's ``"REDACTED"`` (which matches any value): no key; such
  interactions are compared one by one with the ``body`` matcher.

A recorded path segment or query value holding the filter's placeholder ``REDACTED`` (a secret
the recorder removed, e.g. a bot token in ``/botREDACTED/sendMessage``) stands for any non-empty
text there (:func:`path_fits`, :func:`query_fits`); such interactions are filed apart, under their
recorded route, which a :class:`~ssemock.placeholder_routes.PlaceholderIndex` finds for each request
by its path segments (:meth:`CassetteIndex.routes_for`).

Equal keys are necessary for a match, not sufficient (a digest could collide, ``NaN`` is
not equal to itself): :mod:`ssemock.matching` runs the matchers on the interaction chosen.

:class:`PlayCounts` keeps the play counts and remembers, per list of interchangeable
interactions, how many leading ones are already played, so that "the first not yet
played" costs O(1) amortized even when thousands of identical requests are replayed.

An index is rebuilt when the cassette's ``interactions`` list is replaced or changes
length; an interaction changed in place after the cassette answered a request is not
seen (assign a new list after editing one).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

from .body_key import body_key
from .body_paths import BodyPath
from .cassette import Cassette, Request, body_digest
from .placeholder_routes import (
    PlaceholderIndex,
    RouteKey,
    aligned_path,
    holds_placeholder,
    path_fits,
    query_fits,
    redacted_fits,
)

__all__ = ["INDEXED_MATCHERS", "CassetteIndex", "IndexCache", "PlayCounts", "Route", "RouteKey", "aligned_path",
           "body_key", "path_fits", "query_fits", "redacted_fits", "route_key"]

INDEXED_MATCHERS = frozenset({"method", "path", "query", "body"})
"""The matchers an index understands; any other matcher in ``match_on`` means a linear scan."""

Tier = tuple[int, int, int]
"""How good a candidate is, smaller is better: (body differs, recorded without a body, already played)."""

def route_key(request: Request, fields: frozenset[str]) -> RouteKey:
    """The parts of ``request`` that the required matchers among ``fields`` compare for equality."""
    return (
        request.method if "method" in fields else None,
        request.path if "path" in fields else None,
        tuple(sorted((str(k), str(v)) for k, v in request.query)) if "query" in fields else None,
    )


class Route:
    """The interactions (indexes into the cassette) of one route, each list in cassette order.

    Attributes:
        bodied: recorded with a body (content or digest).
        wildcard: recorded without a body: they match any body.
        by_key: bodied interactions by body key.
        by_sha: interactions whose body is stored by digest, by that SHA-256 (hex).
        loose: JSON bodies holding ``"REDACTED"`` (or too deep to key): compared one by one.
    """

    __slots__ = ("bodied", "by_key", "by_sha", "loose", "wildcard")

    def __init__(self) -> None:
        self.bodied: list[int] = []
        self.wildcard: list[int] = []
        self.by_key: dict[bytes, list[int]] = {}
        self.by_sha: dict[str, list[int]] = {}
        self.loose: list[int] = []


class CassetteIndex:
    """One cassette's interactions by route and body key.

    Args:
        cassette: the cassette indexed (its interactions as they are now).
        fields: the required matchers among method, path and query (the route).
        bodies: file bodies by key too (``body`` is a matcher in use).
        ignore: body paths deleted from bodies before they are keyed (:mod:`ssemock.body_paths`).

    Attributes:
        routes: :class:`Route` by route key.
        patterned: :class:`Route` by recorded route key, for the routes whose path or a query value
            holds ``REDACTED`` (found for a request by :attr:`placeholders`: :meth:`routes_for`), in
            cassette order.
        placeholders: the keys of :attr:`patterned`, filed by path segment.
        sites: interaction indexes by ``(method, path)``, in cassette order (for reports).
        methods: the methods of :attr:`sites` by path, in the order the sites were met.
    """

    def __init__(
        self, cassette: Cassette, fields: frozenset[str], bodies: bool, ignore: tuple[BodyPath, ...] = (),
    ) -> None:
        self.fields = fields
        self.ignore = ignore
        self.routes: dict[RouteKey, Route] = {}
        self.patterned: dict[RouteKey, Route] = {}
        self.placeholders = PlaceholderIndex()
        self.sites: dict[tuple[str, str], list[int]] = {}
        self.methods: dict[str, list[str]] = {}
        for index, interaction in enumerate(cassette.interactions):
            request = interaction.request
            site = self.sites.get((request.method, request.path))
            if site is None:
                site = self.sites[(request.method, request.path)] = []
                self.methods.setdefault(request.path, []).append(request.method)
            site.append(index)
            place = route_key(request, fields)
            routes = self.routes
            if holds_placeholder(place):
                routes = self.patterned
                self.placeholders.add(place)
            route = routes.setdefault(place, Route())
            if request.body is None and request.body_sha256 is None:
                route.wildcard.append(index)
                continue
            route.bodied.append(index)
            if not bodies:
                continue
            if request.body_sha256 is not None:
                route.by_sha.setdefault(request.body_sha256, []).append(index)
                continue
            key, redacted = body_key(request, ignore=ignore)
            if key is None or redacted:
                route.loose.append(index)
            else:
                route.by_key.setdefault(key, []).append(index)

    def routes_for(self, request: Request) -> list[Route]:
        """The routes of :attr:`patterned` that ``request`` matches, in cassette order."""
        if not self.patterned:
            return []
        return [self.patterned[key] for key in self.placeholders.fitting(route_key(request, self.fields))]


class PlayCounts(dict[tuple[str, int], int]):
    """Play counts by ``(cassette name, interaction index)``, with "first not yet played" hints.

    A hint says that the first N interactions of a candidate list are played; it holds as
    long as counts only grow, so every way of lowering or removing a count drops the hints.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hints: dict[int, tuple[list[int], int]] = {}

    def __setitem__(self, key: tuple[str, int], value: int) -> None:
        if value <= 0:
            self.hints.clear()
        dict.__setitem__(self, key, value)  # not super(): one count per replayed request

    def __delitem__(self, key: tuple[str, int]) -> None:
        self.hints.clear()
        super().__delitem__(key)

    def clear(self) -> None:
        self.hints.clear()
        super().clear()

    def pop(self, *args: Any) -> Any:
        self.hints.clear()
        return super().pop(*args)

    def popitem(self) -> tuple[tuple[str, int], int]:
        self.hints.clear()
        return super().popitem()

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.hints.clear()
        super().update(*args, **kwargs)


def first_unplayed(
    group: list[int], name: str, played: dict[tuple[str, int], int], *, remember: bool = True
) -> int | None:
    """The first index of ``group`` (cassette ``name``) not yet played, or None when all were.

    With ``remember`` (``group`` is a list kept by an index, not a temporary one) and
    :class:`PlayCounts`, the search starts where the previous one on ``group`` ended."""
    hints = played.hints if remember and isinstance(played, PlayCounts) else None
    start = 0
    hint = None
    if hints is not None:
        hint = hints.get(id(group))
        if hint is not None and hint[0] is group:
            start = hint[1]
        else:
            hint = None
    found = start
    while found < len(group) and played.get((name, group[found]), 0) > 0:
        found += 1
    if hints is not None and (hint is None or found != start):  # a hint unchanged is not written again
        hints[id(group)] = (group, found)
    return group[found] if found < len(group) else None


Group = tuple[list[int], bool]
"""A list of interaction indexes in cassette order, and whether an index keeps it (see :func:`first_unplayed`)."""


def best_of(groups: Iterable[Group], name: str, played: dict[tuple[str, int], int]) -> tuple[int, int] | None:
    """``(already played, index)`` of the first unplayed interaction of the union of
    ``groups``, else of its first; None when all are empty."""
    unplayed: int | None = None
    first: int | None = None
    for group, kept in groups:
        if not group:
            continue
        first = group[0] if first is None else min(first, group[0])
        found = first_unplayed(group, name, played, remember=kept)
        if found is not None:
            unplayed = found if unplayed is None else min(unplayed, found)
    if unplayed is not None:
        return 0, unplayed
    return None if first is None else (1, first)


class Received:
    """What the index needs from a received request, computed once for all cassettes, and only
    when a route holds interactions filed by body (a route of wildcards never parses the body)."""

    __slots__ = ("_keys", "_sha", "request")

    def __init__(self, request: Request) -> None:
        self.request = request
        self._keys: dict[tuple[BodyPath, ...], bytes | None] = {}
        self._sha: str | None = None

    def key(self, ignore: tuple[BodyPath, ...] = ()) -> bytes | None:
        """The body key with the fields of ``ignore`` deleted (see :func:`body_key`); None when the body is
        too deep to key."""
        found = self._keys.get(ignore, b"")
        if found == b"":
            found = self._keys[ignore] = body_key(self.request, ignore=ignore)[0]
        return found

    @property
    def unkeyable(self) -> bool:
        """A body key was needed and the body is too deep to key: the index cannot tell."""
        return None in self._keys.values()

    @property
    def sha256(self) -> str:
        if self._sha is None:
            self._sha = body_digest(self.request.body or b"")
        return self._sha


def choose(
    index: CassetteIndex, cassette: Cassette, received: Received, *, body: bool, body_required: bool,
    played: dict[tuple[str, int], int], body_matches: Callable[[Request, Request, tuple[BodyPath, ...]], bool],
) -> tuple[Tier, int] | None:
    """The best candidate of one cassette as ``(tier, index)``, or None.

    Args:
        index: the index of ``cassette`` (its name keys the play counts).
        received: the request.
        body: ``body`` is a matcher in use; ``body_required``: a differing body excludes.
        played: play counts.
        body_matches: runs the ``body`` matcher on the received and a recorded request, ignoring the
            index's body paths (for loose bodies).
    """
    route = index.routes.get(route_key(received.request, index.fields))
    found = None if route is None else _choose_in(route, cassette, received, body=body, body_required=body_required,
                                                  played=played, body_matches=body_matches, ignore=index.ignore)
    if index.patterned:  # routes recorded with a secret removed: the best of those the request matches too
        for other in index.routes_for(received.request):
            more = _choose_in(other, cassette, received, body=body, body_required=body_required, played=played,
                              body_matches=body_matches, ignore=index.ignore)
            if more is not None and (found is None or more < found):
                found = more
    return found


def _choose_in(
    route: Route, cassette: Cassette, received: Received, *, body: bool, body_required: bool,
    played: dict[tuple[str, int], int], body_matches: Callable[[Request, Request, tuple[BodyPath, ...]], bool],
    ignore: tuple[BodyPath, ...] = (),
) -> tuple[Tier, int] | None:
    """:func:`choose` within one route (``ignore``: the index's body paths)."""
    name = cassette.name
    if body and (route.by_key or route.by_sha or route.loose):
        groups: list[Group] = [(route.by_key.get(received.key(ignore) or b"", []), True)] if route.by_key else []
        if route.by_sha:
            groups.append((route.by_sha.get(received.sha256, []), True))
        if route.loose:
            interactions = cassette.interactions
            groups.append(([i for i in route.loose if body_matches(received.request, interactions[i].request, ignore)],
                           False))
        found = best_of(groups, name, played)
        if found is not None:
            return (0, 0, found[0]), found[1]
    elif not body and route.bodied:
        played_, index_ = _best_in(route.bodied, name, played)
        return (0, 0, played_), index_
    if route.wildcard:
        played_, index_ = _best_in(route.wildcard, name, played)
        return (0, 1, played_), index_
    if body and not body_required and route.bodied:
        played_, index_ = _best_in(route.bodied, name, played)
        return (1, 0, played_), index_
    return None


def _best_in(group: list[int], name: str, played: dict[tuple[str, int], int]) -> tuple[int, int]:
    """:func:`best_of` of one group kept by an index, not empty."""
    found = first_unplayed(group, name, played)
    return (0, found) if found is not None else (1, group[0])


class IndexCache:
    """Indexes by cassette, built on first use and dropped with their cassette."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Cassette], list[Any], int, frozenset[str], bool, CassetteIndex]] = {}

    def current(
        self, cassette: Cassette, fields: frozenset[str], bodies: bool, ignore: tuple[BodyPath, ...] = (),
    ) -> CassetteIndex | None:
        """The index of ``cassette`` for these route ``fields`` and ignored body paths if built and still
        valid, else None."""
        entry = self._entries.get(id(cassette))
        if entry is not None:
            ref, interactions, length, e_fields, e_bodies, index = entry
            if (ref() is cassette and interactions is cassette.interactions and length == len(interactions)
                    and e_fields == fields and (e_bodies or not bodies) and (index.ignore == ignore or not bodies)):
                return index
        return None

    def get(
        self, cassette: Cassette, fields: frozenset[str], bodies: bool, ignore: tuple[BodyPath, ...] = (),
    ) -> CassetteIndex:
        """The index of ``cassette`` for these route ``fields`` and ignored body paths (rebuilt when the
        cassette changed)."""
        index = self.current(cassette, fields, bodies, ignore)
        if index is not None:
            return index
        key = id(cassette)
        index = CassetteIndex(cassette, fields, bodies, ignore)
        entries = self._entries

        def forget(_: weakref.ref[Cassette]) -> None:
            entries.pop(key, None)

        ref = weakref.ref(cassette, forget)
        entries[key] = (ref, cassette.interactions, len(cassette.interactions), fields, bodies, index)
        return index

    def __len__(self) -> int:
        return len(self._entries)
