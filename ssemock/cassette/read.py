"""Reading cassettes: safe YAML loading, format version and migrations, validation.

Every problem raises :class:`~ssemock.CassetteError` naming the file, the field
(a dotted path such as ``interactions[0].response.chunks[3].t``) and what was expected.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CassetteError, Described, ScenarioError, StubError
from ..limits import (
    MAX_CASSETTE_SECONDS,
    MAX_ITEMS,
    MAX_JSON_DEPTH,
    json_depth_exceeds,
    number,
)
from .files import YAML_START, FileError, read_file
from .model import (
    END_HOWS,
    FORMAT_KEY,
    FORMAT_VERSION,
    MAX_REASON,
    NO_CONTENT_STATUSES,
    Cassette,
    Chunk,
    End,
    Interaction,
    Request,
    Response,
    reason_phrase,
)

if TYPE_CHECKING:
    from .fastyaml import ItemBound

__all__ = [
    "MIGRATIONS", "NO_CONTENT_STATUSES", "cassette_items", "check_cassette", "check_times", "load_yaml",
    "parse_cassette", "read_file", "read_yaml",
]

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Upgrades by source version: ``MIGRATIONS[n]`` turns a version-``n`` document into
version ``n + 1``. Version 1 is the first format, so there is none yet."""


def cassette_items() -> ItemBound:
    """The lists of a cassette counted while it loads: interactions, and each response's chunks or
    events, at most :data:`~ssemock.limits.MAX_ITEMS` each."""
    from .fastyaml import ItemBound

    return ItemBound(MAX_ITEMS, (
        (("interactions",), "interactions"),
        (("interactions", None, "response", "chunks"), "chunks"),
        (("interactions", None, "response", "events"), "events"),
    ))


def load_yaml(text: str, source: str, error: FileError = CassetteError, *, items: ItemBound | None = None) -> Any:
    """Parse YAML safely (:func:`.fastyaml.strict_load`): anchors, aliases, duplicate keys and
    nesting past :data:`.fastyaml.MAX_NESTING` are refused with their line; more than
    :data:`~ssemock.limits.MAX_YAML_NODES` nodes, or a list named by ``items`` (e.g.
    :func:`cassette_items`) longer than its bound, as soon as the count passes it.

    Raises:
        CassetteError (or ``error``): names ``source``, the line or field and what was wrong.
    """
    import yaml  # imported when a file is parsed: a start answered from the caches needs no parser

    from .fastyaml import MAX_NESTING, Refused, strict_load

    try:
        return strict_load(text, items=items)
    except Refused as exc:
        raise error(source, exc.field or f"line {exc.line}", exc.expected, exc.got) from None
    except MemoryError:  # within the bounds, but not within this process's memory
        pass  # the data built so far goes with the exception, before the error is made
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, error) from None
    except RecursionError:  # the safe loader's constructors on deep flow collections
        raise error(source, "", f"YAML nested at most {MAX_NESTING} deep", None) from None
    raise error(source, "", f"YAML whose data fits in memory ({len(text):,} characters did not)", None)


_TAG = r"constructor for the tag '([^']*)'"  # compiled on first use (re's cache), not at every start


def _yaml_error(exc: Exception, source: str, error: FileError) -> CassetteError | ScenarioError | StubError:
    """One short line for a YAML error (``yaml.YAMLError``): its line and column, and what went wrong."""
    from .fastyaml import MAX_NESTING

    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = str(getattr(exc, "problem", None) or exc).replace("\n", " ")
    context = getattr(exc, "context", None)
    if context == "while increasing flow level":  # libyaml's own bound, before ours could count
        return error(source, where, f"YAML nested at most {MAX_NESTING} deep", None)
    tag = re.search(_TAG, problem)
    if tag is not None:
        return error(source, where, "plain YAML data (no application-specific tag such as !!python/...)",
                     tag.group(1).replace("tag:yaml.org,2002:", "!!", 1))
    return error(source, where, "valid YAML", f"{context} {problem}" if context else problem)


