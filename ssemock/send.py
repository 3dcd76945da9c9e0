"""The sending layer: a :class:`~ssemock.scenario.Plan` written to an aiohttp response.

Used by the replay server and by the recorder's replay path. Faithful replay: one
``write`` per chunk (aiohttp sets TCP_NODELAY on every connection), each at
``t × timing_scale`` seconds after the request arrived; HTTP/1.1 chunked framing, so a
recorded ``cut`` (connection closed without the terminating chunk) or ``reset`` (TCP RST)
stays distinguishable from a clean end. Over HTTP/2 (:mod:`ssemock.http2`) each write is a DATA frame (no
pacing: frames keep their boundaries), the plan's HTTP/2 faults are armed on the stream, and a ``cut`` or
``reset`` resets the stream.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import TYPE_CHECKING

from aiohttp import web

from .cassette import Chunk, Response, no_content
from .edge import abort_connection, set_framing, stopping
from .edge.body import PIECE, BodyWriter
from .edge.framing import H2_STREAM
from .edge.tls_writes import close_without_notify, cut_records
from .limits import DEFAULT_BUDGET
from .paced import YIELD_EVERY, Paced
from .pacing import Pacing
from .plan import Plan, comment_points
from .timeline import Timeline
from .tlsfaults import TLSFaults

if TYPE_CHECKING:
    from .journal import JournalEntry, Sent

__all__ = ["TIMELINE", "drop_default_content_type", "end_body", "send_plan"]

# Hop-by-hop and framing headers: the sending layer frames the body itself.
_FRAMING_HEADERS = frozenset({"transfer-encoding", "content-length", "connection", "keep-alive"})
_NO_CONTENT_TYPE: weakref.WeakSet[web.StreamResponse] = weakref.WeakSet()  # responses sent without one


TIMELINE = web.AppKey("ssemock_timeline", Timeline)
"""The application's :class:`~ssemock.timeline.Timeline`, shared by all its timed streams (an
application without one gives each response its own)."""

async def drop_default_content_type(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: aiohttp adds ``Content-Type: application/octet-stream``;
    a response recorded (or edited) without a content type is sent without one."""
    if response in _NO_CONTENT_TYPE:
        response.headers.popall("Content-Type", None)


async def send_plan(
    request: web.Request, plan: Plan, entry: JournalEntry, arrived: float, *, own_cors: bool = False
) -> web.StreamResponse:
    """Send ``plan``: status and headers at ``start``, then one write per chunk at its time.

    Recorded times are multiplied by ``plan.timing_scale``;
    ``plan.first_byte_delay`` and ``plan.pauses`` are absolute and push every later
    write back. Each chunk is one ``write`` (one HTTP chunk, flushed: aiohttp sets
    TCP_NODELAY); a paced plan (:mod:`ssemock.pacing`: a fragmentation step, or a timing scale
    below 1) also waits before each write until the client has read the chunk before, so that
    every boundary reaches it as the end of a read, at every timing scale. With
    ``plan.keepalive_every`` the comment ``plan.keepalive_comment`` is written after that many
    seconds of silence, at event boundaries only (with a ``first_byte_delay``, the headers go
    first and comments fill the delay); ``plan.heartbeat`` keeps the stream open that many
    seconds after the last chunk, with comments. When nothing is timed (scale 0, no pause,
    no keep-alive) the chunks go out as soon as the pacing lets them.

    Args:
        request: the request answered.
        plan: what to send.
        entry: the journal entry, filled in as the response goes out.
        arrived: loop time (seconds) when the request arrived; recorded times count from it.
        own_cors: the application adds its own CORS headers (aiohttp-cors): a request with
            an ``Origin`` then gets none of the recorded ``Access-Control-*`` headers.

    The journal ``entry`` gets ``status``, ``framing`` (``chunked``, ``length`` or
    ``close``: an HTTP/1.0 client gets ``close`` for ``chunked``, an HTTP/2 one ``h2``), ``chunks_sent``,
    ``bytes_sent``, ``injected`` (what the scenario's steps did) and ``outcome``
    (``complete``, ``cut``, ``reset``, ``client_gone``, or ``stopped`` when the server
    stopped first; ``error`` with status 500 if the response could not be sent). A client that had
    the whole answer (:meth:`_Stream.delivered`) and left before its recorded end is ``complete``.
    """
    resp_rec = plan.response
    chunks = plan.wire_chunks()
    empty = no_content(request.method, resp_rec.status)
    dropped = sum(len(c.data) for c in chunks) if empty else 0
    if empty:  # bytes after such a head would be read as the next response on the connection
        chunks = []
    response = _head(plan, own_cors and "Origin" in request.headers)
    # nothing to wait for between the chunks (scale 0, or every chunk and the end at the start: a stub's
    # answer without timing): one burst, with no timer
    untimed = not plan.timing_scale or (_flat(resp_rec) and not plan.heartbeat)
    timed = bool(plan.keepalive_every or plan.pauses or not untimed)
    size = sum(len(c.data) for c in chunks) if plan.framing == "length" or not timed else 0
    framing = set_framing(request, response, plan.framing, size)
    # the plan is this request's own: its list of notes goes on in the journal
    sent = entry.start_sending(resp_rec.status, framing, plan.notes)
    if plan.h2 is not None and (frames := request.get(H2_STREAM)) is not None:
        frames.arm(plan.h2, sent.injected)
    if dropped:
        plan.notes.append(f"no content: a {request.method} answered {resp_rec.status} has no body "
                          f"(RFC 9110 section 15); {dropped} bytes not sent")
    clock = request.app.get(TIMELINE)  # (not `or`: an empty timeline is falsy)
    stream = _Stream(request, response, plan, sent, chunks, asyncio.get_running_loop(),
                     Timeline() if clock is None else clock)
    if plan.keepalive_every > 0:
        stream.allow_keepalives(framing)
    await stream.run(entry, timed, arrived, size)
    return response


