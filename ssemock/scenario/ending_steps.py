"""How a stream ends: the byte-stage step ``end-after-comment``.

The other endings reuse the truncation steps: ``disconnect: {from_end: N}`` cuts (or cleanly
ends) the body N bytes before its end, inside the last event; ``drop-final-blank-line``
drops the final line end (``…}\\n``), and with ``line_end: false`` the one before it too
(``…}``). Together they say every ending of a real stream on any recording, with no byte
count worked out per cassette.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..plan import Plan
from .base import Field, LineStep, integer, register, short_text
from .event_steps import _index
from .text import Line, blocks, lines_size

__all__ = ["EndAfterComment"]


@register
@dataclass
class EndAfterComment(LineStep):
    """End the stream with a comment: after the last line, or after N events (the rest dropped).

    YAML::

        - end-after-comment: {text: ping}                             # …, ": ping", blank line, end
        - end-after-comment: {after_events: 2, text: "", line_ends: 1}  # two events, ":", LF, end

    Fields: ``text`` (written ``: TEXT``, at most 256 characters, no CR or LF; an empty text
    writes ``:``; default ``ping``), ``after_events`` (events kept before the comment;
    negative counts from the end; default null: the whole recorded body is kept),
    ``line_ends`` (line ends after the comment: 2 a blank line, 1 one line end, 0 none;
    default 2). The line ends are the stream's own (its first event's). A last recorded line
    without a line end gets one, so that the comment stays a line of its own. The HTTP body
    then ends normally.
    """

    text: str = "ping"
    after_events: int | None = None
    line_ends: int = 2

    name: ClassVar[str] = "end-after-comment"
    fields: ClassVar[dict[str, Field]] = {
        "text": short_text(),
        "after_events": integer(None, optional=True),
        "line_ends": integer(0, 2),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        eol = groups[0].eol if groups else "\n"
        kept = lines
        dispatching = [i for i, b in enumerate(groups) if b.dispatches]
        events = len(dispatching)
        if self.after_events is not None:
            n = _index(self.after_events, events)
            stop = dispatching[n - 1] + 1 if n else 0
            kept, events = [ln for b in groups[:stop] for ln in b.lines], n
        if kept and not kept[-1].eol:
            kept = [*kept[:-1], Line(kept[-1].text, eol, kept[-1].chunk)]
        chunk = kept[-1].chunk if kept else 0
        comment = f": {self.text}" if self.text else ":"
        tail = [Line(comment, eol if self.line_ends else "", chunk)]
        tail += [Line("", eol, chunk)] if self.line_ends == 2 else []
        plan.charge(lines_size(tail), len(tail))
        plan.notes.append(f"end-after-comment: {comment!r} after {events} event(s)")
        return kept + tail
