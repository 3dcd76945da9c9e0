"""Resuming an event stream after ``Last-Event-ID`` (WHATWG §9.2.4, MCP Streamable HTTP resumability).

A ``GET`` request that carries ``Last-Event-ID: X`` continues a stream after the event whose
``id`` field set ``X``:

1. a stream this server sent recently (the last :data:`MAX_STREAMS`, 256, that had ids, within
   :data:`MAX_BOOK_BYTES`, 64 MiB): the most recent one on the same path that sent ``X``.
   This is how the MCP client resumes a ``POST`` stream (its reconnect is a ``GET`` to the
   same URL, without the body), and how a browser ``EventSource`` resumes a stream cut by
   ``drop-and-resume``: the rest comes from the whole body, not from the part sent before the cut
   (as that stream's scenario made it: the reconnect's own scenario is not applied again);
2. else the stream that the request matches (with its scenario), if one of its events set ``X``;
3. else the answer is 404 ``ssemock_unknown_event_id`` (:class:`~ssemock.refusals.UnknownEventIdError`)
   naming the id (an ``EventSource`` then stops reconnecting; a client sees the fault at once
   instead of a silent replay from the start).

The rest keeps its recorded gaps: the first chunk after the event goes out at once (after the
recorded time from that event to it), the headers at once. Recorded ``id`` and ``retry``
fields are replayed as they are; a recording without ids gets them from the scenario step
``event-ids`` (``id: 1``, ``id: 2``, … by event position), which the preset
``drop-and-resume`` uses. The journal entry of a resumed request has ``resumed``:
``{"after": ID, "events_skipped": N, "retry_ms": MS or null (the last ``retry`` sent before
that event), "waited": SECONDS or null (from the end of the earlier stream to this request,
when this server sent it)}``.

Other methods ignore ``Last-Event-ID`` (the header is an ``EventSource`` and MCP ``GET``
header), and an empty value is no id.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Mapping
from typing import TypedDict

from .cassette import Chunk, End, Response
from .plan import Plan, dispatch_offsets
from .refusals import UnknownEventIdError

__all__ = [
    "LAST_EVENT_ID",
    "MAX_BOOK_BYTES",
    "MAX_ID_LENGTH",
    "MAX_STREAMS",
    "EventMark",
    "ResumeBook",
    "Resumed",
    "Stream",
    "event_marks",
    "requested_id",
    "rest_of",
    "resume",
    "unknown_id_message",
]

LAST_EVENT_ID = "Last-Event-ID"
MAX_STREAMS = 256
"""Streams with ids remembered for resuming, most recent first out last (a ring)."""
MAX_BOOK_BYTES = 64 * 1024 * 1024
"""Body bytes of the streams remembered for resuming (the oldest are forgotten first)."""
MAX_ID_LENGTH = 1024
"""A longer ``Last-Event-ID`` (characters) matches no event: no stream sends such ids."""


class EventMark:
    """One dispatched event of a body: the id it set, where it ends and the retry then in force.

    Attributes:
        index: 0-based position among the body's events.
        event_id: the last event ID at its dispatch (``""`` when none was ever set).
        offset: body offset in bytes just after the blank line that dispatched it.
        retry_ms: the last ``retry`` value (milliseconds) sent up to and including this event, or None.
    """

    __slots__ = ("event_id", "index", "offset", "retry_ms")

    def __init__(self, index: int, event_id: str, offset: int, retry_ms: int | None) -> None:
        self.index = index
        self.event_id = event_id
        self.offset = offset
        self.retry_ms = retry_ms


class Resumed(TypedDict):
    """The journal's ``resumed`` note (see the module docstring)."""

    after: str
    events_skipped: int
    retry_ms: int | None
    waited: float | None


class Stream:
    """A stream sent with event ids (or maybe: a compressed one), kept so that a reconnect can resume it.

    Attributes:
        path: the provider path it answered.
        cassette: the cassette name of its interaction.
        interaction: the interaction's index in that cassette.
        response: the whole response (before a ``drop-and-resume`` cut), shared, never changed.
        ended: loop time (seconds) when its sending ended, or None while it is sent.
    """

    def __init__(
        self, path: str, cassette: str | None, interaction: int | None, response: Response, ended: float | None = None
    ) -> None:
        self.path = path
        self.cassette = cassette
        self.interaction = interaction
        self.response = response
        self.ended = ended
        self._plain: Response | None = None
        self._marks: dict[str, EventMark] | None = None

    @property
    def plain(self) -> Response:
        """:attr:`response` with a gzip/deflate body decoded (computed once, on the first reconnect)."""
        if self._plain is None:
            self._plain = _plain(self.response)
        return self._plain

    @property
    def marks(self) -> dict[str, EventMark]:
        """Its events that set an id, by id (the first event that set each id; computed once)."""
        if self._marks is None:
            self._marks = _first_by_id(event_marks(self.plain.body))
        return self._marks

    @property
    def size(self) -> int:
        """Body bytes held."""
        return sum(len(c.data) for c in self.response.chunks)


