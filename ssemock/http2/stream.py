"""One HTTP/2 stream as aiohttp sees a request: its body reader, its writer (DATA frames), its transport.

aiohttp's request handling (routing, middlewares, the replay handler, ``on_response_prepare``) runs
unchanged on each stream: the stream gives the request a writer whose ``write`` queues DATA frames (each
write becomes the frames of one TCP write: the recording's chunk boundaries are the DATA frame boundaries),
and a transport whose ``close`` and ``abort`` reset the stream (a recorded ``cut`` is ``RST_STREAM
CANCEL``, a recorded ``reset`` ``RST_STREAM INTERNAL_ERROR``), never the connection.

Flow control (RFC 9113 section 5.2): a frame goes out when the stream's and the connection's windows admit
it whole (a write larger than ``SETTINGS_MAX_FRAME_SIZE`` is cut into frames of that size; one over half the
client's initial window, or still waiting after :data:`WINDOW_WAIT`, into pieces of the window); meanwhile the
writes queue, and a writer waits (``drain``) once :data:`HIGH_WATER` bytes are queued. The faults of
:class:`~ssemock.h2faults.H2Faults` are carried out here (:meth:`H2Stream.arm`).
"""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from typing import Any, Protocol

import h2.connection
from aiohttp.abc import AbstractStreamWriter
from multidict import CIMultiDict

from ..h2faults import ERROR_CODES, H2End, H2Faults

__all__ = ["HIGH_WATER", "WINDOW_WAIT", "H2Stream", "Link", "StreamTransport", "StreamWriter"]

HIGH_WATER = 64 * 1024
"""Bytes queued on a stream (waiting for the client's window) before its writer waits."""
WINDOW_WAIT = 0.2
"""Seconds a piece that fits the client's initial window waits for the window to take it whole, before it is
sent in pieces of the window."""
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
"""Connection-specific header fields, which an HTTP/2 message must not carry (RFC 9113 section 8.2.2)."""
_END_STREAM = H2End("END_STREAM", 0)


class Link(Protocol):
    """What a stream asks of its connection (:class:`~ssemock.http2.connection.H2Connection`)."""

    h2: h2.connection.H2Connection
    writing_paused: bool
    gone_away: bool

    def send_headers(self, stream: H2Stream, fields: list[tuple[str, str]]) -> None: ...

    def send_end(self, stream: H2Stream, end: H2End) -> None: ...

    def flush(self) -> None: ...

    def flush_later(self, seconds: float) -> None: ...

    def whole_limit(self) -> int: ...


