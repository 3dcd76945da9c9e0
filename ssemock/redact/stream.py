"""Scrubbing a body that arrives in reads, in bulk, keeping each read's time (sans I/O).

The reads are only collected while the body streams (the client gets the raw bytes
at once); they are scanned together when ``batch`` bytes are waiting (default
1 MiB) and at the end of the body, so a small read costs nothing and a secret split
across reads is seen whole. The end of a batch that a secret could still continue
in is held back for the next one: at least ``hold_min`` bytes (default 512, and at
least the longest credential sent) and the whole trailing run of key characters, up
to ``hold_max`` (4096); an opened ``-----BEGIN`` block up to 64 KiB. A secret longer
than that, split across batches, is scrubbed in pieces.

A secret is replaced by ``REDACTED`` in the read where it starts; a read holding
only its remainder loses those bytes (and is dropped if nothing is left).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable

from ..scanner.shapes import Hit

__all__ = ["BATCH", "ChunkScrubber"]

BATCH = 1 << 20
_CONTEXT = 512  # bytes of what was released kept as left context for the next scan
_HOLD_MIN = 512
_HOLD_MAX = 4096
_HOLD_BLOCK = 1 << 16
_KEY_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-\\"
_MARKER = b"REDACTED"
_CONTINUED = "(continued)"


class ChunkScrubber:
    """Collects reads and gives them back scrubbed, in order, with their times.

    Args:
        scan: finds the secrets in bytes (sorted, disjoint :class:`Hit` spans).
        batch: bytes collected before a scan (>= 1).
        hold_min: bytes always held back at the end of a batch.

    Attributes:
        hits: the number of replacements so far.
        rules: replacements by rule id so far.
    """

    def __init__(self, scan: Callable[[bytes], list[Hit]], *, batch: int = BATCH, hold_min: int = _HOLD_MIN) -> None:
        self._scan = scan
        self._batch = max(1, batch)
        self._hold_min = max(_HOLD_MIN, hold_min)
        self._hold_max = max(_HOLD_MAX, self._hold_min)
        self._pending: list[tuple[float, bytes]] = []
        self._size = 0
        self._context = b""
        self._rest: int | None = None
        self.hits = 0
        self.rules: Counter[str] = Counter()

    def feed(self, t: float, data: bytes) -> list[tuple[float, bytes]]:
        """Add one read (``data`` that arrived at ``t`` seconds); returns the reads now final."""
        self._pending.append((t, data))
        self._size += len(data)
        if self._size < self._batch:
            return []
        return self._release(final=False)

    def close(self) -> list[tuple[float, bytes]]:
        """The end of the body: returns every read still held back, scrubbed."""
        return self._release(final=True)

    def _release(self, *, final: bool) -> list[tuple[float, bytes]]:
        if not self._pending:
            return []
        base = len(self._context)
        joined = b"".join([self._context, *(d for _, d in self._pending)])  # one copy
        ends = list(itertools.accumulate((len(d) for _, d in self._pending), initial=base))[1:]
        spans: list[Hit] = []
        if self._rest is not None:  # the rest of a secret cut at the previous batch's end: no second marker
            rest_end = len(joined) - len(joined[base:].lstrip(_KEY_CHARS)) if self._rest < 0 else base + self._rest
            if rest_end > base:
                spans.append(Hit(base, rest_end, _CONTINUED))
        for hit in self._scan(joined):
            if hit.end > base and not (spans and hit.start < spans[-1].end):
                spans.append(Hit(max(hit.start, base), hit.end, hit.rule if hit.start >= base else _CONTINUED))
        if final:
            boundary, rest = len(joined), None
        else:
            boundary, spans, rest = self._boundary(joined, base, ends, spans)
        if boundary == base:
            return []  # nothing final yet
        self._rest = rest
        out: list[tuple[float, bytes]] = []
        start = base
        for (t, data), end in zip(self._pending, ends):
            if end > boundary:
                break
            piece = self._apply(data, start, spans)
            if piece:
                out.append((t, piece))
            start = end
        self._pending = self._pending[sum(1 for e in ends if e <= boundary) :]
        self._context = joined[max(0, boundary - _CONTEXT) : boundary]
        self._size = len(joined) - boundary
        return out

    def _boundary(
        self, joined: bytes, base: int, ends: list[int], spans: list[Hit],
    ) -> tuple[int, list[Hit], int | None]:
        """The end of the last read that may be released, the spans in it, and what is left of a secret
        cut there (bytes, or -1: the run of key characters that follows; None: none is cut)."""
        floor, hold = self._hold_point(joined, base)

        def read_end_before(point: int) -> int:
            return max((e for e in ends if e <= point), default=base)

        while True:
            boundary = read_end_before(hold)
            crossing = next((h for h in spans if h.start < boundary < h.end), None)
            if crossing is None:
                return boundary, [h for h in spans if h.end <= boundary], None
            if crossing.start >= floor or crossing.start >= boundary:
                hold = crossing.start  # keep the whole secret for the next scan
                continue
            # Longer than may be held back: scrubbed in pieces, the rest as a run of key characters.
            kept = [h for h in spans if h.end <= boundary]
            rest = crossing.end - boundary if crossing.end <= hold else -1  # -1: it may go on
            return boundary, [*kept, Hit(crossing.start, boundary, crossing.rule)], rest

    def _hold_point(self, joined: bytes, base: int) -> tuple[int, int]:
        """Where the bytes a secret could still continue in begin, and the least that may be released."""
        size = len(joined)
        floor = max(base, size - self._hold_max)
        hold = min(size - self._hold_min, len(joined.rstrip(_KEY_CHARS)))
        block = joined.rfind(b"-----BEGIN", max(base, size - _HOLD_BLOCK))
        if block >= 0 and joined.find(b"-----END", block) < 0:  # a PEM block may go on for a while
            floor, hold = max(base, size - _HOLD_BLOCK), min(hold, block)
        return floor, max(floor, hold)

    def _apply(self, data: bytes, offset: int, spans: list[Hit]) -> bytes:
        end = offset + len(data)
        pieces, pos = [], offset
        for hit in spans:
            if hit.end <= offset or hit.start >= end:
                continue
            pieces.append(data[pos - offset : max(hit.start, pos) - offset])
            if hit.start >= offset and hit.rule != _CONTINUED:
                pieces.append(_MARKER)
                self.hits += 1
                self.rules[hit.rule] += 1
            pos = min(hit.end, end)
        pieces.append(data[pos - offset :])
        return b"".join(pieces)