def read_yaml(path: Path, source: str, *, limit: int, error: FileError = CassetteError) -> Any:
    """Read and parse the YAML file ``path`` of at most ``limit`` bytes.

    Raises:
        FileNotFoundError: the file does not exist.
        CassetteError (or ``error``): too large, unreadable, not UTF-8, or refused by :func:`load_yaml`.
    """
    return load_yaml(read_text(path, source, limit=limit, error=error), source, error)


def read_text(
    path: Path, source: str, *, limit: int, error: FileError = CassetteError,
    keep: Callable[[bytes], int] | None = None,
) -> str:
    """The text of the UTF-8 file ``path`` of at most ``limit`` bytes.

    ``keep(data)``, when given, says how many of the file's bytes to decode (the rest is
    left out, e.g. a torn last interaction, which may end inside a character).

    Raises:
        FileNotFoundError: the file does not exist.
        CassetteError (or ``error``): too large, unreadable or not UTF-8.
    """
    data = read_file(path, source, limit=limit, error=error, start=YAML_START)
    return utf8_text(data[: keep(data)] if keep is not None else data, source, error)


def utf8_text(data: bytes, source: str, error: FileError = CassetteError) -> str:
    """``data`` decoded as UTF-8. Raises ``error`` (default CassetteError) naming ``source`` if it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(source, "", "a readable UTF-8 YAML file", str(exc)) from None




def parse_cassette(doc: Any, *, name: str, source: str) -> Cassette:
    """Validate a parsed document (migrating older versions) and build the :class:`Cassette`."""
    v = _Validator(source)
    doc = v.mapping(doc, "")
    version = doc.get(FORMAT_KEY)
    while isinstance(version, int) and not isinstance(version, bool) and version in MIGRATIONS:
        doc = MIGRATIONS[version](doc)
        version = doc.get(FORMAT_KEY)
    if version != FORMAT_VERSION:
        raise CassetteError(
            source, FORMAT_KEY, f"format version {FORMAT_VERSION} (is this an ssemock cassette?"
            " VCR.py files are converted with 'ssemock import vcr')", version,
        )
    v.known(doc, "", {FORMAT_KEY, "name", "provenance", "interactions"})
    items = v.items(doc.get("interactions", []), "interactions", "interactions")
    return Cassette(
        name=_cassette_name(v, doc.get("name", name)),
        interactions=[_interaction(v, item, f"interactions[{i}]") for i, item in enumerate(items)],
        provenance=dict(v.mapping(doc.get("provenance", {}), "provenance")),
    )


def check_times(cassette: Cassette) -> None:
    """Check a cassette built in code: every ``start``, chunk ``t`` and ``end.t`` a finite number
    of seconds from 0 to :data:`~ssemock.limits.MAX_CASSETTE_SECONDS` (24 h). Unlike a file, its
    times need not be in order (an ``End()`` left at 0 is common and harmless). Its statuses
    (200-599; 204 and 304 without a body) and reason phrases are checked as a file's are (RFC
    9112 characters, at most 512).

    Raises:
        CassetteError: naming the cassette (``<cassette NAME>``) and the field.
    """
    v = _Validator(f"<cassette {cassette.name}>")
    for i, inter in enumerate(cassette.interactions):
        resp, where = inter.response, f"interactions[{i}].response"
        _status(v, resp.status, f"{where}.status")
        _no_content(v, resp, where, "chunks")
        if resp.reason is not None:
            _reason(v, resp.reason, f"{where}.reason")
        v.seconds(resp.start, f"{where}.start")
        v.seconds(resp.end.t, f"{where}.end.t")
        for j, chunk in enumerate(resp.chunks):
            if not 0 <= chunk.t <= MAX_CASSETTE_SECONDS:  # NaN fails too
                v.seconds(chunk.t, f"{where}.chunks[{j}].t")


def check_cassette(cassette: Cassette, source: str) -> None:
    """Check a cassette rebuilt from another form than its YAML (e.g. the cache of parsed
    cassettes) with the rules a YAML load applies: name, at most
    :data:`~ssemock.limits.MAX_ITEMS` interactions and chunks, method token, path, header
    names (tokens) and values (no CR, LF, NUL), body digest, status 200-599 (no body after 204
    or 304), reason phrase, times finite
    from 0 to 24 h and in order, end kind and time.

    Raises:
        CassetteError: naming ``source`` and the first field that breaks a rule.
    """
    v = _Validator(source)
    _cassette_name(v, cassette.name)
    for i, inter in enumerate(v.items(cassette.interactions, "interactions", "interactions")):
        req, resp, where = inter.request, inter.response, f"interactions[{i}]"
        if _method(v, req.method, f"{where}.request.method").upper() != req.method:
            raise v.fail(f"{where}.request.method", "an upper-case method", req.method)
        _path(v, req.path, f"{where}.request.path")
        _check_headers(v, req.headers, f"{where}.request.headers")
        if req.body_sha256 is not None or req.body_size is not None:
            if req.body is not None:
                raise v.fail(f"{where}.request.body", "either a body or its digest, not both", None)
            _digest(v, req.body_sha256, req.body_size, f"{where}.request.body")
        _status(v, resp.status, f"{where}.response.status")
        _no_content(v, resp, f"{where}.response", "chunks")
        if resp.reason is not None:
            _reason(v, resp.reason, f"{where}.response.reason")
        _check_headers(v, resp.headers, f"{where}.response.headers")
        v.seconds(resp.start, f"{where}.response.start")
        for j, chunk in enumerate(v.items(resp.chunks, f"{where}.response.chunks", "chunks")):
            if not (type(chunk.t) is float and 0.0 <= chunk.t <= MAX_CASSETTE_SECONDS):  # else: what seconds accepts
                v.seconds(chunk.t, f"{where}.response.chunks[{j}].t")
        last, last_at = _ordered(v, resp, f"{where}.response", False)
        _end(v, resp.end.how, resp.end.t, last, last_at, f"{where}.response")


class _Validator:
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

    def known(self, doc: dict[str, Any], where: str, keys: set[str]) -> None:
        extra = sorted(set(map(str, doc)) - keys)
        if extra:
            path = f"{where}.{extra[0]}" if where else extra[0]
            raise CassetteError(self.source, path, f"one of the keys {', '.join(sorted(keys))}", None)

    def seconds(self, value: Any, where: str) -> float:
        """A time in seconds, finite, from 0 to :data:`~ssemock.limits.MAX_CASSETTE_SECONDS` (24 h)."""
        if not _SECONDS.check(value):
            raise self.fail(where, f"{_SECONDS.expected} seconds", value)
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
                    out.append((str(name), _scalar_text(self, one, sub)))
            return out
        for i, pair in enumerate(self.typed(value, where, list, "a mapping or a list of [name, value]")):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise self.fail(f"{where}[{i}]", "a [name, value] pair", pair)
            out.append((str(pair[0]), _scalar_text(self, pair[1], f"{where}[{i}][1]")))
        return out


_SECONDS = number(0.0, MAX_CASSETTE_SECONDS)
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")  # RFC 9110 token
_METHOD = "an HTTP method: a token of letters, digits and !#$%&'*+-.^_`|~ (RFC 9110)"
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")


def _cassette_name(v: _Validator, value: Any) -> str:
    """``name:``: letters, digits, ``._-``, ``/`` between parts; no ``..`` (it names files and URLs)."""
    if not (isinstance(value, str) and _NAME.match(value) and ".." not in value.split("/")):
        raise v.fail("name", "a name of letters, digits, '.', '_', '-' (and '/' between parts)", value)
    return value


def _headers(v: _Validator, value: Any, where: str) -> list[tuple[str, str]]:
    """Header pairs whose names are HTTP tokens and whose values hold no CR, LF or NUL."""
    return _check_headers(v, v.pairs(value, where), where)


def _check_headers(v: _Validator, pairs: list[tuple[str, str]], where: str) -> list[tuple[str, str]]:
    for name, text in pairs:
        if not _HEADER_NAME.match(name):
            raise v.fail(f"{where}.{name}", "a header name (letters, digits and !#$%&'*+.^_`|~-)", name)
        if "\r" in text or "\n" in text or "\0" in text:
            raise v.fail(f"{where}.{name}", "a header value without CR, LF or NUL", text)
        if not text.isascii():
            _utf8(v, text, f"{where}.{name}")
    return pairs


_SURROGATE = "text without a lone surrogate (U+D800 to U+DFFF are not characters: UTF-8 cannot carry them)"


def _utf8(v: _Validator, text: str, where: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (only a cassette built in code can hold one: YAML refuses it) is refused."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise v.fail(where, _SURROGATE, Described(None, f"{text[exc.start]!r} at character {exc.start}")) from None


def _scalar_text(v: _Validator, value: Any, where: str) -> str:
    if isinstance(value, str):
        if not value.isascii():
            _utf8(v, value, where)
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise v.fail(where, "a string", value)


def _interaction(v: _Validator, item: Any, where: str) -> Interaction:
    doc = v.mapping(item, where)
    v.known(doc, where, {"request", "response"})
    if "response" not in doc:
        raise v.fail(f"{where}.response", "a response mapping", None)
    return Interaction(
        _request(v, doc.get("request", {}), f"{where}.request"),
        _response(v, doc["response"], f"{where}.response"),
    )


def _request(v: _Validator, item: Any, where: str) -> Request:
    doc = v.mapping(item, where)
    v.known(doc, where, {"method", "path", "query", "headers", "body"})
    req = Request(
        method=_method(v, doc.get("method", "GET"), f"{where}.method").upper(),
        path=_path(v, doc.get("path", "/"), f"{where}.path"),
        query=v.pairs(doc.get("query", []), f"{where}.query"),
        headers=_headers(v, doc.get("headers", {}), f"{where}.headers"),
    )
    if "body" in doc:
        _body(v, doc["body"], f"{where}.body", req)
    return req


def _method(v: _Validator, value: Any, where: str) -> str:
    method = v.typed(value, where, str, _METHOD)
    if not _HEADER_NAME.match(method):
        raise v.fail(where, _METHOD, method)
    return method  # type: ignore[no-any-return]


def _path(v: _Validator, value: Any, where: str) -> str:
    path = v.typed(value, where, str, "a URL path starting with /")
    if not path.startswith("/"):
        raise v.fail(where, "a URL path starting with /", path)
    if not path.isascii():
        _utf8(v, path, where)
    return path  # type: ignore[no-any-return]


def _digest(v: _Validator, digest: Any, size: Any, where: str) -> tuple[str, int]:
    """A body stored by digest: 64 lower-case hex digits and a size in bytes."""
    v.typed(digest, f"{where}.sha256", str, "64 hex digits")
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise v.fail(f"{where}.sha256", "64 lower-case hex digits", digest)
    return digest, v.typed(size, f"{where}.size", int, "a size in bytes")


_STATUS = "an HTTP status code 200-599 (a 1xx answer is interim, RFC 9110 section 15.2)"


def _status(v: _Validator, value: Any, where: str) -> int:
    status = v.typed(value, where, int, _STATUS)
    if not 200 <= status <= 599:
        raise v.fail(where, _STATUS, status)
    return status  # type: ignore[no-any-return]


def _no_content(v: _Validator, resp: Response, where: str, field: str) -> None:
    """A 204 or 304 response has no body: refused when it has one (``field`` names where it is)."""
    if resp.status in NO_CONTENT_STATUSES and any(c.data for c in resp.chunks):
        raise v.fail(f"{where}.{field}", f"no body after status {resp.status}: a {resp.status} response has no "
                     f"content (RFC 9110 section 15, RFC 9112 section 6.3); remove the {field} or change the status",
                     Described(None, f"{sum(len(c.data) for c in resp.chunks)} bytes"))


def _end(v: _Validator, how: Any, t: Any, last: float, last_at: str, where: str) -> End:
    """``end``: one of :data:`END_HOWS`, at a time no earlier than the last chunk's."""
    if how not in END_HOWS:
        raise v.fail(f"{where}.end.how", f"one of {', '.join(END_HOWS)}", how)
    end = End(v.seconds(t, f"{where}.end.t"), how)
    if end.t < last:
        raise v.fail(f"{where}.end.t", f"a time >= {last_at} ({last:g} s)", end.t)
    return end


