"""JSON paths and event predicates: which events an editing step touches, and where in their JSON.

**Paths** (``edit.set``, ``edit.delete``, ``where.path``) name one place in a JSON payload::

    choices[0].delta.tool_calls[0].id
    [0].name               # an array at the top
    candidates[-1].content  # [-1] is the last item

Grammar: a path is a key or an ``[n]`` index, followed by ``.key`` or ``[n]`` steps. A key is
one or more characters other than ``.``, ``[``, ``]``; ``n`` is an integer (negative counts
from the end of the array). At most :data:`MAX_PATH_DEPTH` (32) steps, :data:`MAX_PATH_CHARS`
(256) characters.

**Predicates** (``where``, ``before``, ``after``) select dispatched events; every key given
must hold::

    where: {index: 2}                 # the third event (0-based; -1 the last)
    where: {index: [1, 3]}            # events 1, 2 and 3 (both ends included)
    where: {type: message_delta}      # the event type (``message`` when none is set)
    where: {path: "choices[0].finish_reason", equals: stop}   # a JSON value (without equals: it exists)
    where: {contains: tool_calls}     # the data contains this text
    where: {terminal: true}           # the terminal event ([DONE], message_stop, response.completed, …)

The **terminal events** of a stream are the events at its end that providers send to say it is
over: ``data: [DONE]`` (OpenAI chat, OpenRouter), Anthropic ``message_stop``, and the OpenAI
Responses ``response.completed`` / ``response.failed`` / ``response.incomplete``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ScenarioError
from ..limits import MAX_ITEMS, Field, is_integer

__all__ = [
    "MAX_CONTAINS", "MAX_PATH_CHARS", "MAX_PATH_DEPTH", "MISSING", "PATH_RULE", "TERMINAL_TYPES", "WHERE_KEYS",
    "EventView", "Path", "Where", "assign", "lookup", "parse_path", "path_field", "remove", "terminal_start",
]

MAX_PATH_DEPTH = 32
"""Most steps (keys and indexes) in a JSON path."""
MAX_PATH_CHARS = 256
"""Longest JSON path, in characters."""
MAX_CONTAINS = 4096
"""Longest ``where.contains`` text, in characters."""
TERMINAL_TYPES = ("message_stop", "response.completed", "response.failed", "response.incomplete")
"""Event types (or JSON ``type`` values) that end a stream; ``data: [DONE]`` ends one too."""
PATH_RULE = (f"a JSON path like choices[0].delta.tool_calls[0].id (keys joined by '.', [n] indexes, [-1] the last; "
             f"at most {MAX_PATH_DEPTH} steps and {MAX_PATH_CHARS} characters)")

Path = tuple[str | int, ...]
_STEP = re.compile(r"\.([^.\[\]]+)|\[(-?[0-9]+)\]|([^.\[\]]+)")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What :func:`lookup` returns when the path leads nowhere."""


def parse_path(text: Any) -> Path:
    """The steps of a JSON path: keys (str) and indexes (int).

    Raises:
        ValueError: ``text`` is not a path of the grammar above (the message says where it breaks).
    """
    if not isinstance(text, str) or not text:
        raise ValueError("a non-empty string")
    if len(text) > MAX_PATH_CHARS:
        raise ValueError(f"at most {MAX_PATH_CHARS} characters")
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None or ((match.group(3) is not None) != (pos == 0) and match.group(2) is None):
            raise ValueError(f"a key or [n] at character {pos}")
        key, index, first = match.groups()
        steps.append(int(index) if index is not None else (key if key is not None else first))
        pos = match.end()
    if len(steps) > MAX_PATH_DEPTH:
        raise ValueError(f"at most {MAX_PATH_DEPTH} steps")
    return tuple(steps)


def _valid_path(value: Any) -> bool:
    try:
        parse_path(value)
    except ValueError:
        return False
    return True


def path_field() -> Field:
    """A :class:`~ssemock.limits.Field` accepting a JSON path string."""
    return Field(PATH_RULE, _valid_path, {"type": "string", "minLength": 1})


def _child(value: Any, step: str | int) -> Any:
    if isinstance(step, int):
        if isinstance(value, list) and -len(value) <= step < len(value):
            return value[step]
        return MISSING
    if isinstance(value, dict):
        return value.get(step, MISSING)
    return MISSING


def lookup(value: Any, path: Path) -> Any:
    """The value at ``path`` in ``value``, or :data:`MISSING`."""
    for step in path:
        value = _child(value, step)
        if value is MISSING:
            return MISSING
    return value


def assign(value: Any, path: Path, new: Any) -> bool:
    """Set ``path`` in ``value`` to ``new``; True when done.

    The parent must exist: an object gains or changes the key, an array changes an
    existing item (``[n]`` past the end is not set). Nothing is created on the way.
    """
    parent = lookup(value, path[:-1])
    last = path[-1]
    if isinstance(last, int):
        if isinstance(parent, list) and -len(parent) <= last < len(parent):
            parent[last] = new
            return True
        return False
    if isinstance(parent, dict):
        parent[last] = new
        return True
    return False


def remove(value: Any, path: Path) -> bool:
    """Delete ``path`` from ``value`` (a key of an object, an item of an array); True when it was there."""
    parent = lookup(value, path[:-1])
    last = path[-1]
    if isinstance(last, int):
        if isinstance(parent, list) and -len(parent) <= last < len(parent):
            del parent[last]
            return True
        return False
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    return False


