"""Body chunks written to an aiohttp response at once, from plain functions (no coroutine, no task
switch per chunk), for the sending layer (:mod:`ssemock.send`), whose timeline and bursts write many
chunks in one turn of the loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter

if TYPE_CHECKING:
    from ..cassette import Chunk

__all__ = ["PIECE", "BodyWriter", "write_at_once"]

PIECE = 64 * 1024
"""Bytes of a long chunk handed to the connection at a time (:meth:`BodyWriter.write_long`)."""


class BodyWriter:
    """Writes the body chunks of one prepared, uncompressed response, each as one write of one HTTP
    chunk, now, from a plain function (no coroutine, no task switch per chunk).

    The first chunk goes through aiohttp's ``StreamWriter.write`` (:func:`write_at_once`), which sends
    the status line and headers it holds with it; with chunked framing, every later chunk is framed here
    (``SIZE CRLF data CRLF``, RFC 9112 section 7.1, the bytes aiohttp writes) and handed to the transport
    as one write, which spares aiohttp's per-write work (about half the cost of a small chunk). Other
    framings (``Content-Length``, close-delimited: aiohttp counts the length) stay with aiohttp.

    Made once the response is prepared (its framing is set then). With ``pieces``, a chunk longer than
    :data:`PIECE` can be written by :meth:`write_long` instead, in pieces: not for HTTP/2 or TLS record
    faults, which see each write.

    Raises (on call):
        ConnectionResetError: the connection is closing.
    """

    __slots__ = ("framed", "pieces", "protocol", "reached", "started", "transport", "writer")

    def __init__(self, request: web.Request, response: web.StreamResponse, *, pieces: bool = False) -> None:
        writer = request.writer
        self.writer = writer
        self.transport = request.transport
        self.protocol = request.protocol
        plain = not response.compression and getattr(writer, "on_body_write", None) is None
        self.framed = getattr(writer, "chunked", False) is True and writer.length is None and plain
        self.pieces = pieces and plain and (self.framed or getattr(writer, "chunked", True) is False)
        """Whether :meth:`write_long` may be used: the body is framed here, or not chunked at all
        (``Content-Length`` or close-delimited), and nothing else transforms or watches the writes."""
        self.started = False
        self.reached = 0
        """The index of the first chunk :meth:`run` did not write (set also when a write fails)."""

    def __call__(self, data: bytes) -> None:
        if not (self.started and self.framed):
            write_at_once(self.writer, data)
            self.started = True
            return
        if not data:  # an empty HTTP chunk would end the body
            return
        self._put(b"%x\r\n%b\r\n" % (len(data), data))

    def long(self, data: bytes) -> bool:
        """Whether ``data`` goes through :meth:`write_long`: longer than :data:`PIECE`, with :attr:`pieces`."""
        return self.pieces and len(data) > PIECE

    def run(self, chunks: Sequence[Chunk], start: int, stop: int) -> int:
        """Write ``chunks[start:stop]``, each as one write (one HTTP chunk), back to back, now; stop
        before a long chunk (:meth:`long`: it goes to :meth:`write_long`) and after the write that
        makes the connection pause writing (the client's socket buffer is full). Returns the index of
        the first chunk not written, also kept in :attr:`reached`.

        The loop of a burst (thousands of short chunks: a stub's events) with each write's checks
        made once per call, where the framing allows.

        Raises:
            ConnectionResetError: the connection is closing (:attr:`reached` says how far it got).
        """
        index, stop = start, min(stop, len(chunks))
        try:
            if index < stop and not (self.started and self.framed):  # the head goes with the first chunk
                data = chunks[index].data
                if self.long(data):
                    return index
                self(data)
                index += 1
            protocol = self.protocol
            if not self.framed:  # aiohttp counts or frames each write
                while index < stop and not protocol.writing_paused and not self.long(data := chunks[index].data):
                    self(data)
                    index += 1
                return index
            transport, pieces, size = self.transport, self.pieces, 0
            if transport is None or transport.is_closing():
                raise ConnectionResetError("Cannot write to closing transport")
            try:
                while index < stop and not protocol.writing_paused:
                    data = chunks[index].data
                    if pieces and len(data) > PIECE:
                        break
                    if data:  # an empty HTTP chunk would end the body
                        framed = b"%x\r\n%b\r\n" % (len(data), data)
                        size += len(framed)
                        transport.write(framed)
                        if transport.is_closing():  # the write failed: the client left
                            raise ConnectionResetError("Cannot write to closing transport")
                    index += 1
            finally:
                self.writer.output_size += size
            return index
        finally:
            self.reached = index

    async def write_long(self, data: bytes) -> None:
        """Write ``data`` as one body chunk (one HTTP chunk when framed here) in pieces of :data:`PIECE`
        bytes, each once the client's socket has room for it (aiohttp's ``drain``): about a piece of it
        waits in the connection's buffer at a time, never a copy of the whole, whatever its size and
        however slowly the client reads.

        Raises:
            ConnectionResetError: the connection is closing.
        """
        writer, view = self.writer, memoryview(data)
        if not self.started:
            writer.send_headers()
            self.started = True
        if self.framed:
            self._put(b"%x\r\n" % len(data))
        for at in range(0, len(data), PIECE):
            if self.framed:
                self._put(view[at:at + PIECE])
            else:  # Content-Length or close-delimited: aiohttp counts the length
                await writer.write(view[at:at + PIECE])
            if self.protocol.writing_paused:
                await writer.drain()
        if self.framed:
            self._put(b"\r\n")

    def _put(self, data: bytes | memoryview) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("Cannot write to closing transport")
        self.writer.output_size += len(data)
        transport.write(data)


def write_at_once(writer: AbstractStreamWriter, data: bytes) -> None:
    """Write ``data`` as one body chunk of an uncompressed response, now, from a plain function.

    aiohttp's ``StreamWriter.write(data, drain=False)`` writes to the transport without awaiting
    anything when the response is not compressed (ssemock sends recorded bytes as they are) and
    the writer has no chunk-sent hook (a server's has none): its coroutine ends at its first step.
    Running that step here spares a task switch per chunk.

    Raises:
        ConnectionResetError: the connection is closing (aiohttp's ``ClientConnectionResetError``).
        RuntimeError: the write would have had to wait (it is abandoned: nothing more is written).
    """
    step = writer.write(data, drain=False)  # type: ignore[call-arg]
    try:
        step.send(None)
    except StopIteration:
        return
    step.close()
    raise RuntimeError("aiohttp's StreamWriter.write(drain=False) waited: the response cannot be paced")
