"""Reading cassettes: safe YAML loading, format version and migrations, validation.

Every problem raises :class:`~ssemock.CassetteError` naming the file, the field
(a dotted path such as ``interactions[0].response.chunks[3].t``) and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import CassetteError
from ..limits import (
    MAX_CASSETTE_SECONDS,
    MAX_JSON_DEPTH,
    json_depth_exceeds,
)
from . import fields
from .files import read_file
from .model import (
    FORMAT_KEY,
    FORMAT_VERSION,
    NO_CONTENT_STATUSES,
    Cassette,
    Chunk,
    Interaction,
    Request,
    Response,
)
from .yamltext import cassette_items, load_yaml, read_yaml

__all__ = [
    "MIGRATIONS", "NO_CONTENT_STATUSES", "cassette_items", "check_cassette", "check_times", "load_yaml",
    "parse_cassette", "read_file", "read_yaml",
]

_KEYS = {kind: frozenset(keys) for kind, keys in fields.KEYS.items()}
_BODY_FORMS = [frozenset(form) for form in fields.BODY_FORMS]

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""Upgrades by source version: ``MIGRATIONS[n]`` turns a version-``n`` document into
version ``n + 1``. Version 1 is the first format, so there is none yet."""


def parse_cassette(doc: Any, *, name: str, source: str) -> Cassette:
    """Validate a parsed document (migrating older versions) and build the :class:`Cassette`."""
    v = fields.Validator(source)
    doc = v.mapping(doc, "")
    version = doc.get(FORMAT_KEY)
    while isinstance(version, int) and not isinstance(version, bool) and version in MIGRATIONS:
        doc = MIGRATIONS[version](doc)
        version = doc.get(FORMAT_KEY)
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise CassetteError(
            source, FORMAT_KEY, f"format version {FORMAT_VERSION} (is this an ssemock cassette?"
            " VCR.py files are converted with 'ssemock import vcr')", version,
        )
    v.known(doc, "", _KEYS["cassette"])
    items = v.items(doc.get("interactions", []), "interactions", "interactions")
    match = v.mapping(doc.get("match", {}), "match")
    v.known(match, "match", _KEYS["match"])
    return Cassette(
        name=fields.cassette_name(v, doc.get("name", name)),
        interactions=[_interaction(v, item, f"interactions[{i}]") for i, item in enumerate(items)],
        provenance=dict(v.mapping(doc.get("provenance", {}), "provenance")),
        ignore_body=fields.body_paths(v, match.get("ignore_body", []), "match.ignore_body"),
        dropped_body=fields.body_paths(v, match.get("dropped_body", []), "match.dropped_body"),
    )


def check_times(cassette: Cassette) -> None:
    """Check a cassette built in code: every ``start``, chunk ``t`` and ``end.t`` a finite number
    of seconds from 0 to :data:`~ssemock.limits.MAX_CASSETTE_SECONDS` (24 h). Unlike a file, its
    times need not be in order (an ``End()`` left at 0 is common and harmless). Its statuses
    (200-599; 204 and 304 without a body) and reason phrases are checked as a file's are (RFC
    9112 characters, at most 512), its response headers (names, values and bounds),
    ``body_not_recorded`` and the body paths ignored or dropped as a file's are.

    Raises:
        CassetteError: naming the cassette (``<cassette NAME>``) and the field.
    """
    v = fields.Validator(f"<cassette {cassette.name}>")
    fields.body_paths(v, cassette.ignore_body, "match.ignore_body")
    fields.body_paths(v, cassette.dropped_body, "match.dropped_body")
    for i, inter in enumerate(cassette.interactions):
        resp, where = inter.response, f"interactions[{i}].response"
        fields.status(v, resp.status, f"{where}.status")
        fields.no_content(v, resp, where, "chunks")
        if resp.reason is not None:
            fields.reason(v, resp.reason, f"{where}.reason")
        if resp.body_not_recorded is not None:
            fields.not_recorded(v, resp, resp.body_not_recorded, f"{where}.body_not_recorded")
        fields.response_headers(v, resp.headers, f"{where}.headers")
        v.seconds(resp.start, f"{where}.start")
        v.seconds(resp.end.t, f"{where}.end.t")
        for j, chunk in enumerate(resp.chunks):
            if not 0 <= chunk.t <= MAX_CASSETTE_SECONDS:  # NaN fails too
                v.seconds(chunk.t, f"{where}.chunks[{j}].t")


