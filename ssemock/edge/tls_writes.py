"""The TLS faults of a plan on the connection (:class:`~ssemock.tlsfaults.TLSFaults`): records cut inside
the response's writes, and an end without ``close_notify``.

Both act on the connection's TLS transport (asyncio's): HTTP/1.1's own, or under HTTP/2 the connection's that
carries the stream (:class:`~ssemock.http2.stream.StreamTransport`), whose other streams' frames written
meanwhile are cut the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from ..tlsfaults import RecordCutter, TLSFaults, split

__all__ = ["DRAIN_WAIT", "close_without_notify", "cut_records", "tls_transport"]

DRAIN_WAIT = 5.0
"""Seconds the end without ``close_notify`` waits at most for the bytes before it to reach the kernel (a
client that does not read them then loses those still unsent: the connection closes anyway)."""
_CUT_WRITES = "_ssemock_cut_writes"
"""The attribute of a TLS transport that holds its :class:`_CutWrites` while answers cut its records."""


def tls_transport(request: web.BaseRequest) -> Any:
    """The connection's TLS transport, or None (no TLS)."""
    transport = request.transport
    if transport is None:
        return None
    transport = getattr(transport, "connection", transport)  # an HTTP/2 stream's: the connection's
    return transport if transport.get_extra_info("sslcontext") is not None else None


class _CutWrites:
    """The cutters of the answers under way on one TLS transport (several under HTTP/2: one per stream), put
    in front of its ``write`` and ``writelines`` while there is one: each write is cut wherever one of them
    ends a record, so each answer's records stay within its bounds whatever the others do and whichever ends
    first."""

    def __init__(self, transport: Any) -> None:
        self.cutters: list[RecordCutter] = []
        self.transport = transport
        writelines = transport.writelines

        def cut_write(data: Any) -> None:  # the records of one write leave in one TCP write
            writelines(self.pieces(data))

        def cut_writelines(items: Iterable[Any]) -> None:  # aiohttp writes a chunk as [size line, data, CRLF]
            writelines([piece for item in items for piece in self.pieces(item)])

        transport.write, transport.writelines = cut_write, cut_writelines  # this connection's, while cutting
        setattr(transport, _CUT_WRITES, self)

    def pieces(self, data: Any) -> list[bytes]:
        """``data`` cut where any cutter ends a record: each sees the whole write (its offsets count the
        connection's bytes), so the cost is that of the cuts, not of the cutters times the pieces."""
        whole = bytes(data)
        if len(self.cutters) == 1:
            return self.cutters[0].cut(whole)
        return split(whole, sorted({end for cutter in self.cutters for end in cutter.ends(whole)}))

    def remove(self, cutter: RecordCutter) -> None:
        """Stop cutting for ``cutter``; the last one gone, the transport writes as before."""
        with contextlib.suppress(ValueError):
            self.cutters.remove(cutter)
        if not self.cutters:
            with contextlib.suppress(AttributeError):
                del self.transport.write, self.transport.writelines
                delattr(self.transport, _CUT_WRITES)


def cut_records(request: web.BaseRequest, faults: TLSFaults) -> tuple[RecordCutter | None, Callable[[], None]]:
    """Cut every write to the connection's TLS transport into the records ``faults`` ask for, until the
    returned function is called: ``(cutter, restore)``; the cutter (None: nothing to cut) counts the cuts.
    Under HTTP/2 the streams under way with such a step each add their cutter to the connection's writes."""
    transport = tls_transport(request)
    if transport is None or faults.records is None:
        return None, lambda: None
    cutter = RecordCutter(faults)
    writes = getattr(transport, _CUT_WRITES, None) or _CutWrites(transport)
    writes.cutters.append(cutter)
    return cutter, lambda: writes.remove(cutter)


async def close_without_notify(request: web.BaseRequest) -> None:
    """Close the connection with a TCP FIN and no TLS ``close_notify``, once what was written was handed to the
    kernel (at most :data:`DRAIN_WAIT` seconds): the client's TLS library then reports an EOF that is not a
    clean end (Python: ``ssl.SSLEOFError``; RFC 8446 section 6.1)."""
    transport = tls_transport(request)
    if transport is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_WAIT
    # asyncio's TLS transport counts only the bytes not yet made records; the records it handed on wait in the
    # socket's transport beneath, whose buffer the abort below would drop
    beneath = getattr(getattr(transport, "_ssl_protocol", None), "_transport", None)

    def unsent() -> int:
        below = beneath.get_write_buffer_size() if beneath is not None else 0
        return int(transport.get_write_buffer_size()) + int(below)

    while unsent() and not transport.is_closing() and loop.time() < deadline:
        await asyncio.sleep(0.001)
    await asyncio.sleep(0)  # the TLS layer hands its records to the socket's transport
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)  # FIN after the bytes the kernel holds; no alert record
    transport.abort()
