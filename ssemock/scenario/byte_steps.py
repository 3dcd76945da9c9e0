"""Byte-stage steps: line endings, BOM, comments and extra fields (design §2, §6);
field spacing and empty data lines are in :mod:`.field_steps`.

What they add to the body counts against the bound on what a scenario adds to one response
(:meth:`~.plan.Plan.charge`, 256 MiB by default), as they write it.

Except ``drop-final-blank-line``, these steps never change the type and data
of the events a WHATWG parser dispatches (design §2 invariant); ``extra-fields``
and ``meta-blocks`` may change the last event ID and the reconnection time.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..limits import nullable
from ..plan import Plan
from .base import MAX_COUNT, MAX_RETRY_MS, MAX_TEXT, Field, LineStep, flag, integer, register, short_text
from .text import Block, Line, blocks, field_name_schema, is_field_name, lines_size, parse_field, text_size

__all__ = ["MAX_EOLS", "Bom", "DropFinalBlankLine", "ExtraFields", "KeepAlive", "LineEndings", "MetaBlocks"]

EOLS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
MAX_FIELDS = 32
"""Most field names a step takes: unknown fields added to every event, ``by_field``, ``spaces``."""
BOM = "\ufeff"
MAX_EOLS = 1000
"""Longest explicit ``line-endings`` sequence, in line ends."""


def _eol_choice(*, optional: bool = False) -> Field:
    """``lf | crlf | cr | mixed``, or a list of at most 1000 of ``lf | crlf | cr`` (used in turn)."""
    return Field(
        f"one of lf | crlf | cr | mixed, or a non-empty list of at most {MAX_EOLS} of lf | crlf | cr"
        + (" or null" if optional else ""),
        lambda v: (optional and v is None) or v in (*EOLS, "mixed")
        or (isinstance(v, list) and 0 < len(v) <= MAX_EOLS and all(isinstance(x, str) and x in EOLS for x in v)),
        nullable({"anyOf": [{"enum": [*EOLS, "mixed"]},
                            {"type": "array", "minItems": 1, "maxItems": MAX_EOLS, "items": {"enum": list(EOLS)}}]},
                 optional),
    )


class _Ends:
    """Line ends drawn from one ``line-endings`` setting: a name, ``mixed`` (seeded) or a list used in turn."""

    def __init__(self, setting: str | list[str], rng: random.Random) -> None:
        self.setting = setting
        self.rng = rng
        self.count = 0

    def next(self, after_cr_blank: bool) -> str:
        """The next line end; ``after_cr_blank``: the line is blank and the previous one ended in a bare CR."""
        if self.setting == "mixed":
            return self.rng.choice(["\r\n", "\r"] if after_cr_blank else ["\n", "\r\n", "\r"])
        if isinstance(self.setting, str):
            return EOLS[self.setting]
        self.count += 1
        return EOLS[self.setting[(self.count - 1) % len(self.setting)]]


@register
@dataclass
class LineEndings(LineStep):
    """Rewrite every line end (WHATWG: CRLF, LF and CR all end a line), one by one if asked.

    YAML::

        - line-endings: {eol: crlf}                     # lf | crlf | cr | mixed
        - line-endings: {eol: [lf, crlf, cr]}           # used in turn, line after line
        - line-endings: {eol: lf, blank: crlf}          # data: x\\n\\r\\n
        - line-endings: {eol: lf, by_field: {event: crlf}}   # event: a\\r\\ndata: 1\\n\\n

    Fields: ``eol`` (every line end: ``lf``, ``crlf``, ``cr``, ``mixed`` — LF, CRLF
    or CR per line with the seed — or a list of at most 1000 of ``lf | crlf | cr``
    used in turn; default crlf), ``blank`` (the same choices for the blank lines that
    end blocks, counted on their own; default null: as ``eol``), ``by_field``
    (a mapping of field names — ``data``, ``event``, ``id``, ``retry`` or any other —
    to ``lf | crlf | cr`` for the lines of that field; default none).

    The events stay the same: a bare CR right before the LF of a blank line would
    make one CRLF of the two line ends and join two blocks, so that blank line ends
    in CRLF instead (``mixed`` picks CRLF or CR there; an explicit choice is
    changed and the journal says how often).
    """

    eol: str | list[str] = "crlf"
    blank: str | list[str] | None = None
    by_field: dict[str, str] = field(default_factory=dict)

    name: ClassVar[str] = "line-endings"
    fields: ClassVar[dict[str, Field]] = {
        "eol": _eol_choice(),
        "blank": _eol_choice(optional=True),
        "by_field": Field(
            f"a mapping of at most {MAX_FIELDS} field names (at most {MAX_TEXT} characters, no colon, CR or LF) "
            "to lf | crlf | cr",
            lambda v: isinstance(v, dict) and len(v) <= MAX_FIELDS
            and all(is_field_name(k, MAX_TEXT) and isinstance(x, str) and x in EOLS for k, x in v.items()),
            {"type": "object", "maxProperties": MAX_FIELDS, "propertyNames": field_name_schema(MAX_TEXT),
             "additionalProperties": {"enum": list(EOLS)}},
        ),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        rng = plan.rng(self.name)
        ends = _Ends(self.eol, rng)
        blank_ends = ends if self.blank is None else _Ends(self.blank, rng)
        out: list[Line] = []
        previous = ""
        moved = grown = 0
        for line in lines:
            if not line.eol:
                out.append(line)
                continue
            after_cr_blank = previous == "\r" and line.text == ""
            parsed = parse_field(line.text) if self.by_field and line.text else None
            if parsed is not None and parsed[0] in self.by_field:
                eol = EOLS[self.by_field[parsed[0]]]
            else:
                eol = (blank_ends if line.text == "" else ends).next(after_cr_blank)
            if after_cr_blank and eol == "\n":
                eol, moved = "\r\n", moved + 1  # CR + LF would be one line end: the blank line would vanish
            grown += max(len(eol) - len(line.eol), 0)
            out.append(Line(line.text, eol, line.chunk))
            previous = eol
        plan.charge(grown)  # at most a byte per line, no line added: counted once, at the end
        written = Counter(line.eol for line in out if line.eol)
        shown = ", ".join(f"{written[eol]} {name.upper()}" for name, eol in EOLS.items() if written[eol])
        seeded = " (seeded)" if "mixed" in (self.eol, self.blank) else ""
        plan.notes.append(f"line-endings: {sum(written.values())} line end(s) written: {shown or 'none'}{seeded}"
                          + (f"; {moved} blank line(s) after a bare CR end in CRLF, not LF" if moved else ""))
        return out


@register
@dataclass
class Bom(LineStep):
    """Start the stream with one U+FEFF BYTE ORDER MARK (WHATWG: one leading BOM is ignored).

    YAML::

        - bom: {}
    """

    name: ClassVar[str] = "bom"
    fields: ClassVar[dict[str, Field]] = {}

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        if not lines:
            plan.charge(text_size(BOM), 1)
            return [Line(BOM, "", 0)]
        if lines[0].text.startswith(BOM):
            return lines
        plan.charge(text_size(BOM))
        return [lines[0].with_text(BOM + lines[0].text), *lines[1:]]

    def note(self) -> str:
        return "bom: the body starts with U+FEFF"


def _comment_block(text_: str, eol: str, chunk: int) -> list[Line]:
    return [Line(f": {text_}" if text_ else ":", eol, chunk), Line("", eol, chunk)]


@register
@dataclass
class KeepAlive(LineStep):
    """Keep-alive comments: N leading ones, and one after every N events.

    YAML::

        - keepalive: {leading: 3, every_events: 5, text: OPENROUTER PROCESSING}

    Fields: ``leading`` (comments before the first event, 0 to 100,000, default 3),
    ``every_events`` (one comment after every N events, 0 = none, at most 100,000,
    default 5), ``text`` (the comment text, written ``: TEXT``, at most 256
    characters; an empty text writes ``:``).
    Each comment is its own block (comment line + blank line), as OpenRouter
    sends ``: OPENROUTER PROCESSING``; a blank line with no data dispatches nothing.
    """

    leading: int = 3
    every_events: int = 5
    text: str = "OPENROUTER PROCESSING"

    name: ClassVar[str] = "keepalive"
    fields: ClassVar[dict[str, Field]] = {
        "leading": integer(0, MAX_COUNT),
        "every_events": integer(0, MAX_COUNT),
        "text": short_text(),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        eol = groups[0].eol if groups else "\n"
        size = lines_size(_comment_block(self.text, eol, 0))
        plan.charge(size * self.leading, 2 * self.leading)
        out: list[Line] = []
        events = 0
        for block in groups:
            out.extend(block.lines)
            if block.dispatches:
                events += 1
                if self.every_events and events % self.every_events == 0:
                    plan.charge(size, 2)
                    out.extend(_comment_block(self.text, eol, block.lines[-1].chunk))
        leading = [ln for _ in range(self.leading) for ln in _comment_block(self.text, eol, 0)]
        return leading + out


def _before_blank(block: Block, extra: list[str]) -> list[Line]:
    """The block with ``extra`` field lines inserted before its blank line."""
    *body, blank = block.lines
    return [*body, *(Line(t, blank.eol, blank.chunk) for t in extra), blank]


@register
@dataclass
class ExtraFields(LineStep):
    """Add ``id``, ``retry`` and unknown fields to every event.

    YAML::

        - extra-fields: {id: true, retry_ms: 3000, unknown: [x-ssemock, foo]}

    Fields: ``id`` (an ``id:`` line numbering the events 1, 2, …; default true),
    ``retry_ms`` (a ``retry:`` line in milliseconds, 0 to 3,600,000, or null;
    default 3000), ``unknown`` (at most 32 field names WHATWG parsers ignore, of at
    most 256 characters, written ``NAME: 1``; default ``[x-ssemock]``). The event
    types and data stay the same; the last event ID and the reconnection time change.
    """

    id: bool = True
    retry_ms: int | None = 3000
    unknown: list[str] = field(default_factory=lambda: ["x-ssemock"])

    name: ClassVar[str] = "extra-fields"
    fields: ClassVar[dict[str, Field]] = {
        "id": flag(),
        "retry_ms": integer(0, MAX_RETRY_MS, optional=True),
        "unknown": Field(f"a list of at most {MAX_FIELDS} field names other than data, event, id, retry "
                         f"(at most {MAX_TEXT} characters, no colon, CR or LF)",
                         lambda v: isinstance(v, list) and len(v) <= MAX_FIELDS and all(_unknown_name(x) for x in v),
                         {"type": "array", "maxItems": MAX_FIELDS, "items": {
                             **field_name_schema(MAX_TEXT), "not": {"anyOf": [
                                 field_name_schema(MAX_TEXT)["not"], {"enum": ["data", "event", "id", "retry"]}]}}}),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        out: list[Line] = []
        number = 0
        for block in blocks(lines):
            if not block.dispatches:
                out.extend(block.lines)
                continue
            number += 1
            extra = [f"id: {number}"] if self.id else []
            extra += [f"retry: {self.retry_ms}"] if self.retry_ms is not None else []
            extra += [f"{name}: 1" for name in self.unknown]
            plan.charge(sum(map(text_size, extra)) + len(extra) * len(block.lines[-1].eol), len(extra))
            out.extend(_before_blank(block, extra))
        return out


def _unknown_name(value: Any) -> bool:
    return is_field_name(value, MAX_TEXT) and value not in ("data", "event", "id", "retry")


@register
@dataclass
class MetaBlocks(LineStep):
    """Blocks with only ``retry`` or ``id`` and no data, which dispatch nothing.

    YAML::

        - meta-blocks: {retry_ms: 3000, id: "7", every_events: 1}

    Fields: ``retry_ms`` (a ``retry: N`` block, N from 0 to 3,600,000 ms, or null),
    ``id`` (an ``id: X`` block, X at most 256 characters, or null), ``every_events``
    (the blocks go before the first event and after every N events, 1 to 100,000;
    default 1). An ``id`` block sets the last event ID of
    the events that follow (WHATWG dispatch step 1) but dispatches nothing.
    """

    retry_ms: int | None = 3000
    id: str | None = "7"
    every_events: int = 1

    name: ClassVar[str] = "meta-blocks"
    fields: ClassVar[dict[str, Field]] = {
        "retry_ms": integer(0, MAX_RETRY_MS, optional=True),
        "id": short_text("\r\n\0", optional=True),
        "every_events": integer(1, MAX_COUNT),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        eol = groups[0].eol if groups else "\n"

        def meta(chunk: int) -> list[Line]:
            out = []
            if self.retry_ms is not None:
                out += [Line(f"retry: {self.retry_ms}", eol, chunk), Line("", eol, chunk)]
            if self.id is not None:
                out += [Line(f"id: {self.id}", eol, chunk), Line("", eol, chunk)]
            return out

        added = meta(0)
        size = lines_size(added)
        out: list[Line] = []
        events = 0
        for block in groups:
            if block.dispatches and events % self.every_events == 0:
                plan.charge(size, len(added))
                out.extend(meta(block.lines[0].chunk))
            out.extend(block.lines)
            events += block.dispatches
        return out


@register
@dataclass
class DropFinalBlankLine(LineStep):
    """Drop the blank line after the last event, so a WHATWG parser discards that event.

    YAML::

        - drop-final-blank-line: {}                  # the body ends "…}\n" (or "…[DONE]\n")
        - drop-final-blank-line: {line_end: false}   # "…}": the last data line loses its line end too

    Fields: ``line_end`` (the last line of the event keeps its line end; default true;
    false also leaves out the comments that followed the last event, so the body ends there).
    """

    line_end: bool = True

    name: ClassVar[str] = "drop-final-blank-line"
    fields: ClassVar[dict[str, Field]] = {"line_end": flag()}

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        groups = blocks(lines)
        last = max((i for i, b in enumerate(groups) if b.dispatches), default=None)
        if last is None:
            return lines
        out = [ln for b in groups[:last] for ln in b.lines]
        out += groups[last].lines[:-1]
        plan.notes.append("drop-final-blank-line: the last event is not dispatched")
        if not self.line_end:  # nothing may follow a line without its end: it would join that line
            return [*out[:-1], Line(out[-1].text, "", out[-1].chunk)]
        return out + [ln for b in groups[last + 1 :] for ln in b.lines]