def check_cassette(cassette: Cassette, source: str) -> None:
    """Check a cassette rebuilt from another form than its YAML (e.g. the cache of parsed
    cassettes) with the rules a YAML load applies: name, at most
    :data:`~ssemock.limits.MAX_ITEMS` interactions and chunks, method token, path, header
    names (tokens) and values (no CR, LF, NUL), body paths ignored or dropped, body digest,
    status 200-599 (no body after 204 or 304), reason phrase, times finite from 0 to 24 h and
    in order, end kind and time.

    Raises:
        CassetteError: naming ``source`` and the first field that breaks a rule.
    """
    v = fields.Validator(source)
    fields.cassette_name(v, cassette.name)
    fields.body_paths(v, cassette.ignore_body, "match.ignore_body")
    fields.body_paths(v, cassette.dropped_body, "match.dropped_body")
    for i, inter in enumerate(v.items(cassette.interactions, "interactions", "interactions")):
        req, resp, where = inter.request, inter.response, f"interactions[{i}]"
        if fields.method_token(v, req.method, f"{where}.request.method").upper() != req.method:
            raise v.fail(f"{where}.request.method", "an upper-case method", req.method)
        fields.url_path(v, req.path, f"{where}.request.path")
        fields.check_headers(v, req.headers, f"{where}.request.headers")
        if req.body_sha256 is not None or req.body_size is not None:
            if req.body is not None:
                raise v.fail(f"{where}.request.body", "either a body or its digest, not both", None)
            fields.digest(v, req.body_sha256, req.body_size, f"{where}.request.body")
        fields.status(v, resp.status, f"{where}.response.status")
        fields.no_content(v, resp, f"{where}.response", "chunks")
        if resp.reason is not None:
            fields.reason(v, resp.reason, f"{where}.response.reason")
        if resp.body_not_recorded is not None:
            fields.not_recorded(v, resp, resp.body_not_recorded, f"{where}.response.body_not_recorded")
        fields.response_headers(v, resp.headers, f"{where}.response.headers")
        v.seconds(resp.start, f"{where}.response.start")
        for j, chunk in enumerate(v.items(resp.chunks, f"{where}.response.chunks", "chunks")):
            if not (type(chunk.t) is float and 0.0 <= chunk.t <= MAX_CASSETTE_SECONDS):  # else: what seconds accepts
                v.seconds(chunk.t, f"{where}.response.chunks[{j}].t")
        last, last_at = fields.ordered(v, resp, f"{where}.response", False)
        fields.end_of(v, resp.end.how, resp.end.t, last, last_at, f"{where}.response")


def _interaction(v: fields.Validator, item: Any, where: str) -> Interaction:
    doc = v.mapping(item, where)
    v.known(doc, where, _KEYS["interaction"])
    if "response" not in doc:
        raise v.fail(f"{where}.response", "a response mapping", None)
    return Interaction(
        _request(v, doc.get("request", {}), f"{where}.request"),
        _response(v, doc["response"], f"{where}.response"),
    )


def _request(v: fields.Validator, item: Any, where: str) -> Request:
    doc = v.mapping(item, where)
    v.known(doc, where, _KEYS["request"])
    req = Request(
        method=fields.method_token(v, doc.get("method", "GET"), f"{where}.method").upper(),
        path=fields.url_path(v, doc.get("path", "/"), f"{where}.path"),
        query=v.pairs(doc.get("query", []), f"{where}.query"),
        headers=fields.headers(v, doc.get("headers", {}), f"{where}.headers"),
    )
    if "body" in doc:
        _body(v, doc["body"], f"{where}.body", req)
    return req


def _body(v: fields.Validator, item: Any, where: str, req: Request) -> None:
    forms = "one of {json: VALUE}, {text: STR}, {base64: STR}, {sha256: HEX, size: BYTES}"
    doc = v.typed(item, where, dict, forms)
    if set(doc) not in _BODY_FORMS:
        raise v.fail(where, forms, doc)
    if set(doc) == {"json"}:
        if json_depth_exceeds(doc["json"], MAX_JSON_DEPTH):
            raise v.fail(f"{where}.json", f"JSON nested at most {MAX_JSON_DEPTH} deep", None)
        req.body = fields.utf8(v, json.dumps(doc["json"], separators=(",", ":"), ensure_ascii=False), f"{where}.json")
    elif set(doc) == {"text"}:
        req.body = fields.utf8(v, v.typed(doc["text"], f"{where}.text", str, "a string"), f"{where}.text")
    elif set(doc) == {"base64"}:
        req.body = fields.b64(v, doc["base64"], f"{where}.base64")
    else:
        req.body_sha256, req.body_size = fields.digest(v, doc["sha256"], doc["size"], where)


