"""The named matchers: plain functions ``(received, recorded) -> None`` that raise ``AssertionError`` with a
readable difference (the vcrpy ``matchers.py`` shape); :data:`MATCHERS` names them for ``match_on``.

* ``method``: the same method;
* ``path``: the same path (after any ``/_ssemock/`` prefix is removed); a recorded segment holding the
  recorder's placeholder ``REDACTED`` stands for any non-empty text there;
* ``query``: the same query parameters, in any order (a recorded ``REDACTED`` value: any value);
* ``body``: equal as JSON values when both parse as JSON, else as bytes; a body stored by digest is
  compared by SHA-256 and size; an interaction recorded without a body matches any body. Ignored body
  paths (:mod:`ssemock.body_paths`: ``metadata.trace_id``, ``messages[*].id``) are deleted from both JSON
  bodies before they are compared (a body stored by digest is compared whole);
* ``prompt``: both are chat requests (:mod:`ssemock.stubs.conversation`) asking the same: the recorded
  one read as a stub's match (its provider, model, last user message and turn), which the received one
  meets by the stub matcher's rules (:func:`ssemock.stubs.book.differences`, one implementation).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .body_paths import BodyPath, differing_paths, without
from .cassette import Request, body_digest
from .placeholder_routes import aligned_path, path_fits, query_fits
from .redact import REDACTED

__all__ = ["MATCHERS", "Matcher", "body_difference", "ignored_only", "json_difference", "query_text"]

Matcher = Callable[[Request, Request], None]


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
        raise AssertionError(f"{query_text(got) or '(none)'} != recorded {query_text(want) or '(none)'}")


def body(received: Request, recorded: Request, ignore: Sequence[BodyPath] = ()) -> None:
    """The bodies are equal: as JSON values when both parse as JSON, else as bytes.

    A recorded body stored by digest is compared by SHA-256 and size; an interaction recorded
    without a body matches any body. The fields ``ignore`` names are deleted from both JSON
    bodies before they are compared (:func:`ssemock.body_paths.without`).
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
        if ignore:
            mine, theirs = without(mine, ignore), without(theirs, ignore)
        difference = json_difference(mine, theirs, "")
        _require(difference is None, difference or "")
        return
    got_b, want_b = received.body or b"", recorded.body
    if got_b != want_b:  # the message only for a difference: equal bodies are the common case
        raise AssertionError(f"{_short(got_b)} != recorded {_short(want_b)}")


def body_difference(received: Request, recorded: Request, ignore: Sequence[BodyPath] = ()) -> str | None:
    """The path of the first JSON field in which the bodies differ once ``ignore`` is deleted
    (``metadata.trace_id``; ``""``: the top-level values), or None when they are equal, or are not both
    JSON (a body stored by digest, bytes)."""
    mine, theirs = received.json_view(), recorded.json_view()
    if mine is None or theirs is None or recorded.body_sha256 is not None:
        return None
    found = _first_difference(without(mine, ignore), without(theirs, ignore), "")
    return None if found is None else found[0]


def ignored_only(received: Request, recorded: Request, ignore: Sequence[BodyPath]) -> list[str]:
    """The paths of ``ignore`` in which the two JSON bodies differ when nothing else does: the
    differences ignoring hid. ``[]``: none, the bodies differ elsewhere too, or are not both JSON."""
    mine, theirs = received.json_view(), recorded.json_view()
    if not ignore or mine is None or theirs is None or recorded.body_sha256 is not None:
        return []
    return differing_paths(mine, theirs, ignore, lambda a, b: _first_difference(a, b, "") is None)


def prompt(received: Request, recorded: Request) -> None:
    """Both are chat requests asking the same (the module docstring): provider, model, last user
    message and turn, compared by the stub matcher's rules."""
    from .stubs.book import differences
    from .stubs.conversation import read_conversation
    from .stubs.model import Match

    theirs = read_conversation(recorded)
    if theirs is None:
        raise AssertionError(f"the recorded {recorded.method} {recorded.path} is not a chat request")
    mine = read_conversation(received)
    if mine is None:
        raise AssertionError(f"{received.method} {received.path} is not a chat request")
    found = differences(Match(provider=theirs.provider, model=theirs.model, equals=theirs.last_user,
                              turn=theirs.turn), mine)
    _require(not found, "; ".join(found))


MATCHERS: dict[str, Matcher] = {"method": method, "path": path, "query": query, "body": body, "prompt": prompt}


def json_difference(got: Any, want: Any, where: str) -> str | None:
    """The first difference between two JSON values, as ``"where: got != recorded want"``.

    A recorded value that the recorder's filter replaced by ``"REDACTED"`` matches any value.
    """
    found = _first_difference(got, want, where)
    return None if found is None else found[1]


def _first_difference(got: Any, want: Any, where: str) -> tuple[str, str] | None:
    """``(path, "path: got != recorded want")`` of the first difference (see :func:`json_difference`)."""
    if want == REDACTED:
        return None
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=str):
            sub = f"{where}.{key}" if where else str(key)
            if key not in got:
                return sub, f"{sub}: missing, recorded {_short(want[key])}"
            if key not in want:
                return sub, f"{sub}: {_short(got[key])} not in the recording"
            found = _first_difference(got[key], want[key], sub)
            if found:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        for i, (a, b) in enumerate(zip(got, want)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        if len(got) != len(want):
            return where, f"{where or 'value'}: {len(got)} items != recorded {len(want)}"
        return None
    if got == want and isinstance(got, bool) == isinstance(want, bool):
        return None  # 1 and 1.0 are the same JSON number; true is not 1
    return where, f"{where or 'value'}: {_short(got)} != recorded {_short(want)}"


def _short(value: Any, limit: int = 60) -> str:
    """At most ``limit`` characters, rendering no more of a large value than that (a message is built for
    every candidate that differs, in a scan of a whole cassette too)."""
    if isinstance(value, bytes) and "\\x" in repr(value[: limit + 256]):
        # Scanned as bytes first: in a repr, "\xfe" would glue to the key after it. (Other text is scanned
        # as the message it becomes: every refusal's strings are.)
        from .scanner.scrub import scrub_bytes  # only a message with such a byte needs it

        value = scrub_bytes(value[: limit + 256])
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


def query_text(pairs: Iterable[tuple[str, str]]) -> str:
    """``a=1&b=2``: query pairs as written in a message (not percent-encoded)."""
    return "&".join(f"{k}={v}" for k, v in pairs)
