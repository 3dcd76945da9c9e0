"""The field checks of a cassette: each raises :class:`~ssemock.CassetteError` naming the file, the
field (a dotted path such as ``interactions[0].response.status``) and what was expected.

Used by :mod:`ssemock.cassette.read` for files and for cassettes built in code or rebuilt from the cache.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Set as AbstractSet
from typing import Any

from ..body_paths import path_problem
from ..errors import CassetteError, Described
from ..limits import (
    MAX_BODY_PATHS,
    MAX_CASSETTE_SECONDS,
    MAX_HEADER_LINE,
    MAX_ITEMS,
    MAX_RESPONSE_HEADER_BYTES,
    MAX_RESPONSE_HEADERS,
    number,
)
from .model import (
    END_HOWS,
    FORMAT_KEY,
    MAX_REASON,
    NO_CONTENT_STATUSES,
    End,
    Response,
    reason_phrase,
)


class Validator:
    """Type checks that raise :class:`CassetteError` naming the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, expected: str, got: Any) -> CassetteError:
        return CassetteError(self.source, where, expected, got)

    def typed(self, value: Any, where: str, kind: type | tuple[type, ...], expected: str) -> Any:
        if not isinstance(value, kind) or (kind in (int, float, (int, float)) and isinstance(value, bool)):
            raise self.fail(where, expected, value)
        return value

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        if not where and not isinstance(value, dict) and value is not None:
            # Not a cassette at all (e.g. a link to a .env file): described, never quoted.
            raise self.fail("(top level)", "a mapping", Described(value))
        return self.typed(value, where or "(top level)", dict, "a mapping")  # type: ignore[no-any-return]

    def known(self, doc: dict[str, Any], where: str, keys: AbstractSet[str]) -> None:
        extra = sorted(set(map(str, doc)) - keys)
        if extra:
            path = f"{where}.{extra[0]}" if where else extra[0]
            raise CassetteError(self.source, path, f"one of the keys {', '.join(sorted(keys))}", None)

    def seconds(self, value: Any, where: str) -> float:
        """A time in seconds, finite, from 0 to :data:`~ssemock.limits.MAX_CASSETTE_SECONDS` (24 h)."""
        if not SECONDS.check(value):
            raise self.fail(where, f"{SECONDS.expected} seconds", value)
        return float(value)

    def items(self, value: Any, where: str, what: str) -> list[Any]:
        """A list of at most :data:`~ssemock.limits.MAX_ITEMS` items."""
        self.typed(value, where, list, f"a list of {what}")
        if len(value) > MAX_ITEMS:
            raise self.fail(where, f"a list of at most {MAX_ITEMS} {what}", None)
        return value  # type: ignore[no-any-return]

    def pairs(self, value: Any, where: str) -> list[tuple[str, str]]:
        """Headers: a mapping name -> value or list of values, or a list of [name, value]."""
        out: list[tuple[str, str]] = []
        if isinstance(value, dict):
            for name, val in value.items():
                vals = val if isinstance(val, list) else [val]
                for j, one in enumerate(vals):
                    sub = f"{where}.{name}" + (f"[{j}]" if isinstance(val, list) else "")
                    out.append((str(name), scalar_text(self, one, sub)))
            return out
        for i, pair in enumerate(self.typed(value, where, list, "a mapping or a list of [name, value]")):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise self.fail(f"{where}[{i}]", "a [name, value] pair", pair)
            out.append((str(pair[0]), scalar_text(self, pair[1], f"{where}[{i}][1]")))
        return out


SECONDS = number(0.0, MAX_CASSETTE_SECONDS)
"""A time: seconds from the request, 0 to :data:`~ssemock.limits.MAX_CASSETTE_SECONDS` (24 h)."""
TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"  # noqa: S105 - an RFC 9110 token, no secret
"""An RFC 9110 token (a method or a header name), as a regular expression."""
NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*"
"""A cassette ``name:``, as a regular expression (no part starts with a dot, so none is ``..``)."""
DIGEST = r"[0-9a-f]{64}"
"""A body's ``sha256``: 64 lower-case hex digits."""
STATUSES = (200, 599)
"""The final statuses a response may have (a 1xx answer is interim, RFC 9110 section 15.2)."""
MAX_NOT_RECORDED = 500
"""Characters ``body_not_recorded`` may hold (one line)."""
TIMINGS = ("recorded", "none")
"""The values of a response's ``timing``."""
EOLS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
"""The values of a response's ``eol`` (hand-written events) and the line ends they write."""
KEYS: dict[str, tuple[str, ...]] = {
    "cassette": (FORMAT_KEY, "name", "provenance", "match", "interactions"),
    "match": ("ignore_body", "dropped_body"),
    "interaction": ("request", "response"),
    "request": ("method", "path", "query", "headers", "body"),
    "response": ("status", "reason", "headers", "timing", "start", "chunks", "events", "interval", "eol", "end",
                 "body_not_recorded"),
    "chunk": ("t", "text", "base64"),
    "event": ("data", "event", "id", "retry", "comment"),
    "end": ("t", "how"),
}
"""The keys each mapping of a cassette file may hold (any other is refused, naming the keys allowed)."""
BODY_FORMS: tuple[tuple[str, ...], ...] = (("json",), ("text",), ("base64",), ("sha256", "size"))
"""The forms of a request ``body``: exactly one of these sets of keys."""
_HEADER_NAME = re.compile(f"^{TOKEN}\\Z")
_METHOD = "an HTTP method: a token of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110)"
_NAME = re.compile(f"^{NAME}\\Z")


