"""Request matching: named matchers, ``match_on``, and the closest-match report.

A matcher is a plain function ``(received, recorded) -> None`` that raises
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
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .cassette import Cassette, Interaction, Request, body_digest
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
from .match_sample import REPORT_BUDGET, path_likeness, report_sample
from .placeholder_routes import aligned_path, path_fits, query_fits
from .redact import REDACTED

__all__ = [
    "DEFAULT_MATCH_ON",
    "MATCHERS",
    "REPORT_BUDGET",
    "IndexCache",
    "Match",
    "Matcher",
    "PlayCounts",
    "check_match_on",
    "describe",
    "differences",
    "find_interaction",
    "indexes_ready",
    "key_request",
    "prepare_indexes",
]

Matcher = Callable[[Request, Request], None]
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


def _require(condition: bool, difference: str) -> None:
    """Raise ``AssertionError(difference)`` unless ``condition`` holds.

    An explicit raise, not ``assert``: it must work under ``python -O`` and keep its
    message when pytest rewrites the asserts of installed plugins' packages.
    """
    if not condition:
        raise AssertionError(difference)


def method(received: Request, recorded: Request) -> None:
    """The HTTP methods are equal."""
    if received.method != recorded.method:  # the message is written only for a difference
        raise AssertionError(f"{received.method} != recorded {recorded.method}")


def path(received: Request, recorded: Request) -> None:
    """The URL paths are equal (after any ``/_ssemock/`` prefix is removed); a recorded segment holding
    the filter's ``REDACTED`` (a secret the recorder removed, ``/botREDACTED/sendMessage``) matches any
    non-empty text in its place."""
    if received.path != recorded.path and not path_fits(received.path, recorded.path):
        raise AssertionError(f"{aligned_path(received.path, recorded.path)} != recorded {recorded.path}")


def query(received: Request, recorded: Request) -> None:
    """The query parameters are equal, order ignored; a recorded value holding ``REDACTED`` matches any
    non-empty value in its place. (Parameters named like credentials never reach a cassette; the
    replay server drops them from the requests it receives too.)"""
    if not (received.query or recorded.query):
        return
    if not query_fits(received.query, recorded.query):
        got, want = sorted(received.query), sorted(recorded.query)
        raise AssertionError(f"{_qs(got) or '(none)'} != recorded {_qs(want) or '(none)'}")


def body(received: Request, recorded: Request) -> None:
    """The bodies are equal: as JSON values when both parse as JSON, else as bytes.

    A recorded body stored by digest is compared by SHA-256 and size; an
    interaction recorded without a body matches any body.
    """
    if recorded.body_sha256 is not None:
        got = body_digest(received.body or b"")
        _require(got == recorded.body_sha256, (
            f"sha256 {got[:12]}… ({len(received.body or b'')} bytes) != recorded "
            f"{recorded.body_sha256[:12]}… ({recorded.body_size} bytes)"
        ))
        return
    if recorded.body is None:
        return
    mine, theirs = received.json_view(), recorded.json_view()
    if mine is not None and theirs is not None:
        difference = json_difference(mine, theirs, "")
        _require(difference is None, difference or "")
        return
    got_b, want_b = received.body or b"", recorded.body
    _require(got_b == want_b, f"{_short(got_b)} != recorded {_short(want_b)}")


MATCHERS: dict[str, Matcher] = {"method": method, "path": path, "query": query, "body": body}


def json_difference(got: Any, want: Any, where: str) -> str | None:
    """The first difference between two JSON values, as ``"where: got != recorded want"``.

    A recorded value that the recorder's filter replaced by ``"REDACTED"`` matches any value.
    """
    if want == REDACTED:
        return None
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in got:
                return f"{sub}: missing, recorded {_short(want[key])}"
            if key not in want:
                return f"{sub}: {_short(got[key])} not in the recording"
            found = json_difference(got[key], want[key], sub)
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        for i, (a, b) in enumerate(zip(got, want)):
            found = json_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        if len(got) != len(want):
            return f"{where or 'value'}: {len(got)} items != recorded {len(want)}"
        return None
    if got == want and isinstance(got, bool) == isinstance(want, bool):
        return None  # 1 and 1.0 are the same JSON number; true is not 1
    return f"{where or 'value'}: {_short(got)} != recorded {_short(want)}"


class Match:
    """A chosen interaction: the cassette, the index in it and the interaction."""

    __slots__ = ("cassette", "index", "interaction")

    def __init__(self, cassette: Cassette, index: int, interaction: Interaction) -> None:
        self.cassette = cassette
        self.index = index
        self.interaction = interaction


def differences(received: Request, recorded: Request, match_on: Sequence[str]) -> list[str]:
    """``"NAME: difference"`` for each matcher of ``match_on`` that ``recorded`` fails (empty: it matches)."""
    out = []
    for name in match_on:
        try:
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
    decided, found = False, None
    if indexes is not None and rule.indexed:
        decided, found = _indexed(pool, received, rule, played, indexes)
    if not decided:
        found = _linear(pool, received, rule.match_on, rule.required, played)
    if found is not None:
        key = (found.cassette.name, found.index)
        played[key] = played.get(key, 0) + 1
        return found
    raise _no_match(pool, received, rule.match_on, rule.required, indexes)


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


def indexes_ready(indexes: IndexCache, cassettes: Iterable[Cassette], match_on: Sequence[str]) -> bool:
    """Whether :func:`find_interaction` has every index it needs for ``cassettes`` (or needs none)."""
    indexed, fields, bodies = _index_kind(tuple(match_on))
    if not indexed:
        return True
    for cassette in cassettes:  # noqa: SIM110 - a loop: no generator per request
        if indexes.current(cassette, fields, bodies) is None:
            return False
    return True


@functools.lru_cache(maxsize=64)
def _index_kind(match_on: tuple[str, ...]) -> tuple[bool, frozenset[str], bool]:
    """Whether ``match_on`` is indexed, and the route fields and bodies flag of its indexes."""
    return set(match_on) <= INDEXED_MATCHERS, _route_fields(match_on), "body" in match_on


def prepare_indexes(indexes: IndexCache, cassettes: Iterable[Cassette], match_on: Sequence[str]) -> None:
    """Build the indexes :func:`find_interaction` will use for ``cassettes`` and ``match_on``
    now, not on the first request (1.5-5 s per 100,000 interactions with JSON bodies on 2 busy cores)."""
    if set(match_on) <= INDEXED_MATCHERS:
        for cassette in cassettes:
            indexes.get(cassette, _route_fields(match_on), "body" in match_on)


def key_request(received: Request, match_on: Sequence[str]) -> None:
    """Compute now what :func:`find_interaction` with indexes will read of ``received``: its body
    key (canonical JSON text and digest), remembered on it. For a large body, call it in a thread
    before matching on the event loop (canonicalizing 1 MiB of JSON takes tens of ms)."""
    if "body" in match_on and set(match_on) <= INDEXED_MATCHERS:
        body_key(received, keep=True)


def _passes(received: Request, recorded: Request, match_on: Sequence[str]) -> bool:
    """Whether every matcher of ``match_on`` passes (:func:`differences` is empty)."""
    try:
        for name in match_on:
            MATCHERS[name](received, recorded)
    except AssertionError:
        return False
    return True


_body_passes = functools.partial(_passes, match_on=("body",))
"""Whether the ``body`` matcher passes."""


def _indexed(
    pool: list[Cassette], received: Request, rule: _Rule, played: dict[tuple[str, int], int], indexes: IndexCache,
) -> tuple[bool, Match | None]:
    """``(decided, match)``: the choice of :func:`_linear` (None: no match), through the
    indexes; ``decided`` is False when they cannot tell and the caller must scan: a body
    too deep to key, or a chosen interaction the matchers refuse (a digest collision)."""
    if not pool:
        return True, None
    want = Received(received)
    best: tuple[Tier, int, int] | None = None
    for order, cassette in enumerate(pool):
        index = indexes.get(cassette, rule.fields, rule.body)
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
    if tier[0] == 0:  # the matchers must all pass (the common case: no message is written)
        if not _passes(received, recorded, rule.match_on):
            return False, None
    else:
        fails = differences(received, recorded, rule.match_on)
        if len(fails) != tier[0] or any(f.split(":", 1)[0] in rule.required for f in fails):
            return False, None
    return True, Match(cassette, position, cassette.interactions[position])


def _linear(
    pool: list[Cassette], received: Request, match_on: Sequence[str], required: Sequence[str],
    played: dict[tuple[str, int], int],
) -> Match | None:
    """Compare ``received`` with every interaction; the best by (differing matchers,
    recorded without a body, already played, position), or None."""
    best: tuple[tuple[int, int, int, int], Match] | None = None
    position = 0
    for cassette in pool:
        for index, inter in enumerate(cassette.interactions):
            position += 1
            fails = differences(received, inter.request, match_on)
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
    indexes: IndexCache | None,
) -> NoMatchError:
    """The error for a request that matched nothing, naming the closest interactions: by the number of
    matchers they fail, then by how far they are (:mod:`ssemock.closeness`), then in cassette order."""
    near: list[tuple[int, float, int, Match, list[str]]] = []
    likeness: dict[str, float] = {}
    closeness = Closeness(received)
    for position, cassette, index in report_sample(pool, received, _route_fields(required), indexes):
        inter = cassette.interactions[index]
        hard = [f for f in differences(received, inter.request, match_on) if f.split(":", 1)[0] in required]
        path = inter.request.path
        if path not in likeness:
            likeness[path] = path_likeness(received.path, path)
        far = closeness.distance(inter.request, (f.split(":", 1)[0] for f in hard), likeness[path])
        near.append((len(hard), far, position, Match(cassette, index, inter), hard))
    near.sort(key=lambda n: n[:3])
    closest: list[dict[str, Any]] = [
        {"cassette": m.cassette.name, "interaction": m.index, "request": describe(m.interaction.request),
         "differences": diffs}
        for _, _, _, m, diffs in near[:3]
    ]
    asked = describe(received)
    if closest:
        top = closest[0]
        message = (
            f"no recorded interaction matches {asked} (match on {', '.join(match_on)}); closest: "
            f"{top['cassette']} #{top['interaction']} {top['request']}, which differs in "
            + "; ".join(near[0][4])
        )
    else:
        message = f"no recorded interaction matches {asked}: no cassette has any interaction"
    return NoMatchError(message, asked, closest)


def describe(request: Request) -> str:
    """``"METHOD /path?query"`` for messages and the journal."""
    qs = f"?{_qs(request.query)}" if request.query else ""
    return f"{request.method} {request.path}{qs}"


def _qs(pairs: Iterable[tuple[str, str]]) -> str:
    return "&".join(f"{k}={v}" for k, v in pairs)


def _short(value: Any, limit: int = 60) -> str:
    """At most ``limit`` characters, rendering no more of a large value than that (messages are
    built for every candidate, also when it matches)."""
    if isinstance(value, (bytes, str)):
        value = value[: limit + 1]
    if isinstance(value, bytes):
        text = repr(value)
    else:
        text = ""
        for piece in _ENCODER.iterencode(value):  # lazily, piece by piece
            text += piece
            if len(text) > limit:
                break
    return text if len(text) <= limit else text[: limit - 1] + "…"


_ENCODER = json.JSONEncoder(ensure_ascii=False)
