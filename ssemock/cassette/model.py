"""The cassette data model: Cassette, Interaction, Request, Response, Chunk, End.

Data only: loading and saving are :mod:`ssemock.cassette.io` (validation in :mod:`.read`, YAML
writing in :mod:`.write`); the format itself is described in :mod:`ssemock.cassette`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JSONTooDeepError
from ..limits import MAX_JSON_DEPTH, NOT_JSON, json_depth_exceeds, load_json

FORMAT_KEY = "ssemock_cassette"
FORMAT_VERSION = 1
SCHEMAS_URL = "https://ssemock.readthedocs.io/en/latest/schemas/"
"""Where the documentation site publishes the JSON Schemas of the file formats (:mod:`ssemock.schemas`)."""
MODELINE = f"# yaml-language-server: $schema={SCHEMAS_URL}cassette.schema.json"
"""The first line of a cassette ssemock writes: it names the cassette schema for editors (a YAML comment)."""
END_HOWS = ("clean", "cut", "reset", "timeout", "client_gone")
"""How a recorded stream ended: ``clean`` (complete body), ``cut`` (connection closed
before the body was complete), ``reset`` (TCP reset), ``timeout`` (the recorder gave up),
``client_gone`` (the recording client disconnected first)."""


MAX_REASON = 512
"""Characters a response's reason phrase may hold."""

NO_CONTENT_STATUSES = frozenset({204, 304})
"""Final statuses whose responses have no content (RFC 9110 sections 15.3.5 and 15.4.5, RFC 9112
section 6.3): a body after them would be read as the start of the next response."""


def no_content(method: str, status: int) -> bool:
    """Whether an answer has no content: to a HEAD, or with status 1xx, 204 or 304 (RFC 9110 section 15)."""
    return method == "HEAD" or status < 200 or status in NO_CONTENT_STATUSES


REASON = r"[\t\x20-\x7e]*"  # compiled on first use (re's cache), not at every start
"""A reason phrase's characters (RFC 9112 section 4: tabs, spaces and visible ASCII), as a regular expression."""


def reason_phrase(text: str | None) -> str | None:
    """``text`` when it can be sent as a status line's reason phrase (RFC 9112 section 4: tabs,
    spaces and visible ASCII, here at most :data:`MAX_REASON` characters), else None (the
    standard phrase is sent)."""
    if text is None or len(text) > MAX_REASON or not re.fullmatch(REASON, text):
        return None
    return text


@dataclass(slots=True)
class Chunk:
    """One upstream read: ``data`` bytes that arrived ``t`` seconds after the request was sent."""

    t: float
    data: bytes


@dataclass(slots=True)
class End:
    """The end of a recorded response: time in seconds and how it ended (one of :data:`END_HOWS`)."""

    t: float = 0.0
    how: str = "clean"


