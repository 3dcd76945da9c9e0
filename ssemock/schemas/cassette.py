"""The JSON Schema of cassette files, built from the tables the cassette loader checks
(:mod:`ssemock.cassette.fields`: the keys of each mapping, the patterns, the bounds).

What a schema cannot say (the loader still checks it): the steps of a body path (at most 32), times in
order and an ``end`` no earlier than the last chunk, no body after a 204 or 304, ``body_not_recorded``
only without chunks, header lines and the headers' total size in bytes, JSON nesting depth, valid
base64 padding, hand-written events that encode (an ``id`` without NUL), an integer written ``1.0``.
"""

from __future__ import annotations

from typing import Any

from ..body_paths import PATH_PATTERN
from ..cassette import fields
from ..cassette.model import END_HOWS, FORMAT_KEY, FORMAT_VERSION, MAX_REASON, REASON
from ..limits import (
    MAX_BODY_PATH_CHARS,
    MAX_BODY_PATH_STEPS,
    MAX_BODY_PATHS,
    MAX_HEADER_LINE,
    MAX_ITEMS,
    MAX_RESPONSE_HEADERS,
    bounded,
    string,
    whole,
)

__all__ = ["cassette_schema"]

_SCALAR = {"type": ["string", "number"], "description": "a string (a number is read as its text)"}
_SECONDS = {**fields.SECONDS.schema, "description": f"{fields.SECONDS.expected} seconds from the request"}


def _closed(kind: str, properties: dict[str, Any], description: str) -> dict[str, Any]:
    """An object of the keys :data:`~ssemock.cassette.fields.KEYS` gives ``kind`` (each described in ``properties``)."""
    keys = fields.KEYS[kind]
    assert set(properties) == set(keys), (kind, sorted(set(properties) ^ set(keys)))
    return {
        "type": "object",
        "description": description,
        "additionalProperties": False,
        "properties": {key: properties[key] for key in keys},
    }


def _pairs(value: dict[str, Any], *, most: int | None = None, name: dict[str, Any] | None = None) -> dict[str, Any]:
    """A mapping name -> value or list of values, or a list of ``[name, value]`` (:meth:`Validator.pairs`)."""
    mapping: dict[str, Any] = {
        "type": "object",
        "additionalProperties": {"anyOf": [value, {"type": "array", "items": value}]},
    }
    pairs: dict[str, Any] = {
        "type": "array",
        "items": {"type": "array", "minItems": 2, "maxItems": 2, "prefixItems": [name or {}, value]},
    }
    if name is not None:
        mapping["propertyNames"] = name
    if most is not None:
        pairs["maxItems"] = most
    return {
        "anyOf": [mapping, pairs],
        "description": "a mapping name -> value (or list of values), or a list of [name, value] pairs",
    }


def _headers(most: int | None = None, line: int | None = None) -> dict[str, Any]:
    value = {**string(maximum=line, without="\r\n\0"), "type": ["string", "number"]}
    return _pairs(value, most=most, name={"pattern": whole(fields.TOKEN)})


def _body() -> dict[str, Any]:
    forms = {
        "json": {"description": "a JSON value (compared by value when matching)"},
        "text": {"type": "string", "description": "UTF-8 text"},
        "base64": {"type": "string", "pattern": whole(r"[A-Za-z0-9+/=\s]*"), "description": "base64 bytes"},
        "sha256": {"type": "string", "pattern": whole(fields.DIGEST), "description": "64 lower-case hex digits"},
        "size": {"type": "integer", "description": "the body's size in bytes"},
    }
    return {
        "description": "one of {json: VALUE}, {text: STR}, {base64: STR}, {sha256: HEX, size: BYTES}",
        "oneOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "required": list(form),
                "properties": {key: forms[key] for key in form},
            }
            for form in fields.BODY_FORMS
        ],
    }


def _request() -> dict[str, Any]:
    return _closed(
        "request",
        {
            "method": {
                "type": "string",
                "pattern": whole(fields.TOKEN),
                "default": "GET",
                "description": "an HTTP method (RFC 9110 token)",
            },
            "path": {"type": "string", "pattern": "^/", "default": "/", "description": "the URL path, starting with /"},
            "query": _pairs(_SCALAR),
            "headers": _headers(),
            "body": _body(),
        },
        "the request, after redaction; no body key: any request body matches",
    )