class ResumeBook:
    """The last streams sent with event ids, for ``Last-Event-ID`` reconnects.

    At most ``capacity`` streams (default :data:`MAX_STREAMS`, 256) and ``max_bytes`` of their
    bodies (default :data:`MAX_BOOK_BYTES`, 64 MiB; bodies shared with a cassette count too):
    the oldest are forgotten first. Each event stream costs one scan of its body for ``id:``
    once it is sent (measured 0.5 s for 15 MB in 200,000 chunks on a loaded 2-core machine), once
    per recorded response for streams sent as recorded (see :meth:`register`); its events are
    decoded only when a reconnect asks for one.
    """

    def __init__(self, capacity: int = MAX_STREAMS, max_bytes: int = MAX_BOOK_BYTES) -> None:
        self.capacity = capacity
        self.max_bytes = max_bytes
        self.streams: deque[Stream] = deque()
        self.held = 0
        self._scanned: dict[int, tuple[Response, list[Chunk], int, list[tuple[str, str]], bool]] = {}
        """What :meth:`register` found of recorded responses, by ``id(response)``: the response (kept, so
        that its id is not reused), its chunk list, that list's length and its header list then, the verdict;
        at most ``capacity`` responses (the oldest found is forgotten first), all forgotten by :meth:`clear`."""

    def register(
        self, plan: Plan, path: str, cassette: str | None, interaction: int | None, ended: float | None = None,
        *, recorded: bool = False,
    ) -> Stream | None:
        """Remember the stream of ``plan`` (sent, or ended at loop time ``ended``) if it may set ids.

        Called once the stream is sent, so that the scan never delays its first byte. ``recorded``:
        ``plan.response`` is a cassette's own response, sent as recorded (no step applied): whether it
        may set ids is then found once and remembered for the next streams of that response, as long
        as its chunk and header lists are the same objects and the chunks as many (like the match
        index, an edit in place of one chunk or header is not seen; assign a new list instead).

        Returns:
            The remembered :class:`Stream`, or None.
        """
        response = plan.resume_body if plan.resume_body is not None else plan.response
        if not (self._recorded_may_resume(plan) if recorded and response is plan.response
                else _may_resume(plan, response)):
            return None
        stream = Stream(path, cassette, interaction, response, ended)
        if stream.size > self.max_bytes:
            return None
        self.streams.append(stream)
        self.held += stream.size
        while len(self.streams) > self.capacity or self.held > self.max_bytes:
            self.held -= self.streams.popleft().size
        return stream

    def find(self, event_id: str, path: str) -> Stream | None:
        """The most recent stream on ``path`` that sent an event with id ``event_id``, or None."""
        if len(event_id) > MAX_ID_LENGTH:
            return None
        for stream in reversed(self.streams):
            if stream.path == path and event_id in stream.marks:
                return stream
        return None

    def clear(self) -> None:
        """Forget every stream (and what was found of recorded responses)."""
        self.streams.clear()
        self._scanned.clear()
        self.held = 0

    def _recorded_may_resume(self, plan: Plan) -> bool:
        """:func:`_may_resume` of a plan sending a recorded response as it is, found once per
        response (see :meth:`register`)."""
        response = plan.response
        key = id(response)
        seen = self._scanned.get(key)
        chunks, headers = response.chunks, response.headers
        if seen is not None and seen[1] is chunks and seen[2] == len(chunks) and seen[3] is headers:
            return seen[4]
        verdict = _may_resume(plan, response)
        if seen is None and len(self._scanned) >= self.capacity:
            del self._scanned[next(iter(self._scanned))]  # the oldest found
        self._scanned[key] = (response, chunks, len(chunks), headers, verdict)
        return verdict


def _may_resume(plan: Plan, response: Response) -> bool:
    """Whether the stream of ``plan``, whose whole body is ``response``'s, may be resumed: an event
    stream that may set ids (a compressed body is not scanned: it may)."""
    return plan.is_event_stream and (response.header("content-encoding") is not None
                                     or _may_set_ids(response.chunks))


