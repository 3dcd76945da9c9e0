"""Chunk-stage steps: timing and re-fragmentation of the body (design §2, §6).

Fragmenting keeps every recorded chunk boundary and adds more (``buffer`` mode
regroups the body instead). Fragments of one recorded chunk share its time; the
server paces them (:mod:`ssemock.pacing`: each write waits until the client has read the one
before, or ``pace`` seconds where its reads cannot be seen; at every timing scale) so that each
arrives as its own read, within a pacing budget per response: past it, only the
boundaries that break readers are made (:mod:`.boundaries`).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ..cassette import Chunk
from ..errors import ScenarioError
from ..limits import DEFAULT_BUDGET, DEFAULT_PACE, MAX_BUDGET, MAX_PACE
from ..plan import Plan, split_at
from .base import MAX_BYTES, MAX_COUNT, Field, Step, choice, integer, integers, number, register
from .boundaries import keep_within

__all__ = ["DEFAULT_BUDGET", "DEFAULT_PACE", "MAX_BUDGET", "MAX_CHUNKS", "Fragment", "TimingStep", "regroup"]

MAX_FACTOR = 100.0
"""Largest ``timing.factor``: recorded gaps at most a hundred times longer."""
MAX_CHUNKS = MAX_COUNT
"""Most chunks ``fragment`` makes of one response; past it the rest of the body is left as recorded."""
_CONTINUATION = re.compile(rb"[\x80-\xbf]")
_CRLF = re.compile(rb"\r\n")
_LINE = re.compile(rb"[^\r\n]+")


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
    recorded start; 0 to 3600). The end of the stream (the close) moves with the chunks: right
    after the last chunk for none, fixed and jitter, the recorded tail scaled for scale.
    Timing runs before ``fragment`` whatever the order written (a buffer is sent when its last
    byte is due under the new timing).
    """

    mode: str = "recorded"
    factor: float = 1.0
    interval: float = 0.0
    first_byte: float | None = None

    name: ClassVar[str] = "timing"
    stage: ClassVar[str] = "chunk"
    phase: ClassVar[int] = 0  # before any fragmentation, in any written order: buffers see the new times
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {
        "mode": choice("recorded", "none", "scale", "fixed", "jitter"),
        "factor": number(0, MAX_FACTOR),
        "interval": number(0),
        "first_byte": number(0, optional=True),
    }
    by_mode: ClassVar[dict[str, tuple[str, ...]]] = {
        "recorded": (), "none": (), "scale": ("factor",), "fixed": ("interval",), "jitter": ("interval",)}

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
        last = resp.chunks[-1].t + shift if resp.chunks else resp.start
        tail = max(resp.end.t + shift - last, 0.0)  # the recorded wait between the last chunk and the end
        resp.chunks = [Chunk(max(t, resp.start), c.data) for t, c in zip(times, resp.chunks)]
        moved = max(times[-1], resp.start) if times else resp.start
        tail *= {"recorded": 1.0, "scale": self.factor}.get(self.mode, 0.0)  # the end moves with the chunks
        resp.end.t = moved + tail
        resp.timed = True
        if plan.timing_scale == 0:
            plan.ineffective.append(f"{self.name}: no effect at timing scale 0 (every recorded time is scaled to 0)")

    def note(self) -> str:
        gaps = {"recorded": "recorded gaps", "none": "no gaps", "scale": f"recorded gaps x {self.factor:g}",
                "fixed": f"{self.interval:g} s between chunks",
                "jitter": f"seeded gaps of 0 to {self.interval:g} s"}[self.mode]
        first = "" if self.first_byte is None else f", headers after {self.first_byte:g} s"
        return f"timing: {gaps}{first} (recorded time, scaled by the timing scale)"


_SEEDED = {"random": " of seeded sizes", "crlf": " (cut between every CR and LF)",
           "utf8": " (cut inside every multi-byte character)"}


