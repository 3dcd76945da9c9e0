"""Transport-stage steps: status and headers, delays, stalls, disconnects, framing, encoding.

These run last, on the final bytes, so "after N events" counts the events a
WHATWG parser dispatches from exactly what will be sent. Injected delays are
absolute seconds (the server's timing scale does not shorten a fault).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..cassette import Chunk, End
from ..errors import ScenarioError
from ..limits import bounded, is_integer
from ..plan import ENCODINGS, FRAMINGS, Plan
from ..providers.base import phrase
from . import providers as prov
from .base import (
    MAX_BYTES,
    Field,
    Step,
    anything,
    choice,
    header_map,
    header_value,
    integer,
    number,
    register,
    short_text,
)
from .base import text as text_field
from .event_steps import _index

__all__ = [
    "CUT_FIELDS",
    "HEARTBEAT_DEFAULT",
    "HEARTBEAT_LIMIT",
    "KEEPALIVE_MIN",
    "ContentEncoding",
    "ContentType",
    "Disconnect",
    "FirstByte",
    "Framing",
    "Heartbeat",
    "HttpError",
    "KeepAliveEvery",
    "Stall",
    "check_cut",
    "cut_point",
]

KEEPALIVE_MIN = 0.01
"""Shortest keep-alive period, in seconds (a shorter one would flood the client)."""
HEARTBEAT_DEFAULT = 600.0
"""How long a heartbeat stream stays open after its last event by default, in seconds (10 minutes)."""
HEARTBEAT_LIMIT = 86_400.0
"""Largest ``heartbeat.max_seconds``, in seconds (a day)."""


@register
@dataclass
class HttpError(Step):
    """Answer with an HTTP error instead of the stream.

    YAML::

        - http-error: {status: 429, headers: {retry-after: "2"}}   # the provider's own 429 body
        - http-error: {status: 503, provider: gemini, code: "503", message: Try later}
        - http-error:
            status: 429
            json: {error: {message: Rate limit reached, type: rate_limit_error}}
        - http-error: {status: 502, content_type: text/html, text: "<html>Bad gateway</html>"}

    Fields: ``status`` (200-599, default 500), ``headers`` (added to the content type; names
    are HTTP tokens, values have no CR, LF, NUL or other control character but
    tab), and the body: ``json`` (any JSON body) or ``text`` (a text body), or else the
    provider's own error body for the status, shaped by ``provider`` (auto, recognised from
    the request, or a provider name), ``message`` (default the provider's own wording for the
    status where ssemock knows it, e.g. Anthropic's ``invalid x-api-key`` for 401, else the status's
    reason phrase; at most 65,536 characters), ``type``, ``code`` (string, integer or null), ``choices``
    (each defaulting to the provider's value for the status; see :mod:`ssemock.providers`) and
    ``extra`` (more fields merged into the error object, at most 64 KiB as JSON).
    ``content_type``: a header value; default ``application/json`` for a JSON body,
    ``text/plain; charset=utf-8`` for ``text``.
    The body is sent with a ``Content-Length``, as providers do.
    """

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    json: Any = None
    text: str | None = None
    content_type: str | None = None
    provider: str = "auto"
    message: str | None = None
    type: str | prov.Default = prov.DEFAULT
    code: prov.Code | prov.Default = prov.DEFAULT
    choices: bool | prov.Default = prov.DEFAULT
    extra: dict[str, Any] = field(default_factory=dict)

    name: ClassVar[str] = "http-error"
    stage: ClassVar[str] = "transport"
    fields: ClassVar[dict[str, Field]] = {
        "status": Field("an HTTP status code 200-599 (a final answer: a 1xx one is interim, RFC 9110 section 15.2)",
                        lambda v: is_integer(v) and 200 <= v <= 599, bounded("integer", 200, 599)),
        "headers": header_map(),
        "json": anything(),
        "text": text_field(optional=True),
        "content_type": header_value(optional=True),
        "provider": prov.PROVIDER_FIELD,
        "message": prov.OPTIONAL_MESSAGE_FIELD,
        **prov.ERROR_FIELDS,
    }

    def validate(self, where: str, source: str) -> None:
        if self.json is not None and self.text is not None:
            raise ScenarioError(source, f"{where}.text", "either json or text, not both", self.text)
        shaped = [k for k in ("type", "code", "choices") if not isinstance(getattr(self, k), prov.Default)]
        shaped += ["extra"] * bool(self.extra)
        shaped += ["message"] * (self.message is not None) + ["provider"] * (self.provider != "auto")
        if shaped and (self.json is not None or self.text is not None):
            raise ScenarioError(source, f"{where}.{shaped[0]}",
                                "either a json or text body, or the provider error fields, not both", shaped)

    def describe(self) -> dict[str, Any]:
        return prov.describe_set(self)

    def apply(self, plan: Plan) -> None:
        resp = plan.response
        if self.text is not None:
            body, kind = self.text.encode("utf-8"), "text/plain; charset=utf-8"
        else:
            value = self.json
            if value is None:
                provider = prov.provider_of(plan, self.provider)
                message = self.message or provider.http_messages.get(self.status) or phrase(self.status)
                value = provider.http_error(prov.error_spec(self, message), self.status)
            body, kind = json.dumps(value).encode("utf-8"), "application/json"
        resp.status, resp.reason = self.status, None
        resp.headers = [("Content-Type", self.content_type or kind), *self.headers.items()]
        resp.chunks = [Chunk(resp.start, body)]
        resp.end = End(resp.start, "clean")
        plan.content_encoding = None
        plan.framing = "length"
        plan.notes.append(f"http-error: status {self.status}, {len(body)} byte body")


@register
@dataclass
class ContentType(Step):
    """Set or remove the ``Content-Type`` header.

    YAML::

        - content-type: {value: text/event-stream}                  # no charset
        - content-type: {value: "text/event-stream; charset=utf-8"}
        - content-type: {value: text/plain}
        - content-type: {value: null}                               # no header at all

    Fields: ``value`` (the header value, without CR, LF, NUL or other control
    character but tab; or null to send none).
    """

    value: str | None = "text/event-stream"

    name: ClassVar[str] = "content-type"
    stage: ClassVar[str] = "transport"
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {"value": header_value(optional=True)}

    def apply(self, plan: Plan) -> None:
        plan.set_header("Content-Type", self.value)


@register
@dataclass
class FirstByte(Step):
    """Wait before sending the status line and headers (time to first byte).

    YAML::

        - first-byte: {seconds: 3}

    Fields: ``seconds`` (added to the recorded start; not scaled; 0 to 3600).
    """

    seconds: float = 3.0

    name: ClassVar[str] = "first-byte"
    stage: ClassVar[str] = "transport"
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {"seconds": number(0)}

    def apply(self, plan: Plan) -> None:
        plan.first_byte_delay += self.seconds
        plan.notes.append(f"first-byte: {self.seconds:g} s before the headers")


@register
@dataclass
class Stall(Step):
    """Stop sending for a while after N events, then go on.

    YAML::

        - stall: {after_events: 1, seconds: 5}

    Fields: ``after_events`` (events sent before the stall; 0 = right after the
    headers; negative counts from the end; default 1), ``seconds`` (the length
    of the stall; not scaled; 0 to 3600, default 5).
    """

    after_events: int = 1
    seconds: float = 5.0

    name: ClassVar[str] = "stall"
    stage: ClassVar[str] = "transport"
    fields: ClassVar[dict[str, Field]] = {"after_events": integer(None), "seconds": number(0)}

    def apply(self, plan: Plan) -> None:
        ends = plan.event_offsets()
        n = _index(self.after_events, len(ends))
        index = plan.chunk_at(ends[n - 1]) if n else 0
        plan.pauses[index] = plan.pauses.get(index, 0.0) + self.seconds
        plan.notes.append(f"stall: {self.seconds:g} s after {n} event(s)")


@register
@dataclass
class KeepAliveEvery(Step):
    """Write a comment after every S seconds of silence (wall time), as servers keep idle streams open.

    YAML::

        - keep-alive-every: {seconds: 15, text: ping}     # ": ping" after 15 s without a write
        - keep-alive-every: {seconds: 15, text: "ping - {now}"}  # ": ping - 2026-01-31 12:00:00.123456"

    Fields: ``seconds`` (the silence before a comment; wall time, not scaled; 0.01 to 3600,
    default 15), ``text`` (written ``: TEXT`` + LF + LF; at most 256 characters, no CR or LF;
    default ``ping``; ``{now}`` is replaced by the UTC time of each write, ``2026-01-31 12:00:00.123456``,
    as in ``ping - {now}``). Comments go out while the server waits: before the first event,
    between events, during a ``stall`` and, with ``first-byte``, instead of silence: the
    status line and headers are then sent at once and comments follow until the first
    event (as OpenRouter does). A comment is only written at an event boundary, so the
    events a parser dispatches stay the same; none is written into a body compressed on
    the wire (``content-encoding``), framed by ``Content-Length`` or not ``text/event-stream``.
    With timing scale 0 and no stall or first-byte delay the server never waits, so no
    comment is written. Each comment sent is counted in the journal's ``injected``.
    """

    seconds: float = 15.0
    text: str = "ping"

    name: ClassVar[str] = "keep-alive-every"
    stage: ClassVar[str] = "transport"
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {"seconds": number(KEEPALIVE_MIN), "text": short_text()}

    def replaces(self, plan: Plan) -> None:
        """Say in the plan's "no effect" notes that this step replaces another keep-alive filler."""
        if plan.keepalive_every:
            earlier = "ping-event" if plan.keepalive_comment.startswith(b"event:") else "keep-alive-every"
            plan.ineffective.append(f"{earlier}: no effect, replaced by {self.name}: a stream has one keep-alive "
                                    "filler (comments or ping events), the last step written wins")

    def apply(self, plan: Plan) -> None:
        self.replaces(plan)
        plan.keepalive_every = self.seconds
        plan.keepalive_comment = f": {self.text}\n\n".encode()
        plan.keepalive_now = "{now}" in self.text
        plan.notes.append(f"{self.name}: ': {self.text}' after every {self.seconds:g} s of silence")


@register
@dataclass
class Heartbeat(KeepAliveEvery):
    """Keep-alive comments every S seconds, and after the last event an endless heartbeat.

    YAML::

        - heartbeat: {seconds: 15, text: ping}                  # open until the client leaves (10 min at most)
        - heartbeat: {seconds: 1, max_seconds: 30}

    Fields: ``seconds`` and ``text`` as for ``keep-alive-every`` (which this step includes);
    ``max_seconds``: after the last recorded chunk the stream stays open, sending a comment
    every ``seconds``, until the client leaves or ``max_seconds`` have passed (wall time;
    default 600, at most 86,400, a larger value is refused); the response then ends as
    recorded. The journal's ``injected`` says how the heartbeat ended.
    """

    max_seconds: float = HEARTBEAT_DEFAULT

    name: ClassVar[str] = "heartbeat"
    fields: ClassVar[dict[str, Field]] = {
        **KeepAliveEvery.fields, "max_seconds": number(0, HEARTBEAT_LIMIT),
    }

    def apply(self, plan: Plan) -> None:
        super().apply(plan)
        plan.heartbeat = self.max_seconds
        plan.notes[-1] += f", then up to {self.max_seconds:g} s after the last chunk"


_WHERE_TO_CUT = ("after_events", "after_bytes", "inside_event", "from_end")
CUT_FIELDS: dict[str, Field] = {
    "after_events": integer(None, optional=True),
    "after_bytes": integer(0, optional=True),
    "inside_event": integer(None, optional=True),
    "from_end": integer(0, MAX_BYTES, optional=True, in_bytes=True),
}
"""The fields that say where a stream is cut (exactly one given): :func:`cut_point`."""



@register
@dataclass
class Disconnect(Step):
    """End the response early: after N events, after N bytes, or inside an event.

    YAML::

        - disconnect: {after_events: -2, how: clean}   # a clean end, two events short
        - disconnect: {inside_event: 1, how: cut}      # FIN inside the second event
        - disconnect: {after_bytes: 100, how: reset}   # TCP RST after 100 bytes
        - disconnect: {from_end: 5, how: cut}          # FIN 5 bytes before the end, inside the last event

    Fields: exactly one of ``after_events`` (negative counts from the end),
    ``after_bytes`` (bytes of the decoded body), ``from_end`` (bytes left out at the
    end of the decoded body, 0 to 64 MiB) or ``inside_event`` (0-based
    index of the event cut in the middle of its bytes; clamped to the last
    event); ``how``: ``clean`` (the HTTP body ends normally), ``cut`` (the
    connection closes without the chunked terminator) or ``reset`` (TCP RST).
    """

    after_events: int | None = None
    after_bytes: int | None = None
    inside_event: int | None = None
    from_end: int | None = None
    how: str = "cut"

    name: ClassVar[str] = "disconnect"
    stage: ClassVar[str] = "transport"
    fields: ClassVar[dict[str, Field]] = {**CUT_FIELDS, "how": choice("clean", "cut", "reset")}

    def validate(self, where: str, source: str) -> None:
        check_cut(self, where, source)

    def apply(self, plan: Plan) -> None:
        offset, where = cut_point(plan, self)
        plan.cut_body(offset)
        plan.response.end = End(plan.response.chunks[-1].t if plan.response.chunks else 0.0, self.how)
        plan.notes.append(f"disconnect: {self.how} at byte {offset}, {where}")


def check_cut(step: Step, where: str, source: str) -> None:
    """Raise :class:`ScenarioError` unless exactly one of :data:`CUT_FIELDS` is given."""
    given = [k for k in _WHERE_TO_CUT if getattr(step, k) is not None]
    if len(given) != 1:
        raise ScenarioError(source, where, f"exactly one of {', '.join(_WHERE_TO_CUT)}", given)


def cut_point(plan: Plan, step: Any) -> tuple[int, str]:
    """The body offset where ``step`` cuts the stream (its ``after_events``, ``after_bytes``, ``inside_event``
    or ``from_end``; clamped to the body), and how to say where, for the journal."""
    ends = plan.event_offsets()
    if step.after_bytes is not None:
        offset, where = step.after_bytes, f"after {step.after_bytes} bytes"
    elif step.from_end is not None:
        offset = max(0, len(plan.response.body) - step.from_end)
        where = f"{len(plan.response.body) - offset} bytes before the end"
    elif step.after_events is not None:
        n = _index(step.after_events, len(ends))
        offset, where = (ends[n - 1] if n else 0), f"after {n} event(s)"
    else:
        n = min(_index(step.inside_event or 0, len(ends)), max(len(ends) - 1, 0))
        start = ends[n - 1] if n else 0
        stop = ends[n] if ends else len(plan.response.body)
        offset, where = start + (stop - start) // 2, f"inside event {n} (bytes {start}..{stop})"
    return min(offset, len(plan.response.body)), where


_FRAMED = {
    "chunked": "chunked (Transfer-Encoding: chunked)",
    "length": "length (Content-Length, no Transfer-Encoding)",
    "close": "close (no Transfer-Encoding nor Content-Length: the body ends when the connection closes)",
}


@register
@dataclass
class Framing(Step):
    """How the HTTP body is delimited.

    YAML::

        - framing: {mode: length}   # chunked | length (Content-Length) | close (ends at FIN)

    Fields: ``mode``.
    """

    mode: str = "chunked"

    name: ClassVar[str] = "framing"
    stage: ClassVar[str] = "transport"
    edits_body: ClassVar[bool] = False
    fields: ClassVar[dict[str, Field]] = {"mode": choice(*FRAMINGS)}

    def apply(self, plan: Plan) -> None:
        plan.framing = self.mode
        plan.notes.append(f"framing: {_FRAMED[self.mode]}")


@register
@dataclass
class ContentEncoding(Step):
    """Compress the body on the wire, each chunk flushed on its own (``Z_SYNC_FLUSH``).

    YAML::

        - content-encoding: {coding: gzip}   # gzip | deflate

    Fields: ``coding``. Every chunk decompresses on arrival, so a client that
    decodes incrementally sees each event when it is sent.
    """

    coding: str = "gzip"

    name: ClassVar[str] = "content-encoding"
    stage: ClassVar[str] = "transport"
    fields: ClassVar[dict[str, Field]] = {"coding": choice(*ENCODINGS)}

    def apply(self, plan: Plan) -> None:
        plan.content_encoding = self.coding
        plan.notes.append(f"content-encoding: {self.coding} on the wire, each chunk flushed on its own")
