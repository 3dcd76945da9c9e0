"""Transport-stage steps of the TLS layer: records of chosen sizes, a close without ``close_notify``
(:class:`~ssemock.tlsfaults.TLSFaults`, carried out by :mod:`ssemock.edge.tls_writes`).

They act on TLS only: a request that came without TLS (``http://``, h2c) under one of them is answered
``400 ssemock_needs_tls`` naming them (nothing else is sent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..cassette import End
from ..plan import Plan
from ..tlsfaults import MAX_RECORD
from .base import SPLIT_BY_MODE, Field, Step, check_split, register, split_fields
from .transport_steps import CUT_FIELDS, check_cut, cut_point

__all__ = ["TLSClose", "TLSRecords"]


@register
@dataclass
class TLSRecords(Step):
    """Cut the TLS records inside the response's writes: each write goes out as several records (in one TCP
    write); a record also ends at the end of each write. Offsets and sizes count the plaintext the response
    writes to TLS, from its status line on (headers and HTTP/1.1 chunk framing or HTTP/2 frames included).

    YAML::

        - tls-records: {mode: size, size: 7}            # no record holds more than 7 bytes
        - tls-records: {mode: offsets, offsets: [130]}  # a record ends after byte 130 of the response
        - tls-records: {mode: random, min: 1, max: 64}  # seeded random record sizes
        - tls-records: {mode: crlf}                     # a record ends between every CR and LF
        - tls-records: {mode: utf8}                     # inside every multi-byte UTF-8 character

    Fields: ``mode`` (offsets | size | random | crlf | utf8; default ``size``), ``offsets`` (bytes, for
    ``offsets``), ``size`` (bytes, 1 to 16,384, for ``size``; default 1), ``min`` / ``max`` (bytes, 1 to
    16,384, for ``random``: seeded by the server's seed). At most 100,000 records are cut inside writes per
    response (the journal says how many). TLS requests only. Source: RFC 8446 section 5.1 (records of at most
    16,384 bytes, which a receiver reads one at a time).
    """

    mode: str = "size"
    offsets: list[int] = field(default_factory=list)
    size: int = 1
    min: int = 1
    max: int = 64

    name: ClassVar[str] = "tls-records"
    stage: ClassVar[str] = "transport"
    tls_only: ClassVar[bool] = True
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = split_fields(MAX_RECORD)
    by_mode: ClassVar[dict[str, tuple[str, ...]]] = SPLIT_BY_MODE

    def validate(self, where: str, source: str) -> None:
        check_split(self, where, source)

    def apply(self, plan: Plan) -> None:
        tls = plan.tls_faults(self.name)
        tls.records, tls.offsets, tls.size, tls.low, tls.high = (
            self.mode, tuple(self.offsets), self.size, self.min, self.max)
        tls.seed = plan.rng(self.name).getrandbits(64)
        plan.notes.append(f"tls-records: {self.mode}")


@register
@dataclass
class TLSClose(Step):
    """End the response early with a TCP FIN and no TLS ``close_notify`` alert (RFC 8446 section 6.1: a
    client must read such an end as a truncation, not as the end of the data), after the bytes before it
    were sent: after N events, N bytes, inside an event or N bytes before the end.

    YAML::

        - tls-close: {inside_event: 1}    # inside the second event
        - tls-close: {after_events: -1}   # one event short
        - tls-close: {from_end: 0}        # every byte sent, then no close_notify (with framing: close, a
                                          # body that a client cannot tell from a whole one but by TLS)

    Fields: exactly one of ``after_events`` (negative counts from the end), ``after_bytes``, ``inside_event``
    (0-based) or ``from_end`` (as for ``disconnect``). TLS requests only; over HTTP/2 the whole connection
    closes so.
    """

    after_events: int | None = None
    after_bytes: int | None = None
    inside_event: int | None = None
    from_end: int | None = None

    name: ClassVar[str] = "tls-close"
    stage: ClassVar[str] = "transport"
    tls_only: ClassVar[bool] = True
    fields: ClassVar[dict[str, Field]] = dict(CUT_FIELDS)

    def validate(self, where: str, source: str) -> None:
        check_cut(self, where, source)

    def apply(self, plan: Plan) -> None:
        offset, where = cut_point(plan, self)
        plan.cut_body(offset)
        plan.response.end = End(plan.response.chunks[-1].t if plan.response.chunks else 0.0, "cut")
        plan.tls_faults(self.name).close_notify = False
        plan.notes.append(f"tls-close: FIN without close_notify at byte {offset}, {where}")