def cassette_name(v: Validator, value: Any) -> str:
    """``name:``: letters, digits, ``._-``, ``/`` between parts; no ``..`` (it names files and URLs)."""
    if not (isinstance(value, str) and _NAME.match(value) and ".." not in value.split("/")):
        raise v.fail("name", "a name of letters, digits, '.', '_', '-' (and '/' between parts)", value)
    return value


def headers(v: Validator, value: Any, where: str) -> list[tuple[str, str]]:
    """Header pairs whose names are HTTP tokens and whose values hold no CR, LF or NUL."""
    return check_headers(v, v.pairs(value, where), where)


def check_headers(v: Validator, pairs: list[tuple[str, str]], where: str) -> list[tuple[str, str]]:
    for name, text in pairs:
        if not _HEADER_NAME.match(name):
            raise v.fail(f"{where}.{name}", "a header name (letters, digits and !#$%&'*+.^_`|~-)", name)
        if "\r" in text or "\n" in text or "\0" in text:
            raise v.fail(f"{where}.{name}", "a header value without CR, LF or NUL", text)
        if not text.isascii():
            utf8(v, text, f"{where}.{name}")
    return pairs


def not_recorded(v: Validator, resp: Response, value: Any, where: str) -> str:
    """``body_not_recorded``: one line of text (at most 500 characters) on a response without chunks."""
    if type(value) is not str or not value or len(value) > MAX_NOT_RECORDED or not value.isprintable():
        raise v.fail(where, "why the body was not recorded, one line of at most 500 characters", value)
    if resp.chunks:
        raise v.fail(where, "no chunks: a body not recorded has none", Described(None, f"{len(resp.chunks)} chunks"))
    return value


def response_headers(v: Validator, pairs: list[tuple[str, str]], where: str) -> list[tuple[str, str]]:
    """:func:`check_headers`, and the bounds clients put on an answer's headers: at most
    :data:`~ssemock.limits.MAX_RESPONSE_HEADERS` of them, each line ``Name: value`` at most
    :data:`~ssemock.limits.MAX_HEADER_LINE` bytes, :data:`~ssemock.limits.MAX_RESPONSE_HEADER_BYTES` in all
    (a longer answer would load and then be refused by ``http.client`` and aiohttp)."""
    if len(pairs) > MAX_RESPONSE_HEADERS:
        raise v.fail(where, f"at most {MAX_RESPONSE_HEADERS} response headers (clients refuse more)",
                     Described(None, f"{len(pairs)} headers"))
    total = 0
    for name, text in pairs:
        line = len(name) + 2 + (len(text) if text.isascii() else len(text.encode("utf-8", "replace")))
        if line > MAX_HEADER_LINE:
            raise v.fail(f"{where}.{name}", f"a header line of at most {MAX_HEADER_LINE} bytes (clients refuse "
                         "longer ones)", Described(None, f"a line of {line} bytes"))
        total += line + 2
    if total > MAX_RESPONSE_HEADER_BYTES:
        raise v.fail(where, f"response headers of at most {MAX_RESPONSE_HEADER_BYTES} bytes in all (clients "
                     "refuse more)", Described(None, f"{total} bytes"))
    return check_headers(v, pairs, where)


_SURROGATE = "text without a lone surrogate (U+D800 to U+DFFF are not characters: UTF-8 cannot carry them)"


