"""Comparing the shape of a recording with the shape of the provider's answer now, in tiers.

Each difference is a :class:`Finding` of one kind, and each kind has one :class:`Tier`
(:data:`KINDS`): **breaking** where a client written against the recording may fail (an event
type or a key it reads is gone or renamed, a value of another type, another status or content type,
a stream that no longer ends cleanly), **changed** where the format moved without removing anything
(new keys and event types, line endings, header names, keep-alive comments, fields, timing beyond
the tolerance), **cosmetic** where only the surface differs (comment text, timing within the
tolerance band, a type no longer seen at a key).

An answer whose status or content type changed is reported by that one finding: the rest of it
(an error body instead of a stream) would only repeat it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .shape import Shape

__all__ = ["KINDS", "Finding", "Tier", "Tolerance", "compare"]


class Tier(enum.IntEnum):
    """How much a finding matters, from least to most (ordered: ``max`` is the worst)."""

    COSMETIC = 1
    CHANGED = 2
    BREAKING = 3

    @property
    def label(self) -> str:
        """The tier's name as printed and given to ``--fail-on``: ``breaking``, ``changed``, ``cosmetic``."""
        return self.name.lower()


KINDS: dict[str, Tier] = {
    "status": Tier.BREAKING,
    "content-type": Tier.BREAKING,
    "end": Tier.BREAKING,
    "event-type-gone": Tier.BREAKING,
    "event-order": Tier.BREAKING,
    "key-removed": Tier.BREAKING,
    "key-renamed": Tier.BREAKING,
    "type-changed": Tier.BREAKING,
    "data-kind": Tier.BREAKING,
    "sentinel-gone": Tier.BREAKING,
    "data-added": Tier.CHANGED,
    "event-type-new": Tier.CHANGED,
    "key-added": Tier.CHANGED,
    "type-added": Tier.CHANGED,
    "line-endings": Tier.CHANGED,
    "header-added": Tier.CHANGED,
    "header-removed": Tier.CHANGED,
    "field-added": Tier.CHANGED,
    "field-removed": Tier.CHANGED,
    "bom": Tier.CHANGED,
    "comments-gone": Tier.CHANGED,
    "comments-new": Tier.CHANGED,
    "sentinel-new": Tier.CHANGED,
    "end-clean": Tier.CHANGED,
    "timing": Tier.CHANGED,
    "comment-text": Tier.COSMETIC,
    "timing-within": Tier.COSMETIC,
    "type-narrowed": Tier.COSMETIC,
}
"""Every kind of finding and its tier (the table of docs/how-to/drift.md)."""


@dataclass(frozen=True)
class Finding:
    """One difference between a recorded answer and the answer now.

    Attributes:
        kind: one of :data:`KINDS` (``key-renamed``, ``line-endings``, ...).
        subject: what it is about: an event type and key path (``message: choices[*].delta.content``),
            a header name, a timing measure; ``""`` for the answer as a whole.
        recorded: the recording's side, as text (``""`` when it had none).
        now: the provider's side now, as text.
        cassette: the cassette file; interaction: its index there; request: ``METHOD /path``
            (set by the runner).
    """

    kind: str
    subject: str
    recorded: str
    now: str
    cassette: str = ""
    interaction: int = -1
    request: str = ""

    @property
    def tier(self) -> Tier:
        """The kind's tier (:data:`KINDS`)."""
        return KINDS[self.kind]

    def line(self) -> str:
        """One line: ``FILE #N METHOD /path: kind SUBJECT: RECORDED -> NOW``, or ``...: kind SUBJECT`` when the
        subject is what appeared or went away (``header-added x-model-region``, ``event-type-gone ping``)."""
        where = f"{self.cassette} #{self.interaction} {self.request}: {self.kind}"
        if self.subject and self.subject in (self.recorded, self.now) and "" in (self.recorded, self.now):
            return f"{where} {self.subject}"
        subject = f" {self.subject}" if self.subject else ""
        return f"{where}{subject}: {self.recorded or '(none)'} -> {self.now or '(none)'}"