def _head(plan: Plan, cors: bool) -> web.StreamResponse:
    """The response's status and headers as recorded, but the framing ones (the sending layer frames the
    body) and, with ``cors`` (the application adds its own), the recorded ``Access-Control-*`` ones."""
    recorded = plan.response
    response = web.StreamResponse(status=recorded.status, reason=recorded.reason)
    typed = False
    for name, value in recorded.headers:
        lname = name.lower()
        typed = typed or lname == "content-type"
        if lname not in _FRAMING_HEADERS and not (cors and lname.startswith("access-control-")):
            response.headers.add(name, value)
    if plan.content_encoding is not None:
        response.headers["Content-Encoding"] = plan.content_encoding
    if not typed:
        _NO_CONTENT_TYPE.add(response)
    return response


class _Stream:
    """The sending state of one response: its chunks, the time of its last write, its keep-alives."""

    def __init__(
        self, request: web.Request, response: web.StreamResponse, plan: Plan, sent: Sent,
        chunks: list[Chunk], loop: asyncio.AbstractEventLoop, clock: Timeline,
    ) -> None:
        self.request = request
        self.response = response
        self.plan = plan
        self.sent = sent
        self.chunks = chunks
        self.loop = loop
        self.clock = clock
        """Every deadline is waited for on the server's timeline."""
        self.last = -1.0
        """Loop time of the last write (seconds)."""
        self.keepalive = False
        self.boundaries: frozenset[int] = frozenset()
        """Chunk indices before which a comment may go (``len(chunks)``: after the last chunk)."""
        self.comments = 0
        self.heartbeat_end = ""
        transport = request.transport
        # an HTTP/2 stream keeps every boundary as a DATA frame's: no pacing (budget 0)
        budget = 0.0 if H2_STREAM in request else DEFAULT_BUDGET if plan.budget is None else plan.budget
        self.pacing = Pacing(transport.get_extra_info("socket") if transport is not None else None, plan.pace,
                             plan.timing_scale, budget, loop, timed=plan.response.timed)
        self.pieces = H2_STREAM not in request and plan.tls is None
        """Whether a chunk longer than :data:`~ssemock.edge.body.PIECE` may be written in pieces (not
        over HTTP/2, whose DATA frames, nor under TLS faults, whose records, follow the writes)."""
        self.long_writer: BodyWriter | None = None

    async def run(self, entry: JournalEntry, timed: bool, arrived: float, size: int) -> None:
        """Send the body by the path its plan needs, end it as recorded, and note the outcome last."""
        outcome = None
        request, response = self.request, self.response
        cutter, restore = cut_records(request, self.plan.tls) if self.plan.tls is not None else (None, None)
        try:
            if timed and self.plain:
                await self.send_plain(arrived)
            elif timed:
                await self.send_timed(arrived)
            else:
                await self.burst(arrived, size)
            outcome = await end_body(request, response, self.plan.response.end.how, self.plan.tls)
        except ConnectionError:
            outcome = "complete" if self.delivered() else "client_gone"
        except asyncio.CancelledError:  # the server stops, or the client left (aiohttp cancels its handler)
            outcome = "complete" if self.delivered() else "stopped" if stopping(request) else "client_gone"
            raise
        except Exception:
            if not response.prepared:  # aiohttp answers 500
                entry.status = 500
            outcome = "error"
            raise
        finally:
            if restore is not None:
                restore()
            if cutter is not None:
                self.sent.injected.append(f"tls-records: {cutter.cuts} record(s) cut inside writes")
            self.report()
            entry.outcome = outcome  # last: a reader of the journal sees a finished entry

    def allow_keepalives(self, framing: str) -> None:
        """Turn keep-alive comments on where they cannot change the body's meaning or framing."""
        plan = self.plan
        coded = plan.content_encoding or (plan.response.header("content-encoding") or "identity").strip().lower()
        why = ("the answer has no content" if no_content(self.request.method, plan.response.status)
               else "the body is not text/event-stream" if not plan.is_event_stream
               else "the body is compressed on the wire" if coded != "identity"
               else "the body is framed by Content-Length" if framing == "length" else "")
        if why:
            self.sent.injected.append(f"keep-alive: no comment sent, {why}")
            return
        self.keepalive = True
        self.boundaries = comment_points(self.chunks)

    async def burst(self, arrived: float, size: int) -> None:
        """Send every chunk without timing (no per-chunk time, pause or comment is needed), each
        boundary kept by the pacing while its budget lasts; unpaced, each chunk is still its own
        write (one HTTP chunk), written back to back with no task switch, the loop given to the other
        requests every :data:`YIELD_EVERY` chunks and while the client's socket buffer is full.

        The journal's counts are written once, when the body ends or the client leaves.
        """
        plan = self.plan
        start = arrived + plan.first_byte_delay + plan.response.start * plan.timing_scale
        await self.clock.sleep_until(self.loop, start)
        await self.response.prepare(self.request)
        pacing, loop = self.pacing, self.loop
        written = 0
        try:
            if not pacing.on:
                write = BodyWriter(self.request, self.response, pieces=self.pieces)
                protocol, writer, chunks = self.request.protocol, self.request.writer, self.chunks
                try:
                    while written < len(chunks):
                        written = write.run(chunks, written, written + YIELD_EVERY)
                        if written < len(chunks) and write.long(data := chunks[written].data):
                            await write.write_long(data)
                            written += 1
                        if protocol.writing_paused:
                            await writer.drain()
                        elif written < len(chunks):
                            await asyncio.sleep(0)
                finally:  # a write that failed in run() left its count in write.reached
                    written = max(written, write.reached)
                self.last = loop.time()
                return
            for chunk in self.chunks:
                if written and pacing.on:
                    await pacing.boundary(written, self.last)
                await self.write(chunk.data)
                self.last = loop.time()
                written += 1
                if not written % YIELD_EVERY:  # a write awaits only when the socket's buffer is full
                    await asyncio.sleep(0)
        finally:
            self.sent.chunks = written
            self.sent.bytes = size if written == len(self.chunks) else sum(
                len(c.data) for c in self.chunks[:written])

    async def send_timed(self, arrived: float) -> None:
        """Send each chunk at its time (recorded × scale, plus pauses), with keep-alive comments."""
        plan, loop, sent, chunks = self.plan, self.loop, self.sent, self.chunks
        scale = plan.timing_scale
        start = plan.response.start * scale
        shift = arrived + plan.first_byte_delay  # absolute delays move every later deadline
        early = self.keepalive and plan.first_byte_delay > 0  # headers first, comments until the first chunk
        sleep_until = self.clock.sleep_until
        await sleep_until(loop, (arrived if early else shift) + start)
        await self.response.prepare(self.request)
        self.last = loop.time()
        if early:
            await self.wait(0, shift + start)
        write = self.write
        for index, chunk in enumerate(chunks):
            if plan.pauses:  # no coroutine per chunk on the common path
                shift += await self.pause(index)
            if scale:
                deadline = shift + chunk.t * scale
                await (self.wait(index, deadline) if self.keepalive else sleep_until(loop, deadline))
            if index and self.pacing.on:
                await self.pacing.boundary(index, self.last)
            await write(chunk.data)
            self.last = loop.time()
            sent.chunks += 1
            if index % YIELD_EVERY == YIELD_EVERY - 1:
                # let other requests in between the chunks of a long burst (also a timed one whose
                # deadlines have all passed: the sleeps above then return at once)
                await asyncio.sleep(0)
            sent.bytes += len(chunk.data)
        shift += await self.pause(len(chunks))
        if plan.heartbeat > 0:
            await self.heartbeat()
        elif scale:
            await self.wait(len(chunks), shift + plan.response.end.t * scale)

    @property
    def plain(self) -> bool:
        """Only recorded time to keep: timed, and no pause, pacing, keep-alive comment or heartbeat."""
        plan = self.plan
        return bool(plan.timing_scale) and not (plan.pauses or self.pacing.on or plan.heartbeat or self.keepalive)

    async def send_plain(self, arrived: float) -> None:
        """:meth:`send_timed` when the stream is :attr:`plain`: each chunk is written by the
        server's timeline at its deadline (:class:`~ssemock.paced.Paced`), with no task switch per chunk; this
        coroutine wakes up only at the end, or when the client reads too slowly (then it waits
        for the client, and the chunks after go on from their own deadlines)."""
        plan, loop, clock = self.plan, self.loop, self.clock
        shift = arrived + plan.first_byte_delay
        await clock.sleep_until(loop, shift + plan.response.start * plan.timing_scale)
        await self.response.prepare(self.request)
        paced = Paced(self, shift)  # its writer reads the framing the prepared response has
        writer = self.request.writer
        while paced.index < len(self.chunks):
            paced.done = loop.create_future()
            if paced.deadline() <= loop.time():
                paced.due()  # due already (a chunk at the headers' time): written at once
            else:
                clock.at(loop, paced.deadline(), paced)
            await clock.wait(paced.done)
            if paced.index < len(self.chunks) and paced.long_due():  # written here, in pieces
                await paced.write_long()
            elif paced.index < len(self.chunks):  # the client's socket buffer is full
                await writer.drain()
        await clock.sleep_until(loop, paced.shift + plan.response.end.t * paced.scale)

    async def write(self, data: bytes) -> None:
        """Write one chunk through aiohttp's response, or in pieces when it is long
        (:meth:`~ssemock.edge.body.BodyWriter.write_long`)."""
        if self.pieces and len(data) > PIECE:
            if self.long_writer is None:
                self.long_writer = BodyWriter(self.request, self.response, pieces=True)
            if self.long_writer.pieces:
                await self.long_writer.write_long(data)
                return
        await self.response.write(data)

    async def pause(self, index: int) -> float:
        """Wait the injected pause before chunk ``index`` (a stall), from now; returns its length."""
        seconds = self.plan.pauses.get(index, 0.0)
        if seconds > 0:
            await self.wait(index, self.loop.time() + seconds)
        return seconds

    async def wait(self, index: int, deadline: float) -> None:
        """Sleep until ``deadline`` (loop time) before chunk ``index``, writing the keep-alive
        comment after every ``keepalive_every`` seconds of silence where one may go."""
        if self.keepalive and index in self.boundaries:
            every = self.plan.keepalive_every
            while self.last + every < deadline:
                await self.clock.sleep_until(self.loop, self.last + every)
                await self.comment()
        await self.clock.sleep_until(self.loop, deadline)

    async def comment(self) -> None:
        await self.response.write(self.plan.keepalive_block())
        self.last = self.loop.time()
        self.comments += 1

    async def heartbeat(self) -> None:
        """After the last chunk: a comment every ``keepalive_every`` seconds for ``heartbeat`` seconds."""
        if not (self.keepalive and len(self.chunks) in self.boundaries):
            self.heartbeat_end = "not sent: the body does not end at an event boundary"
            return
        self.heartbeat_end = "stopped early: the client left or the server stopped"
        await self.wait(len(self.chunks), self.loop.time() + self.plan.heartbeat)
        self.heartbeat_end = f"ended after its max_seconds ({self.plan.heartbeat:g} s)"

    def delivered(self) -> bool:
        """Whether the client has had the whole answer although its recorded end has not come yet: the
        head of an answer without content (HEAD, 1xx, 204, 304), or every byte of a ``Content-Length``
        body. Such a client may leave during the recorded end delay; its answer was complete."""
        if not self.response.prepared:
            return False
        if no_content(self.request.method, self.plan.response.status):
            return True
        return self.sent.framing == "length" and self.sent.chunks == len(self.chunks)

    def report(self) -> None:
        """Add what the sending layer injected to the journal's ``injected``."""
        notes = self.sent.injected
        notes.extend(self.pacing.notes(len(self.chunks)))
        if self.keepalive:
            kind = "ping event(s)" if self.plan.keepalive_comment.startswith(b"event:") else "comment(s)"
            notes.append(f"keep-alive: {self.comments} {kind} sent, {len(self.plan.keepalive_comment)} bytes each")
        if self.heartbeat_end:
            notes.append(f"heartbeat: {self.heartbeat_end}")


def _flat(response: Response) -> bool:
    """Whether every chunk of ``response``, and its end, are at its start (nothing to wait for)."""
    start = response.start
    return response.end.t == start and all(chunk.t == start for chunk in response.chunks)


async def end_body(request: web.Request, response: web.StreamResponse, how: str, tls: TLSFaults | None = None) -> str:
    """End the body as recorded (``how``: ``clean``, ``cut``, ``reset``, ``timeout`` or
    ``client_gone``; a ``cut`` without TLS ``close_notify`` when ``tls`` says so); returns the journal outcome
    (``complete``, ``cut`` or ``reset``)."""
    if how == "cut" and tls is not None and not tls.close_notify:
        await close_without_notify(request)
        return "cut"
    if how == "reset":
        abort_connection(request, reset=True)
        return "reset"
    if how in ("cut", "timeout", "client_gone"):
        abort_connection(request, reset=False)
        return "cut"
    await response.write_eof()  # the terminating chunk; with "close" framing aiohttp then closes
    return "complete"
