"""What the recorder keeps of a streamed answer: reads collected as they come, scrubbed in bulk.

:class:`Tee` keeps each read the client gets, scrubs it in the scan thread into a spool (an encoded
body is scanned decoded and as it came; one that does not decode is not recorded, and ``dropped``
says why); :class:`EventCounter` counts the events of an event stream for the progress lines.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
from collections import Counter

from .. import limits
from ..coding import ContentCodingError, Decoder
from ..redact import BATCH, Credentials, Filter
from ..sse import BLANK_LINES, LineSplitter
from .spool import Spool
from .state import RecorderState

__all__ = ["EventCounter", "Tee"]

_DATA_FIELD = frozenset({b"data:", b"data\n", b"data\r"})  # "data", then its colon or the line end


class EventCounter:
    """Counts dispatched events in an event stream split anywhere, fast (for progress lines).

    An event is dispatched by a blank line after at least one ``data`` field
    (WHATWG §9.2.6); lines end as :class:`ssemock.sse.LineSplitter` ends them (a CRLF
    split across reads is one line end). Only the first 5 bytes of a line are held
    while it spans reads, so an endless line costs no memory.
    """

    def __init__(self) -> None:
        self.events = 0
        self._has_data = False
        self._lines = LineSplitter(keep=5)  # the field name "data" and what follows it decide

    def feed(self, data: bytes) -> int:
        """Add bytes; returns the number of events dispatched so far."""
        for line in self._lines.feed(data):
            head = line[:5]
            if head in BLANK_LINES:
                self.events += self._has_data
                self._has_data = False
            elif head in _DATA_FIELD:
                self._has_data = True
        return self.events


class Tee:
    """What is kept of a streamed body: reads collected raw, scrubbed in bulk into a spool.

    The client has each read at once; :meth:`add` only keeps it, and never makes the relay
    wait. Each MiB collected is scrubbed in the scan thread (google-re2 releases the GIL, so
    the scan runs beside the relay; one thread, so the batches of a body keep their order).
    When :data:`_IN_FLIGHT` batches wait for it (the body comes faster than it is scanned),
    the rest of the body is kept unscanned in a :class:`Spool` of its own (memory up to
    1 MiB, then an unnamed temporary file, never a named one) and scanned at :meth:`close`,
    so the relay goes at the speed of the connections, memory stays bounded, and the scan
    costs the relay no CPU from then on. ``size`` and ``count``: bytes and reads received.
    An encoded body (``Content-Encoding`` other than identity) is scanned decoded, every byte
    (:class:`ssemock.coding.Decoder`, 1 MiB at a time), and as it came (a gzip header's file name
    is not in the decoded bytes): the encoded bytes are kept unless either scan finds a secret.
    One that does not decode is dropped from there on: ``dropped`` then says why.
    """

    def __init__(self, st: RecorderState, content_type: str, encoding: str, credentials: Credentials) -> None:
        self.spool = Spool()
        self.first: float | None = None
        self.encoding = encoding
        self.complete = True  # set False before close() for a body cut short (its last member may stop anywhere)
        self.dropped: str | None = None  # why the body is not recorded (it does not decode)
        self.stored_decoded: str | None = None  # why an encoded body is stored decoded (a secret in it)
        self._coded: _CodedScan | None = None  # the scan of an encoded body
        try:
            decoder = Decoder(encoding)
            if not decoder.identity:
                self._coded = _CodedScan(decoder, st.options.filter, credentials)
        except ContentCodingError as exc:  # an unknown coding: never written unscanned
            self.dropped = str(exc)
        self._credentials = credentials
        self._scrub = st.options.filter.scrubber(credentials)
        self._event_stream = "event-stream" in content_type.lower()
        self._filter = st.options.filter
        self._raw: list[tuple[float, bytes]] = []
        self._raw_size = 0
        self._jobs: collections.deque[concurrent.futures.Future[None]] = collections.deque()
        self._unscanned: Spool | None = None  # reads kept raw for the scan after the body's end
        self._closing: concurrent.futures.Future[tuple[Spool, Counter[str], list[tuple[str, str]]]] | None = None
        self.size = 0
        self.count = 0

    def add(self, t: float, data: bytes) -> None:
        """Keep one read (``t`` seconds after the request was sent); returns at once."""
        if self.first is None:
            self.first = t
        self.size += len(data)
        self.count += 1
        if self._unscanned is not None:
            self._unscanned.add(t, data)
            return
        self._raw.append((t, data))
        self._raw_size += len(data)
        if self._raw_size >= BATCH:
            self._submit()
            if self.backlogged:  # the scan lags: the rest of the body waits for it unscanned
                self._unscanned = Spool()

    @property
    def backlogged(self) -> bool:
        """More batches wait for the scan than the relay may run ahead by."""
        while self._jobs and self._jobs[0].done():
            self._jobs.popleft().result()
        return len(self._jobs) >= _IN_FLIGHT

    def _submit(self) -> None:
        reads, self._raw, self._raw_size = self._raw, [], 0
        self._jobs.append(_scan_pool().submit(self._consume, reads))  # one thread, first in first out

    def _consume(self, reads: list[tuple[float, bytes]]) -> None:
        """Scrub reads into the spool (blocking: runs in the scan thread)."""
        for t, data in reads:
            if self.dropped is not None:
                continue
            if self._coded is not None:
                try:
                    self._coded.feed(t, data)
                except ContentCodingError as exc:
                    self.dropped = str(exc)
                    continue
                self.spool.add(t, data)  # encoded bytes are kept as they came; see close()
                continue
            for piece in self._scrub.feed(t, data):
                self.spool.add(*piece)

    def counts_events(self, headers: list[tuple[str, str]]) -> bool:
        """Whether the recorded body is a plain (not encoded) event stream."""
        return self._event_stream and not any(k.lower() == "content-encoding" for k, _ in headers)

    async def close(self, headers: list[tuple[str, str]]) -> tuple[Spool, Counter[str], list[tuple[str, str]]]:
        """Scrub what is left; returns the spool, the replacements by rule and the headers to record.

        When no batch is still with the scan thread (always for a body under 1 MiB), the rest
        (under 1 MiB) is scrubbed at once, here: no thread hop before the interaction is complete.
        """
        if not self.backlogged and not self._jobs and self._unscanned is None:
            self._consume(self._raw)
            self._raw, self._raw_size = [], 0
            return self._finish(headers)
        # Shielded: a cancelled caller goes on with close_now(), which waits for this same scrub.
        done = await asyncio.shield(asyncio.wrap_future(self._finishing(headers)))
        while self._jobs:
            self._jobs.popleft().result()  # done before _finish ran: raises what a batch raised
        return done

    def close_now(self, headers: list[tuple[str, str]]) -> tuple[Spool, Counter[str], list[tuple[str, str]]]:
        """:meth:`close`, blocking (the task is being cancelled: it may not wait for the loop again)."""
        done = self._finishing(headers).result()
        while self._jobs:
            self._jobs.popleft().result()
        return done

    def _finishing(
        self, headers: list[tuple[str, str]],
    ) -> concurrent.futures.Future[tuple[Spool, Counter[str], list[tuple[str, str]]]]:
        """The last scrub, submitted once (after every batch) whoever asks first."""
        if self._closing is None:
            self._submit()
            self._closing = _scan_pool().submit(self._finish, headers)
        return self._closing

    def _finish(self, headers: list[tuple[str, str]]) -> tuple[Spool, Counter[str], list[tuple[str, str]]]:
        if self._unscanned is not None:  # after the batches submitted before it, in order
            for chunk in self._unscanned.chunks():
                self._consume([(chunk.t, chunk.data)])
            self._unscanned.close()
            self._unscanned = None
        found = False
        if self._coded is not None and self.dropped is None:
            try:
                found = self._coded.close(self.complete)
            except ContentCodingError as exc:
                self.dropped = str(exc)
        if self.dropped is not None:  # fail closed: nothing of a body the scan could not read
            self.spool.close()
            self.spool = Spool()
            return self.spool, Counter(), _without_coding(headers)
        if self._coded is not None:
            if found:  # a secret in an encoded body: stored decoded, scrubbed
                wire = self._coded.wire.rules if not self._coded.plain.hits else None
                self.stored_decoded = (
                    "stored decoded, without its Content-Encoding: a secret in the decoded body was replaced"
                    if wire is None else "stored decoded, without its Content-Encoding: its encoded bytes held a "
                    f"secret ({', '.join(sorted(wire))}) outside the decoded body (e.g. a gzip header's file name), "
                    "which is not kept")
                return self._decode_and_scrub(headers)
            return self.spool, Counter(), headers
        for piece in self._scrub.close():
            self.spool.add(*piece)
        return self.spool, self._scrub.rules, headers

    def _decode_and_scrub(self, headers: list[tuple[str, str]]) -> tuple[Spool, Counter[str], list[tuple[str, str]]]:
        """The kept encoded body decoded (it decoded for the scan) and scrubbed, headers without the coding."""
        plain, decoder, scrub = Spool(), Decoder(self.encoding), self._filter.scrubber(self._credentials)
        t = 0.0
        for chunk in self.spool.chunks():
            t = chunk.t
            for data in decoder.feed(chunk.data):
                for piece in scrub.feed(t, data):
                    plain.add(*piece)
        for data in decoder.close(complete=self.complete):
            for piece in scrub.feed(t, data):
                plain.add(*piece)
        for piece in scrub.close():
            plain.add(*piece)
        self.spool.close()
        return plain, scrub.rules, _without_coding(headers)


class _CodedScan:
    """The scan of an encoded body, read by read: its decoded bytes (``decoder``) and its bytes as they
    came (a gzip header's file name is not in the decoded ones), each by a scrubber that only counts
    what it finds (the body is kept encoded unless either finds a secret)."""

    def __init__(self, decoder: Decoder, redaction: Filter, credentials: Credentials) -> None:
        self.decoder = decoder
        self.plain = redaction.scrubber(credentials)
        self.wire = redaction.scrubber(credentials)
        self.decoded = 0

    def feed(self, t: float, data: bytes) -> None:
        """Scan one read that arrived at ``t`` seconds. Raises ContentCodingError: it does not decode, or
        decodes to more than :data:`~ssemock.limits.MAX_DECODED_BODY` bytes."""
        for piece in self.decoder.feed(data):
            self._count(piece)
            self.plain.feed(t, piece)
        self.wire.feed(t, data)

    def _count(self, piece: bytes) -> None:
        self.decoded += len(piece)
        if self.decoded > limits.MAX_DECODED_BODY:  # read at each call: tests lower it
            raise ContentCodingError(self.decoder.header, f"it decodes to more than {limits.MAX_DECODED_BODY} bytes "
                                     "(a decompression bomb?)")

    def close(self, complete: bool) -> bool:
        """The end of the body (``complete``: see :meth:`Decoder.close`); whether either scan found a secret.

        Raises:
            ContentCodingError: the rest does not decode.
        """
        for piece in self.decoder.close(complete=complete):
            self._count(piece)
            self.plain.feed(0.0, piece)
        self.plain.close()
        self.wire.close()
        return bool(self.plain.hits or self.wire.hits)


def _without_coding(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers if k.lower() not in ("content-encoding", "content-length")]


_IN_FLIGHT = 2  # batches of one body waiting for the scan before the rest waits unscanned (2 MiB)
_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _scan_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The threads that scrub recorded bodies (shared by every recorder in the process)."""
    global _POOL
    if _POOL is None:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ssemock-scan")
    return _POOL