def _response(v: fields.Validator, item: Any, where: str) -> Response:
    doc = v.mapping(item, where)
    v.known(doc, where, _KEYS["response"])
    status = fields.status(v, doc.get("status", 200), f"{where}.status")
    timing = doc.get("timing", "recorded")
    if timing not in fields.TIMINGS:
        raise v.fail(f"{where}.timing", "'recorded' or 'none'", timing)
    resp = Response(
        status=status,
        reason=fields.reason(v, doc["reason"], f"{where}.reason") if "reason" in doc else None,
        headers=fields.response_headers(v, v.pairs(doc.get("headers", {}), f"{where}.headers"), f"{where}.headers"),
        start=v.seconds(doc.get("start", 0.0), f"{where}.start"),
        timed=timing == "recorded",
    )
    if "chunks" in doc and "events" in doc:
        raise v.fail(where, "either 'chunks' or 'events', not both", None)
    if "events" in doc:
        resp.chunks = _events_to_chunks(v, doc, where, resp.start)
    else:
        resp.chunks = _chunks(v, doc.get("chunks", []), f"{where}.chunks")
    fields.no_content(v, resp, where, "events" if "events" in doc else "chunks")
    if "body_not_recorded" in doc:
        resp.body_not_recorded = fields.not_recorded(v, resp, doc["body_not_recorded"], f"{where}.body_not_recorded")
    last, last_at = fields.ordered(v, resp, where, "events" in doc)
    end_doc = v.mapping(doc.get("end", {}), f"{where}.end")
    v.known(end_doc, f"{where}.end", _KEYS["end"])
    resp.end = fields.end_of(v, end_doc.get("how", "clean"), end_doc.get("t", last), last, last_at, where)
    return resp


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


def _chunks(v: fields.Validator, items: Any, where: str) -> list[Chunk]:
    out: list[Chunk] = []
    for i, item in enumerate(v.items(items, where, "chunks")):
        if (plain := _plain_text_chunk(item)) is not None:
            out.append(plain)
            continue
        at = f"{where}[{i}]"
        doc = v.mapping(item, at)
        v.known(doc, at, _KEYS["chunk"])
        t = v.seconds(doc.get("t", 0.0), f"{at}.t")
        if ("text" in doc) == ("base64" in doc):
            raise v.fail(at, "exactly one of 'text' or 'base64'", sorted(doc))
        if "text" in doc:
            data = fields.utf8(v, v.typed(doc["text"], f"{at}.text", str, "a string"), f"{at}.text")
        else:
            data = fields.b64(v, doc["base64"], f"{at}.base64")
        out.append(Chunk(t, data))
    return out


def _events_to_chunks(v: fields.Validator, doc: dict[str, Any], where: str, start: float) -> list[Chunk]:
    """Hand-written events: one chunk per event, ``interval`` seconds apart after ``start``.

    Each event is a mapping with any of ``data`` (string, or any other YAML value,
    written as compact JSON), ``event``, ``id``, ``retry`` (milliseconds) and
    ``comment``; ``eol`` (``lf``, ``crlf``, ``cr``) picks the line ending.
    """
    eols = fields.EOLS
    eol = doc.get("eol", "lf")
    if eol not in eols:
        raise v.fail(f"{where}.eol", "one of lf, crlf, cr", eol)
    interval = v.seconds(doc.get("interval", 0.0), f"{where}.interval")
    from ..sse import encode  # only cassettes written as events need the codec

    chunks = []
    for i, item in enumerate(v.items(doc["events"], f"{where}.events", "events")):
        at = f"{where}.events[{i}]"
        ev = v.mapping(item, at)
        v.known(ev, at, _KEYS["event"])
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


def _opt_str(v: fields.Validator, ev: dict[str, Any], key: str, at: str) -> str | None:
    if ev.get(key) is None:
        return None
    return fields.scalar_text(v, ev[key], f"{at}.{key}")