def utf8(v: Validator, text: str, where: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (only a cassette built in code can hold one: YAML refuses it) is refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise v.fail(where, _SURROGATE, Described(None, f"{text[exc.start]!r} at character {exc.start}")) from None


def scalar_text(v: Validator, value: Any, where: str) -> str:
    if isinstance(value, str):
        if not value.isascii():
            utf8(v, value, where)
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise v.fail(where, "a string", value)


def method_token(v: Validator, value: Any, where: str) -> str:
    method = v.typed(value, where, str, _METHOD)
    if not _HEADER_NAME.match(method):
        raise v.fail(where, _METHOD, method)
    return method  # type: ignore[no-any-return]


def url_path(v: Validator, value: Any, where: str) -> str:
    path = v.typed(value, where, str, "a URL path starting with /")
    if not path.startswith("/"):
        raise v.fail(where, "a URL path starting with /", path)
    if not path.isascii():
        utf8(v, path, where)
    return path  # type: ignore[no-any-return]


def digest(v: Validator, digest: Any, size: Any, where: str) -> tuple[str, int]:
    """A body stored by digest: 64 lower-case hex digits and a size in bytes."""
    v.typed(digest, f"{where}.sha256", str, "64 hex digits")
    if re.fullmatch(DIGEST, digest) is None:
        raise v.fail(f"{where}.sha256", "64 lower-case hex digits", digest)
    return digest, v.typed(size, f"{where}.size", int, "a size in bytes")


_STATUS = "an HTTP status code 200-599 (a 1xx answer is interim, RFC 9110 section 15.2)"


def status(v: Validator, value: Any, where: str) -> int:
    status = v.typed(value, where, int, _STATUS)
    if not STATUSES[0] <= status <= STATUSES[1]:
        raise v.fail(where, _STATUS, status)
    return status  # type: ignore[no-any-return]


def no_content(v: Validator, resp: Response, where: str, field: str) -> None:
    """A 204 or 304 response has no body: refused when it has one (``field`` names where it is)."""
    if resp.status in NO_CONTENT_STATUSES and any(c.data for c in resp.chunks):
        raise v.fail(f"{where}.{field}", f"no body after status {resp.status}: a {resp.status} response has no "
                     f"content (RFC 9110 section 15, RFC 9112 section 6.3); remove the {field} or change the status",
                     Described(None, f"{sum(len(c.data) for c in resp.chunks)} bytes"))


def end_of(v: Validator, how: Any, t: Any, last: float, last_at: str, where: str) -> End:
    """``end``: one of :data:`END_HOWS`, at a time no earlier than the last chunk's."""
    if how not in END_HOWS:
        raise v.fail(f"{where}.end.how", f"one of {', '.join(END_HOWS)}", how)
    end = End(v.seconds(t, f"{where}.end.t"), how)
    if end.t < last:
        raise v.fail(f"{where}.end.t", f"a time >= {last_at} ({last:g} s)", end.t)
    return end


def b64(v: Validator, value: Any, where: str) -> bytes:
    text = v.typed(value, where, str, "base64 text")
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise v.fail(where, "valid base64", text) from None


def reason(v: Validator, value: Any, where: str) -> str:
    text: str = v.typed(value, where, str, "a string")
    if reason_phrase(text) is None:
        raise v.fail(where, f"a reason phrase: at most {MAX_REASON} characters, tabs, spaces and visible ASCII "
                            "(RFC 9112 section 4)", text[:80])
    return text


def ordered(v: Validator, resp: Response, where: str, events: bool) -> tuple[float, str]:
    """Check ``start`` <= every chunk's ``t``, in order (replay sends them in that order);
    returns the last time and its field."""
    def field(i: int) -> str:  # the field of chunk i (-1: the start), named only when needed
        if i < 0:
            return f"{where}.start"
        return f"{where}.events[{i}]" if events else f"{where}.chunks[{i}].t"

    previous, previous_index = resp.start, -1
    for i, chunk in enumerate(resp.chunks):
        if chunk.t < previous:
            at = f"{where}.interval" if events else field(i)
            raise v.fail(at, f"a time >= {field(previous_index)} ({previous:g} s)", chunk.t)
        if chunk.t > MAX_CASSETTE_SECONDS:  # only events can get here: start + interval × count
            raise v.fail(f"{where}.interval", f"an interval putting the last event at most {MAX_CASSETTE_SECONDS:g} "
                         f"seconds after the request", chunk.t)
        previous, previous_index = chunk.t, i
    return previous, field(previous_index)


def body_paths(v: Validator, value: Any, where: str) -> tuple[str, ...]:
    """A list of body paths (:mod:`ssemock.body_paths`): at most
    :data:`~ssemock.limits.MAX_BODY_PATHS`, each of the path syntax and bounds, duplicates removed."""
    items = v.typed(value, where, (list, tuple), "a list of body paths such as metadata.trace_id")
    if len(items) > MAX_BODY_PATHS:
        raise v.fail(where, f"a list of at most {MAX_BODY_PATHS} body paths", None)
    for i, text in enumerate(items):
        problem = path_problem(text)
        if problem is not None:
            raise v.fail(f"{where}[{i}]", problem, text)
    return tuple(dict.fromkeys(items))