class H2Stream:
    """The sending state of one stream: the frames queued, the faults armed, the handler's waiters.

    Attributes:
        stream_id: the stream's id.
        position: body bytes written so far (queued or sent).
        sent_bytes: body bytes sent in DATA frames.
        ended: the stream's end (``END_STREAM``, ``RST_STREAM`` or ``GOAWAY``) is queued or sent.
        closed: the stream is over: its end was sent, the client reset it, or the connection was lost.
    """

    def __init__(self, connection: Link, stream_id: int) -> None:
        self.connection = connection
        self.stream_id = stream_id
        self.queue: deque[bytes | H2End] = deque()
        self.queued = 0
        self.position = 0
        self.sent_bytes = 0
        self.ended = False
        self.closed = False
        self.faults: H2Faults | None = None
        self.frame_ends: list[int] = []
        self.notes: list[str] = []
        self.starving_until: float | None = None
        self.window_wait: float | None = None
        self.starved = False
        self.waiters: list[asyncio.Future[None]] = []
        self.task: asyncio.Task[None] | None = None

    # ---- the sending layer's side (ssemock.edge.FrameSender) -----------------------------------------
    def arm(self, faults: H2Faults, notes: list[str]) -> None:
        """Carry out ``faults`` on the DATA frames written from now on; what was done goes to ``notes``."""
        self.faults = faults
        self.frame_ends = sorted(faults.frame_ends)
        self.notes = notes

    def send_head(self, status: int, headers: CIMultiDict[str]) -> None:
        """Queue the response's HEADERS frame (``:status`` and the fields, lower-cased, connection-specific
        ones left out)."""
        fields = [(":status", str(status))]
        fields += [
            (k.lower(), v.strip())  # (a value with surrounding whitespace is malformed in HTTP/2)
            for k, v in headers.items()
            if k.lower() not in _HOP_BY_HOP and not (k.lower() == "te" and v.strip().lower() != "trailers")
        ]
        self.connection.send_headers(self, fields)

    def write(self, data: bytes) -> None:
        """Queue ``data`` as DATA frames: one per write, cut at the armed frame ends inside it."""
        if self.closed and not self.ended:
            raise ConnectionResetError("the HTTP/2 stream was reset or its connection lost")
        if self.ended or not data:
            return
        start, end = self.position, self.position + len(data)
        cuts = self.frame_ends[bisect.bisect_right(self.frame_ends, start) : bisect.bisect_left(self.frame_ends, end)]
        pos = start
        for cut in [*cuts, end]:
            self.queue.append(data[pos - start : cut - start])
            pos = cut
        self.position = end
        self.queued += len(data)
        self.connection.flush()

    def finish(self) -> None:
        """Queue the stream's end: ``END_STREAM``, or the armed ``RST_STREAM`` / ``GOAWAY``."""
        faults = self.faults
        self.end_with(faults.end if faults is not None and faults.end is not None else _END_STREAM)

    def cut(self, code: str) -> None:
        """End the stream early (the transport closed or aborted): with the armed ``RST_STREAM`` or ``GOAWAY``,
        else ``RST_STREAM`` with ``code``."""
        faults = self.faults
        self.end_with(
            faults.end if faults is not None and faults.end is not None else H2End("RST_STREAM", ERROR_CODES[code])
        )

    def end_with(self, end: H2End) -> None:
        """Queue ``end`` after the bytes written (once: the first end queued is the stream's)."""
        if self.ended:
            return
        self.ended = True
        self.queue.append(end)
        self.connection.flush()

    @property
    def writing_paused(self) -> bool:
        """More than :data:`HIGH_WATER` bytes wait for the window, or the connection's transport is full."""
        return not self.closed and (self.queued > HIGH_WATER or self.connection.writing_paused)

    async def drained(self, *, everything: bool = False) -> None:
        """Wait until the queue is below :data:`HIGH_WATER` (``everything``: empty, its end sent).

        Raises:
            ConnectionResetError: the client reset the stream or the connection was lost.
        """
        while not self.closed and (self.queue if everything else self.writing_paused):
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            await waiter
        if self.closed and self.queue:
            raise ConnectionResetError("the HTTP/2 stream was reset or its connection lost")

    # ---- the connection's side -----------------------------------------------------------------------
    def pump(self, now: float) -> None:
        """Move what the windows admit from the queue to the connection (no I/O: the caller writes)."""
        conn = self.connection.h2
        while self.queue and not self.closed and not self.connection.gone_away:
            item = self.queue[0]
            if isinstance(item, H2End):
                self.queue.popleft()
                self.connection.send_end(self, item)
                self.closed = True
                continue
            size = self._admitted(item, conn.local_flow_control_window(self.stream_id), now)
            if size == 0:
                break
            conn.send_data(self.stream_id, item[:size])
            self.sent_bytes += size
            self.queued -= size
            if size < len(item):
                self.queue[0] = item[size:]
            else:
                self.queue.popleft()
        self.wake()

    def _admitted(self, item: bytes, window: int, now: float) -> int:
        """How many bytes of ``item`` go out now (0: wait for a window update or the starvation's end)."""
        if self.starving_until is not None:
            if now < self.starving_until:
                return 0
            self.starving_until = None
        size = min(len(item), window, self.connection.h2.max_outbound_frame_size)
        faults = self.faults
        if faults is not None and faults.starve and not self.starved:
            left = None if faults.starve_after is None else faults.starve_after - self.sent_bytes
            if (left is not None and left <= 0) or (left is None and size < len(item)):
                self._starve(now, window)
                return 0
            if left is not None:
                size = min(size, left)
                return size
        if size < len(item) and len(item) <= self.connection.whole_limit():
            # the client's next WINDOW_UPDATE will open the window for the whole piece (it sends one once half
            # its window is read): no frame boundary of the window's making, unless none comes in WINDOW_WAIT
            if self.window_wait is None:
                self.window_wait = now
                self.connection.flush_later(WINDOW_WAIT)
            if now - self.window_wait < WINDOW_WAIT:
                return 0
        self.window_wait = None
        return size

    def _starve(self, now: float, window: int) -> None:
        assert self.faults is not None
        self.starved = True
        seconds = self.faults.starve_seconds
        self.starving_until = now + seconds
        self.notes.append(
            f"h2-starve: stopped after {self.sent_bytes} bytes (stream window {window} bytes left) for {seconds:g} s"
        )
        self.connection.flush_later(seconds)

    def reset_by_peer(self, code: int) -> None:
        """The client reset the stream (``RST_STREAM``): the handler is cancelled, as when a client leaves."""
        self.lost()
        if self.task is not None and not self.task.done():
            self.task.cancel()
        del code

    def lost(self) -> None:
        """The stream can send no more (reset, or the connection lost): waiters are woken to fail."""
        self.closed = True
        self.wake()

    def wake(self) -> None:
        if self.waiters and (self.closed or not self.writing_paused):
            waiters, self.waiters = self.waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)


