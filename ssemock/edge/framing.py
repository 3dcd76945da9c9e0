"""How a response body is framed on the wire, and how a connection is cut."""

from __future__ import annotations

import socket
import struct

from aiohttp import HttpVersion11, web

__all__ = ["abort_connection", "set_framing"]


def set_framing(request: web.BaseRequest, response: web.StreamResponse, framing: str, length: int = 0) -> str:
    """Frame ``response``'s body (before ``prepare``); returns the framing really used.

    Args:
        framing: ``chunked`` (HTTP/1.1 chunked transfer coding), ``length``
            (``Content-Length: length``) or ``close`` (the body ends when the connection
            closes). An HTTP/1.0 client cannot read chunked framing: it gets ``close``.
        length: the body size in bytes, for ``length``.
    """
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
        transport.abort()
    else:
        transport.close()