@dataclass(frozen=True)
class Tolerance:
    """How far timing may move: by at most ``floor`` seconds it is no finding; by more, within a factor
    ``factor`` (slower or faster) a cosmetic one, beyond it a changed one. ``enabled=False``: no timing."""

    factor: float = 3.0
    floor: float = 0.25
    enabled: bool = True


def compare(recorded: Shape, now: Shape, tolerance: Tolerance = Tolerance()) -> list[Finding]:
    """The findings between ``recorded`` and ``now``, worst tier first (then in the order found)."""
    if recorded.status != now.status:
        return [Finding("status", "", str(recorded.status), str(now.status))]
    if recorded.media_type != now.media_type:
        return [Finding("content-type", "", recorded.media_type, now.media_type)]
    found = [*_ends(recorded, now), *_headers(recorded, now), *_types(recorded, now)]
    for kind in [t for t in recorded.types if t in now.paths]:  # in stream order: the same order every run
        found += _keys(kind, recorded.paths[kind], now.paths[kind])
        found += _kinds(kind, recorded.data_kinds[kind], now.data_kinds[kind])
    if recorded.stream:
        found += _framing(recorded, now)
    if tolerance.enabled:
        found += _timing(recorded, now, tolerance)
    return sorted(found, key=lambda f: -f.tier)


def _ends(recorded: Shape, now: Shape) -> list[Finding]:
    if recorded.end == now.end:
        return []
    return [Finding("end" if recorded.end == "clean" else "end-clean", "", recorded.end, now.end)]


def _headers(recorded: Shape, now: Shape) -> list[Finding]:
    return [Finding("header-removed", name, name, "") for name in sorted(recorded.headers - now.headers)] + [
        Finding("header-added", name, "", name) for name in sorted(now.headers - recorded.headers)
    ]


def _types(recorded: Shape, now: Shape) -> list[Finding]:
    found = [Finding("event-type-gone", t, t, "") for t in recorded.types if t not in now.paths]
    found += [Finding("event-type-new", t, "", t) for t in now.types if t not in recorded.paths]
    common_then = [t for t in recorded.types if t in now.paths]
    common_now = [t for t in now.types if t in recorded.paths]
    if common_then != common_now:
        found.append(Finding("event-order", "", ", ".join(common_then), ", ".join(common_now)))
    return found


def _kinds(kind: str, then: set[str], now: set[str]) -> list[Finding]:
    """JSON data that became text (or the reverse) is breaking; a kind of data added besides is changed."""
    if then == now:
        return []
    return [Finding("data-kind" if then - now else "data-added", kind, _set(then), _set(now))]


def _keys(kind: str, then: dict[str, set[str]], now: dict[str, set[str]]) -> list[Finding]:
    """Key paths of one event type: renamed, removed, added, and types changed at the common ones."""
    found, retyped = [], set()
    for path in sorted(then.keys() & now.keys()):
        old, new = then[path], now[path]
        if not old & new:
            found.append(Finding("type-changed", f"{kind}: {path}", _set(old), _set(new)))
            retyped.add(path)
        elif new - old:
            found.append(Finding("type-added", f"{kind}: {path}", _set(old), _set(new)))
        elif old - new:
            found.append(Finding("type-narrowed", f"{kind}: {path}", _set(old), _set(new)))
    removed = _roots(then.keys() - now.keys(), retyped)
    added = _roots(now.keys() - then.keys(), retyped)
    for old_path, new_path in _renames(removed, added, then, now):
        found.append(Finding("key-renamed", f"{kind}: {_parent(old_path) or '(top)'}", old_path, new_path))
        removed.remove(old_path)
        added.remove(new_path)
    found += [Finding("key-removed", f"{kind}: {p}", _set(then[p]), "") for p in sorted(removed)]
    found += [Finding("key-added", f"{kind}: {p}", "", _set(now[p])) for p in sorted(added)]
    return found


