"""Requests the HTTP parser refuses, and HTTP versions ssemock does not speak: one bounded JSON answer.

aiohttp answers bytes its parser refuses with a ``text/plain`` 400 that echoes them (64 KB of
garbage got a 64 KB answer) and in the HTTP version of the request line (``HTTP/2.0 200`` for a
request line saying ``HTTP/2.0``). Here each becomes a refusal of :mod:`ssemock.refusals`, answered
by :func:`~ssemock.edge.replies.refuse` as every other one is (the parser's refusals in the status line
aiohttp writes for a request it could not read, ``HTTP/1.0``; a ``HTTP/2.0`` request line's in ``HTTP/1.1``):

* the parser's refusals: 400 ``ssemock_malformed_request`` with the parser's reason (at most 200
  characters, never the bytes nor the URL, through the secret scanner); a body in a
  ``Content-Encoding`` that cannot be decoded (``br`` without Brotli): 415
  ``ssemock_unsupported_encoding``; the HTTP/2 connection preface or an HTTP version the parser
  refuses (``HTTP/3.0``): 505 ``ssemock_http_version_not_supported``;
* a request line the parser takes but ssemock does not serve (``HTTP/2.0``): the same 505, from
  :func:`version_refusal` (the edge middleware asks it first).

The access line of a parser's refusal says ``malformed HTTP request from ADDRESS -> STATUS: REASON``
(:data:`~ssemock.edge.logs.REFUSED_REASON`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from aiohttp import HttpVersion11, web
from aiohttp.http_exceptions import ContentEncodingError, InvalidURLError

from ..errors import SSEMockError
from ..refusals import HTTPVersionError, MalformedRequestError, UnsupportedEncodingError
from .framing import H2_STREAM
from .logs import REFUSED_REASON
from .replies import refuse

__all__ = ["ConnectionFront", "EdgeRequestHandler", "EdgeServer", "parser_refusal", "version_refusal"]

_REASON_CHARS = 200
_VERSION = re.compile(r"HTTP/(\d)\.\d(?=['\"])")
_ECHO = re.compile(r":?\s*(?:b['\"]|bytearray\().*$")


def parser_refusal(exc: BaseException | None, message: str | None) -> SSEMockError:
    """The refusal answering what aiohttp's parser refused with ``exc`` (its ``message``: the reason,
    then the bytes it refused, which are left out)."""
    text = message if message is not None else str(exc or "")
    reason = " ".join(text.split("\n\n", 1)[0].split())
    reason = _ECHO.sub("", reason).rstrip(":. ")  # "Got more than 8190 bytes when reading: b'aaa...'"
    if isinstance(exc, InvalidURLError):  # its message is the URL itself
        reason = "an invalid URL in the request line"
    reason = reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 1] + "…"
    if isinstance(exc, ContentEncodingError):
        return UnsupportedEncodingError(reason)
    if "PRI/Upgrade" in text:
        return HTTPVersionError("the HTTP/2 connection preface (PRI * HTTP/2.0)")
    version = _VERSION.search(text) if "Invalid HTTP version" in text else None
    if version is not None and version[1] != "1":  # well formed, another major version (HTTP/3.0); "HTTP/7": 400
        return HTTPVersionError(version[0])
    return MalformedRequestError(reason or "the request cannot be parsed")


def version_refusal(request: web.BaseRequest) -> web.Response | None:
    """505 for a request line in an HTTP version other than 1.x (aiohttp's parser takes ``HTTP/2.0``),
    answered in HTTP/1.1; None for HTTP/1.0 and 1.1, and for a request that came over the HTTP/2 front
    (:mod:`ssemock.http2`)."""
    version = request.version
    if version.major == 1 or H2_STREAM in request:
        return None
    # aiohttp writes the status line in the request's version (read once, then cached): "HTTP/2.0 505"
    # would itself be refused by HTTP/1 clients (RFC 9112 section 2.3: answer in the highest 1.x version).
    request._version = HttpVersion11
    request._cache.pop("version", None)
    return refuse(HTTPVersionError(f"HTTP/{version.major}.{version.minor}"))


class EdgeRequestHandler(web.RequestHandler):
    """aiohttp's connection handler, answering its parser's refusals with :func:`parser_refusal`."""

    def handle_error(
        self, request: web.BaseRequest, status: int = 500, exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        answer = super().handle_error(request, status, exc, message)  # logs; raises once bytes were sent
        if status >= 500:  # a failure of ssemock itself, not of the request
            return answer
        error = parser_refusal(exc, message)
        request[REFUSED_REASON] = str(error).removeprefix("malformed HTTP request: ")  # the line says it
        return refuse(error)  # these errors close the connection


ConnectionFront = Callable[[web.Server, Callable[[], asyncio.Protocol]], asyncio.Protocol]
"""Makes the protocol of one connection from the server and the maker of its HTTP/1 handler (the HTTP/2
front, :func:`ssemock.http2.front`, which hands HTTP/1.1 connections to that handler)."""


class EdgeServer(web.Server):
    """aiohttp's low-level server, with :class:`EdgeRequestHandler` for each connection (through ``front``,
    when one is set: it may answer a connection in HTTP/2 instead)."""

    front: ConnectionFront | None = None

    def __call__(self) -> asyncio.Protocol:  # type: ignore[override]  # (an HTTP/2 connection's is no RequestHandler)
        if self.front is not None:
            return self.front(self, self._http1)
        return self._http1()

    def _http1(self) -> web.RequestHandler:
        return EdgeRequestHandler(self, loop=self._loop, **self._kwargs)