def _body(v: _Validator, item: Any, where: str, req: Request) -> None:
    forms = "one of {json: VALUE}, {text: STR}, {base64: STR}, {sha256: HEX, size: BYTES}"
    doc = v.typed(item, where, dict, forms)
    if set(doc) == {"json"}:
        if json_depth_exceeds(doc["json"], MAX_JSON_DEPTH):
            raise v.fail(f"{where}.json", f"JSON nested at most {MAX_JSON_DEPTH} deep", None)
        req.body = _utf8(v, json.dumps(doc["json"], separators=(",", ":"), ensure_ascii=False), f"{where}.json")
    elif set(doc) == {"text"}:
        req.body = _utf8(v, v.typed(doc["text"], f"{where}.text", str, "a string"), f"{where}.text")
    elif set(doc) == {"base64"}:
        req.body = _b64(v, doc["base64"], f"{where}.base64")
    elif set(doc) == {"sha256", "size"}:
        req.body_sha256, req.body_size = _digest(v, doc["sha256"], doc["size"], where)
    else:
        raise v.fail(where, forms, doc)


def _b64(v: _Validator, value: Any, where: str) -> bytes:
    text = v.typed(value, where, str, "base64 text")
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise v.fail(where, "valid base64", text) from None


def _reason(v: _Validator, value: Any, where: str) -> str:
    text: str = v.typed(value, where, str, "a string")
    if reason_phrase(text) is None:
        raise v.fail(where, f"a reason phrase: at most {MAX_REASON} characters, tabs, spaces and visible ASCII "
                            "(RFC 9112 section 4)", text[:80])
    return text