def _may_set_ids(chunks: list[Chunk]) -> bool:
    """Whether the body may hold an ``id`` field with a value: ``id:`` somewhere, chunk borders included."""
    return b"id:" in b"".join(map(_DATA, chunks))  # one pass in C; per chunk in Python is 7 times slower


_DATA = operator.attrgetter("data")


def requested_id(method: str, headers: Mapping[str, str]) -> str | None:
    """The ``Last-Event-ID`` of a ``GET`` request, or None when there is none to honour.

    An empty value is no id (WHATWG §9.2.4: a user agent sends the header only when its last
    event ID is not empty), so the stream is sent from its start.
    """
    if method != "GET":
        return None
    return headers.get(LAST_EVENT_ID) or None


def event_marks(body: bytes) -> list[EventMark]:
    """Every dispatched event of ``body``, with the id in force, its end offset and the retry in force."""
    from .sse import Event, decode  # a reconnect decodes the stream: imported on the first one

    events = [e for e in decode(body) if isinstance(e, Event)]
    marks: list[EventMark] = []
    retry: int | None = None
    for index, (event, offset) in enumerate(zip(events, dispatch_offsets(body))):
        retry = event.retry if event.retry is not None else retry
        marks.append(EventMark(index, event.last_event_id, offset, retry))
    return marks


def _first_by_id(marks: list[EventMark]) -> dict[str, EventMark]:
    by_id: dict[str, EventMark] = {}
    for mark in marks:
        if mark.event_id:
            by_id.setdefault(mark.event_id, mark)
    return by_id


def _plain(response: Response) -> Response:
    """``response`` with a recorded gzip/deflate body decoded (a copy), else itself."""
    if response.header("content-encoding") is None:
        return response
    copy = Plan.of(response)
    copy.decode_content()
    return copy.response


def rest_of(response: Response, mark: EventMark) -> Response:
    """The part of ``response`` after the event ``mark``: its chunks from ``mark.offset`` on.

    Times move back by the time of the chunk that ended that event, so the rest keeps its
    recorded gaps and its headers go out at once; status, headers and ending are kept.
    """
    size = 0
    shift = response.start
    rest: list[Chunk] = []
    for chunk in response.chunks:
        end = size + len(chunk.data)
        if end <= mark.offset:
            shift = chunk.t
        elif size >= mark.offset:
            rest.append(Chunk(max(chunk.t - shift, 0.0), chunk.data))
        else:
            shift = chunk.t
            rest.append(Chunk(0.0, chunk.data[mark.offset - size :]))
        size = end
    return Response(
        status=response.status, reason=response.reason, headers=list(response.headers), chunks=rest,
        start=0.0, end=End(max(response.end.t - shift, 0.0), response.end.how), timed=response.timed,
    )


def resume(plan: Plan, event_id: str, *, stream: Stream | None = None, now: float | None = None) -> Resumed | None:
    """Make ``plan`` send only what follows the event that set ``event_id``.

    Args:
        plan: the plan of the matched stream (its ``resume_body`` used when a step cut it).
        event_id: the ``Last-Event-ID`` received.
        stream: the earlier stream found in a :class:`ResumeBook`; its body replaces the plan's.
        now: loop time (seconds) the request arrived, for ``waited`` (with ``stream``).

    Returns:
        The journal note, or None (``plan`` unchanged) when no event of the stream set that id.
    """
    if stream is None and plan.resume_body is None:
        plan.decode_content()  # a recorded gzip body: the ids are in the decoded bytes; re-encoded on the wire
    response = stream.plain if stream is not None else (plan.resume_body or plan.response)
    marks = stream.marks if stream is not None else _first_by_id(event_marks(response.body))
    mark = marks.get(event_id) if len(event_id) <= MAX_ID_LENGTH else None
    if mark is None:
        return None
    plan.response = rest_of(response, mark)
    plan.resume_body = None
    plan.pauses = {}
    plan.notes.append(f"resumed after event {mark.index} (id {event_id!r}): {mark.index + 1} event(s) skipped")
    ended = stream.ended if stream is not None else None
    waited = round(now - ended, 6) if now is not None and ended is not None else None
    return Resumed(after=event_id, events_skipped=mark.index + 1, retry_ms=mark.retry_ms, waited=waited)


def unknown_id_message(event_id: str) -> str:
    """The 404 message for a ``Last-Event-ID`` that no stream sent (:class:`~ssemock.refusals.UnknownEventIdError`)."""
    return str(UnknownEventIdError(event_id))
