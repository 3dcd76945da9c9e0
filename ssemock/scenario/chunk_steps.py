"""Chunk-stage steps: timing and re-fragmentation of the body (design §2, §6).

Fragmenting keeps every recorded chunk boundary and adds more. Fragments of
one recorded chunk share its time; the server paces them ``pace`` seconds apart
(scaled by the timing scale) so that each arrives as its own read.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ..cassette import Chunk
from ..errors import ScenarioError
from .base import MAX_BYTES, MAX_COUNT, Field, Step, choice, integer, integers, number, register
from .plan import Plan, split_at

__all__ = ["DEFAULT_PACE", "MAX_CHUNKS", "Fragment", "TimingStep"]

DEFAULT_PACE = 0.002
"""Seconds between two fragments, by default: enough on a loaded 2-core machine for a
reader in another process to take each one in its own read (see benchmarks/fragment_delivery.py)."""
MAX_FACTOR = 100.0
"""Largest ``timing.factor``: recorded gaps at most a hundred times longer."""
MAX_CHUNKS = MAX_COUNT
"""Most chunks ``fragment`` makes of one response; past it the rest of the body is left as recorded."""
_CONTINUATION = re.compile(rb"[\x80-\xbf]")
_CRLF = re.compile(rb"\r\n")
MAX_PACE = 60.0
"""Largest ``fragment.pace``, in seconds."""


@register
@dataclass
class TimingStep(Step):
    """Timing of the chunks (recorded times, so the server's timing scale applies).

    YAML::

        - timing: {mode: none}                    # no delays at all
        - timing: {mode: scale, factor: 0.5}      # recorded gaps, twice as fast
        - timing: {mode: fixed, interval: 0.05}   # 50 ms between chunks
        - timing: {mode: recorded, first_byte: 2} # recorded, headers after 2 s
        - timing: {mode: jitter, interval: 0.05}  # seeded random gaps in 0..0.05 s

    Fields: ``mode`` (recorded | none | scale | fixed | jitter), ``factor`` (for
    scale, 0 to 100), ``interval`` (seconds, for fixed; the largest gap for
    jitter; 0 to 3600), ``first_byte`` (seconds before the headers, replacing the
    recorded start; 0 to 3600).
    """

    mode: str = "recorded"
    factor: float = 1.0
    interval: float = 0.0
    first_byte: float | None = None

    name: ClassVar[str] = "timing"
    stage: ClassVar[str] = "chunk"
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {
        "mode": choice("recorded", "none", "scale", "fixed", "jitter"),
        "factor": number(0, MAX_FACTOR),
        "interval": number(0),
        "first_byte": number(0, optional=True),
    }

    def apply(self, plan: Plan) -> None:
        resp = plan.response
        shift = 0.0
        if self.first_byte is not None:
            shift = self.first_byte - resp.start
            resp.start = self.first_byte
        times = [c.t + shift for c in resp.chunks]
        if self.mode == "none":
            times = [resp.start] * len(times)
        elif self.mode == "scale":
            times = [resp.start + (t - resp.start) * self.factor for t in times]
        elif self.mode == "fixed":
            times = [resp.start + self.interval * (i + 1) for i in range(len(times))]
        elif self.mode == "jitter":
            rng = plan.rng(self.name)
            now = resp.start
            times = []
            for _ in resp.chunks:
                now += rng.uniform(0, self.interval)
                times.append(now)
        resp.chunks = [Chunk(max(t, resp.start), c.data) for t, c in zip(times, resp.chunks)]
        resp.end.t = max(resp.end.t + shift, times[-1] if times else resp.start)
        resp.timed = True


@register
@dataclass
class Fragment(Step):
    """Split the body into more chunks, each written (and flushed) on its own.

    YAML::

        - fragment: {mode: bytes, size: 1}          # every byte its own chunk
        - fragment: {mode: random, min: 1, max: 16} # seeded random sizes
        - fragment: {mode: utf8}                    # between the bytes of every multi-byte character
        - fragment: {mode: crlf}                    # between every CR and LF
        - fragment: {mode: offsets, offsets: [5, 17]}
        - fragment: {mode: coalesce}                # the whole body as one chunk

    Fields: ``mode``, ``size`` (bytes, for ``bytes``), ``min`` / ``max`` (bytes,
    for ``random``), ``offsets`` (at most 100,000 body byte offsets, for
    ``offsets``), ``pace`` (seconds between fragments of one recorded chunk,
    scaled by the timing scale; 0 to 60, default 0.002). Sizes and offsets are 1
    to 64 MiB. A response is split into at most 100,000 chunks: past that, the
    rest of the body keeps its recorded chunks (and the journal says so).
    """

    mode: str = "bytes"
    size: int = 1
    min: int = 1
    max: int = 16
    offsets: list[int] = field(default_factory=list)
    pace: float = DEFAULT_PACE

    name: ClassVar[str] = "fragment"
    stage: ClassVar[str] = "chunk"
    fields: ClassVar[dict[str, Field]] = {
        "mode": choice("bytes", "random", "utf8", "crlf", "offsets", "coalesce"),
        "size": integer(1, MAX_BYTES),
        "min": integer(1, MAX_BYTES),
        "max": integer(1, MAX_BYTES),
        "offsets": integers(1),
        "pace": number(0, MAX_PACE),
    }

    def validate(self, where: str, source: str) -> None:
        if self.min > self.max:
            raise ScenarioError(source, f"{where}.max", f"a size >= min ({self.min})", self.max)
        if self.mode == "offsets" and not self.offsets:
            raise ScenarioError(source, f"{where}.offsets", "a non-empty list of integers >= 1 (mode offsets)", None)

    def apply(self, plan: Plan) -> None:
        resp = plan.response
        if self.mode == "coalesce":
            if resp.chunks:
                resp.chunks = [Chunk(resp.chunks[-1].t, resp.body)]
            return
        room = max(MAX_CHUNKS - len(resp.chunks), 0)
        cuts = list(itertools.islice(self._cuts(resp.body, plan), room + 1))
        if len(cuts) > room:
            cuts = cuts[:room]
            plan.notes.append(f"fragment: split up to byte {cuts[-1] if cuts else 0} only "
                              f"(at most {MAX_CHUNKS} chunks per response)")
        resp.chunks = split_at(resp.chunks, cuts)
        plan.pace = max(plan.pace, self.pace)

    def _cuts(self, body: bytes, plan: Plan) -> Iterator[int]:
        """The body offsets where a fragment starts, in increasing order."""
        if self.mode == "bytes":
            return iter(range(self.size, len(body), self.size))
        if self.mode == "random":
            return self._random_cuts(len(body), plan)
        if self.mode == "utf8":
            # before every continuation byte (0b10xxxxxx): each multi-byte character in single bytes
            return (m.start() for m in _CONTINUATION.finditer(body))
        if self.mode == "crlf":
            return (m.start() + 1 for m in _CRLF.finditer(body))
        return iter(sorted(self.offsets))

    def _random_cuts(self, size: int, plan: Plan) -> Iterator[int]:
        rng = plan.rng(self.name)
        pos = 0
        while pos < size:
            pos += rng.randint(self.min, self.max)
            yield pos