def _response(v: _Validator, item: Any, where: str) -> Response:
    doc = v.mapping(item, where)
    v.known(
        doc, where,
        {"status", "reason", "headers", "timing", "start", "chunks", "events", "interval", "eol", "end"},
    )
    status = _status(v, doc.get("status", 200), f"{where}.status")
    timing = doc.get("timing", "recorded")
    if timing not in ("recorded", "none"):
        raise v.fail(f"{where}.timing", "'recorded' or 'none'", timing)
    resp = Response(
        status=status,
        reason=_reason(v, doc["reason"], f"{where}.reason") if "reason" in doc else None,
        headers=_headers(v, doc.get("headers", {}), f"{where}.headers"),
        start=v.seconds(doc.get("start", 0.0), f"{where}.start"),
        timed=timing == "recorded",
    )
    if "chunks" in doc and "events" in doc:
        raise v.fail(where, "either 'chunks' or 'events', not both", None)
    if "events" in doc:
        resp.chunks = _events_to_chunks(v, doc, where, resp.start)
    else:
        resp.chunks = _chunks(v, doc.get("chunks", []), f"{where}.chunks")
    _no_content(v, resp, where, "events" if "events" in doc else "chunks")
    last, last_at = _ordered(v, resp, where, "events" in doc)
    end_doc = v.mapping(doc.get("end", {}), f"{where}.end")
    v.known(end_doc, f"{where}.end", {"t", "how"})
    resp.end = _end(v, end_doc.get("how", "clean"), end_doc.get("t", last), last, last_at, where)
    return resp


