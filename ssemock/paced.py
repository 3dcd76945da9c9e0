"""A plain timed stream's chunks written by the server's timeline at their deadlines
(:class:`Paced`), for the sending layer (:mod:`ssemock.send`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from aiohttp import web

from .edge.body import BodyWriter

if TYPE_CHECKING:
    from .cassette import Chunk
    from .journal import Sent
    from .plan import Plan
    from .timeline import Timeline

__all__ = ["YIELD_EVERY", "Paced", "StreamView"]


class StreamView(Protocol):
    """What :class:`Paced` reads of the sending layer's stream of one response."""

    request: web.Request
    response: web.StreamResponse
    plan: Plan
    sent: Sent
    chunks: list[Chunk]
    loop: asyncio.AbstractEventLoop
    clock: Timeline
    pieces: bool


YIELD_EVERY = 256
"""Chunks written back to back before a sender gives the loop to the other requests (a write
awaits only when the socket's buffer is full, so a long stream to a fast reader would otherwise
hold the loop for its whole length)."""


class Paced:
    """A plain (only recorded time to keep) stream's chunks as a :class:`~ssemock.timeline.Sleeper`: each is
    written when the timeline calls :meth:`due` at its deadline, then the next deadline is set.

    :attr:`done` gets its result once every chunk is written, or when the client's socket buffer
    is full (aiohttp's protocol has paused writing: the stream's coroutine then waits for the
    client), and the write's error when one fails (``ConnectionResetError`` once the client left).
    """

    __slots__ = ("chunks", "clock", "done", "index", "loop", "protocol", "scale", "sent", "shift", "write")

    done: asyncio.Future[None]
    """Set by the stream's coroutine before each turn on the timeline."""

    def __init__(self, stream: StreamView, shift: float) -> None:
        self.chunks = stream.chunks
        self.sent = stream.sent
        self.scale = stream.plan.timing_scale
        self.shift = shift
        """Loop time (seconds) that the recorded times count from."""
        self.write = BodyWriter(stream.request, stream.response, pieces=stream.pieces)
        self.protocol = stream.request.protocol
        self.clock = stream.clock
        self.loop = stream.loop
        self.index = 0
        """The next chunk to write."""

    def deadline(self) -> float:
        """Loop time (seconds) the next chunk is due."""
        return self.shift + self.chunks[self.index].t * self.scale

    def long_due(self) -> bool:
        """Whether the next chunk is due and long: the stream's coroutine writes it (:meth:`write_long`)."""
        return self.write.long(self.chunks[self.index].data) and self.deadline() <= self.loop.time()

    async def write_long(self) -> None:
        """Write the next chunk in pieces (:meth:`~ssemock.edge.body.BodyWriter.write_long`) and count it."""
        data = self.chunks[self.index].data
        await self.write.write_long(data)
        self.index += 1
        self.sent.chunks += 1
        self.sent.bytes += len(data)

    @property
    def gone(self) -> bool:
        return self.done.done()

    def due(self) -> None:
        """Write the chunk due, and the ones after it whose deadlines have passed too (a stream
        behind its schedule catches up at once, as a handler writing in a loop would; at most
        :data:`YIELD_EVERY`), then set the next deadline."""
        chunks, sent, now = self.chunks, self.sent, self.loop.time()
        for _ in range(YIELD_EVERY):
            data = chunks[self.index].data
            if self.write.long(data):  # the stream's coroutine writes it (long_due)
                self.done.set_result(None)
                return
            try:
                self.write(data)
            except Exception as exc:  # the client left; kept for the stream's coroutine to raise
                self.done.set_exception(exc)
                return
            self.index += 1
            sent.chunks += 1
            sent.bytes += len(data)
            if self.index == len(chunks) or self.protocol.writing_paused:
                self.done.set_result(None)
                return
            if self.deadline() > now:
                break
        self.clock.at(self.loop, self.deadline(), self)