class StreamWriter(AbstractStreamWriter):
    """aiohttp's payload writer for one stream: headers as a HEADERS frame, writes as DATA frames."""

    def __init__(self, stream: H2Stream) -> None:
        self.stream = stream
        self.buffer_size = 0
        self.output_size = 0
        self.length = None

    async def write(self, chunk: bytes | bytearray | memoryview, *, drain: bool = True) -> None:
        """Queue ``chunk``; with ``drain``, wait while the stream's queue is full (never without: the
        sending layer's timed writes call it so, and look at ``protocol.writing_paused`` after)."""
        data = bytes(chunk)
        self.output_size += len(data)
        self.stream.write(data)
        if drain and self.stream.writing_paused:
            await self.stream.drained()

    async def write_eof(self, chunk: bytes = b"") -> None:
        if chunk:
            await self.write(chunk, drain=False)
        self.stream.finish()
        await self.stream.drained(everything=True)

    async def drain(self) -> None:
        await self.stream.drained()

    def enable_compression(self, encoding: str = "deflate", strategy: int | None = None) -> None:
        raise RuntimeError("HTTP/2 responses are sent as recorded: aiohttp's compression is not used")

    def enable_chunking(self) -> None:
        """No chunked coding in HTTP/2: DATA frames delimit the body."""

    async def write_headers(self, status_line: str, headers: CIMultiDict[str]) -> None:
        self.stream.send_head(int(status_line.split(" ", 2)[1]), headers)

    def send_headers(self) -> None:
        """The HEADERS frame is written as soon as it is queued."""


class StreamTransport(asyncio.Transport):
    """The transport a stream's request sees: the connection's, but ``close`` and ``abort`` reset the stream
    (after the bytes written), and no ``socket`` (the pacing of HTTP/1.1 reads does not apply: frames keep
    their boundaries)."""

    def __init__(self, stream: H2Stream, transport: asyncio.BaseTransport) -> None:
        super().__init__()
        self._stream = stream
        self._transport = transport

    @property
    def connection(self) -> asyncio.BaseTransport:
        """The transport of the connection that carries the stream (TLS faults act on it)."""
        return self._transport

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "socket":
            return default
        return self._transport.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self._stream.ended or self._stream.closed

    def close(self) -> None:
        self._stream.cut("CANCEL")

    def abort(self) -> None:
        self._stream.cut("INTERNAL_ERROR")

    def can_write_eof(self) -> bool:
        return False
