"""Event-stage steps that edit a recording event by event: ``insert``, ``edit``, ``drop``, ``replace``.

They work on the dispatched events of any ``text/event-stream`` recording, selected by
:class:`~.predicates.Where` predicates (index, type, JSON path value, text contained) and
changed through JSON paths (:mod:`.predicates`). The terminal events (``[DONE]``, Anthropic
``message_stop``, Responses ``response.completed``) stay recognised: ``insert: {at: end}``
goes before them.

Bounds: an inserted or replacing payload is at most :data:`MAX_PAYLOAD` (1 MiB) of JSON or
text and nests at most 128 levels; ``edit`` sets or deletes at most :data:`MAX_PATHS` (64)
paths of at most 32 steps, its ``set`` values at most 1 MiB of JSON together; ``first`` (how
many matching events are changed) is at most 1,000,000 (the most events a response holds).
What a step writes into every matching event counts against the bound on what a scenario adds
to one response (:meth:`~.plan.Plan.charge`, 256 MiB by default). Every step says in the
journal's ``injected`` what it did, and how many events matched.

Edited payloads are written back compact (``{"a":1,"b":2}``, UTF-8 unescaped); the events
that are not touched keep their recorded bytes.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import ScenarioError
from ..limits import MAX_ITEMS, MAX_JSON_DEPTH, Field, bounded, is_integer, nullable, plain_json_problem, string
from ..plan import Plan
from ..providers import NAMES
from .base import LineStep, anything, integer, register, short_text
from .event_steps import _index
from .predicates import PATH_RULE, WHERE_KEYS, EventView, Path, Where, assign, parse_path, remove, terminal_start
from .providers import provider_of
from .text import Block, Line, blocks, field_line, growth, lines_size, parse_field

__all__ = ["MAX_PATHS", "MAX_PAYLOAD", "Drop", "Edit", "Insert", "Replace"]

MAX_PAYLOAD = 1024 * 1024
"""Largest inserted or replacing payload (``data`` or ``text`` in UTF-8, ``json`` once serialised), in bytes: 1 MiB."""
MAX_PATHS = 64
"""Most paths one ``edit`` step sets or deletes."""
AT_WORDS = ("end", "after-terminal")


def _mapping(what: str) -> Field:
    return Field(what, lambda v: v is None or isinstance(v, Mapping),
                 {"type": ["object", "null"], "propertyNames": {"enum": list(WHERE_KEYS)}})


WHERE_FIELD = _mapping("a mapping of conditions: index, type, path, equals, contains, terminal")
FIRST_FIELD = integer(1, MAX_ITEMS, optional=True)
EVENT_FIELDS: dict[str, Field] = {
    "type": short_text(optional=True),
    "data": Field(f"a string of at most {MAX_PAYLOAD} bytes of UTF-8 without CR (LF starts another data line)",
                  lambda v: v is None or (isinstance(v, str) and _utf8_within(v) and "\r" not in v),
                  nullable(string(maximum=MAX_PAYLOAD, without="\r"))),
    "json": anything(),
    "id": short_text("\r\n\0", optional=True),
}


def _where(spec: Mapping[str, Any] | None, where: str, source: str) -> Where | None:
    return None if spec is None else Where.build(spec, where, source)


def _payload(data: str | None, value: Any) -> str:
    return data if data is not None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _check_payload(step: Insert | Replace, where: str, source: str) -> None:
    """Exactly one of ``data`` and ``json``; ``json`` a JSON value within bounds. Raises :class:`ScenarioError`."""
    if step.data is not None and step.json is not None:
        raise ScenarioError(source, f"{where}.json", "either data or json, not both", None)
    if step.data is None and step.json is None:
        raise ScenarioError(source, where, "data (a string) or json (a JSON value)", None)
    if step.json is not None:
        _check_json(step.json, f"{where}.json", source)


def _utf8_within(text: str) -> bool:
    """``text`` encodes to UTF-8 (no lone surrogate) in at most :data:`MAX_PAYLOAD` bytes."""
    if len(text) > MAX_PAYLOAD:
        return False
    try:
        return text.isascii() or len(text.encode("utf-8")) <= MAX_PAYLOAD
    except UnicodeEncodeError:
        return False


def _json_size(value: Any) -> int:
    """Bytes of ``value`` written compact (as :func:`_payload` writes it), in UTF-8."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _check_json(value: Any, where: str, source: str) -> None:
    """``value`` is plain JSON of at most :data:`MAX_PAYLOAD` bytes and 128 levels
    (:func:`~ssemock.limits.plain_json_problem`), else ScenarioError."""
    problem = plain_json_problem(value, max_bytes=MAX_PAYLOAD, max_depth=MAX_JSON_DEPTH)
    if problem is not None:
        raise ScenarioError(source, where, f"a JSON value (mappings, lists, strings, finite numbers, true/false/null) "
                                           f"of at most {MAX_PAYLOAD} bytes (1 MiB) and {MAX_JSON_DEPTH} levels: "
                                           f"{problem}", None)