def _ordered(v: _Validator, resp: Response, where: str, events: bool) -> tuple[float, str]:
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


def _plain_text_chunk(item: Any) -> Chunk | None:
    """``{t: seconds, text: STR}`` (or ``{text: STR}``) as a chunk without building error paths; else None.

    The common case, checked exactly as below; anything else (including every malformed
    chunk) goes through the full validation, which names the field.
    """
    if type(item) is dict and type(text := item.get("text")) is str and len(item) == 1 + ("t" in item):
        t = item.get("t", 0.0)
        if (type(t) is float or type(t) is int) and 0 <= t <= MAX_CASSETTE_SECONDS:
            try:
                return Chunk(float(t), text.encode("utf-8"))
            except UnicodeEncodeError:
                return None  # refused below, with its field
    return None


def _chunks(v: _Validator, items: Any, where: str) -> list[Chunk]:
    out: list[Chunk] = []
    for i, item in enumerate(v.items(items, where, "chunks")):
        if (plain := _plain_text_chunk(item)) is not None:
            out.append(plain)
            continue
        at = f"{where}[{i}]"
        doc = v.mapping(item, at)
        v.known(doc, at, {"t", "text", "base64"})
        t = v.seconds(doc.get("t", 0.0), f"{at}.t")
        if ("text" in doc) == ("base64" in doc):
            raise v.fail(at, "exactly one of 'text' or 'base64'", sorted(doc))
        if "text" in doc:
            data = _utf8(v, v.typed(doc["text"], f"{at}.text", str, "a string"), f"{at}.text")
        else:
            data = _b64(v, doc["base64"], f"{at}.base64")
        out.append(Chunk(t, data))
    return out


