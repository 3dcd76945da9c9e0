"""Importers: VCR.py cassettes, raw body files and one-JSON-per-line chunk files.

Foreign recordings keep no chunk timing, and VCR.py keeps no chunk boundaries.
Imported responses are therefore marked ``timing: none`` and split into one chunk
per SSE event block (cut after each blank line, bytes unchanged); a compressed
body (``Content-Encoding`` other than identity) stays one chunk of the encoded
bytes. On replay such chunks are written one by one without delay.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from ..cassette import Chunk, End, Request, Response
from ..redact import SECRET_QUERY_PARAMS, SECRET_REQUEST_HEADERS, SECRET_RESPONSE_HEADERS, redact_pairs

__all__ = ["event_chunks", "request_from_url", "untimed_response"]

# A blank line: an end-of-line right after another end-of-line (WHATWG §9.2.5).
_BLANK_LINE = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")


def event_chunks(body: bytes) -> list[bytes]:
    """Split an event-stream body after each blank line; the pieces join back to ``body``."""
    pieces, start = [], 0
    for m in _BLANK_LINE.finditer(body):
        pieces.append(body[start : m.end()])
        start = m.end()
    if start < len(body):
        pieces.append(body[start:])
    return pieces


def request_from_url(
    method: str, url: str, headers: list[tuple[str, str]], body: bytes | None
) -> Request:
    """A redacted :class:`Request` from a full URL (secret headers and query parameters dropped)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    return Request(
        method=method.upper(),
        path=parts.path or "/",
        query=redact_pairs(query, SECRET_QUERY_PARAMS),
        headers=redact_pairs(headers, SECRET_REQUEST_HEADERS),
        body=body,
    )


def untimed_response(status: int, reason: str | None, headers: list[tuple[str, str]], body: bytes) -> Response:
    """A response recorded without timing: one chunk per event block (or one encoded chunk)."""
    kept = redact_pairs(headers, SECRET_RESPONSE_HEADERS)
    encoding = next((v for k, v in kept if k.lower() == "content-encoding"), "identity")
    pieces = [body] if encoding.lower() != "identity" else event_chunks(body)
    return Response(
        status=status,
        reason=reason,
        headers=kept,
        chunks=[Chunk(0.0, p) for p in pieces if p],
        end=End(0.0, "clean"),
        timed=False,
    )