@dataclass
class EventView:
    """One dispatched event as a predicate sees it.

    Attributes:
        index: its position among the dispatched events (0-based).
        type: its event type (``message`` when none is set).
        data: its data buffer.
    """

    index: int
    type: str
    data: str
    _json: Any = field(default=None, repr=False)

    @property
    def json(self) -> Any:
        """The data as JSON (objects and arrays only), or :data:`MISSING`; parsed once."""
        if self._json is None:
            self._json = MISSING
            if self.data.lstrip().startswith(("{", "[")):
                with contextlib.suppress(ValueError):
                    self._json = json.loads(self.data)
        return self._json

    def take_json(self) -> Any:
        """:attr:`json`, no longer kept by the view (for a step that changes it and writes it out: the
        values it sets are then freed event by event, not kept until the step ends)."""
        value = self.json
        self._json = MISSING
        return value

    @property
    def is_terminal(self) -> bool:
        """True for ``[DONE]`` and the event types of :data:`TERMINAL_TYPES` (as the type or the JSON ``type``)."""
        if self.data.strip() == "[DONE]" or self.type in TERMINAL_TYPES:
            return True
        value = self.json
        return isinstance(value, dict) and value.get("type") in TERMINAL_TYPES


def terminal_start(events: list[EventView]) -> int:
    """Index of the first of the terminal events that end ``events`` (``len(events)`` when none does)."""
    start = len(events)
    while start and events[start - 1].is_terminal:
        start -= 1
    return start


WHERE_KEYS = ("index", "type", "path", "equals", "contains", "terminal")
"""The conditions of a ``where`` (``before``, ``after``) mapping."""


@dataclass(frozen=True)
class Where:
    """A predicate on dispatched events: every condition given must hold (see the module docstring).

    Attributes:
        index: one index, or ``(first, last)`` both included; negative counts from the end.
        type: the event type.
        path: a parsed JSON path; with ``equals`` its value must equal it, else it must exist.
        equals: the value compared (any JSON value; only with ``path``).
        contains: text the data must contain.
        terminal: True for terminal events only, False for the others only.
    """

    index: tuple[int, int] | None = None
    type: str | None = None
    path: Path | None = None
    equals: Any = MISSING
    contains: str | None = None
    terminal: bool | None = None

    def matches(self, event: EventView, count: int) -> bool:
        """True when ``event`` (one of ``count`` events) meets every condition."""
        if self.index is not None:
            first, last = (i if i >= 0 else count + i for i in self.index)
            if not first <= event.index <= last:
                return False
        if self.type is not None and event.type != self.type:
            return False
        if self.contains is not None and self.contains not in event.data:
            return False
        if self.terminal is not None and event.is_terminal != self.terminal:
            return False
        if self.path is not None:
            found = lookup(event.json, self.path)
            if found is MISSING or (self.equals is not MISSING and not _same(found, self.equals)):
                return False
        return True

    @classmethod
    def build(cls, doc: Any, where: str, source: str) -> Where:
        """The predicate of a YAML mapping. Raises :class:`ScenarioError` naming ``where`` and the key."""
        if not isinstance(doc, Mapping) or not doc:
            raise ScenarioError(source, where, f"a mapping of conditions: {', '.join(WHERE_KEYS)}", doc)
        for key in doc:
            if key not in WHERE_KEYS:
                raise ScenarioError(source, f"{where}.{key}", f"a condition: one of {', '.join(WHERE_KEYS)}", None)
        index = doc.get("index")
        if index is not None:
            index = _index(index, f"{where}.index", source)
        for key in ("type", "contains"):
            value = doc.get(key)
            limit = MAX_CONTAINS if key == "contains" else 256
            if value is not None and not (isinstance(value, str) and 0 < len(value) <= limit):
                raise ScenarioError(source, f"{where}.{key}", f"a non-empty string of at most {limit} characters",
                                    value)
        terminal = doc.get("terminal")
        if terminal is not None and not isinstance(terminal, bool):
            raise ScenarioError(source, f"{where}.terminal", "true or false", terminal)
        path = None
        if "path" in doc:
            try:
                path = parse_path(doc["path"])
            except ValueError:
                raise ScenarioError(source, f"{where}.path", PATH_RULE, doc["path"]) from None
        elif "equals" in doc:
            raise ScenarioError(source, f"{where}.equals", "a path next to equals (the JSON value compared)", None)
        return cls(index, doc.get("type"), path, doc.get("equals", MISSING), doc.get("contains"), terminal)


def _index(value: Any, where: str, source: str) -> tuple[int, int]:
    if is_integer(value) and -MAX_ITEMS <= value <= MAX_ITEMS:
        return value, value
    if (isinstance(value, list) and len(value) == 2 and all(is_integer(v) and -MAX_ITEMS <= v <= MAX_ITEMS
                                                            for v in value)):
        first, last = value
        if (first < 0) == (last < 0) and first > last:  # [5, 2], [-1, -3]: no event, whatever the count
            raise ScenarioError(source, where, "[first, last] with first <= last (an empty range chooses no event; "
                                               "a negative index counts from the end)", value)
        return first, last
    raise ScenarioError(source, where, f"an event index, or [first, last] (integers from -{MAX_ITEMS} to {MAX_ITEMS}; "
                                       "negative counts from the end)", value)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``true != 1``, at any depth."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return bool(a == b)