def _roots(paths: set[str], retyped: set[str]) -> set[str]:
    """The paths of ``paths`` whose parent is not in it (one finding for a key and all below it), but those
    under a key whose type changed (that finding says it)."""
    return {p for p in paths if _parent(p) not in paths and not any(_under(p, r) for r in retyped)}


def _renames(
    removed: set[str], added: set[str], then: dict[str, set[str]], now: dict[str, set[str]]
) -> list[tuple[str, str]]:
    """Pairs (removed, added) read as one key renamed: same parent, same types, the same paths below, and
    no other candidate on either side."""

    def signature(path: str, paths: dict[str, set[str]]) -> tuple[str, frozenset[str], frozenset[tuple[str, str]]]:
        below = frozenset((p[len(path) :], _set(t)) for p, t in paths.items() if _under(p, path))
        return _parent(path), frozenset(paths[path]), below

    old = {p: signature(p, then) for p in removed}
    new = {p: signature(p, now) for p in added}
    pairs = []
    for path, sig in sorted(old.items()):
        matches = [q for q, other in new.items() if other == sig]
        if len(matches) == 1 and [p for p, s in old.items() if s == sig] == [path]:
            pairs.append((path, matches[0]))
    return pairs


def _framing(recorded: Shape, now: Shape) -> list[Finding]:
    found = []
    if recorded.line_endings != now.line_endings:
        found.append(Finding("line-endings", "", recorded.line_endings, now.line_endings))
    if recorded.bom != now.bom:
        found.append(Finding("bom", "", "BOM" if recorded.bom else "", "BOM" if now.bom else ""))
    found += [Finding("field-removed", name, name, "") for name in sorted(recorded.fields - now.fields)]
    found += [Finding("field-added", name, "", name) for name in sorted(now.fields - recorded.fields)]
    found += [Finding("sentinel-gone", s, s, "") for s in sorted(recorded.sentinels - now.sentinels)]
    found += [Finding("sentinel-new", s, "", s) for s in sorted(now.sentinels - recorded.sentinels)]
    if recorded.comments and not now.comments:
        found.append(Finding("comments-gone", "", _comments(recorded.comments), ""))
    elif now.comments and not recorded.comments:
        found.append(Finding("comments-new", "", "", _comments(now.comments)))
    elif set(recorded.comments) != set(now.comments):
        found.append(Finding("comment-text", "", _comments(recorded.comments), _comments(now.comments)))
    return found


def _timing(recorded: Shape, now: Shape, tolerance: Tolerance) -> list[Finding]:
    found = []
    measures = (
        ("first byte", recorded.first_byte, now.first_byte),
        ("median gap", recorded.gap(0.5), now.gap(0.5)),
        ("p90 gap", recorded.gap(0.9), now.gap(0.9)),
    )
    for name, then, later in measures:
        if then is None or later is None or abs(later - then) <= tolerance.floor:
            continue
        low, high = sorted((then, later))
        kind = "timing" if high > tolerance.factor * max(low, 1e-6) else "timing-within"
        found.append(Finding(kind, name, f"{then:.3f}s", f"{later:.3f}s"))
    return found


def _parent(path: str) -> str:
    """``choices[*].delta`` for ``choices[*].delta.content``, ``choices`` for ``choices[*]``, ``""`` at the top."""
    cut = max(path.rfind("."), path.rfind("[*]") if path.endswith("[*]") else -1)
    return path[:cut] if cut > 0 else ""


def _under(path: str, root: str) -> bool:
    return path.startswith(root) and path[len(root) : len(root) + 1] in (".", "[")


def _set(types: set[str] | frozenset[str]) -> str:
    return " | ".join(sorted(types))


def _comments(texts: list[str]) -> str:
    shown = ", ".join(repr(t) for t in texts[:3])
    return shown + (f" (+{len(texts) - 3})" if len(texts) > 3 else "")
