"""Reading a request within bounds, for the replay server and the recorder alike.

* the body: at most ``limit`` bytes (413 ``ssemock_body_too_large``, naming the limit and the
  option that sets it; a ``Content-Length`` over it is refused before any byte is read);
* its JSON: nested at most :data:`~ssemock.limits.MAX_JSON_DEPTH` deep (400 ``ssemock_json_too_deep``);
  bodies over :data:`~ssemock.limits.MAX_JSON_PARSE` are not parsed (they compare as bytes);
* the journal keeps bodies over its limit as ``{"sha256", "size", "prefix"}``.

A refusal is raised (:class:`~ssemock.refusals.BodyTooLargeError`, :class:`~ssemock.errors.JSONTooDeepError`);
the caller answers it with :func:`ssemock.edge.replies.refuse`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from .cassette import Request, body_digest
from .coding import ContentCodingError, decode, parse_codings
from .errors import JSONTooDeepError
from .limits import JOURNAL_PREFIX, MAX_JSON_PARSE
from .refusals import BodyTooLargeError, UnreadableBodyError, UnsupportedEncodingError

__all__ = ["PARSER_CODINGS", "READ_SLICE", "THREAD_PARSE", "body_was_decoded", "check_json", "journal_body",
           "read_body"]


async def read_body(request: web.Request, limit: int, option: str) -> bytes:
    """The request body, at most ``limit`` bytes (``Content-Length`` checked before reading).
    ``option`` names how to change the limit.

    The body is given decoded from its ``Content-Encoding``: aiohttp's parser undoes one ``gzip``,
    ``deflate`` (``br``, ``zstd`` with their packages); the rest (stacked ``gzip, gzip``, ``x-gzip``) is undone
    here, so a body is never matched, scanned or recorded still encoded.

    The body is read piece by piece, letting the event loop run after every
    :data:`READ_SLICE` bytes (a body that arrived all at once is not gathered in one go),
    and a large one is joined in a thread.

    Raises:
        BodyTooLargeError: past ``limit`` bytes (413 ``ssemock_body_too_large``).
        UnreadableBodyError: the body does not decode (labelled gzip and not gzip: 400
            ``ssemock_bad_request``, with the decoder's reason on one line).
        UnsupportedEncodingError: a ``Content-Encoding`` ssemock does not decode (415).
        Exception: whatever reading raises otherwise (:class:`~ssemock.errors.BodyTimeoutError` when it
            does not arrive in time).
    """
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyTooLargeError(limit, option)
    content = request.content
    pieces: list[bytes] = []
    size = since_yield = 0
    try:
        while chunk := await content.readany():
            size += len(chunk)
            if size > limit:
                raise BodyTooLargeError(limit, option)
            pieces.append(chunk)
            if content.at_eof():  # the next read would say so: not awaited (a body that came whole, the usual case)
                break
            since_yield += len(chunk)
            if since_yield >= READ_SLICE:
                since_yield = 0
                await asyncio.sleep(0)
    except web.RequestPayloadError as exc:  # e.g. a body labelled gzip that is not gzip
        content.feed_eof()  # nothing more to read after the answer
        cause = exc.__cause__
        reason = cause.message if isinstance(cause, HttpProcessingError) else str(exc)
        raise UnreadableBodyError(" ".join(str(reason).split())) from None
    body = await asyncio.to_thread(b"".join, pieces) if size > READ_SLICE else b"".join(pieces)
    return await _undo_codings(request.headers.get("Content-Encoding", ""), body, limit)


PARSER_CODINGS = frozenset({"gzip", "deflate", "br", "zstd"})
"""A ``Content-Encoding`` of one of these alone is undone by aiohttp's parser (letter case ignored)."""


def body_was_decoded(headers: Mapping[str, str]) -> bool:
    """Whether :func:`read_body` gives the body decoded from a ``Content-Encoding`` (other than ``identity``)."""
    codings = headers.get("Content-Encoding", "").split(",")
    return any(c.strip().lower() not in ("", "identity") for c in codings)


async def _undo_codings(header: str, body: bytes, limit: int) -> bytes:
    """``body`` decoded from the codings aiohttp's parser leaves (stacked ``gzip, gzip``, ``x-gzip``): a body is
    never read, matched, scanned or recorded still encoded. Raises UnsupportedEncodingError (415) for a coding
    ssemock does not decode, UnreadableBodyError (400) for data that does not decode or decodes past ``limit``."""
    if not header.strip() or header.strip().lower() in PARSER_CODINGS:
        return body
    try:
        if not parse_codings(header):
            return body  # identity
    except ContentCodingError as exc:
        raise UnsupportedEncodingError(str(exc)) from None
    try:
        if len(body) > READ_SLICE:
            return await asyncio.to_thread(decode, body, header, limit=limit)
        return decode(body, header, limit=limit)
    except ContentCodingError as exc:
        raise UnreadableBodyError(str(exc)) from None


READ_SLICE = 1024 * 1024
"""Bytes of a request body read before the event loop gets a turn."""


async def check_json(received: Request, max_depth: int, option: str) -> None:
    """Parse the body's JSON, once for the request (the journal, stubs and matching read the
    same value, :meth:`~ssemock.cassette.Request.json_view`).

    A body over :data:`THREAD_PARSE` bytes is parsed in a thread (at most
    :data:`~ssemock.limits.MAX_JSON_PARSE` bytes are parsed), and its depth checked in passes.

    Raises:
        JSONTooDeepError: it nests deeper than ``max_depth``; the message names ``option``, how to
            change it (400 ``ssemock_json_too_deep``).
    """
    try:
        if len(received.body or b"") > THREAD_PARSE:
            await asyncio.to_thread(functools.partial(received.json_view, strict=True, max_depth=max_depth))
        else:
            received.json_view(strict=True, max_depth=max_depth)
    except JSONTooDeepError as exc:
        raise JSONTooDeepError(exc.limit, option) from None


THREAD_PARSE = 64 * 1024
"""Bodies larger than this many bytes (64 KiB) are parsed as JSON, and keyed for matching
(canonical JSON text, :func:`ssemock.body_key.body_key`), in a thread, not on the event loop."""


async def journal_body(received: Request, limit: int) -> Any:
    """The body as journaled: parsed JSON, else text, else None; over ``limit`` bytes,
    ``{"sha256": HEX, "size": BYTES, "prefix": TEXT}`` with the first 1 KiB as text
    (a large digest is computed in a thread: hashlib lets the event loop run meanwhile)."""
    body = received.body or b""
    if len(body) > limit:
        digest = await asyncio.to_thread(body_digest, body) if len(body) > MAX_JSON_PARSE else body_digest(body)
        return {"sha256": digest, "size": len(body), "prefix": body[:JOURNAL_PREFIX].decode("utf-8", "replace")}
    value = received.json_view()
    if value is not None:
        return value
    return body.decode("utf-8", "replace") if body else None
