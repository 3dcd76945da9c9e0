"""The :class:`Plan`: what the server will send for one request, edited by the steps.

Shaped by the scenario steps (:mod:`ssemock.scenario`), resume (:mod:`ssemock.resume`) and the
stubs, sent by :mod:`ssemock.send`, for the replay server and the recorder alike; it stands below
all of them (``ssemock.scenario.Plan`` names the same class).

A plan starts as a copy of the recorded response (its own lists; the chunk
objects are shared, so a step replaces a chunk, never changes one). Steps change its
chunks (bytes and times), headers and status, and set what only the transport
can do: a delay before the headers, pauses before given chunks, pacing between
writes, a content encoding applied on the wire, the HTTP framing and the way the
connection ends (``response.end.how``).

Times: ``Chunk.t`` and ``Response.start`` are recorded times, multiplied by
``timing_scale`` when sent; ``first_byte_delay``, ``pauses`` are injected
faults in absolute seconds (never scaled);
``keepalive_every``, ``heartbeat`` and ``pace`` are wall-clock seconds (never scaled).

Size: the steps that write into the body count what they add with :meth:`Plan.charge`, as they
write it (an event or a line at a time, so memory stays within the bound): past ``growth_limit``
(:data:`~ssemock.limits.MAX_SCENARIO_GROWTH`, 256 MiB) it raises
:class:`~ssemock.errors.ScenarioTooLargeError` and the plan is to be dropped.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from .cassette import Chunk, End, Request, Response
from .coding import ContentCodingError, Decoder
from .errors import ScenarioTooLargeError
from .h2faults import H2Faults
from .limits import LINE_COST, MAX_SCENARIO_GROWTH
from .tlsfaults import TLSFaults

__all__ = ["ENCODINGS", "FRAMINGS", "Plan", "comment_points", "dispatch_offsets", "split_at"]

FRAMINGS = ("chunked", "length", "close")
ENCODINGS = ("gzip", "deflate")
_SCAN = 1024
"""Bytes of a line fed to the decoder to tell whether a blank line dispatches an event."""


class Plan:
    """What the server will send for one request; steps edit it in place.

    Attributes:
        response: a private copy of the recorded response (status, headers, chunks, end).
        framing: ``chunked`` (HTTP/1.1 chunked), ``length`` (Content-Length) or
            ``close`` (body ends when the connection closes).
        seed: the seed of every random choice, reported in the journal.
        timing_scale: multiplies every recorded time and ``pace``; 0 sends without delay.
        request: the recorded request answered (used to recognise the provider), or None.
        first_byte_delay: seconds to wait before the status line and headers (not scaled).
        pauses: seconds to wait before chunk ``i`` (key ``len(chunks)``: before the end);
            not scaled, and every later time moves by the pause.
        pace: seconds between two writes where the client's reads cannot be seen, set by a
            fragmentation step so that each chunk reaches the client as its own read (not
            scaled: see :mod:`ssemock.pacing`, which also paces every plan sent at a timing
            scale below 1); 0 = no step asked for it.
        budget: seconds of pacing the response gets at most; None = the default
            (:data:`~ssemock.limits.DEFAULT_BUDGET`), 0 = none (a fragmentation step with ``pace: 0``).
        content_encoding: ``gzip`` or ``deflate`` to compress on the wire, each chunk
            flushed on its own (``Z_SYNC_FLUSH``); None sends the chunks as they are.
        keepalive_every: seconds of silence after which the sending layer writes the
            comment ``keepalive_comment`` (at an event boundary only); 0 = off. Not scaled.
        keepalive_comment: the bytes of one keep-alive comment block (``b": ping\n\n"``), or of a
            ping event (``ping-event``); with ``keepalive_now``, ``{now}`` in it is the time of the write.
        heartbeat: seconds the stream stays open after its last chunk, sending keep-alive
            comments, unless the client leaves first; 0 = none. Not scaled.
        notes: what the steps did, one short line each (copied to the journal).
        step_index: position of the running step in its scenario (seeds :meth:`rng`).
        resume_body: the whole response when a step cut it short so that the client must
            reconnect (``drop-and-resume``): a ``Last-Event-ID`` reconnect continues in it.
        growth_limit: most bytes the steps may add to the body (:meth:`charge`); default
            :data:`~ssemock.limits.MAX_SCENARIO_GROWTH`, 256 MiB.
        grown: bytes the steps added so far, as counted by :meth:`charge`.
        running: the scenario name and the step (``steps[0].edit``) being applied, for errors.
        undecodable: why the recorded body does not decode (:meth:`decode_content`), or None.
        ineffective: the steps that had no effect a client can see, and why, one line each (the
            journal's ``notes``).
        h2: the faults of the HTTP/2 layer (:class:`~ssemock.h2faults.H2Faults`), or None; a plan with
            them is sent over HTTP/2 only (:meth:`h2_faults`).
        tls: the faults of the TLS layer (:class:`~ssemock.tlsfaults.TLSFaults`), or None; a plan with them
            is sent over TLS only (:meth:`tls_faults`).
    """

    def __init__(
        self,
        response: Response,
        framing: str = "chunked",
        seed: int = 0,
        timing_scale: float = 1.0,
        request: Request | None = None,
        first_byte_delay: float = 0.0,
        pauses: dict[int, float] | None = None,
        pace: float = 0.0,
        content_encoding: str | None = None,
        keepalive_every: float = 0.0,
        keepalive_comment: bytes = b": ping\n\n",
        heartbeat: float = 0.0,
        notes: list[str] | None = None,
        step_index: int = 0,
        resume_body: Response | None = None,
        growth_limit: int = MAX_SCENARIO_GROWTH,
        grown: int = 0,
        running: tuple[str, str] = ("scenario", "step"),
        budget: float | None = None,
    ) -> None:
        self.response = response
        self.framing = framing
        self.seed = seed
        self.timing_scale = timing_scale
        self.request = request
        self.first_byte_delay = first_byte_delay
        self.pauses: dict[int, float] = {} if pauses is None else pauses
        self.pace = pace
        self.budget = budget
        self.content_encoding = content_encoding
        self.keepalive_every = keepalive_every
        self.keepalive_comment = keepalive_comment
        self.heartbeat = heartbeat
        self.notes: list[str] = [] if notes is None else notes
        self.step_index = step_index
        self.resume_body = resume_body
        self.growth_limit = growth_limit
        self.grown = grown
        self.running = running
        self.undecodable: str | None = None
        self.ineffective: list[str] = []
        self.keepalive_now = False
        self.h2: H2Faults | None = None
        self.tls: TLSFaults | None = None

    def observable(self) -> tuple[Any, ...]:
        """What a client can tell of this plan (the response, its framing, timing, coding, keep-alive and
        faults), to find a step that changed none of it."""
        r = self.response
        return (r.status, r.reason, tuple(r.headers), tuple(r.chunks), r.start, r.end, r.timed, self.framing,
                self.timing_scale, self.first_byte_delay, tuple(sorted(self.pauses.items())), self.pace, self.budget,
                self.content_encoding, self.keepalive_every, self.keepalive_comment, self.keepalive_now,
                self.heartbeat, self.resume_body, None if self.h2 is None else self.h2.observable(),
                None if self.tls is None else self.tls.observable())

    def keepalive_block(self) -> bytes:
        """The keep-alive block to write now: ``keepalive_comment``, with ``{now}`` replaced by the UTC
        time (``2026-01-31 12:00:00.123456``, as sse-starlette's ``ping - {now}``) when ``keepalive_now``."""
        if not self.keepalive_now:
            return self.keepalive_comment
        import datetime

        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        return self.keepalive_comment.replace(b"{now}", now.encode())

    @classmethod
    def of(
        cls, response: Response, *, seed: int = 0, timing_scale: float = 1.0, request: Request | None = None,
        shared: bool = False,
    ) -> Plan:
        """A plan for ``response`` (copied, so steps never touch the cassette; with ``shared``, the
        plan holds ``response`` itself, for a caller that applies no step and sends it as it is)."""
        return cls(response if shared else _copy_response(response), seed=seed, timing_scale=timing_scale,
                   request=request)

    # ---- helpers for steps ------------------------------------------------------
    def h2_faults(self, step: str) -> H2Faults:
        """The plan's HTTP/2 faults, made on first use; ``step`` (its name) is noted as needing HTTP/2."""
        if self.h2 is None:
            self.h2 = H2Faults()
        if step not in self.h2.steps:
            self.h2.steps.append(step)
        return self.h2

    def tls_faults(self, step: str) -> TLSFaults:
        """The plan's TLS faults, made on first use; ``step`` (its name) is noted as needing TLS."""
        if self.tls is None:
            self.tls = TLSFaults()
        if step not in self.tls.steps:
            self.tls.steps.append(step)
        return self.tls

    def charge(self, size: int, lines: int = 0) -> None:
        """Count ``size`` bytes and ``lines`` lines that the running step adds to the body (each line
        counts :data:`~ssemock.limits.LINE_COST` bytes more). A step calls it as it writes, before it
        writes much more, so that a step going over the bound is stopped with little memory spent.

        Raises:
            ScenarioTooLargeError: the steps have now added more than ``growth_limit`` bytes.
        """
        self.grown += size + lines * LINE_COST
        if self.grown > self.growth_limit:
            raise ScenarioTooLargeError(*self.running, self.growth_limit, self.grown, line_cost=LINE_COST)

    def rng(self, name: str) -> random.Random:
        """A random generator seeded by the seed, the running step's position and ``name``.

        The same seed and scenario give the same choices, hence the same bytes and chunks.
        """
        return random.Random(f"{self.seed}/{self.step_index}/{name}")  # noqa: S311 - test data

    @property
    def is_event_stream(self) -> bool:
        """True when the response's content type is ``text/event-stream``."""
        return "event-stream" in (self.response.header("content-type") or "").lower()

    def set_header(self, name: str, value: str | None) -> None:
        """Replace header ``name`` (case-insensitive) by ``value``; None removes it."""
        lname = name.lower()
        headers = [(k, v) for k, v in self.response.headers if k.lower() != lname]
        if value is not None:
            headers.append((name, value))
        self.response.headers = headers

    def decode_content(self) -> bool:
        """Undo a recorded ``Content-Encoding`` so steps see the SSE bytes; False if it does not decode.

        The body is decoded by :class:`ssemock.coding.Decoder` (every gzip member, zlib or raw
        deflate, stacked codings), fed chunk by chunk: each chunk keeps its time and gets what
        its bytes decode to. The outermost coding (``gzip`` or ``deflate``) is then applied again
        on the wire (``content_encoding``), flushed per chunk. What decoding adds to the recorded
        size counts against ``growth_limit`` (:meth:`charge`), 1 MiB at a time. A recording that
        ended cut short may stop inside a member.

        A body that does not decode (an unknown coding such as ``br``, corrupt data, bytes after
        the last member) is left as it is, and :attr:`undecodable` says why: the steps that edit
        the body are then not applied (never to compressed bytes).

        Raises:
            ScenarioTooLargeError: decoding adds more than what is left of ``growth_limit``.
        """
        header = self.response.header("content-encoding")
        try:
            decoder = Decoder(header)
        except ContentCodingError as exc:
            self.undecodable = str(exc)
            return False
        if decoder.identity:
            return True
        plain: list[Chunk] = []
        counted = wire = size = 0
        grown = self.grown

        def counted_pieces(pieces: Iterator[bytes]) -> Iterator[bytes]:
            nonlocal counted, size
            for piece in pieces:
                size += len(piece)
                if size - wire > counted:  # a small recording may inflate a thousand times
                    self.charge(size - wire - counted)
                    counted = size - wire
                yield piece

        try:
            for chunk in self.response.chunks:
                wire += len(chunk.data)
                plain.append(Chunk(chunk.t, b"".join(counted_pieces(decoder.feed(chunk.data)))))
            tail = b"".join(counted_pieces(decoder.close(complete=self.response.end.how == "clean")))
        except ContentCodingError as exc:
            self.grown = grown
            self.undecodable = str(exc)
            return False
        if tail:
            last = plain[-1] if plain else Chunk(self.response.start, b"")
            plain[-1:] = [Chunk(last.t, last.data + tail)]
        self.response.chunks = [c for c in plain if c.data]
        self.set_header("Content-Encoding", None)
        self.content_encoding = "deflate" if decoder.codings[-1] == "deflate" else "gzip"
        return True

    def event_offsets(self) -> list[int]:
        """Byte offsets in the body just after each dispatched event (see :func:`dispatch_offsets`)."""
        return dispatch_offsets(self.response.body)

    def cut_body(self, offset: int) -> None:
        """Keep the first ``offset`` bytes of the body (chunk times unchanged, pauses beyond dropped)."""
        kept: list[Chunk] = []
        size = 0
        for chunk in self.response.chunks:
            if size >= offset:
                break
            kept.append(Chunk(chunk.t, chunk.data[: offset - size]))
            size += len(kept[-1].data)
        self.response.chunks = kept
        end_pause = self.pauses.pop(len(kept), None)
        self.pauses = {i: s for i, s in self.pauses.items() if i < len(kept)}
        if end_pause:
            self.pauses[len(kept)] = end_pause

    def chunk_at(self, offset: int) -> int:
        """Split chunks so that one starts at body byte ``offset``; returns its index."""
        self.response.chunks = split_at(self.response.chunks, [offset])
        size = 0
        for index, chunk in enumerate(self.response.chunks):
            if size >= offset:
                return index
            size += len(chunk.data)
        return len(self.response.chunks)

    def wire_chunks(self) -> list[Chunk]:
        """The chunks as written on the wire: compressed per chunk when ``content_encoding`` is set
        (else the response's own list: read it, never change it)."""
        chunks = self.response.chunks
        if self.content_encoding is None:
            return chunks
        deflater = zlib.compressobj(wbits=31 if self.content_encoding == "gzip" else 15)
        wire = [Chunk(c.t, deflater.compress(c.data) + deflater.flush(zlib.Z_SYNC_FLUSH)) for c in chunks]
        if self.response.end.how == "clean":
            tail = deflater.flush()
            t = wire[-1].t if wire else self.response.start
            if wire:
                wire[-1] = Chunk(t, wire[-1].data + tail)
            else:
                wire.append(Chunk(t, tail))
        return wire


def split_at(chunks: list[Chunk], offsets: list[int]) -> list[Chunk]:
    """Split ``chunks`` at the given body byte offsets (kept times; no empty chunks).

    Args:
        chunks: the body as timed chunks.
        offsets: body offsets in bytes where a new chunk must begin (any order).

    Returns:
        New chunks whose boundaries are the old ones plus ``offsets``.
    """
    cuts = sorted(set(offsets))
    out: list[Chunk] = []
    start = 0
    i = 0
    for chunk in chunks:
        end = start + len(chunk.data)
        while i < len(cuts) and cuts[i] <= start:
            i += 1
        pos = start
        while i < len(cuts) and cuts[i] < end:
            out.append(Chunk(chunk.t, chunk.data[pos - start : cuts[i] - start]))
            pos = cuts[i]
            i += 1
        if pos < end:
            out.append(Chunk(chunk.t, chunk.data[pos - start :]))
        start = end
    return [c for c in out if c.data]


def dispatch_offsets(body: bytes) -> list[int]:
    """Byte offsets just after the blank line that dispatches each event (WHATWG §9.2.6).

    Only blank lines that dispatch an event count (a blank line after a comment or
    a meta-only block dispatches nothing). The offset is after the whole line end,
    so a CRLF is never split.
    """
    from .sse import Decoder, Event, LineSplitter  # a plain replay never decodes its stream: imported on first use

    decoder = Decoder()
    offsets: list[int] = []
    pos = 0
    for line in LineSplitter().feed(body):  # not closed: an unfinished last line dispatches nothing
        pos += len(line)
        text = line.rstrip(b"\r\n")
        if len(text) > _SCAN:  # the field name decides; a long value would only cost time
            line = text[:_SCAN] + line[len(text) :]
        if any(isinstance(item, Event) for item in decoder.feed(line)):
            offsets.append(pos)
    return offsets


def _copy_response(response: Response) -> Response:
    """A copy of ``response`` with its own lists and ``end``, sharing the :class:`Chunk` objects.

    Steps replace chunks (``Chunk(t, data)``) and never change one in place, so sharing
    them keeps the cassette untouched; copying a list of pointers instead of
    ``copy.deepcopy`` keeps a 20 MB replay from spending a second before its first byte.
    """
    return Response(
        status=response.status, reason=response.reason, headers=list(response.headers),
        chunks=list(response.chunks), start=response.start,
        end=End(response.end.t, response.end.how), timed=response.timed,
    )


def comment_points(chunks: Sequence[Chunk]) -> frozenset[int]:
    """Where a comment block may be written without changing the events a WHATWG parser dispatches.

    Returns:
        Indices ``i`` such that a comment may go just before ``chunks[i]``; ``len(chunks)``
        when it may go after the last one. These are the start of the body and the chunk
        boundaries right after a blank line that dispatched an event (see
        :func:`dispatch_offsets`).
    """
    offsets = {0, *dispatch_offsets(b"".join(c.data for c in chunks))}
    position = 0
    allowed = []
    for index, chunk in enumerate(chunks):
        if position in offsets:
            allowed.append(index)
        position += len(chunk.data)
    if position in offsets:
        allowed.append(len(chunks))
    return frozenset(allowed)
