"""Which chunk boundaries of an SSE body matter to a reader, and which to keep within a budget.

A boundary is a body offset where a new chunk (one write, hence one read when paced)
begins. Most boundaries of a finely split body only repeat what a neighbour shows; the
ones that break real readers fall in five kinds (:data:`KINDS`):

* ``utf8``  — inside a multi-byte UTF-8 character (a reader decoding each read alone);
* ``crlf``  — between the CR and the LF of a CRLF (a reader seeing two line ends);
* ``blank`` — just before the blank line that dispatches an event (``…}\\n|\\n``: a reader
  splitting each read on ``\\n\\n``);
* ``event`` — just after that blank line (a reader expecting one event per read, or
  reads that start on an event);
* ``data``  — strictly inside the value of a ``data:`` line, i.e. inside its JSON (a reader
  calling ``json.loads`` on each read).

Each instance of a kind (one character, one CRLF, one event, one ``data:`` line) is
represented by one boundary: a seeded choice among the cuts that fall inside it.
"""

from __future__ import annotations

import bisect
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..plan import dispatch_offsets

__all__ = ["KINDS", "Kept", "instances", "keep_within"]

KINDS = ("utf8", "crlf", "blank", "event", "data")
_MULTIBYTE = re.compile(rb"[\xc0-\xff][\x80-\xbf]+")
_CRLF = re.compile(rb"\r\n")
_DATA = re.compile(rb"(?:\A|(?<=[\r\n]))data: ?([^\r\n]*)")


@dataclass
class Kept:
    """The boundaries :func:`keep_within` kept.

    Attributes:
        cuts: the kept body offsets, increasing.
        asked: how many cuts were asked for.
        by_kind: kept boundaries per kind (``utf8``, ``crlf``, ``blank``, ``event``, ``data``).
        instances: how many instances of each kind the body has with at least one cut inside.
    """

    cuts: list[int]
    asked: int
    by_kind: dict[str, int] = field(default_factory=dict)
    instances: dict[str, int] = field(default_factory=dict)


def instances(body: bytes) -> dict[str, list[tuple[int, int]]]:
    """The spans ``(first, last)`` of body offsets (inclusive) where a boundary falls inside
    each instance of each kind (see the module docstring), in body order."""
    out: dict[str, list[tuple[int, int]]] = {
        "utf8": [(m.start() + 1, m.end() - 1) for m in _MULTIBYTE.finditer(body)],
        "crlf": [(m.start() + 1, m.start() + 1) for m in _CRLF.finditer(body)],
        "blank": [],
        "event": [],
        "data": [],
    }
    for end in dispatch_offsets(body):
        before = end - (2 if body[end - 2 : end] == b"\r\n" else 1)
        if before > 0:
            out["blank"].append((before, before))
        if end < len(body):
            out["event"].append((end, end))
    for m in _DATA.finditer(body):
        first, last = m.start(1) + 1, m.end(1) - 1
        if first <= last:
            out["data"].append((first, last))
    return out


def keep_within(body: bytes, cuts: list[int], room: int, rng: random.Random) -> Kept:
    """At most ``room`` of ``cuts`` (increasing body offsets): those at boundaries that matter.

    When ``cuts`` fit in ``room`` they are all kept. Otherwise each instance of each kind
    keeps one cut that falls inside it (seeded choice); if these are still too many, the
    room is shared among the kinds (a kind with few instances keeps them all) and each kind
    keeps evenly spaced instances. Other cuts are dropped.

    Args:
        body: the whole body.
        cuts: candidate boundaries, increasing, each in 1..len(body)-1.
        room: the most boundaries to keep (>= 0).
        rng: the step's seeded generator.

    Returns:
        A :class:`Kept` with the kept cuts in increasing order and counts per kind.
    """
    if len(cuts) <= room:
        return Kept(list(cuts), len(cuts))
    chosen: dict[str, list[int]] = {}
    for kind, spans in instances(body).items():
        picks = []
        for first, last in spans:
            lo, hi = bisect.bisect_left(cuts, first), bisect.bisect_right(cuts, last)
            if lo < hi:
                picks.append(cuts[lo] if hi - lo == 1 else cuts[rng.randrange(lo, hi)])
        chosen[kind] = picks
    counts = {kind: len(picks) for kind, picks in chosen.items()}
    shares = _share(counts, room)
    kept: set[int] = set()
    for kind, picks in chosen.items():
        kept.update(_spread(picks, shares[kind]))
    return Kept(sorted(kept), len(cuts), shares, counts)


def _share(counts: dict[str, int], room: int) -> dict[str, int]:
    """Split ``room`` among kinds: each gets an equal part, a kind needing less gives the rest away."""
    shares = dict.fromkeys(counts, 0)
    left = room
    pending = sorted(counts, key=lambda k: counts[k])
    while pending:
        part = left // len(pending)
        kind = pending.pop(0)
        shares[kind] = min(counts[kind], part)
        left -= shares[kind]
    return shares


def _spread(items: list[int], n: int) -> Iterable[int]:
    """``n`` items of ``items`` spread evenly over it (all of them when ``n >= len(items)``)."""
    if n >= len(items):
        return items
    return (items[i * len(items) // n] for i in range(n))
