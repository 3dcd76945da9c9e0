"""The faults of the HTTP/2 layer a plan carries (sans I/O): DATA frame splits, ``RST_STREAM``, ``GOAWAY``,
flow-control starvation.

The scenario steps of :mod:`ssemock.scenario.h2_steps` set them on a :class:`~ssemock.plan.Plan`
(:attr:`~ssemock.plan.Plan.h2`); the HTTP/2 front (:mod:`ssemock.http2`) carries them out as it writes the
stream's DATA frames. Offsets count bytes of the body as sent (after a ``content-encoding`` step).
Error codes are RFC 9113 section 7's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ERROR_CODES", "H2End", "H2Faults"]

ERROR_CODES: dict[str, int] = {
    "NO_ERROR": 0x0,
    "PROTOCOL_ERROR": 0x1,
    "INTERNAL_ERROR": 0x2,
    "FLOW_CONTROL_ERROR": 0x3,
    "SETTINGS_TIMEOUT": 0x4,
    "STREAM_CLOSED": 0x5,
    "FRAME_SIZE_ERROR": 0x6,
    "REFUSED_STREAM": 0x7,
    "CANCEL": 0x8,
    "COMPRESSION_ERROR": 0x9,
    "CONNECT_ERROR": 0xA,
    "ENHANCE_YOUR_CALM": 0xB,
    "INADEQUATE_SECURITY": 0xC,
    "HTTP_1_1_REQUIRED": 0xD,
}
"""The HTTP/2 error codes by name (RFC 9113 section 7)."""


@dataclass(frozen=True)
class H2End:
    """How the stream ends instead of with ``END_STREAM``, once every byte before it was sent.

    Attributes:
        frame: ``RST_STREAM`` (the stream alone) or ``GOAWAY`` (the whole connection, then closed).
        code: the error code (:data:`ERROR_CODES`).
        last_stream: for ``GOAWAY``, ``previous`` (the last stream id the server says it processed is the one
            before this stream: this one was not) or ``this`` (this stream's own id).
    """

    frame: str
    code: int
    last_stream: str = "previous"


@dataclass
class H2Faults:
    """The HTTP/2 faults of one plan.

    Attributes:
        frame_ends: body offsets (bytes) where a DATA frame ends, besides the end of each write: one write
            then goes out as several DATA frames in one TCP write.
        end: how the stream ends (:class:`H2End`), or None: ``END_STREAM`` as usual.
        starve_seconds: with ``starve``, how long the stream stops once the client's flow-control window is
            spent (its ``WINDOW_UPDATE`` frames are not honoured meanwhile).
        starve: flow-control starvation is on.
        starve_after: stop after this many body bytes even if the window allows more (None: only when the
            window is spent).
        steps: the names of the steps that set these faults, for the refusal of an HTTP/1.1 request.
    """

    frame_ends: set[int] = field(default_factory=set)
    end: H2End | None = None
    starve: bool = False
    starve_seconds: float = 0.0
    starve_after: int | None = None
    steps: list[str] = field(default_factory=list)

    def observable(self) -> tuple[object, ...]:
        return (tuple(sorted(self.frame_ends)), self.end, self.starve, self.starve_seconds, self.starve_after)
