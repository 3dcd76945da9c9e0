"""The shape of a recorded answer: what drift compares, never the values (text differs every time).

:func:`shape_of` reads one :class:`~ssemock.cassette.Response` (decoded from its ``Content-Encoding``
first) into a :class:`Shape`: status, media type, header names, how the body ended, and for an event
stream (read by :mod:`ssemock.sse`, the reference decoder) the event types in order of first
appearance, the JSON key paths of each event type with the JSON types seen there, the non-JSON
sentinels (``[DONE]``), the line-ending style, the fields used, the comments, and the timing:
first-byte time and the gaps between reads. A body that is not an event stream but JSON is read as
one event of the type :data:`BODY`.

Key paths are dotted, a list item written ``[*]``: ``choices[*].delta.content``. JSON types are
JSON's own: ``object``, ``array``, ``string``, ``number``, ``boolean``, ``null``.
"""

from __future__ import annotations

import itertools
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from ..cassette import Response
from ..coding import decode
from ..errors import ContentCodingError, JSONTooDeepError
from ..limits import MAX_DECODED_BODY, NOT_JSON, load_json
from ..sse import Comment, Decoder, Event, LineSplitter

__all__ = [
    "BODY",
    "MAX_COMMENTS",
    "MAX_PATHS",
    "OTHER_LINES",
    "VOLATILE_HEADERS",
    "VOLATILE_HEADER_PREFIXES",
    "Shape",
    "json_type",
    "shape_of",
]

BODY = "(body)"
"""The event type under which the key paths of a JSON body (not an event stream) are kept."""
MAX_PATHS = 10_000
"""Key paths kept per answer (all event types together); more are left out, and the shape says so."""
MAX_COMMENTS = 64
"""Distinct comment texts kept per answer."""
VOLATILE_HEADERS = frozenset(
    {
        "date",
        "age",
        "expires",
        "last-modified",
        "etag",
        "server-timing",
        "via",
        "x-cache",
        "alt-svc",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "x-request-id",
        "request-id",
        "x-amzn-requestid",
        "x-amz-cf-id",
        "x-amz-cf-pop",
        "cf-ray",
        "cf-cache-status",
        "openai-processing-ms",
        "openai-version",
        "x-envoy-upstream-service-time",
        "x-cloud-trace-context",
        "x-goog-request-id",
        "server",
        "vary",
        "nel",
        "report-to",
        "strict-transport-security",
        "set-cookie",
        "x-openrouter-request-id",
        "x-generation-id",
        "anthropic-request-id",
        "x-groq-region",
        "x-trace-id",
    }
)
"""Response header names never compared: their presence follows the path (CDN, load balancer, cache)
or the moment, not the provider's format."""
VOLATILE_HEADER_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "ratelimit-", "x-amzn-", "cf-", "x-vercel-")
"""Response header name prefixes never compared (rate-limit counters, CDN headers)."""
_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")  # data, event, id, retry, or another field name
OTHER_LINES = "(other lines)"
"""What :attr:`Shape.fields` holds for lines that are no ``name: value`` field (e.g. bare JSON lines)."""
_SENTINEL = re.compile(r"\[[A-Za-z_]{1,32}\]")  # data: [DONE]
_ENDINGS = {b"\r\n": "crlf", b"\n": "lf", b"\r": "cr"}


@dataclass
class Shape:
    """What drift compares of one answer.

    Attributes:
        status: the HTTP status.
        media_type: the ``Content-Type`` without parameters, lower case (``text/event-stream``).
        headers: the response header names, lower case, but :data:`VOLATILE_HEADERS`.
        end: how the body ended (``clean``, ``cut``, ``reset``, ``timeout``, ``client_gone``).
        stream: the body is an event stream (else the rest describes a JSON body, or nothing).
        types: event types in order of first appearance.
        paths: event type -> key path -> the JSON types seen there.
        data_kinds: event type -> ``json`` and/or ``text`` (data that is not JSON, but the sentinels).
        sentinels: the non-JSON data values like ``[DONE]``.
        line_endings: ``lf``, ``crlf``, ``cr``, ``mixed (crlf, lf)`` or ``none``.
        fields: the field names used (``data``, ``event``, ``id``, ``retry``, others; :data:`OTHER_LINES` for
            lines that are not a field, such as the bare JSON lines Vertex AI sends for an error).
        bom: the stream starts with U+FEFF.
        comments: distinct comment texts (at most :data:`MAX_COMMENTS`), in order.
        first_byte: seconds from the request to the first body byte, or None (no body, or no timing).
        gaps: seconds between consecutive reads (empty without timing).
        truncated: more than :data:`MAX_PATHS` key paths were seen.
        path_count: key paths kept.
    """

    status: int
    media_type: str
    headers: frozenset[str]
    end: str
    stream: bool = False
    types: list[str] = field(default_factory=list)
    paths: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    data_kinds: dict[str, set[str]] = field(default_factory=dict)
    sentinels: set[str] = field(default_factory=set)
    line_endings: str = "none"
    fields: set[str] = field(default_factory=set)
    bom: bool = False
    comments: list[str] = field(default_factory=list)
    first_byte: float | None = None
    gaps: list[float] = field(default_factory=list)
    truncated: bool = False
    path_count: int = 0

    def gap(self, quantile: float) -> float | None:
        """The gap at ``quantile`` (0.5: the median), or None with fewer than 2 gaps."""
        if len(self.gaps) < 2:
            return None
        if quantile == 0.5:
            return statistics.median(self.gaps)
        return statistics.quantiles(self.gaps, n=10, method="inclusive")[round(quantile * 10) - 1]