@dataclass(slots=True)
class Request:
    """A recorded request, after redaction.

    Attributes:
        method: upper-case HTTP method.
        path: URL path, starting with ``/``.
        query: query parameters as ``(name, value)`` pairs, in order.
        headers: ``(name, value)`` pairs, names as recorded.
        body: the body bytes; None when the interaction matches any body.
        body_sha256: hex SHA-256 of a body stored by digest (then ``body`` is None).
        body_size: size in bytes of a body stored by digest.
    """

    method: str = "GET"
    path: str = "/"
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | None = None
    body_sha256: str | None = None
    body_size: int | None = None
    # (body it was parsed from, value or NOT_JSON or _TOO_DEEP, depth bound it was parsed with):
    # matching asks every candidate for its JSON on every request; a received body is parsed
    # once for the depth check, the journal, stubs and matching alike.
    _parsed: tuple[bytes | None, Any, int] | None = field(default=None, init=False, repr=False, compare=False)
    # (body it was keyed from, ignored body paths, key): see :func:`ssemock.body_key.body_key` (``keep=True``).
    _body_key: tuple[bytes | None, Any, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def json(self) -> Any:
        """The body parsed as JSON (a new value each call), or None when it is absent or not JSON."""
        return parse_json(self.body)

    def json_view(self, *, strict: bool = False, max_depth: int = MAX_JSON_DEPTH) -> Any:
        """Like :meth:`json`, but parsed once per body and shared: read it, never change it.

        The body is parsed on the first call only, whatever ``strict`` and ``max_depth`` (a
        later call with a smaller ``max_depth`` checks the depth of the value already parsed).

        Raises:
            JSONTooDeepError: with ``strict``, the body is JSON nested deeper than ``max_depth``
                (default :data:`~ssemock.limits.MAX_JSON_DEPTH`; else such a body reads as None).
        """
        cached = self._parsed
        if cached is not None and cached[0] is self.body:
            value, bound = cached[1], cached[2]
            if value is _TOO_DEEP and max_depth > bound:
                value = self._parse(max_depth)  # deeper than the former bound: may be within this one
            elif value is not _TOO_DEEP and value is not NOT_JSON and max_depth < bound \
                    and json_depth_exceeds(value, max_depth):
                value = _TOO_DEEP
        else:
            value = self._parse(max_depth)
        if value is _TOO_DEEP:
            if strict:
                raise JSONTooDeepError(max_depth)
            return None
        return None if value is NOT_JSON else value

    def is_parsed(self) -> bool:
        """Whether :meth:`json_view` has parsed the current body already (then it costs nothing)."""
        return self._parsed is not None and self._parsed[0] is self.body

    def _parse(self, max_depth: int) -> Any:
        try:
            value = load_json(self.body, max_depth=max_depth)
        except JSONTooDeepError:
            value = _TOO_DEEP
        self._parsed = (self.body, value, max_depth)
        return value


_TOO_DEEP = object()  # json_view's note: the body is JSON nested deeper than the bound it was parsed with


@dataclass(slots=True)
class Response:
    """A recorded response.

    Attributes:
        status: HTTP status code.
        reason: reason phrase, or None for the standard one.
        headers: ``(name, value)`` pairs as recorded (``Content-Encoding`` kept: the
            chunks are the bytes on the wire, still encoded).
        chunks: the body as it was read, with times.
        start: seconds from request sent to response headers.
        end: when and how the body ended.
        timed: False when the recording kept no timing (e.g. imported from VCR.py):
            every ``t`` is then 0 and replay sends the chunks without delay.
        body_not_recorded: why the recorder kept no body (it did not decode: an unknown coding such
            as ``br``, corrupt data, more than ``MAX_DECODED_BODY`` decoded), or None. Such an
            interaction has no chunks; the replay server refuses it (500 ``ssemock_body_not_recorded``)
            rather than answer an empty body.
    """

    status: int = 200
    reason: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    start: float = 0.0
    end: End = field(default_factory=End)
    timed: bool = True
    body_not_recorded: str | None = None

    @property
    def body(self) -> bytes:
        """All chunk bytes joined."""
        return b"".join(c.data for c in self.chunks)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``default``."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), default)


@dataclass(slots=True)
class Interaction:
    """One request and its recorded response."""

    request: Request
    response: Response


@dataclass
class Cassette:
    """A named list of interactions, with its provenance.

    Attributes:
        name: the cassette name (file name without ``.yaml`` by default).
        interactions: recorded interactions, in recording order.
        provenance: free-form mapping: source repository, path, licence, importer, notes.
        path: the file it was loaded from or saved to, if any.
        ignore_body: body paths (:mod:`ssemock.body_paths`: ``metadata.trace_id``, ``messages[*].id``)
            deleted from both bodies before matching a request against this cassette (``match:
            {ignore_body: [...]}`` in the file).
        dropped_body: body paths the recorder deleted from every stored request body
            (``ssemock record --drop-body-field``; ``match: {dropped_body: [...]}``); matching
            ignores them too.
    """

    name: str
    interactions: list[Interaction] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    ignore_body: tuple[str, ...] = ()
    dropped_body: tuple[str, ...] = ()


def parse_json(body: bytes | None) -> Any:
    """``body`` as JSON, or None when it is empty, not JSON, larger than
    :data:`~ssemock.limits.MAX_JSON_PARSE` (1 MiB) or nested deeper than
    :data:`~ssemock.limits.MAX_JSON_DEPTH` (such bodies are compared as bytes)."""
    try:
        value = load_json(body)
    except JSONTooDeepError:
        return None
    return None if value is NOT_JSON else value


def body_digest(body: bytes) -> str:
    """Hex SHA-256 of a request body, as stored in ``body: {sha256: ...}``."""
    return hashlib.sha256(body).hexdigest()
