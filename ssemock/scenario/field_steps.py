"""Byte-stage steps on field lines: spacing around values and empty ``data:`` lines (design §2, §6).

``field-spacing`` with 0 or 1 space after the colon keeps every event; with 2 or
more spaces, or trailing spaces, and ``empty-data`` change the data a WHATWG
parser dispatches but keep the JSON value of JSON payloads (spaces and LF are
JSON whitespace), except ``empty-data: {at: alone}``, which adds an event.

What they add to the body counts against the bound on what a scenario adds to one response
(:meth:`~.plan.Plan.charge`, 256 MiB by default), as they write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..limits import bounded
from ..plan import Plan
from .base import MAX_TEXT, Field, LineStep, choice, flag, integer, register, text
from .byte_steps import MAX_FIELDS
from .text import Line, blocks, field_line, field_name_schema, is_field_name, json_payload, parse_field

__all__ = ["MAX_SPACES", "EmptyData", "FieldSpacing"]

MAX_SPACES = 16
"""Most spaces ``field-spacing`` writes after a colon or after a value."""


@register
@dataclass
class FieldSpacing(LineStep):
    """Write fields as ``name:value``, ``name:  value`` or ``name: value `` (as some servers do).

    YAML::

        - field-spacing: {space: false}                  # data:{"a":1}
        - field-spacing: {space: false, only: "[DONE]"}   # data:[DONE] only
        - field-spacing: {spaces: {data: 2}, only: "[DONE]"}             # data:  [DONE]
        - field-spacing: {spaces: 0, trailing: 1, only: "[DONE]"}        # data:[DONE]<space>

    Fields: ``space`` (one space after the colon or none, for every field; default
    false), ``spaces`` (exactly this many spaces after the colon, 0 to 16: a number
    for every field, or a mapping of field names to numbers for those fields only;
    overrides ``space``; default null), ``trailing`` (spaces after the value, 0 to 16,
    default 0), ``only`` (change only lines whose value is this, default all).

    WHATWG removes one space after the colon, so with 0 or 1 space (and no
    trailing space) the events stay the same: a value that itself starts with a
    space keeps one separating space. With 2 or more spaces the value gains the
    extra ones in front, and trailing spaces stay in it: a JSON payload keeps its
    JSON value (spaces are JSON whitespace), ``[DONE]`` becomes `` [DONE]`` or
    ``[DONE] `` (the journal says how many values changed).
    """

    space: bool = False
    only: str | None = None
    spaces: int | dict[str, int] | None = None
    trailing: int = 0

    name: ClassVar[str] = "field-spacing"
    fields: ClassVar[dict[str, Field]] = {
        "space": flag(),
        "only": text(optional=True),
        "spaces": Field(
            f"an integer from 0 to {MAX_SPACES}, or a mapping of at most {MAX_FIELDS} field names (at most "
            f"{MAX_TEXT} characters, no colon, CR or LF) to integers from 0 to {MAX_SPACES}, or null",
            lambda v: v is None or _spaces(v)
            or (isinstance(v, dict) and len(v) <= MAX_FIELDS and all(is_field_name(k, MAX_TEXT) and _spaces(x)
                                                                      for k, x in v.items())),
            {"anyOf": [bounded("integer", 0, MAX_SPACES), {"type": "null"},
                       {"type": "object", "maxProperties": MAX_FIELDS, "propertyNames": field_name_schema(MAX_TEXT),
                        "additionalProperties": bounded("integer", 0, MAX_SPACES)}]},
        ),
        "trailing": integer(0, MAX_SPACES),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        out: list[Line] = []
        changed = rewritten = 0
        for line in lines:
            parsed = parse_field(line.text)
            count = self._count(parsed[0]) if parsed is not None else None
            if (parsed is None or ":" not in line.text or (self.only is not None and parsed[1] != self.only)
                    or isinstance(count, bool)):
                out.append(line)
                continue
            new = field_line(*parsed, space=self.space, spaces=count, trailing=self.trailing)
            if len(new) > len(line.text):  # only spaces differ: as many bytes as characters
                plan.charge(len(new) - len(line.text))
            changed += parse_field(new) != parsed
            rewritten += new != line.text
            out.append(line.with_text(new))
        if rewritten:
            gained = f"{changed} value(s) gained spaces" if changed else "no value changed"
            plan.notes.append(f"field-spacing: {rewritten} field line(s) rewritten, {gained}")
        return out

    def _count(self, name: str) -> int | bool | None:
        """Spaces after the colon for field ``name``: None (``space`` decides), or False to leave the line."""
        if isinstance(self.spaces, dict):
            return self.spaces.get(name, False)
        return self.spaces


def _spaces(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SPACES


@register
@dataclass
class EmptyData(LineStep):
    """Empty ``data:`` lines inside events, or alone as an event with empty data.

    YAML::

        - empty-data: {at: start}                 # data:\\ndata: {...}\\n\\n
        - empty-data: {at: end, space: true}      # data: {...}\\ndata: \\n\\n
        - empty-data: {at: alone, only: all}      # data:\\n\\n before the first event

    Fields: ``at`` (``start``: an empty ``data:`` line before the first data line of
    each event; ``end``: after the last one; ``alone``: one block holding only an
    empty ``data:`` line, before the first event; default start), ``space`` (write
    ``data: `` rather than ``data:``, default false), ``only`` (``json``: only events
    whose data is a JSON object or array; ``all``; default json).

    WHATWG appends the value and a LF for every ``data`` line: an empty one adds a
    LF to the data buffer (``data:\\ndata: x`` dispatches ``"\\nx"``). So ``start`` and
    ``end`` change the data but keep the JSON value of JSON payloads (a LF is JSON
    whitespace) — with ``only: json`` the payloads stay the same — and ``alone``
    adds an event whose data is empty (a fault).
    """

    at: str = "start"
    space: bool = False
    only: str = "json"

    name: ClassVar[str] = "empty-data"
    fields: ClassVar[dict[str, Field]] = {
        "at": choice("start", "end", "alone"),
        "space": flag(),
        "only": choice("json", "all"),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        empty = "data: " if self.space else "data:"
        out: list[Line] = []
        done = False
        added = 0
        for block in blocks(lines):
            data = block.data
            if done or not block.dispatches or (self.only == "json" and json_payload(data or "") is None):
                out.extend(block.lines)
                continue
            first = block.lines[0]
            if self.at == "alone":  # before the first event it matches
                plan.charge(len(empty) + 2 * len(block.eol), 2)
                out += [Line(empty, block.eol, first.chunk), Line("", block.eol, first.chunk), *block.lines]
                done = True
                continue
            where = block.data_lines
            index = where[0] if self.at == "start" else where[-1] + 1
            anchor = block.lines[where[0] if self.at == "start" else where[-1]]
            plan.charge(len(empty) + len(anchor.eol), 1)
            out += [*block.lines[:index], Line(empty, anchor.eol, anchor.chunk), *block.lines[index:]]
            added += 1
        if done:
            plan.notes.append("empty-data: an event with empty data before the first event")
        elif added:
            plan.notes.append(f"empty-data: an empty data: line at the {self.at} of {added} event(s)")
        return out