def _events(groups: list[Block]) -> list[tuple[int, EventView]]:
    """The dispatched events of ``groups``: (block index, view)."""
    out: list[tuple[int, EventView]] = []
    for position, block in enumerate(groups):
        if block.dispatches:
            out.append((position, EventView(len(out), block.event_type, block.data or "")))
    return out


def _selected(views: list[EventView], where: Where | None, first: int | None,
              also: Callable[[EventView], bool] = lambda v: True) -> list[int]:
    """Indexes of the events matching ``where`` (all when None) and ``also``, at most ``first`` of them."""
    found = (v.index for v in views if (where is None or where.matches(v, len(views))) and also(v))
    return list(itertools.islice(found, first))  # stops at the first ``first``: later payloads are not parsed


def _flat(groups: list[Block]) -> list[Line]:
    return [line for block in groups for line in block.lines]


class _EventStep(LineStep):
    """An event-stage step whose predicates are parsed once (at load, or on first use from Python)."""

    stage: ClassVar[str] = "event"
    predicates: ClassVar[tuple[str, ...]] = ("where",)
    _parsed: dict[str, Where | None]

    def validate(self, where: str, source: str) -> None:
        self._parsed = {k: _where(getattr(self, k), f"{where}.{k}", source) for k in self.predicates}

    def predicate(self, name: str) -> Where | None:
        """The parsed predicate of field ``name`` (a step made in Python is validated on first use)."""
        if not hasattr(self, "_parsed"):
            self.validate(self.name, "<memory>")
        return self._parsed[name]


def _block_lines(kind: str | None, event_id: str | None, payload: str, eol: str, chunk: int) -> list[Line]:
    texts = [f"event: {kind}"] if kind is not None else []
    texts += [f"id: {event_id}"] if event_id is not None else []
    texts += [field_line("data", part) for part in payload.split("\n")]
    return [Line(text, eol, chunk) for text in [*texts, ""]]