_EVENT_KEYS = {"data", "event", "id", "retry", "comment"}


def _events_to_chunks(v: _Validator, doc: dict[str, Any], where: str, start: float) -> list[Chunk]:
    """Hand-written events: one chunk per event, ``interval`` seconds apart after ``start``.

    Each event is a mapping with any of ``data`` (string, or any other YAML value,
    written as compact JSON), ``event``, ``id``, ``retry`` (milliseconds) and
    ``comment``; ``eol`` (``lf``, ``crlf``, ``cr``) picks the line ending.
    """
    eols = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
    eol = doc.get("eol", "lf")
    if eol not in eols:
        raise v.fail(f"{where}.eol", "one of lf, crlf, cr", eol)
    interval = v.seconds(doc.get("interval", 0.0), f"{where}.interval")
    from ..sse import encode  # only cassettes written as events need the codec

    chunks = []
    for i, item in enumerate(v.items(doc["events"], f"{where}.events", "events")):
        at = f"{where}.events[{i}]"
        ev = v.mapping(item, at)
        v.known(ev, at, _EVENT_KEYS)
        data = ev.get("data")
        if data is not None and not isinstance(data, str):
            data = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        retry = ev.get("retry")
        if retry is not None:
            v.typed(retry, f"{at}.retry", int, "milliseconds (an integer >= 0)")
        try:
            block = encode(
                data,
                event=_opt_str(v, ev, "event", at),
                id=_opt_str(v, ev, "id", at),
                retry=retry,
                comment=_opt_str(v, ev, "comment", at),
                eol=eols[eol],
            )
        except ValueError as exc:
            raise v.fail(at, "an encodable event", str(exc)) from None
        chunks.append(Chunk(round(start + interval * (i + 1), 9) if interval else start, block))
    return chunks


def _opt_str(v: _Validator, ev: dict[str, Any], key: str, at: str) -> str | None:
    if ev.get(key) is None:
        return None
    return _scalar_text(v, ev[key], f"{at}.{key}")
