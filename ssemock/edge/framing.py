"""How a response body is framed on the wire, and how a connection is cut.

An HTTP/2 stream (:mod:`ssemock.http2`) frames its body in DATA frames: its request holds its
:class:`FrameSender` under :data:`H2_STREAM`, and its ``transport`` is the stream's own (closing it resets the
stream, never the connection).
"""

from __future__ import annotations

import socket
import struct
from typing import Protocol

from aiohttp import HttpVersion11, web

from ..h2faults import H2Faults

__all__ = ["H2_STREAM", "FrameSender", "abort_connection", "set_framing"]


class FrameSender(Protocol):
    """The sending side of one HTTP/2 stream, as the sending layer sees it."""

    stream_id: int

    def arm(self, faults: H2Faults, notes: list[str]) -> None:
        """Carry out ``faults`` on the DATA frames written from now on; what was done goes to ``notes``."""


H2_STREAM: web.RequestKey[FrameSender] = web.RequestKey("ssemock_h2_stream", FrameSender)
"""The :class:`FrameSender` of a request that came over HTTP/2 (absent for HTTP/1.x)."""


def set_framing(request: web.BaseRequest, response: web.StreamResponse, framing: str, length: int = 0) -> str:
    """Frame ``response``'s body (before ``prepare``); returns the framing really used.

    Args:
        framing: ``chunked`` (HTTP/1.1 chunked transfer coding), ``length``
            (``Content-Length: length``) or ``close`` (the body ends when the connection
            closes). An HTTP/1.0 client cannot read chunked framing: it gets ``close``.
        length: the body size in bytes, for ``length``.

    A request over HTTP/2 gets ``h2`` (DATA frames, the stream's end) for ``chunked`` and ``close``.
    """
    if H2_STREAM in request:
        if framing == "length":
            response.content_length = length
            return "length"
        return "h2"
    if framing == "chunked" and request.version >= HttpVersion11:
        response.enable_chunked_encoding()
        return "chunked"
    if framing == "length":
        response.content_length = length
        return "length"
    response.force_close()
    response._length_check = False  # aiohttp would pick chunked framing for HTTP/1.1 otherwise
    return "close"


def abort_connection(request: web.BaseRequest, *, reset: bool) -> None:
    """Close the connection at once (no chunked terminator); with ``reset``, send a TCP RST."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if reset and sock is not None:
        # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if reset:
        transport.abort()  # an HTTP/2 stream's transport: RST_STREAM (INTERNAL_ERROR, or the armed fault)
    else:
        transport.close()