@register
@dataclass
class Fragment(Step):
    """Split the body into more chunks, each written (and flushed) on its own.

    YAML::

        - fragment: {mode: bytes, size: 1}          # every byte its own chunk (within the budget)
        - fragment: {mode: random, min: 1, max: 16} # seeded random sizes
        - fragment: {mode: utf8}                    # between the bytes of every multi-byte character
        - fragment: {mode: crlf}                    # between every CR and LF
        - fragment: {mode: lines}                   # every line cut once, at a seeded point inside it
        - fragment: {mode: buffer, size: 4096}      # regrouped into 4 KiB buffers, as a buffering proxy
        - fragment: {mode: offsets, offsets: [5, 17]}
        - fragment: {mode: coalesce}                # the whole body as one chunk

    Fields: ``mode``, ``size`` (bytes, for ``bytes`` and ``buffer``), ``min`` / ``max``
    (bytes, for ``random``), ``offsets`` (at most 100,000 body byte offsets, for
    ``offsets``), ``pace`` (seconds between two writes where the client's reads cannot be
    seen, at every timing scale; 0 to 60, default 0.002; 0 writes the chunks back to back),
    ``budget`` (the most pacing one response gets, in seconds; 0 to 600, default 2). Sizes
    and offsets are 1 to 64 MiB.

    Modes: ``lines`` cuts every line of at least two bytes once, at a seeded point
    strictly inside its text, as a re-chunking proxy does; ``buffer`` drops the recorded
    boundaries and regroups the body into ``size``-byte chunks (the last one shorter),
    each sent when its last byte was recorded, as a buffering proxy or compressor does.
    Every other mode keeps the recorded boundaries and adds its cuts.

    **Budget.** Each new boundary inside a recorded chunk costs ``pace`` seconds. When the
    cuts asked for would cost more than ``budget`` (with the boundaries already made by
    earlier steps), only the boundaries that break readers are made (see
    :mod:`ssemock.scenario.boundaries`: inside a UTF-8 character, between CR and LF,
    around the blank line that ends an event, inside a ``data:`` value), one per
    character, CRLF, event or line, thinned evenly if still too many; the other cuts are
    not made (written back to back they would reach a reader merged anyway), and the
    journal says so. ``budget`` is ignored when ``pace`` is 0, and by ``buffer`` (one
    boundary per ``size`` bytes: 1 MiB in 4 KiB buffers is 256 of them). A response is split into
    at most 100,000 chunks: past that, the rest of the body keeps its recorded chunks.
    """

    mode: str = "bytes"
    size: int = 1
    min: int = 1
    max: int = 16
    offsets: list[int] = field(default_factory=list)
    pace: float = DEFAULT_PACE
    budget: float = DEFAULT_BUDGET

    name: ClassVar[str] = "fragment"
    stage: ClassVar[str] = "chunk"
    fields: ClassVar[dict[str, Field]] = {
        "mode": choice("bytes", "random", "utf8", "crlf", "lines", "buffer", "offsets", "coalesce"),
        "size": integer(1, MAX_BYTES, in_bytes=True),
        "min": integer(1, MAX_BYTES, in_bytes=True),
        "max": integer(1, MAX_BYTES, in_bytes=True),
        "offsets": integers(1),
        "pace": number(0, MAX_PACE),
        "budget": number(0, MAX_BUDGET),
    }
    by_mode: ClassVar[dict[str, tuple[str, ...]]] = {
        "bytes": ("size",), "buffer": ("size",), "random": ("min", "max"), "offsets": ("offsets",), "utf8": (),
        "crlf": (), "lines": (), "coalesce": ()}

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
            plan.notes.append("fragment: the whole body as one chunk")
            return
        body = resp.body
        buffer = self.mode == "buffer"  # the recorded boundaries go, and buffers keep their size
        room = max(MAX_CHUNKS - (0 if buffer else len(resp.chunks)), 0)
        cuts = list(itertools.islice(self._cuts(body, plan), room + 1))
        if len(cuts) > room:
            cuts = cuts[:room]
            plan.notes.append(f"fragment: split up to byte {cuts[-1] if cuts else 0} only "
                              f"(at most {MAX_CHUNKS} chunks per response)")
        if buffer:
            if len({c.t for c in resp.chunks}) <= 1 or plan.timing_scale == 0:
                plan.ineffective.append(
                    "fragment: buffer changes nothing a client can time: every chunk is due at one time "
                    f"({'timing scale 0' if plan.timing_scale == 0 else 'a recording without timing'}; "
                    "add a timing step such as timing: {mode: fixed, interval: 0.05})")
            resp.chunks = regroup(resp.chunks, cuts)
            plan.notes.append(f"fragment: {len(resp.chunks)} buffers of at most {self.size} bytes, "
                              "each sent when its last byte was recorded")
        else:
            cuts = self._within_budget(body, cuts, resp.chunks, plan)
            resp.chunks = split_at(resp.chunks, cuts)
            if self.mode == "lines":
                plan.notes.append(f"fragment: {len(cuts)} lines cut once each (seeded)")
            else:
                plan.notes.append(f"fragment: {self.mode}, {len(resp.chunks)} chunks{_SEEDED.get(self.mode, '')}")
        plan.pace = max(plan.pace, self.pace)
        if self.pace > 0:  # the largest budget of the steps that pace, in any order
            plan.budget = max(plan.budget or 0.0, self.budget)
        elif plan.budget is None:
            plan.budget = 0.0

    def _within_budget(self, body: bytes, cuts: list[int], chunks: list[Chunk], plan: Plan) -> list[int]:
        """``cuts``, or the ones that matter when pacing them all (and the boundaries between
        ``chunks``) would exceed the budget."""
        pace = max(plan.pace, self.pace)
        if pace <= 0:
            return cuts
        paced = sum(1 for a, b in itertools.pairwise(chunks) if b.t - a.t < pace)  # made by earlier steps
        room = max(int(self.budget / pace + 1e-9) - paced, 0)
        there = set(itertools.accumulate(len(c.data) for c in chunks))
        new = [c for c in cuts if 0 < c < len(body) and c not in there]
        # seeded by the seed alone, so that composed scenarios make the same cuts in any order
        kept = keep_within(body, new, room, random.Random(f"{plan.seed}/{self.name}/budget"))  # noqa: S311
        if kept.asked > len(kept.cuts):
            made = ", ".join(f"{kind} {n}" for kind, n in kept.by_kind.items() if kept.instances.get(kind))
            plan.notes.append(
                f"fragment: {len(kept.cuts)} of {kept.asked} cuts made within the pacing budget of "
                f"{self.budget:g} s at {pace:g} s ({made or 'none that matters'}); the other cuts are not made"
            )
        return kept.cuts

    def _cuts(self, body: bytes, plan: Plan) -> Iterator[int]:
        """The body offsets where a fragment starts, in increasing order."""
        if self.mode in ("bytes", "buffer"):
            return iter(range(self.size, len(body), self.size))
        if self.mode == "random":
            return self._random_cuts(len(body), plan)
        if self.mode == "utf8":
            # before every continuation byte (0b10xxxxxx): each multi-byte character in single bytes
            return (m.start() for m in _CONTINUATION.finditer(body))
        if self.mode == "crlf":
            return (m.start() + 1 for m in _CRLF.finditer(body))
        if self.mode == "lines":
            return self._line_cuts(body, plan)
        return iter(sorted(self.offsets))

    def _line_cuts(self, body: bytes, plan: Plan) -> Iterator[int]:
        rng = plan.rng(self.name)
        for m in _LINE.finditer(body):
            if m.end() - m.start() >= 2:
                yield rng.randint(m.start() + 1, m.end() - 1)

    def _random_cuts(self, size: int, plan: Plan) -> Iterator[int]:
        rng = plan.rng(self.name)
        pos = 0
        while pos < size:
            pos += rng.randint(self.min, self.max)
            yield pos


def regroup(chunks: list[Chunk], cuts: list[int]) -> list[Chunk]:
    """The body of ``chunks`` cut at ``cuts`` only (increasing body offsets; recorded boundaries dropped).

    Each new chunk takes the time of the recorded chunk holding its last byte: the moment
    a buffering intermediary would have had all of it.
    """
    out: list[Chunk] = []
    pending = bytearray()
    start = 0
    i = 0
    for chunk in chunks:
        end = start + len(chunk.data)
        pos = start
        while i < len(cuts) and cuts[i] <= end:
            if cuts[i] > pos:
                pending += chunk.data[pos - start : cuts[i] - start]
                pos = cuts[i]
            if pending:
                out.append(Chunk(chunk.t, bytes(pending)))
                pending.clear()
            i += 1
        pending += chunk.data[pos - start :]
        start = end
    if pending:
        out.append(Chunk(chunks[-1].t, bytes(pending)))
    return out
