"""Event-stage steps: they edit the data of dispatched events (design §2, §6).

Each step reads the event blocks (:mod:`.text`), changes some data buffers or
drops/adds blocks, and writes the data back as ``data:`` lines in place of the
old ones. Data that is not JSON (``[DONE]``) is never changed by the JSON steps.

What they add to the body counts against the bound on what a scenario adds to one response
(:meth:`~.plan.Plan.charge`, 256 MiB by default), event by event.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import ScenarioError
from ..limits import string, whole
from ..plan import Plan
from . import providers as prov
from .base import MAX_BYTES, Field, LineStep, choice, flag, integer, integers, register
from .text import Block, Line, blocks, json_payload, lines_size, map_blocks

__all__ = ["ErrorMidStream", "JsonSeparators", "LineSeparators", "LongLines", "MultilineData", "NoDone"]

_MISSING = object()
MAX_PARTS = 1000
"""Most ``data:`` lines ``multiline-data`` spreads a payload over."""
MAX_SEPARATOR = 16
"""Longest ``json-separators`` separator, in characters."""
MAX_CHARS = 64
"""Longest ``line-separators.chars``, in characters."""


def _separator(mark: str) -> dict[str, Any]:
    """The JSON Schema of :func:`_sep`: ``mark`` with spaces or tabs around it."""
    return {"type": "string", "maxLength": MAX_SEPARATOR, "pattern": whole(f"[ \\t]*{re.escape(mark)}[ \\t]*")}


def _json(data: str) -> Any:
    """The JSON value of ``data``, or ``_MISSING`` (objects and arrays only)."""
    value = json_payload(data)
    return _MISSING if value is None else value


@register
@dataclass
class JsonSeparators(LineStep):
    """Re-serialise every JSON payload with other separators (payload-preserving).

    YAML::

        - json-separators: {item: " , ", key: " : ", ascii: true}

    Fields: ``item`` (the separator between items: a comma with spaces or tabs
    around it, default ``", "``), ``key`` (between a key and its value: a colon with
    spaces or tabs, default ``": "``; each at most 16 characters), ``ascii`` (escape every non-ASCII character
    as ``\\uXXXX``, default true). The JSON values stay equal; the text changes.
    """

    item: str = ", "
    key: str = ": "
    ascii: bool = True

    name: ClassVar[str] = "json-separators"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {
        "item": Field(f"a comma with optional spaces or tabs around it (at most {MAX_SEPARATOR} characters)",
                      lambda v: _sep(v, ","), _separator(",")),
        "key": Field(f"a colon with optional spaces or tabs around it (at most {MAX_SEPARATOR} characters)",
                     lambda v: _sep(v, ":"), _separator(":")),
        "ascii": flag(),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        def one(index: int, block: Block) -> list[Line] | None:
            value = _json(block.data or "")
            if value is _MISSING:
                return None
            return block.with_data(json.dumps(value, separators=(self.item, self.key), ensure_ascii=self.ascii))

        return map_blocks(lines, one, plan.charge)


def _sep(value: Any, mark: str) -> bool:
    return isinstance(value, str) and len(value) <= MAX_SEPARATOR and value.strip(" \t") == mark


def _cut_points(data: str) -> list[int]:
    """Offsets after a ``,`` ``:`` ``{`` or ``[`` outside JSON strings (where a LF is JSON whitespace)."""
    points: list[int] = []
    in_string = escaped = False
    for index, char in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in ",:{[":
            points.append(index + 1)
    return points


def _nearest(points: list[int], target: float) -> int:
    """The point of the sorted ``points`` nearest to ``target`` (the smaller one on a tie)."""
    index = bisect.bisect_left(points, target)
    if index == 0:
        return points[0]
    if index == len(points) or target - points[index - 1] <= points[index] - target:
        return points[index - 1]
    return points[index]


@register
@dataclass
class MultilineData(LineStep):
    """Spread each JSON payload over several ``data:`` lines, breaking the JSON mid-way.

    YAML::

        - multiline-data: {parts: 3}

    Fields: ``parts`` (at most this many ``data:`` lines per payload, 2 to 1000,
    default 2).
    The cuts fall after a ``,`` ``:`` ``{`` or ``[`` outside strings, as close as
    possible to equal parts. A parser joins the lines with LF (WHATWG: each
    ``data`` value + LF), which is JSON whitespace: the data buffer gains LFs and
    the JSON value is unchanged. Payloads that are not JSON stay on one line.
    """

    parts: int = 2

    name: ClassVar[str] = "multiline-data"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {"parts": integer(2, MAX_PARTS)}

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        def one(index: int, block: Block) -> list[Line] | None:
            data = block.data or ""
            if "\n" in data or _json(data) is _MISSING:
                return None
            points = _cut_points(data)
            targets = (len(data) * k / self.parts for k in range(1, self.parts))
            cuts = sorted({_nearest(points, t) for t in targets} - {len(data)}) if points else []
            pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
            return block.with_data("\n".join(pieces))

        return map_blocks(lines, one, plan.charge)


@register
@dataclass
class LongLines(LineStep):
    """Pad JSON payloads with JSON whitespace so their ``data:`` line passes a size.

    YAML::

        - long-lines: {sizes: [65537, 131073, 1048577]}   # past 64 KiB, 128 KiB, 1 MiB

    Fields: ``sizes`` (bytes; the first JSON event's ``data:`` line is padded to
    the first size, the second to the second, and so on; together at most 64 MiB;
    default the three above). The spaces go right after the opening ``{`` or ``[``: the JSON value is
    unchanged, but a reader with a line-length limit (aiohttp ``readline`` 64 KiB,
    asyncio ``StreamReader`` 64 KiB) fails.
    """

    sizes: list[int] = field(default_factory=lambda: [65537, 131073, 1048577])

    name: ClassVar[str] = "long-lines"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {"sizes": integers(1)}

    def validate(self, where: str, source: str) -> None:
        if sum(self.sizes) > MAX_BYTES:
            raise ScenarioError(source, f"{where}.sizes", f"sizes adding up to at most {MAX_BYTES} bytes (64 MiB)",
                                sum(self.sizes))

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        padded = 0

        def one(index: int, block: Block) -> list[Line] | None:
            nonlocal padded
            data = block.data or ""
            if padded >= len(self.sizes) or "\n" in data or _json(data) is _MISSING:
                return None
            line = next(ln for ln in block.lines if ln.text.startswith("data"))
            missing = self.sizes[padded] - len(line.text.encode("utf-8", "surrogateescape"))
            padded += 1
            if missing <= 0:
                return None
            return block.with_data(data[0] + " " * missing + data[1:])

        return map_blocks(lines, one, plan.charge)


TEXT_KEYS = ["content", "text", "delta", "thinking", "reasoning", "reasoning_content"]


@register
@dataclass
class LineSeparators(LineStep):
    """Raw U+2028, U+2029 and U+0085 inside JSON strings: in the text values, or in comments.

    YAML::

        - line-separators: {chars: "\\u2028\\u2029\\x85", keys: [content, text, delta]}
        - line-separators: {where: comments}

    Fields: ``chars`` (the characters written, at most 64; default LINE SEPARATOR,
    PARAGRAPH SEPARATOR, NEXT LINE), ``keys`` (JSON object keys whose non-empty string
    values get them, at any depth; default the text-bearing keys of the providers:
    content, text, delta, thinking, reasoning, reasoning_content), ``where``
    (``values``: appended to those values; ``comments``: in a comment line
    ``: {"x-ssemock": "CHARS"}`` right after the first ``data:`` line of every
    event; default values).
    The characters are written raw (legal inside JSON strings and SSE lines, which
    end only at CR or LF); a reader that splits with ``str.splitlines()`` breaks the
    line there (two of them in a row make it see a blank line, which dispatches).
    ``values`` changes the payload: the assembled text gains the characters;
    ``comments`` changes no event.
    """

    chars: str = "\u2028\u2029\x85"
    keys: list[str] = field(default_factory=lambda: list(TEXT_KEYS))
    where: str = "values"

    name: ClassVar[str] = "line-separators"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {
        "chars": Field(f"a non-empty string of at most {MAX_CHARS} characters without CR or LF",
                       lambda v: isinstance(v, str) and 0 < len(v) <= MAX_CHARS and "\r" not in v and "\n" not in v,
                       string(minimum=1, maximum=MAX_CHARS, without="\r\n")),
        "keys": Field("a non-empty list of strings", lambda v: isinstance(v, list) and bool(v)
                      and all(isinstance(x, str) for x in v),
                      {"type": "array", "minItems": 1, "items": {"type": "string"}}),
        "where": choice("values", "comments"),
    }

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        comment = ": " + json.dumps({"x-ssemock": self.chars}, ensure_ascii=False)

        def one(index: int, block: Block) -> list[Line] | None:
            if self.where == "comments":
                first = block.data_lines[0]
                line = block.lines[first]
                return [*block.lines[: first + 1], Line(comment, line.eol, line.chunk), *block.lines[first + 1 :]]
            value = _json(block.data or "")
            if value is _MISSING or not self._mark(value):
                return None
            return block.with_data(json.dumps(value, ensure_ascii=False, separators=(",", ":")))

        return map_blocks(lines, one, plan.charge)

    def _mark(self, value: Any) -> bool:
        changed = False
        if isinstance(value, dict):
            for key, item in value.items():
                if key in self.keys and isinstance(item, str) and item:
                    value[key] = item + self.chars
                    changed = True
                else:
                    changed = self._mark(item) or changed
        elif isinstance(value, list):
            for item in value:
                changed = self._mark(item) or changed
        return changed


@register
@dataclass
class NoDone(LineStep):
    """Drop the ``data: [DONE]`` event (OpenAI chat-style streams then end without it).

    YAML::

        - no-done: {}
    """

    name: ClassVar[str] = "no-done"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {}

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        return map_blocks(lines, lambda i, b: [] if (b.data or "").strip() == "[DONE]" else None)

    def note(self) -> str:
        return "no-done: the data: [DONE] event left out"


@register
@dataclass
class ErrorMidStream(LineStep):
    """After N events, send the provider's mid-stream error instead of the rest.

    YAML::

        - error-mid-stream: {after_events: 2, provider: auto, message: Overloaded}
        - error-mid-stream: {provider: openrouter, code: 429, choices: false}   # numeric code, no choices
        - error-mid-stream: {provider: gemini, code: "429", type: RESOURCE_EXHAUSTED}

    Fields: ``after_events`` (events sent before the error; negative counts from
    the end, default 1), ``provider`` (auto | openai-chat | openai-responses |
    anthropic | gemini | openrouter | groq | mistral | generic; auto recognises it from the
    request path and the payloads), ``message`` (the error message, at most 65,536
    characters), and, each defaulting to the provider's own value: ``status`` (the HTTP
    status the error stands for, 100-599: picks the provider's type and code for it),
    ``type`` (the error type; Gemini's ``status`` string), ``code`` (a string of at most
    256 characters, an integer, or null), ``choices`` (true/false: a chat-completion
    chunk with or without ``choices``), ``form`` (``sse``: ``data:`` lines; ``json``:
    bare JSON without a field name, as Gemini/Vertex sends it), ``extra`` (more fields merged
    into the error object, at most 64 KiB as JSON). The shapes and their
    sources are in the provider modules (:mod:`ssemock.providers`); the stream then ends cleanly.
    """

    after_events: int = 1
    provider: str = "auto"
    message: str = "The server had an error while processing your request."
    status: int | prov.Default = prov.DEFAULT
    type: str | prov.Default = prov.DEFAULT
    code: prov.Code | prov.Default = prov.DEFAULT
    choices: bool | prov.Default = prov.DEFAULT
    form: str | prov.Default = prov.DEFAULT
    extra: dict[str, Any] = field(default_factory=dict)

    name: ClassVar[str] = "error-mid-stream"
    stage: ClassVar[str] = "event"
    fields: ClassVar[dict[str, Field]] = {
        "after_events": integer(None),
        "provider": prov.PROVIDER_FIELD,
        "message": prov.MESSAGE_FIELD,
        "status": prov.STATUS_FIELD,
        **prov.ERROR_FIELDS,
        "form": prov.FORM_FIELD,
    }

    def describe(self) -> dict[str, Any]:
        return prov.describe_set(self)

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        provider = prov.provider_of(plan, self.provider)
        groups = blocks(lines)
        dispatching = [i for i, b in enumerate(groups) if b.dispatches]
        n = _index(self.after_events, len(dispatching))
        # the rest: from the next event on; after the last event, what follows it (an unfinished event, a
        # recorded error that is no event)
        stop = dispatching[n] if n < len(dispatching) else (dispatching[-1] + 1 if dispatching else len(groups))
        kept = [ln for b in groups[:stop] for ln in b.lines]
        chunk = kept[-1].chunk if kept else 0
        eol = groups[0].eol if groups else "\n"
        sent = [b for b in groups[:stop] if b.dispatches]
        plan.notes.append(f"error-mid-stream: {provider.name} error after {len(sent)} event(s)")
        extra = provider.stream_error(prov.error_spec(self, self.message), prov.sent_payloads(sent))
        added = [Line(t, eol, chunk) for t in extra]
        plan.charge(lines_size(added), len(added))
        return kept + added


def _index(n: int, count: int) -> int:
    """``n`` as a count of events (negative from the end), clamped to 0..count."""
    return max(0, min(count, n if n >= 0 else count + n))

