"""The faults of the TLS layer a plan carries (sans I/O): TLS records of chosen sizes, and a close without
``close_notify``.

The scenario steps of :mod:`ssemock.scenario.tls_steps` set them on a :class:`~ssemock.plan.Plan`
(:attr:`~ssemock.plan.Plan.tls`); the sending layer carries them out (:mod:`ssemock.edge.tls_writes`).

Records: the TLS library writes each write it is handed as one record (Python's ``ssl`` over asyncio: one
``SSL_write`` per write, one record of at most 16,384 bytes, RFC 8446 section 5.1), so a record ends where a
write ends. :class:`RecordCutter` cuts each write the response makes into several writes, so that records
also end inside them. Offsets count the bytes the response writes to TLS (plaintext, from its status line on:
headers, HTTP/1.1 chunk framing or HTTP/2 frame headers included). A client's TLS library reads records one
at a time; one that joins the records of a TCP read (asyncio's) sees their boundaries only where the
response's own writes end (:mod:`ssemock.pacing`).
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["MAX_RECORD", "RecordCutter", "TLSFaults", "split"]

MAX_RECORD = 16_384
"""The largest TLS record's plaintext (bytes, RFC 8446 section 5.1): a longer write is several records anyway."""
MAX_CUTS = 100_000
"""Records cut inside writes at most per response; later writes go out whole (the journal says so)."""
_CRLF = re.compile(rb"\r(?=\n)")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


@dataclass
class TLSFaults:
    """The TLS faults of one plan.

    Attributes:
        records: how records are cut inside writes (the ``mode`` of ``tls-records``: offsets, size, random,
            crlf or utf8), or None: one record per write.
        offsets: for ``offsets``, the offsets (bytes written to TLS by the response) where a record ends, in any
            order (:class:`RecordCutter` sorts them).
        size: for ``size``, the most bytes of plaintext a record holds.
        low, high: for ``random``, the bounds (bytes) of each record's seeded size.
        seed: the seed of ``random`` (the plan's).
        close_notify: False: the connection ends with a TCP FIN and no TLS ``close_notify`` alert (RFC 8446
            section 6.1) where the response ends early.
        steps: the names of the steps that set these faults, for the refusal of a request without TLS.
    """

    records: str | None = None
    offsets: tuple[int, ...] = ()
    size: int = 1
    low: int = 1
    high: int = 64
    seed: int = 0
    close_notify: bool = True
    steps: list[str] = field(default_factory=list)

    def observable(self) -> tuple[object, ...]:
        return (self.records, self.offsets, self.size, self.low, self.high, self.seed, self.close_notify)


class RecordCutter:
    """Cuts each write of one response into the writes that make its TLS records (:class:`TLSFaults`).

    ``cut(data)`` returns the pieces of ``data``, in order, each to be handed to TLS as one write; ``cuts``
    counts the records cut inside writes (at most :data:`MAX_CUTS`). The work of a write is bounded by the
    cuts it makes: offsets are found by bisection, and no end is computed past the last cut allowed.
    """

    def __init__(self, faults: TLSFaults) -> None:
        self.faults = faults
        self.written = 0
        self.cuts = 0
        self._offsets = tuple(sorted(set(faults.offsets)))
        self._rng = random.Random(faults.seed)  # noqa: S311 - test data

    def cut(self, data: bytes) -> list[bytes]:
        return split(data, self.ends(data))

    def ends(self, data: bytes) -> list[int]:
        """The offsets inside the next write ``data`` where its records end (increasing; counted in ``cuts``)."""
        start, self.written = self.written, self.written + len(data)
        room = MAX_CUTS - self.cuts
        ends = list(itertools.islice(self._ends(data, start), room)) if room > 0 else []
        self.cuts += len(ends)
        return ends

    def _ends(self, data: bytes, start: int) -> Iterator[int]:
        """Offsets inside ``data`` (which starts at byte ``start`` of the response) where a record ends, in
        increasing order, each strictly inside ``data``; computed lazily (the caller takes what it may cut)."""
        mode, size = self.faults.records, len(data)
        if mode == "size":
            yield from range(self.faults.size, size, self.faults.size)
        elif mode == "crlf":
            yield from (m.start() + 1 for m in _CRLF.finditer(data))
        elif mode == "utf8":
            yield from (m.start() for m in _CONTINUATION.finditer(data) if m.start() > 0)
        elif mode == "offsets":
            offsets = self._offsets
            first, last = bisect.bisect_right(offsets, start), bisect.bisect_left(offsets, start + size)
            yield from (offsets[i] - start for i in range(first, last))
        elif mode == "random":  # seeded sizes, drawn afresh in each write (a write's end ends a record anyway)
            pos = self._draw()
            while pos < size:
                yield pos
                pos += self._draw()

    def _draw(self) -> int:
        return self._rng.randint(self.faults.low, self.faults.high)


def split(data: bytes, ends: list[int]) -> list[bytes]:
    """``data`` cut at ``ends`` (increasing offsets strictly inside it)."""
    return [data[a:b] for a, b in itertools.pairwise([0, *ends, len(data)])]
