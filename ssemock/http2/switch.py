"""Which protocol answers a connection: HTTP/2 when TLS negotiated ``h2`` (ALPN) or the client opened with
the HTTP/2 connection preface (prior knowledge, h2c); else aiohttp's HTTP/1.1 handler, unchanged.

Before the choice, a connection is bounded: :data:`PREFACE` is 24 bytes, and a client that sends none of
them within ``idle`` seconds is closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from aiohttp import web

from .connection import H2Connection

__all__ = ["PREFACE", "Switch"]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""The client connection preface of HTTP/2 (RFC 9113 section 3.4)."""


class Switch(asyncio.Protocol):
    """The protocol of a new connection until it knows which one answers it, then hands the connection over
    (``transport.set_protocol``), with the bytes read so far."""

    def __init__(self, server: web.Server, http1: Callable[[], asyncio.Protocol], max_body: int, idle: float) -> None:
        self.server = server
        self.http1 = http1
        self.max_body = max_body
        self.idle = idle
        self.read = b""
        self.transport: asyncio.Transport | None = None
        self.chosen: asyncio.Protocol | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        tls = transport.get_extra_info("ssl_object")
        alpn = tls.selected_alpn_protocol() if tls is not None else None
        if alpn == "h2":
            self._choose(self._http2())
        elif alpn == "http/1.1":
            self._choose(self.http1())
        else:
            self._timer = asyncio.get_running_loop().call_later(self.idle, self.transport.close)

    def data_received(self, data: bytes) -> None:
        self.read += data
        if PREFACE.startswith(self.read):
            return  # the preface so far: wait for the rest of it
        self._choose(self._http2() if self.read.startswith(PREFACE) else self.http1())

    def eof_received(self) -> bool | None:
        protocol = self._choose(self.http1())
        return protocol.eof_received() if isinstance(protocol, asyncio.Protocol) else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _http2(self) -> H2Connection:
        return H2Connection(self.server, self.max_body, self.idle)

    def _choose(self, protocol: asyncio.Protocol) -> asyncio.Protocol:
        if self._timer is not None:
            self._timer.cancel()
        assert self.transport is not None
        self.chosen = protocol
        self.transport.set_protocol(protocol)
        protocol.connection_made(self.transport)
        if self.read:
            read, self.read = self.read, b""
            protocol.data_received(read)
        return protocol
