"""Chunk-stage steps: timing and re-fragmentation of the body (design §2, §6).

Fragmenting keeps every recorded chunk boundary and adds more. Fragments of
one recorded chunk share its time; the server paces them ``pace`` seconds apart
(scaled by the timing scale) so that each arrives as its own read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..cassette import Chunk
from ..errors import ScenarioError
from .base import Field, Step, choice, integer, integers, number, register
from .plan import Plan, split_at

__all__ = ["DEFAULT_PACE", "Fragment", "TimingStep"]

DEFAULT_PACE = 0.002
"""Seconds between two fragments, by default: enough on a loaded 2-core machine for a
reader in another process to take each one in its own read (see benchmarks/fragment_delivery.py)."""


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
    scale), ``interval`` (seconds, for fixed; the largest gap for jitter),
    ``first_byte`` (seconds before the headers, replacing the recorded start).
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
        "factor": number(0),
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
    for ``random``), ``offsets`` (body byte offsets, for ``offsets``), ``pace``
    (seconds between fragments of one recorded chunk, scaled by the timing scale;
    default 0.002).
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
        "size": integer(1),
        "min": integer(1),
        "max": integer(1),
        "offsets": integers(1),
        "pace": number(0),
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
        body = resp.body
        resp.chunks = split_at(resp.chunks, self._cuts(body, plan))
        plan.pace = max(plan.pace, self.pace)

    def _cuts(self, body: bytes, plan: Plan) -> list[int]:
        if self.mode == "bytes":
            return list(range(self.size, len(body), self.size))
        if self.mode == "random":
            rng = plan.rng(self.name)
            cuts, pos = [], 0
            while pos < len(body):
                pos += rng.randint(self.min, self.max)
                cuts.append(pos)
            return cuts
        if self.mode == "utf8":
            # before every continuation byte (0b10xxxxxx): each multi-byte character in single bytes
            return [i for i, byte in enumerate(body) if 0x80 <= byte < 0xC0]
        if self.mode == "crlf":
            return [i + 1 for i in range(len(body) - 1) if body[i : i + 2] == b"\r\n"]
        return list(self.offsets)
