"""Steps for reconnecting clients: ``event-ids`` (event stage) and ``drop-and-resume`` (transport).

Together they make the preset ``drop-and-resume``: every event gets an id, the stream ends
after N events, and a reconnect with ``Last-Event-ID`` gets the rest (:mod:`ssemock.resume`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..cassette import End
from ..plan import Plan
from .base import MAX_COUNT, MAX_RETRY_MS, Field, LineStep, Step, choice, integer, register
from .text import Block, Line, field_line, map_blocks, parse_field

__all__ = ["DropAndResume", "EventIds"]

@register
@dataclass
class EventIds(LineStep):
    """Give every event an ``id`` (its position, from 1) and, optionally, the first one a ``retry``.

    YAML::

        - event-ids: {}                  # id: 1, id: 2, … where an event has no id of its own
        - event-ids: {retry_ms: 200}     # and "retry: 200" in the first event

    Fields: ``retry_ms`` (milliseconds a client waits before reconnecting, 0 to 3,600,000;
    default null: no ``retry`` field added). An event that sets its own ``id`` keeps it.
    The field lines go just before the blank line that ends each event, with its line end.
    """

    retry_ms: int | None = None

    name: ClassVar[str] = "event-ids"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {"retry_ms": integer(0, MAX_RETRY_MS, optional=True)}

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        given = 0

        def number(index: int, block: Block) -> list[Line]:
            nonlocal given
            names = {f[0] for f in map(parse_field, (ln.text for ln in block.lines)) if f}
            blank = block.lines[-1]
            extra = []
            if "id" not in names:
                extra.append(Line(field_line("id", str(index + 1)), blank.eol, blank.chunk))
                given += 1
            if index == 0 and self.retry_ms is not None:
                extra.append(Line(field_line("retry", str(self.retry_ms)), blank.eol, blank.chunk))
            return [*block.lines[:-1], *extra, blank]

        out = map_blocks(lines, number, plan.charge)
        retry = f", retry {self.retry_ms} ms" if self.retry_ms is not None else ""
        plan.notes.append(f"event-ids: {given} event(s) numbered{retry}")
        return out


@register
@dataclass
class DropAndResume(Step):
    """End the stream after N events, keeping the whole of it for a ``Last-Event-ID`` reconnect.

    YAML::

        - drop-and-resume: {after_events: 1}              # clean end after the first event
        - drop-and-resume: {after_events: 3, how: cut}    # FIN without the chunked terminator

    Fields: ``after_events`` (events sent before the end, 1 to 100,000; default 1; a stream with
    no more events is sent whole), ``how``: ``clean`` (default: the HTTP body ends normally, as
    a server that closes streams to be polled does), ``cut`` (connection closed without the
    chunked terminator) or ``reset`` (TCP RST). A ``GET`` that then sends ``Last-Event-ID``
    gets the events after that one, once, from the same stream (see :mod:`ssemock.resume`);
    without ids (``event-ids``) a client has nothing to resume from.
    """

    after_events: int = 1
    how: str = "clean"

    name: ClassVar[str] = "drop-and-resume"
    stage: ClassVar[str] = "transport"
    phase: ClassVar[int] = 0  # before the other transport faults: they apply to the reconnect's stream too
    fields: ClassVar[dict[str, Field]] = {
        "after_events": integer(1, MAX_COUNT),
        "how": choice("clean", "cut", "reset"),
    }

    def apply(self, plan: Plan) -> None:
        ends = plan.event_offsets()
        if len(ends) <= self.after_events:
            plan.notes.append(f"drop-and-resume: {len(ends)} event(s), nothing dropped")
            return
        whole = plan.response
        plan.resume_body = dataclasses.replace(whole, headers=list(whole.headers), chunks=list(whole.chunks),
                                               end=End(whole.end.t, whole.end.how))
        plan.cut_body(ends[self.after_events - 1])
        plan.response.end = End(plan.response.chunks[-1].t if plan.response.chunks else 0.0, self.how)
        plan.notes.append(f"drop-and-resume: {self.how} end after {self.after_events} of {len(ends)} event(s)")
