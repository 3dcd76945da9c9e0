"""Request matching: named matchers, ``match_on``, and the closest-match report.

A matcher is a plain function ``(received, recorded) -> None`` that raises
``AssertionError`` with a readable difference (the vcrpy ``matchers.py`` shape).
``match_on`` is the tuple of matcher names an interaction must pass; the default
is :data:`DEFAULT_MATCH_ON` (method + path + body).

Choosing among several matching interactions: interactions whose recorded body
was compared are preferred over ones recorded without a body (which match any
body); then the first one not yet played in this server's lifetime, in cassette
order; when all were played, the first (replays repeat).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .cassette import Cassette, Interaction, Request, body_digest
from .errors import NoMatchError
from .redact import REDACTED

__all__ = ["DEFAULT_MATCH_ON", "MATCHERS", "Match", "Matcher", "describe", "find_interaction"]

Matcher = Callable[[Request, Request], None]
DEFAULT_MATCH_ON: tuple[str, ...] = ("method", "path", "body")


def _require(condition: bool, difference: str) -> None:
    """Raise ``AssertionError(difference)`` unless ``condition`` holds.

    An explicit raise, not ``assert``: it must work under ``python -O`` and keep its
    message when pytest rewrites the asserts of installed plugins' packages.
    """
    if not condition:
        raise AssertionError(difference)


def method(received: Request, recorded: Request) -> None:
    """The HTTP methods are equal."""
    _require(received.method == recorded.method, f"{received.method} != recorded {recorded.method}")


def path(received: Request, recorded: Request) -> None:
    """The URL paths are equal (after any ``/_ssemock/`` prefix is removed)."""
    _require(received.path == recorded.path, f"{received.path} != recorded {recorded.path}")


def query(received: Request, recorded: Request) -> None:
    """The query parameters are equal, order ignored."""
    got, want = sorted(received.query), sorted(recorded.query)
    _require(got == want, f"{_qs(got) or '(none)'} != recorded {_qs(want) or '(none)'}")


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


@dataclass(frozen=True)
class Match:
    """A chosen interaction: the cassette, the index in it and the interaction."""

    cassette: Cassette
    index: int
    interaction: Interaction


def _failures(received: Request, recorded: Request, match_on: Sequence[str]) -> list[str]:
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
) -> Match:
    """Choose the interaction that answers ``received``.

    Args:
        cassettes: where to look, in priority order.
        received: the incoming request (path without any ``/_ssemock/`` prefix).
        match_on: matcher names from :data:`MATCHERS`.
        played: play counts by ``(cassette name, index)``; updated on success.
        explicit: the cassette was chosen by the client (header or path prefix):
            the body matcher then only ranks candidates instead of excluding them.

    Returns:
        The chosen :class:`Match`.

    Raises:
        KeyError: an unknown matcher name.
        NoMatchError: nothing matches; lists the closest interactions and their differences.
    """
    unknown = [m for m in match_on if m not in MATCHERS]
    if unknown:
        raise KeyError(f"unknown matcher {unknown[0]!r}; valid: {', '.join(MATCHERS)}")
    required = [m for m in match_on if not (explicit and m == "body")]
    played = played if played is not None else {}
    candidates: list[tuple[tuple[int, int, int, int], Match]] = []
    near: list[tuple[int, float, Match, list[str]]] = []
    position = 0
    for cassette in cassettes:
        for index, inter in enumerate(cassette.interactions):
            position += 1
            fails = _failures(received, inter.request, match_on)
            hard = [f for f in fails if f.split(":", 1)[0] in required]
            match = Match(cassette, index, inter)
            if hard:
                likeness = difflib.SequenceMatcher(None, received.path, inter.request.path).ratio()
                near.append((len(hard), -likeness, match, hard))
                continue
            rec = inter.request
            wildcard = rec.body is None and rec.body_sha256 is None
            again = int(played.get((cassette.name, index), 0) > 0)
            candidates.append(((len(fails), int(wildcard), again, position), match))
    if candidates:
        best = min(candidates, key=lambda c: c[0])[1]
        key = (best.cassette.name, best.index)
        played[key] = played.get(key, 0) + 1
        return best
    near.sort(key=lambda n: (n[0], n[1]))
    closest: list[dict[str, Any]] = [
        {"cassette": m.cassette.name, "interaction": m.index, "request": describe(m.interaction.request),
         "differences": diffs}
        for _, _, m, diffs in near[:3]
    ]
    asked = describe(received)
    if closest:
        top = closest[0]
        message = (
            f"no recorded interaction matches {asked} (match on {', '.join(match_on)}); closest: "
            f"{top['cassette']} #{top['interaction']} {top['request']}, which differs in "
            + "; ".join(near[0][3])
        )
    else:
        message = f"no recorded interaction matches {asked}: no cassette has any interaction"
    raise NoMatchError(message, asked, closest)


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
