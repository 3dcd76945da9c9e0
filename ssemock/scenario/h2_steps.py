"""Transport-stage steps of the HTTP/2 layer: DATA frame splits, ``RST_STREAM``, ``GOAWAY``, flow-control
starvation (:class:`~ssemock.h2faults.H2Faults`, carried out by :mod:`ssemock.http2`).

They act on HTTP/2 frames only: a request that came over HTTP/1.x under one of them is answered
``400 ssemock_needs_http2`` naming them (nothing else is sent). Offsets count body bytes as sent.
Error codes are RFC 9113 section 7's names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from ..cassette import End
from ..h2faults import ERROR_CODES, H2End
from ..plan import Plan
from .base import (
    MAX_BYTES,
    MAX_COUNT,
    SPLIT_BY_MODE,
    Field,
    Step,
    check_split,
    choice,
    integer,
    number,
    register,
    split_fields,
)
from .transport_steps import CUT_FIELDS, check_cut, cut_point

__all__ = ["H2Frames", "H2GoAway", "H2Reset", "H2Starve"]

_CODE = choice(*ERROR_CODES)
_CRLF = re.compile(rb"\r\n")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


@register
@dataclass
class H2Frames(Step):
    """Cut the DATA frames at chosen or seeded body offsets, whatever the writes: one write then goes out as
    several DATA frames in one TCP write (the recorded chunks keep their times; a frame also ends at the end
    of each write).

    YAML::

        - h2-frames: {mode: offsets, offsets: [5, 17]}   # frames end at bytes 5 and 17
        - h2-frames: {mode: size, size: 7}               # a frame every 7 bytes
        - h2-frames: {mode: random, min: 1, max: 64}     # seeded random frame sizes
        - h2-frames: {mode: crlf}                        # a frame ends between every CR and LF
        - h2-frames: {mode: utf8}                        # inside every multi-byte UTF-8 character

    Fields: ``mode`` (offsets | size | random | crlf | utf8; default ``size``), ``offsets`` (body offsets in
    bytes, for ``offsets``), ``size`` (bytes, for ``size``; default 1: every byte its own frame), ``min`` /
    ``max`` (bytes, for ``random``: seeded by the server's seed). At most 100,000 cuts; the journal says how
    many were made.
    """

    mode: str = "size"
    offsets: list[int] = field(default_factory=list)
    size: int = 1
    min: int = 1
    max: int = 64

    name: ClassVar[str] = "h2-frames"
    stage: ClassVar[str] = "transport"
    http2_only: ClassVar[bool] = True
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = split_fields(MAX_BYTES)
    by_mode: ClassVar[dict[str, tuple[str, ...]]] = SPLIT_BY_MODE

    def validate(self, where: str, source: str) -> None:
        check_split(self, where, source)

    def apply(self, plan: Plan) -> None:
        body = plan.response.body
        cuts = sorted({c for c in self._cuts(body, plan) if 0 < c < len(body)})[:MAX_COUNT]
        plan.h2_faults(self.name).frame_ends.update(cuts)
        plan.notes.append(f"h2-frames: {self.mode}, {len(cuts)} frame ends inside writes")

    def _cuts(self, body: bytes, plan: Plan) -> list[int]:
        if self.mode == "size":
            return list(range(self.size, len(body), self.size))[:MAX_COUNT]
        if self.mode == "random":
            rng, pos, out = plan.rng(self.name), 0, list[int]()
            while pos < len(body) and len(out) < MAX_COUNT:
                pos += rng.randint(self.min, self.max)
                out.append(pos)
            return out
        if self.mode == "crlf":
            return [m.start() + 1 for m in _CRLF.finditer(body)]
        if self.mode == "utf8":
            return [m.start() for m in _CONTINUATION.finditer(body)]
        return list(self.offsets)


class _H2End(Step):
    """A stream that ends with a frame of its own at a cut point (:data:`CUT_FIELDS`)."""

    after_events: int | None
    after_bytes: int | None
    inside_event: int | None
    from_end: int | None
    code: str
    stage: ClassVar[str] = "transport"
    http2_only: ClassVar[bool] = True

    def validate(self, where: str, source: str) -> None:
        check_cut(self, where, source)

    def end(self) -> H2End:
        raise NotImplementedError

    def apply(self, plan: Plan) -> None:
        offset, where = cut_point(plan, self)
        plan.cut_body(offset)
        # the journal's outcome is "reset": the client sees the stream end in error
        plan.response.end = End(plan.response.chunks[-1].t if plan.response.chunks else 0.0, "reset")
        plan.h2_faults(self.name).end = self.end()
        plan.notes.append(f"{self.name}: {self.end().frame} {self.code} at byte {offset}, {where}")


@register
@dataclass
class H2Reset(_H2End):
    """End the stream with ``RST_STREAM`` and a chosen error code, after N events, N bytes or inside an event
    (the bytes before it are sent first; the connection stays open).

    YAML::

        - h2-reset: {after_events: 2, code: INTERNAL_ERROR}
        - h2-reset: {inside_event: 1, code: CANCEL}
        - h2-reset: {after_bytes: 100, code: ENHANCE_YOUR_CALM}

    Fields: exactly one of ``after_events`` (negative counts from the end), ``after_bytes``,
    ``inside_event`` (0-based) or ``from_end`` (as for ``disconnect``); ``code``: an RFC 9113 error code name
    (default ``INTERNAL_ERROR``).
    """

    after_events: int | None = None
    after_bytes: int | None = None
    inside_event: int | None = None
    from_end: int | None = None
    code: str = "INTERNAL_ERROR"

    name: ClassVar[str] = "h2-reset"
    fields: ClassVar[dict[str, Field]] = {**CUT_FIELDS, "code": _CODE}

    def end(self) -> H2End:
        return H2End("RST_STREAM", ERROR_CODES[self.code])


@register
@dataclass
class H2GoAway(_H2End):
    """Send ``GOAWAY`` in the middle of the stream, then close the connection: after N events, N bytes or
    inside an event.

    YAML::

        - h2-goaway: {after_events: 1}                              # NO_ERROR, last stream: the one before
        - h2-goaway: {inside_event: 0, code: INTERNAL_ERROR, last_stream: this}

    Fields: where (as for ``h2-reset``); ``code`` (default ``NO_ERROR``, a graceful shutdown);
    ``last_stream``: ``previous`` (default: the last stream id is the one before this stream, which the
    server thus says it did not process: a client may retry it) or ``this`` (this stream's id: processed, and
    cut by the close).
    """

    after_events: int | None = None
    after_bytes: int | None = None
    inside_event: int | None = None
    from_end: int | None = None
    code: str = "NO_ERROR"
    last_stream: str = "previous"

    name: ClassVar[str] = "h2-goaway"
    fields: ClassVar[dict[str, Field]] = {**CUT_FIELDS, "code": _CODE, "last_stream": choice("previous", "this")}

    def end(self) -> H2End:
        return H2End("GOAWAY", ERROR_CODES[self.code], self.last_stream)


@register
@dataclass
class H2Starve(Step):
    """Flow-control starvation: once the client's flow-control window is spent (or after ``after_bytes``),
    the stream stops and its ``WINDOW_UPDATE`` frames are not honoured for ``seconds``; then it goes on.

    YAML::

        - h2-starve: {seconds: 5}                     # when the window is spent (a client reading slowly)
        - h2-starve: {seconds: 30, after_bytes: 1000} # after 1000 bytes, whatever the window

    Fields: ``seconds`` (0-3600, default 5; not scaled), ``after_bytes`` (optional; without it the stream
    stops only if the client's window runs out, which a client with a large window may never let happen).
    """

    seconds: float = 5.0
    after_bytes: int | None = None

    name: ClassVar[str] = "h2-starve"
    stage: ClassVar[str] = "transport"
    http2_only: ClassVar[bool] = True
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {
        "seconds": number(),
        "after_bytes": integer(0, MAX_BYTES, optional=True, in_bytes=True),
    }

    def apply(self, plan: Plan) -> None:
        faults = plan.h2_faults(self.name)
        faults.starve, faults.starve_seconds, faults.starve_after = True, float(self.seconds), self.after_bytes
