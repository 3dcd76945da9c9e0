"""Body chunks written to an aiohttp response at once, from plain functions (no coroutine, no task
switch per chunk), for the sending layer (:mod:`ssemock.send`), whose timeline and bursts write many
chunks in one turn of the loop."""

from __future__ import annotations

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter

__all__ = ["BodyWriter", "write_at_once"]


class BodyWriter:
    """Writes the body chunks of one prepared, uncompressed response, each as one write of one HTTP
    chunk, now, from a plain function (no coroutine, no task switch per chunk).

    The first chunk goes through aiohttp's ``StreamWriter.write`` (:func:`write_at_once`), which sends
    the status line and headers it holds with it; with chunked framing, every later chunk is framed here
    (``SIZE CRLF data CRLF``, RFC 9112 section 7.1, the bytes aiohttp writes) and handed to the transport
    as one write, which spares aiohttp's per-write work (about half the cost of a small chunk). Other
    framings (``Content-Length``, close-delimited: aiohttp counts the length) stay with aiohttp.

    Raises (on call):
        ConnectionResetError: the connection is closing.
    """

    __slots__ = ("framed", "started", "transport", "writer")

    def __init__(self, request: web.Request, response: web.StreamResponse) -> None:
        writer = request.writer
        self.writer = writer
        self.transport = request.transport
        self.framed = (getattr(writer, "chunked", False) is True and writer.length is None and not response.compression
                       and getattr(writer, "on_body_write", None) is None)
        self.started = False

    def __call__(self, data: bytes) -> None:
        if not (self.started and self.framed):
            write_at_once(self.writer, data)
            self.started = True
            return
        if not data:  # an empty HTTP chunk would end the body
            return
        transport = self.transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("Cannot write to closing transport")
        framed = b"%x\r\n%b\r\n" % (len(data), data)
        self.writer.output_size += len(framed)
        transport.write(framed)


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
