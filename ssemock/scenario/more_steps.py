"""More steps: ``copy`` (event stage: copy or rename a recorded JSON field) and ``ping-event``
(transport: an ``event: ping`` on a timer during silence, as Anthropic sends).
"""

from __future__ import annotations

import copy as copying
from dataclasses import dataclass
from typing import Any, ClassVar

from ..limits import string
from ..plan import Plan
from .base import Field, flag, number, register
from .edit_steps import FIRST_FIELD, WHERE_FIELD, _events, _EventStep, _flat, _path, _payload, _selected
from .predicates import MISSING, assign, lookup, parse_path, remove
from .text import Block, Line, blocks, growth
from .transport_steps import KEEPALIVE_MIN, KeepAliveEvery

__all__ = ["ANTHROPIC_PING", "Copy", "PingEvent"]

ANTHROPIC_PING = b'event: ping\ndata: {"type": "ping"}\n\n'
"""Anthropic's ping event (Messages streaming docs: "Ping events": ``event: ping``, data ``{"type": "ping"}``)."""


@register
@dataclass
class Copy(_EventStep):
    """Copy (or, with ``move``, rename) the value of a recorded JSON field into another field.

    YAML::

        - copy: {path: "choices[0].delta.reasoning_content", to: "choices[0].delta.reasoning"}
        - copy: {path: "choices[0].delta.content", to: "choices[0].delta.reasoning", move: true}
        - copy: {where: {type: message_start}, first: 1, path: message.id, to: message.request_id}

    Fields: ``path`` (the JSON path read), ``to`` (the JSON path written; its parent must exist:
    an object gains the key, an array item is replaced), ``move`` (true: ``path`` is removed after
    the copy, a rename; default false), ``where`` and ``first`` as for ``edit``. Events where
    ``path`` is absent are left as they are; the journal counts the events changed and matched.
    """

    path: str = ""
    to: str = ""
    move: bool = False
    where: dict[str, Any] | None = None
    first: int | None = None

    name: ClassVar[str] = "copy"
    fields: ClassVar[dict[str, Field]] = {
        "path": Field("a JSON path such as choices[0].delta.content", lambda v: isinstance(v, str) and bool(v),
                      string(minimum=1)),
        "to": Field("a JSON path such as choices[0].delta.reasoning", lambda v: isinstance(v, str) and bool(v),
                    string(minimum=1)),
        "move": flag(),
        "where": WHERE_FIELD,
        "first": FIRST_FIELD,
    }

    def validate(self, where: str, source: str) -> None:
        _path(self.path, f"{where}.path", source)
        _path(self.to, f"{where}.to", source)
        super().validate(where, source)

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        where = self.predicate("where")
        source, target = parse_path(self.path), parse_path(self.to)
        groups = blocks(lines)
        events = _events(groups)
        views = [v for _, v in events]
        chosen = _selected(views, where, self.first, lambda v: lookup(v.json, source) is not MISSING)
        changed = 0
        for index in chosen:
            value = views[index].take_json()
            found = lookup(value, source)
            if not assign(value, target, copying.deepcopy(found)):
                continue
            if self.move and source != target:
                remove(value, source)
            position = events[index][0]
            old = groups[position]
            new = old.with_data(_payload(None, value))
            plan.charge(*growth(old.lines, new))
            groups[position] = Block(new, old.start)
            changed += 1
        verb = "moved" if self.move else "copied"
        plan.notes.append(f"copy: {self.path} {verb} to {self.to} in {changed} event(s) of {len(chosen)} matched")
        if not chosen:
            plan.ineffective.append(f"copy: no effect, no event has {self.path}")
        return _flat(groups)


@register
@dataclass
class PingEvent(KeepAliveEvery):
    """Write Anthropic's ``event: ping`` (data ``{"type": "ping"}``) after every S seconds of silence.

    YAML::

        - ping-event: {seconds: 5}

    Fields: ``seconds`` (as for ``keep-alive-every``: wall time, 0.01 to 3600, default 15). The
    event goes where a keep-alive comment would (an event boundary, during a stall, a
    ``first-byte`` delay, between slow chunks), and instead of it: a scenario sends pings or
    comments, the last step written wins. Unlike a comment, a client's parser dispatches it.
    """

    name: ClassVar[str] = "ping-event"
    fields: ClassVar[dict[str, Field]] = {"seconds": number(KEEPALIVE_MIN)}

    def apply(self, plan: Plan) -> None:
        self.replaces(plan)
        plan.keepalive_every = self.seconds
        plan.keepalive_comment = ANTHROPIC_PING
        plan.keepalive_now = False
        plan.notes.append(f"{self.name}: 'event: ping' after every {self.seconds:g} s of silence")