@register
@dataclass
class Insert(_EventStep):
    """Insert one event: at an index, at the end (before the terminal event), or next to a matching event.

    YAML::

        - insert: {at: 0, json: {choices: [], prompt_filter_results: [{prompt_index: 0}]}}
        - insert: {before: {type: message_stop}, type: ping, data: "{}"}
        - insert: {after: {path: "choices[0].finish_reason", equals: stop}, data: "[DONE]"}
        - insert: {at: 1, provider: auto, text: "Hello"}

    Fields: the event — ``type`` (its ``event:`` line; none by default), ``id`` (an ``id:``
    line), and exactly one of ``data`` (text; each LF starts another ``data:`` line) or
    ``json`` (any JSON value, written compact); at most 1 MiB. Where — one of ``at`` (the
    index the new event gets, 0-based; negative counts from the end as in ``list.insert``;
    ``end``, the default: before the terminal events, or after the last event when there is
    none; ``after-terminal``: after every event), ``before`` or ``after`` (a predicate: next
    to the first matching event; nothing is inserted when none matches, and the journal says
    so). The event goes out with the recorded chunk of the line before it.

    Instead of ``data``/``json``, ``text`` (at most 1 MiB) inserts a text delta in the recording's own
    provider format (``provider``: ``auto``, the default, recognised from the request and the body, or a
    provider name): an OpenAI chat chunk, a Responses ``response.output_text.delta``, an Anthropic
    ``content_block_delta``, a Gemini candidate, identifiers and model copied from the nearest such event
    (see ``text_event`` of :class:`ssemock.providers.synthesis.Synthesis`). A stream with no event of
    that shape, or a provider without one, gets nothing and the journal says why.
    """

    type: str | None = None
    data: str | None = None
    json: Any = None
    id: str | None = None
    at: int | str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    text: str | None = None
    provider: str | None = None

    name: ClassVar[str] = "insert"
    predicates: ClassVar[tuple[str, ...]] = ("before", "after")
    fields: ClassVar[dict[str, Field]] = {
        **EVENT_FIELDS,
        "at": Field(f"an event index from -{MAX_ITEMS} to {MAX_ITEMS}, or one of end | after-terminal",
                    lambda v: v is None or v in AT_WORDS or (is_integer(v) and -MAX_ITEMS <= v <= MAX_ITEMS),
                    {"anyOf": [bounded("integer", -MAX_ITEMS, MAX_ITEMS), {"enum": [*AT_WORDS, None]}]}),
        "before": WHERE_FIELD,
        "after": WHERE_FIELD,
        "text": Field(f"a string of at most {MAX_PAYLOAD} bytes of UTF-8",
                      lambda v: v is None or (isinstance(v, str) and _utf8_within(v)),
                      nullable(string(maximum=MAX_PAYLOAD))),
        "provider": Field(f"auto or a provider name: {', '.join(NAMES)}", lambda v: v is None or v in ("auto", *NAMES),
                          {"enum": ["auto", *NAMES, None]}),
    }

    def validate(self, where: str, source: str) -> None:
        if self.text is not None:
            if self.data is not None or self.json is not None:
                raise ScenarioError(source, f"{where}.text", "one of data, json, text", None)
        else:
            if self.provider is not None:
                raise ScenarioError(source, f"{where}.provider", "text with it (provider styles a text event)", None)
            _check_payload(self, where, source)
        given = [k for k in ("at", "before", "after") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ScenarioError(source, where, "at most one of at, before, after", given)
        super().validate(where, source)

    def position(self, views: list[EventView]) -> int | None:
        """The index the new event takes among ``views`` (0..len), or None when no event matches."""
        for name, shift in (("before", 0), ("after", 1)):
            predicate = self.predicate(name)
            if predicate is not None:
                found = _selected(views, predicate, 1)
                return found[0] + shift if found else None
        if self.at is None or self.at == "end":
            return terminal_start(views)
        if self.at == "after-terminal":
            return len(views)
        assert isinstance(self.at, int)
        return _index(self.at, len(views))

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        events = _events(groups)
        spot = self.position([v for _, v in events])
        if spot is None:
            plan.notes.append("insert: no event matched; nothing inserted")
            return lines
        cut = events[spot][0] if spot < len(events) else (events[-1][0] + 1 if events else len(groups))
        head = _flat(groups[:cut])
        chunk = head[-1].chunk if head else 0
        eol = groups[cut - 1].eol if cut else (groups[0].eol if groups else "\n")
        kind, payload = self.type, _payload(self.data, self.json) if self.text is None else ""
        if self.text is not None:
            try:
                kind, payload = self._styled([v for _, v in events], spot, plan)
            except LookupError as exc:
                plan.notes.append(f"insert: nothing inserted: {exc}")
                return lines
        new = _block_lines(kind, self.id, payload, eol, chunk)
        plan.charge(lines_size(new), len(new))
        plan.notes.append(f"insert: event {kind or 'message'} at index {spot} of {len(events)}")
        return head + new + _flat(groups[cut:])

    def _styled(self, views: list[EventView], spot: int, plan: Plan) -> tuple[str | None, str]:
        """The provider-styled text event (raises ``LookupError`` with the reason when there is none)."""
        provider = provider_of(plan, self.provider or "auto")
        synthesis = provider.synthesize
        make = getattr(synthesis, "text_event", None)
        if make is None:
            raise LookupError(f"provider {provider.name} has no text event shape")
        kind, data = make([(v.type, v.json) for v in views], spot, self.text or "")
        return (self.type or kind), data


@register
@dataclass
class Edit(_EventStep):
    """Set or delete fields of the JSON payloads of matching events.

    YAML::

        - edit: {delete: ["choices[0].delta.tool_calls[0].id"]}
        - edit: {where: {index: 1}, set: {"choices[0].delta.content": "", model: other}}
        - edit: {where: {type: content_block_start}, first: 1, delete: [content_block.id]}

    Fields: ``where`` (a predicate; default every event), ``first`` (change at most this
    many of the matching JSON events, 1 to 1,000,000; default all), ``set`` (a mapping of
    JSON path to the new value; the parent must exist: an object gains the key, an array
    item is replaced), ``delete`` (a list of JSON paths removed where present); at most 64
    paths in all, the ``set`` values at most 1 MiB of JSON together. Events whose data is not a
    JSON object or array (``[DONE]``) are never matched. The journal counts the events changed
    and matched. What the events gain counts against the bound on what a scenario adds to one
    response (256 MiB by default, ``max_scenario_growth``).
    """

    where: dict[str, Any] | None = None
    first: int | None = None
    set: dict[str, Any] = field(default_factory=dict)
    delete: list[str] = field(default_factory=list)

    name: ClassVar[str] = "edit"
    fields: ClassVar[dict[str, Field]] = {
        "where": WHERE_FIELD,
        "first": FIRST_FIELD,
        "set": Field(f"a mapping of JSON paths to values (at most {MAX_PATHS})",
                     lambda v: isinstance(v, Mapping) and len(v) <= MAX_PATHS,
                     {"type": "object", "maxProperties": MAX_PATHS}),
        "delete": Field(f"a list of at most {MAX_PATHS} JSON paths",
                        lambda v: isinstance(v, list) and len(v) <= MAX_PATHS,
                        {"type": "array", "maxItems": MAX_PATHS}),
    }

    def validate(self, where: str, source: str) -> None:
        if not self.set and not self.delete:
            raise ScenarioError(source, where, "set (paths and values) or delete (paths), or both", None)
        if len(self.set) + len(self.delete) > MAX_PATHS:
            raise ScenarioError(source, where, f"at most {MAX_PATHS} paths in set and delete together", None)
        for text in self.set:
            _path(text, f"{where}.set.{text}", source)
        for i, text in enumerate(self.delete):
            _path(text, f"{where}.delete[{i}]", source)
        for text, value in self.set.items():
            _check_json(value, f"{where}.set.{text}", source)
        together = sum(_json_size(value) for value in self.set.values())
        if together > MAX_PAYLOAD:
            raise ScenarioError(source, f"{where}.set", f"values of at most {MAX_PAYLOAD} bytes (1 MiB) together "
                                                        "as JSON", f"{together} bytes")
        super().validate(where, source)

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        where = self.predicate("where")  # validates a step made in Python
        groups = blocks(lines)
        events = _events(groups)
        views = [v for _, v in events]
        chosen = _selected(views, where, self.first, lambda v: isinstance(v.json, (dict, list)))
        changed = 0
        for index in chosen:
            value = views[index].take_json()
            done = [assign(value, parse_path(text), copy.deepcopy(new)) for text, new in self.set.items()]
            done += [remove(value, parse_path(text)) for text in self.delete]
            if any(done):
                position = events[index][0]
                old = groups[position]
                new = old.with_data(_payload(None, value))
                plan.charge(*growth(old.lines, new))  # before the next event: memory stays within the bound
                groups[position] = Block(new, old.start)
                changed += 1
        plan.notes.append(f"edit: {changed} event(s) changed of {len(chosen)} matched")
        return _flat(groups)


def _path(text: Any, where: str, source: str) -> Path:
    try:
        return parse_path(text)
    except ValueError:
        raise ScenarioError(source, where, PATH_RULE, text) from None


@register
@dataclass
class Drop(_EventStep):
    """Leave out the matching events.

    YAML::

        - drop: {where: {type: ping}}
        - drop: {where: {contains: prompt_filter_results}, first: 1}

    Fields: ``where`` (a predicate; required), ``first`` (drop at most this many, 1 to
    1,000,000; default all). The blank line and the fields of a dropped event go with it;
    comments between events stay.
    """

    where: dict[str, Any] | None = None
    first: int | None = None

    name: ClassVar[str] = "drop"
    fields: ClassVar[dict[str, Field]] = {"where": WHERE_FIELD, "first": FIRST_FIELD}

    def validate(self, where: str, source: str) -> None:
        if self.where is None:
            raise ScenarioError(source, f"{where}.where", "a predicate choosing the events to drop", None)
        super().validate(where, source)

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        events = _events(groups)
        chosen = _selected([v for _, v in events], self.predicate("where"), self.first)
        gone = {events[i][0] for i in chosen}
        plan.notes.append(f"drop: {len(chosen)} event(s) {chosen[:10]}{'…' if len(chosen) > 10 else ''}")
        return _flat([b for i, b in enumerate(groups) if i not in gone])


@register
@dataclass
class Replace(_EventStep):
    """Replace the data (and optionally the type and id) of the matching events.

    YAML::

        - replace: {where: {terminal: true}, data: "[DONE] "}
        - replace: {where: {index: -2}, type: error, json: {type: error, error: {type: overloaded_error}}}

    Fields: ``where`` (a predicate; required), ``first`` (at most this many, 1 to
    1,000,000; default all), exactly one of ``data`` or ``json`` (the new payload, at most
    1 MiB), ``type`` and ``id`` (default: the replaced event's own ``event:`` and ``id:``
    lines are kept). What the events gain counts against the bound on what a scenario adds to
    one response (256 MiB by default, ``max_scenario_growth``).
    """

    where: dict[str, Any] | None = None
    first: int | None = None
    type: str | None = None
    data: str | None = None
    json: Any = None
    id: str | None = None

    name: ClassVar[str] = "replace"
    fields: ClassVar[dict[str, Field]] = {"where": WHERE_FIELD, "first": FIRST_FIELD, **EVENT_FIELDS}

    def validate(self, where: str, source: str) -> None:
        if self.where is None:
            raise ScenarioError(source, f"{where}.where", "a predicate choosing the events to replace", None)
        _check_payload(self, where, source)
        super().validate(where, source)

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        events = _events(groups)
        chosen = _selected([v for _, v in events], self.predicate("where"), self.first)
        payload = _payload(self.data, self.json)
        for index in chosen:
            position = events[index][0]
            old = groups[position]
            new = self._replaced(old, payload)
            plan.charge(*growth(old.lines, new))  # before the next event: memory stays within the bound
            groups[position] = Block(new, old.start)
        plan.notes.append(f"replace: {len(chosen)} event(s) {chosen[:10]}{'…' if len(chosen) > 10 else ''}")
        return _flat(groups)

    def _replaced(self, block: Block, payload: str) -> list[Line]:
        out = block.with_data(payload)
        drop = {name for name, value in (("event", self.type), ("id", self.id)) if value is not None}
        if drop:
            out = [ln for ln in out if (parse_field(ln.text) or ("",))[0] not in drop]
            head = [f"event: {self.type}"] if self.type is not None else []
            head += [f"id: {self.id}"] if self.id is not None else []
            out = [Line(text, out[0].eol or block.eol, out[0].chunk) for text in head] + out
        return out