def json_type(value: Any) -> str:
    """JSON's name for the type of a parsed value (``bool`` before ``int``: True is an int in Python)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def volatile_header(name: str) -> bool:
    """Whether a response header (lower-case ``name``) is left out of the comparison."""
    return name in VOLATILE_HEADERS or name.startswith(VOLATILE_HEADER_PREFIXES)


def shape_of(response: Response) -> Shape:
    """The :class:`Shape` of ``response`` (see the module docstring); a body that does not decode from its
    ``Content-Encoding`` is compared by its status and headers only."""
    content_type = response.header("content-type") or ""
    shape = Shape(
        status=response.status,
        media_type=content_type.split(";")[0].strip().lower(),
        headers=frozenset(k.lower() for k, _ in response.headers if not volatile_header(k.lower())),
        end=response.end.how,
    )
    if response.timed and response.chunks:
        times = [c.t for c in response.chunks]
        shape.first_byte = times[0]
        shape.gaps = [round(b - a, 6) for a, b in itertools.pairwise(times)]
    body = _decoded(response)
    if body is None:
        return shape
    if shape.media_type == "text/event-stream":
        shape.stream = True
        _read_stream(shape, body)
    else:
        value = _json(body)
        if value is not NOT_JSON:
            shape.types.append(BODY)
            shape.data_kinds[BODY] = {"json"}
            _walk(shape, shape.paths.setdefault(BODY, {}), value, "")
    return shape


def _decoded(response: Response) -> bytes | None:
    encoding = (response.header("content-encoding") or "identity").strip().lower()
    body = response.body
    if encoding in ("", "identity"):
        return body
    try:
        return decode(body, encoding, limit=MAX_DECODED_BODY)
    except ContentCodingError:
        return None


def _json(text: str | bytes) -> Any:
    try:
        return load_json(text.encode() if isinstance(text, str) else text)
    except JSONTooDeepError:
        return NOT_JSON


def _read_stream(shape: Shape, body: bytes) -> None:
    """Fill the event-stream part of ``shape`` from the whole ``body``."""
    shape.bom = body.startswith(b"\xef\xbb\xbf")
    endings: set[str] = set()
    for line in LineSplitter().feed(body):
        ending = line[-2:] if line.endswith(b"\r\n") else line[-1:]
        endings.add(_ENDINGS[ending])
        content = line[: len(line) - len(ending)]
        if content and not content.startswith(b":"):
            name = content.partition(b":")[0].removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
            shape.fields.add(name if _FIELD_NAME.fullmatch(name) else OTHER_LINES)
    shape.line_endings = (
        next(iter(endings)) if len(endings) == 1 else f"mixed ({', '.join(sorted(endings))})" if endings else "none"
    )
    decoder = Decoder()
    for item in [*decoder.feed(body), *decoder.close()]:
        if isinstance(item, Comment):
            if item.text not in shape.comments and len(shape.comments) < MAX_COMMENTS:
                shape.comments.append(item.text)
        elif isinstance(item, Event):
            _event(shape, item)


def _event(shape: Shape, event: Event) -> None:
    if event.type not in shape.paths:
        shape.types.append(event.type)
        shape.paths[event.type] = {}
        shape.data_kinds[event.type] = set()
    value = _json(event.data)
    if value is NOT_JSON:  # a marker such as [DONE] is a sentinel, not text data
        if _SENTINEL.fullmatch(event.data):
            shape.sentinels.add(event.data)
        else:
            shape.data_kinds[event.type].add("text")
        return
    shape.data_kinds[event.type].add("json")
    _walk(shape, shape.paths[event.type], value, "")


def _walk(shape: Shape, paths: dict[str, set[str]], value: Any, path: str) -> None:
    """Add the key paths of ``value`` (found at ``path``) and their types to ``paths``, within :data:`MAX_PATHS`."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if where:
            if where not in paths:
                if shape.path_count >= MAX_PATHS:
                    shape.truncated = True
                    continue
                shape.path_count += 1
                paths[where] = set()
            paths[where].add(json_type(item))
        if isinstance(item, dict):
            stack.extend((f"{where}.{key}" if where else str(key), child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[*]", child) for child in item)