def _event() -> dict[str, Any]:
    one_line = {"anyOf": [{**string(without="\r\n"), "type": ["string", "number"]}, {"type": "null"}]}
    return _closed(
        "event",
        {
            "data": {"description": "a string, or any other value written as compact JSON"},
            "event": {**one_line, "description": "the event type"},
            "id": {
                "anyOf": [{**string(without="\r\n\0"), "type": ["string", "number"]}, {"type": "null"}],
                "description": "the event ID",
            },
            "retry": {"anyOf": [bounded("integer", 0, None), {"type": "null"}], "description": "milliseconds"},
            "comment": {"anyOf": [_SCALAR, {"type": "null"}], "description": "a comment line"},
        },
        "a hand-written event",
    )


def _response() -> dict[str, Any]:
    chunk = _closed(
        "chunk",
        {
            "t": _SECONDS,
            "text": {"type": "string", "description": "the bytes, as UTF-8 text"},
            "base64": {"type": "string", "pattern": whole(r"[A-Za-z0-9+/=\s]*"), "description": "the bytes, as base64"},
        },
        "one upstream read",
    )
    chunk["oneOf"] = [{"required": ["text"]}, {"required": ["base64"]}]
    end = _closed(
        "end", {"t": _SECONDS, "how": {"enum": list(END_HOWS), "default": "clean"}}, "how and when the stream ended"
    )
    low, high = fields.STATUSES
    response = _closed(
        "response",
        {
            "status": {**bounded("integer", low, high), "default": 200, "description": "the final HTTP status"},
            "reason": {
                **string(maximum=MAX_REASON),
                "pattern": whole(REASON),
                "description": "the reason phrase (tabs, spaces and visible ASCII)",
            },
            "headers": _headers(MAX_RESPONSE_HEADERS, MAX_HEADER_LINE),
            "timing": {"enum": list(fields.TIMINGS), "default": "recorded"},
            "start": {**_SECONDS, "description": "seconds from the request to the headers"},
            "chunks": {"type": "array", "maxItems": MAX_ITEMS, "items": chunk},
            "events": {"type": "array", "maxItems": MAX_ITEMS, "items": _event()},
            "interval": {**_SECONDS, "description": "seconds between hand-written events"},
            "eol": {"enum": list(fields.EOLS), "default": "lf", "description": "the line end of hand-written events"},
            "end": end,
            "body_not_recorded": {
                **string(minimum=1, maximum=fields.MAX_NOT_RECORDED, without="".join(map(chr, [*range(32), 127]))),
                "description": "why the body was not recorded (one line)",
            },
        },
        "the recorded response",
    )
    response["not"] = {"required": ["chunks", "events"]}
    return response


def _match() -> dict[str, Any]:
    """The ``match:`` mapping: body paths ignored and dropped (:mod:`ssemock.body_paths`)."""

    def paths(description: str) -> dict[str, Any]:
        path = {**string(minimum=1, maximum=MAX_BODY_PATH_CHARS), "pattern": whole(PATH_PATTERN)}
        return {"type": "array", "maxItems": MAX_BODY_PATHS, "items": path, "default": [],
                "description": f"{description} (metadata.trace_id, messages[*].id; at most {MAX_BODY_PATH_STEPS} "
                               "steps each)"}

    return _closed(
        "match",
        {
            "ignore_body": paths("request body fields the body matcher deletes from both bodies before comparing"),
            "dropped_body": paths("request body fields the recorder deleted from the stored bodies (also ignored)"),
        },
        "how requests are matched against this cassette",
    )


def cassette_schema() -> dict[str, Any]:
    """The cassette file schema (draft 2020-12) as JSON data, without ``$schema`` and ``$id``."""
    interaction = _closed(
        "interaction", {"request": _request(), "response": _response()}, "a request and its recorded response"
    )
    interaction["required"] = ["response"]
    top = _closed(
        "cassette",
        {
            FORMAT_KEY: {"const": FORMAT_VERSION, "description": "the cassette format version"},
            "name": {
                "type": "string",
                "pattern": whole(fields.NAME),
                "description": "letters, digits, '.', '_', '-' (and '/' between parts); default: the file name",
            },
            "provenance": {"type": "object", "description": "where the recording comes from (free-form)"},
            "match": _match(),
            "interactions": {"type": "array", "maxItems": MAX_ITEMS, "items": interaction},
        },
        "an ssemock cassette: recorded interactions, replayed byte for byte",
    )
    top["required"] = [FORMAT_KEY]
    return {"title": "ssemock cassette", **top}
