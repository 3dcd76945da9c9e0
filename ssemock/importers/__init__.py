"""Importers: VCR.py cassettes, raw body files and one-JSON-per-line chunk files.

Foreign recordings keep no chunk timing, and VCR.py keeps no chunk boundaries.
Imported responses are therefore marked ``timing: none`` and split into one chunk
per SSE event block (cut after each blank line, bytes unchanged); a compressed
body (``Content-Encoding`` other than identity) stays one chunk of the encoded
bytes. On replay such chunks are written one by one without delay.
"""

from __future__ import annotations

import gzip
import re
import zlib
from urllib.parse import parse_qsl, urlsplit

from ..cassette import Chunk, End, Request, Response
from ..redact import Filter

__all__ = ["decoded_body", "event_chunks", "request_from_url", "untimed_response"]

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
    """A redacted :class:`Request` from a full URL.

    Secret headers and query parameters are dropped; key-shaped strings in the path,
    the other headers and the body are scrubbed (the recorder's default filter).
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept, _ = _FILTER.pairs(query, _FILTER.secret_query_params)
    header_pairs, _ = _FILTER.pairs(headers, _FILTER.secret_request_headers)
    return Request(
        method=method.upper(),
        path=_FILTER.text(parts.path or "/")[0],
        query=kept,
        headers=header_pairs,
        body=_FILTER.body(body)[0] if body else body,
    )


def untimed_response(status: int, reason: str | None, headers: list[tuple[str, str]], body: bytes) -> Response:
    """A response recorded without timing: one chunk per event block (or one encoded chunk).

    Key-shaped strings are scrubbed. An encoded body (e.g. gzip) stays as it is unless
    its decoded text holds one; it is then stored decoded, scrubbed, without the header.
    """
    kept, _ = _FILTER.pairs(headers, _FILTER.secret_response_headers)
    encoding = next((v for k, v in kept if k.lower() == "content-encoding"), "identity").lower()
    if encoding != "identity":
        plain = decoded_body(body, encoding)
        if plain is None or _FILTER.text(plain.decode("utf-8", "replace"))[1] == 0:
            pieces = [body]
        else:
            kept = [(k, v) for k, v in kept if k.lower() not in ("content-encoding", "content-length")]
            pieces = _scrubbed(event_chunks(plain))
    else:
        pieces = _scrubbed(event_chunks(body))
    return Response(
        status=status,
        reason=reason,
        headers=kept,
        chunks=[Chunk(0.0, p) for p in pieces if p],
        end=End(0.0, "clean"),
        timed=False,
    )


_FILTER = Filter()


def _scrubbed(pieces: list[bytes]) -> list[bytes]:
    """The pieces with key-shaped strings replaced (a key split over two pieces included)."""
    scrubber = _FILTER.scrubber()
    out = [data for piece in pieces for _, data in scrubber.feed(0.0, piece)]
    return out + [data for _, data in scrubber.close()]


def decoded_body(body: bytes, encoding: str) -> bytes | None:
    """``body`` decoded from its ``Content-Encoding`` (gzip or deflate; any letter case), or
    None for other or broken encodings."""
    encoding = encoding.lower()
    try:
        if encoding in ("gzip", "x-gzip"):
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return None
    return None
