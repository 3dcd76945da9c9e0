"""Request matching: named matchers, ``match_on``, and the closest-match report.

A matcher (:mod:`ssemock.matchers`) is a plain function ``(received, recorded) -> None`` that raises
``AssertionError`` with a readable difference (the vcrpy ``matchers.py`` shape).
``match_on`` is the tuple of matcher names an interaction must pass; the default
is :data:`DEFAULT_MATCH_ON` (method + path + body).

Choosing among several matching interactions: interactions whose recorded body
was compared are preferred over ones recorded without a body (which match any
body); then the first one not yet played since the play counts were last cleared,
in cassette order; when all were played, the first (replays repeat).

Given an :class:`IndexCache`, :func:`find_interaction` finds that interaction through
indexes (:mod:`ssemock.match_index`) instead of comparing the request with every
interaction, with the same result; a request that matches nothing is compared with at
most :data:`REPORT_BUDGET` interactions to name the closest.

Volatile fields: the body paths ``ignore`` names (the server's, :mod:`ssemock.body_paths`), with those
of each cassette (:attr:`~ssemock.cassette.Cassette.ignore_body` and
:attr:`~ssemock.cassette.Cassette.dropped_body`), are deleted from both bodies before the ``body``
matcher compares them (:func:`ignore_for`); the indexes key bodies the same way. A request that
matches nothing is told, for each closest interaction, the body field that differs (``field``) and
the ignored fields that differ when nothing else in the body does (``ignored``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .body_paths import BodyPath, compile_paths
from .cassette import Cassette, Interaction, Request
from .closeness import Closeness
from .errors import ConfigError, NoMatchError
from .match_index import (
    INDEXED_MATCHERS,
    IndexCache,
    PlayCounts,
    Received,
    Tier,
    body_key,
    choose,
)
from .match_sample import REPORT_BUDGET, report_sample
from .matchers import MATCHERS, Matcher, body, body_difference, ignored_only, query_text

__all__ = [
    "DEFAULT_MATCH_ON",
    "MATCHERS",
    "REPORT_BUDGET",
    "IndexCache",
    "Match",
    "Matcher",
    "PlayCounts",
    "check_match_on",
    "closest_entry",
    "describe",
    "differences",
    "find_interaction",
    "ignore_for",
    "indexes_ready",
    "key_request",
    "prepare_indexes",
    "rank_closest",
]

DEFAULT_MATCH_ON: tuple[str, ...] = ("method", "path", "body")


def check_match_on(match_on: Any) -> tuple[str, ...]:
    """``match_on`` as a tuple of matcher names.

    Raises:
        ConfigError: ``match_on`` is a string (a one-letter-matcher list by mistake), not
            a sequence, empty, or names a matcher not in :data:`MATCHERS`.
    """
    if isinstance(match_on, (str, bytes)) or not isinstance(match_on, Sequence) or not match_on:
        raise ConfigError(
            f"match_on must be a non-empty list of matchers among {', '.join(MATCHERS)}, got {match_on!r}"
        )
    _check_names(match_on)
    return tuple(match_on)


def _check_names(match_on: Iterable[str]) -> None:
    """ConfigError naming the first of ``match_on`` that is not in :data:`MATCHERS`."""
    unknown = [m for m in match_on if m not in MATCHERS]
    if unknown:
        raise ConfigError(f"unknown matcher {unknown[0]!r}; valid: {', '.join(MATCHERS)}")


class Match:
    """A chosen interaction: the cassette, the index in it and the interaction."""

    __slots__ = ("cassette", "index", "interaction")

    def __init__(self, cassette: Cassette, index: int, interaction: Interaction) -> None:
        self.cassette = cassette
        self.index = index
        self.interaction = interaction


def ignore_for(cassette: Cassette, ignore: tuple[str, ...] = ()) -> tuple[BodyPath, ...]:
    """The body paths ignored when matching against ``cassette``: ``ignore`` (the server's), then the
    cassette's :attr:`~ssemock.cassette.Cassette.ignore_body` and
    :attr:`~ssemock.cassette.Cassette.dropped_body`, each once (parsed once per combination).

    Raises:
        ConfigError: one of them is not a body path (a cassette built in code; files are checked when loaded).
    """
    if not (ignore or cassette.ignore_body or cassette.dropped_body):
        return ()
    return compile_paths(tuple(ignore), tuple(cassette.ignore_body), tuple(cassette.dropped_body))


def differences(
    received: Request, recorded: Request, match_on: Sequence[str], ignore: tuple[BodyPath, ...] = (),
) -> list[str]:
    """``"NAME: difference"`` for each matcher of ``match_on`` that ``recorded`` fails (empty: it matches);
    the ``body`` matcher deletes the fields ``ignore`` names first."""
    out = []
    for name in match_on:
        try:
            if ignore and name == "body":
                body(received, recorded, ignore)
            else:
                MATCHERS[name](received, recorded)
        except AssertionError as exc:
            out.append(f"{name}: {exc}")
    return out


def find_interaction(
    cassettes: Iterable[Cassette],
    received: Request,
    match_on: Sequence[str] = DEFAULT_MATCH_ON,
    *,
    played: dict[tuple[str, int], int] | None = None,
    explicit: bool = False,
    indexes: IndexCache | None = None,
    ignore: Sequence[str] = (),
) -> Match:
    """Choose the interaction that answers ``received``.

    Args:
        cassettes: where to look, in priority order.
        received: the incoming request (path without any ``/_ssemock/`` prefix).
        match_on: matcher names from :data:`MATCHERS`.
        played: play counts by ``(cassette name, index)``; updated on success. A
            :class:`~ssemock.match_index.PlayCounts` also remembers where the unplayed
            interactions start.
        explicit: the cassette was chosen by the client (header or path prefix):
            the body matcher then only ranks candidates instead of excluding them.
        indexes: where cassette indexes are kept (see :mod:`ssemock.match_index`);
            None compares the request with every interaction (O(n)). With indexes, a
            request costs O(1) in the number of interactions when ``match_on`` names
            only method, path, query and body, plus one ``body`` comparison per
            interaction of its route whose recorded JSON holds ``"REDACTED"``.
        ignore: body paths (:mod:`ssemock.body_paths`) deleted from both bodies before the ``body``
            matcher compares them, besides each cassette's own (:func:`ignore_for`).

    Returns:
        The chosen :class:`Match`.

    Raises:
        ConfigError: an unknown matcher name.
        NoMatchError: nothing matches; lists the closest interactions and their
            differences (at most :data:`REPORT_BUDGET` interactions are compared).
    """
    rule = _rule(tuple(match_on), explicit)
    played = played if played is not None else {}
    pool = list(cassettes)
    server = tuple(ignore)
    decided, found = False, None
    if indexes is not None and rule.indexed:
        decided, found = _indexed(pool, received, rule, played, indexes, server)
    if not decided:
        found = _linear(pool, received, rule.match_on, rule.required, played, server)
    if found is not None:
        key = (found.cassette.name, found.index)
        played[key] = played.get(key, 0) + 1
        return found
    raise _no_match(pool, received, rule.match_on, rule.required, indexes, server)


@dataclass(slots=True)
class _Rule:
    """What :func:`find_interaction` derives from ``match_on`` and ``explicit`` (the same for every request).

    Attributes:
        match_on: the matcher names.
        required: those a candidate must pass (``body`` ranks only, when ``explicit``).
        indexed: every matcher is one the indexes understand.
        fields: the required matchers an index files interactions by (:func:`_route_fields`).
        body: ``body`` is a matcher in use; ``body_required``: and a required one.
    """

    match_on: tuple[str, ...]
    required: tuple[str, ...]
    indexed: bool
    fields: frozenset[str]
    body: bool
    body_required: bool


@functools.lru_cache(maxsize=64)
def _rule(match_on: tuple[str, ...], explicit: bool) -> _Rule:
    """The :class:`_Rule` of ``match_on`` (a ConfigError names an unknown matcher; it is not remembered)."""
    _check_names(match_on)
    required = tuple(m for m in match_on if not (explicit and m == "body"))
    return _Rule(match_on, required, set(match_on) <= INDEXED_MATCHERS, _route_fields(required), "body" in match_on,
                 "body" in required)


def _route_fields(required: Sequence[str]) -> frozenset[str]:
    """The required matchers an index files interactions by (the body is filed apart)."""
    return frozenset(required) & {"method", "path", "query"}


def indexes_ready(
    indexes: IndexCache, cassettes: Iterable[Cassette], match_on: Sequence[str], ignore: Sequence[str] = (),
) -> bool:
    """Whether :func:`find_interaction` has every index it needs for ``cassettes`` (or needs none)."""
    indexed, fields, bodies = _index_kind(tuple(match_on))
    if not indexed:
        return True
    server = tuple(ignore)
    for cassette in cassettes:
        if indexes.current(cassette, fields, bodies, ignore_for(cassette, server)) is None:
            return False
    return True


@functools.lru_cache(maxsize=64)
def _index_kind(match_on: tuple[str, ...]) -> tuple[bool, frozenset[str], bool]:
    """Whether ``match_on`` is indexed, and the route fields and bodies flag of its indexes."""
    return set(match_on) <= INDEXED_MATCHERS, _route_fields(match_on), "body" in match_on


def prepare_indexes(
    indexes: IndexCache, cassettes: Iterable[Cassette], match_on: Sequence[str], ignore: Sequence[str] = (),
) -> None:
    """Build the indexes :func:`find_interaction` will use for ``cassettes``, ``match_on`` and ``ignore``
    now, not on the first request (1.5-5 s per 100,000 interactions with JSON bodies on 2 busy cores)."""
    if set(match_on) <= INDEXED_MATCHERS:
        server = tuple(ignore)
        for cassette in cassettes:
            indexes.get(cassette, _route_fields(match_on), "body" in match_on, ignore_for(cassette, server))


def key_request(received: Request, match_on: Sequence[str], ignore: Sequence[str] = ()) -> None:
    """Compute now what :func:`find_interaction` with indexes will read of ``received``: its body
    key (canonical JSON text and digest, with the server's ignored body paths deleted), remembered on
    it. For a large body, call it in a thread before matching on the event loop (canonicalizing 1 MiB
    of JSON takes tens of ms)."""
    if "body" in match_on and set(match_on) <= INDEXED_MATCHERS:
        body_key(received, keep=True, ignore=compile_paths(tuple(ignore)) if ignore else ())


def _passes(
    received: Request, recorded: Request, match_on: Sequence[str], ignore: tuple[BodyPath, ...] = (),
) -> bool:
    """Whether every matcher of ``match_on`` passes (:func:`differences` is empty)."""
    try:
        for name in match_on:
            if ignore and name == "body":
                body(received, recorded, ignore)
            else:
                MATCHERS[name](received, recorded)
    except AssertionError:
        return False
    return True


def _body_passes(received: Request, recorded: Request, ignore: tuple[BodyPath, ...]) -> bool:
    """Whether the ``body`` matcher passes, ``ignore`` deleted."""
    return _passes(received, recorded, ("body",), ignore)


def _indexed(
    pool: list[Cassette], received: Request, rule: _Rule, played: dict[tuple[str, int], int], indexes: IndexCache,
    server: tuple[str, ...],
) -> tuple[bool, Match | None]:
    """``(decided, match)``: the choice of :func:`_linear` (None: no match), through the
    indexes; ``decided`` is False when they cannot tell and the caller must scan: a body
    too deep to key, or a chosen interaction the matchers refuse (a digest collision)."""
    if not pool:
        return True, None
    want = Received(received)
    best: tuple[Tier, int, int] | None = None
    for order, cassette in enumerate(pool):
        index = indexes.get(cassette, rule.fields, rule.body, ignore_for(cassette, server))
        found = choose(index, cassette, want, body=rule.body, body_required=rule.body_required, played=played,
                       body_matches=_body_passes)
        if found is not None and (best is None or (found[0], order, found[1]) < best):
            best = (found[0], order, found[1])
    if want.unkeyable:  # a body too deep to key: the scan decides
        return False, None
    if best is None:
        return True, None
    tier, order, position = best
    cassette = pool[order]
    recorded = cassette.interactions[position].request
    ignore = ignore_for(cassette, server)
    if tier[0] == 0:  # the matchers must all pass (the common case: no message is written)
        if not _passes(received, recorded, rule.match_on, ignore):
            return False, None
    else:
        fails = differences(received, recorded, rule.match_on, ignore)
        if len(fails) != tier[0] or any(f.split(":", 1)[0] in rule.required for f in fails):
            return False, None
    return True, Match(cassette, position, cassette.interactions[position])


def _linear(
    pool: list[Cassette], received: Request, match_on: Sequence[str], required: Sequence[str],
    played: dict[tuple[str, int], int], server: tuple[str, ...] = (),
) -> Match | None:
    """Compare ``received`` with every interaction; the best by (differing matchers,
    recorded without a body, already played, position), or None."""
    best: tuple[tuple[int, int, int, int], Match] | None = None
    position = 0
    for cassette in pool:
        ignore = ignore_for(cassette, server)
        for index, inter in enumerate(cassette.interactions):
            position += 1
            fails = differences(received, inter.request, match_on, ignore)
            if any(f.split(":", 1)[0] in required for f in fails):
                continue
            rec = inter.request
            wildcard = rec.body is None and rec.body_sha256 is None
            again = int(played.get((cassette.name, index), 0) > 0)
            rank = (len(fails), int(wildcard), again, position)
            if best is None or rank < best[0]:
                best = (rank, Match(cassette, index, inter))
    return None if best is None else best[1]


def _no_match(
    pool: list[Cassette], received: Request, match_on: Sequence[str], required: Sequence[str],
    indexes: IndexCache | None, server: tuple[str, ...] = (),
) -> NoMatchError:
    """The error for a request that matched nothing, naming the closest interactions: by the number of
    matchers they fail, then by how far they are (:mod:`ssemock.closeness`), then in cassette order."""
    found = []
    for _, cassette, index in sorted(report_sample(pool, received, _route_fields(required), indexes),
                                     key=lambda sampled: sampled[0]):  # in cassette order
        inter = cassette.interactions[index]
        ignore = ignore_for(cassette, server)
        hard = [f for f in differences(received, inter.request, match_on, ignore) if f.split(":", 1)[0] in required]
        found.append((Match(cassette, index, inter), hard))
    ranked = rank_closest(received, found, ignore=server)
    closest = [closest_entry(match, hard, received=received, ignore=server) for match, hard in ranked]
    asked = describe(received)
    if closest:
        top = closest[0]
        message = (
            f"no recorded interaction matches {asked} ({_matched_on(match_on, required)}); closest: "
            f"{top['cassette']} #{top['interaction']} {top['request']}, which differs in "
            + "; ".join(ranked[0][1]) + _body_note(top)
        )
    else:
        message = f"no recorded interaction matches {asked}: no cassette has any interaction"
    return NoMatchError(message, asked, closest)


def _body_note(entry: dict[str, Any]) -> str:
    """What a 404's message adds about volatile fields: the ignored ones that were the body's only difference."""
    if entry.get("ignored"):
        return f" (its body differs only in the ignored {', '.join(entry['ignored'])})"
    return ""


def rank_closest(
    received: Request, found: Sequence[tuple[Match, list[str]]], limit: int = 3, *, ignore: Sequence[str] = (),
) -> list[tuple[Match, list[str]]]:
    """The first ``limit`` of ``found`` (candidates in cassette order, each with the ``"NAME: difference"`` of
    the matchers it fails): by the number of matchers failed, then by how far it is (:mod:`ssemock.closeness`,
    the body paths ignored deleted: ``ignore``, the server's, and each cassette's), then in cassette order.
    The distance is measured only for those that may be among the first ``limit``."""
    closeness = Closeness(received)
    server = tuple(ignore)
    near: list[tuple[int, float, int]] = []
    for n in sorted(range(len(found)), key=lambda n: (len(found[n][1]), n)):
        match, hard = found[n]
        if len(near) >= limit and len(hard) > near[limit - 1][0]:
            break
        far = closeness.distance(match.interaction.request, (f.split(":", 1)[0] for f in hard),
                                 ignore_for(match.cassette, server))
        near.append((len(hard), far, n))
    return [found[n] for _, _, n in sorted(near)[:limit]]


def closest_entry(
    match: Match, hard: list[str], *, received: Request | None = None, ignore: Sequence[str] = (),
) -> dict[str, Any]:
    """A ``closest`` entry of a 404: ``{"cassette", "interaction", "request", "differences"}``; given the
    ``received`` request, also ``"field"`` (the path of the first JSON body field that differs, when the
    ``body`` matcher fails: ``metadata.trace_id``) or ``"ignored"`` (the ignored body paths that differ
    when nothing else in the body does: ``["metadata.trace_id"]``), when there is one."""
    entry: dict[str, Any] = {"cassette": match.cassette.name, "interaction": match.index,
                             "request": describe(match.interaction.request), "differences": hard}
    if received is not None:
        recorded = match.interaction.request
        paths = ignore_for(match.cassette, tuple(ignore))
        if any(f.startswith("body:") for f in hard):
            field = body_difference(received, recorded, paths)
            if field:
                entry["field"] = field
        else:
            hidden = ignored_only(received, recorded, paths)
            if hidden:
                entry["ignored"] = hidden
    return entry


def _matched_on(match_on: Sequence[str], required: Sequence[str]) -> str:
    """``match on method, path, body``; ``match on method, path; body only ranks, the cassette being named``."""
    ranking = [m for m in match_on if m not in required]
    text = f"match on {', '.join(required)}"
    return text + (f"; {', '.join(ranking)} only ranks, the cassette being named" if ranking else "")


def describe(request: Request) -> str:
    """``"METHOD /path?query"`` for messages and the journal."""
    qs = f"?{query_text(request.query)}" if request.query else ""
    return f"{request.method} {request.path}{qs}"
