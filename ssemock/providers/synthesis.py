"""The records shared by the providers' stream synthesizers: :class:`Script`, :class:`Piece`, :class:`Synthesis`.

A provider module that can answer without a recording defines ``SYNTHESIS``, a :class:`Synthesis`
(its ``Provider.synthesize``): given a :class:`Script` (the request read, the stub's reply, identifiers
and usage), it writes the provider's events (:class:`Piece`), its ``stream: false`` JSON answer and
its response headers, in the shapes of the bundled recordings. :mod:`ssemock.stubs` builds the script
and times the events; what a synthesizer reads of the stubs' records is written here as protocols
(:class:`RequestView`, :class:`ReplyView`, :class:`CallView`), so that the providers import nothing
of the stubs.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from json.encoder import encode_basestring  # json's own (C) string encoder
from typing import Any, Protocol

from .tokens import split_tokens

__all__ = ["ALNUM", "BATCH", "HEX", "CallView", "Column", "Piece", "ReplyView", "RequestView", "Script", "Synthesis",
           "Template", "dumps", "event_count", "nearest", "pieces", "run", "slot"]


class RequestView(Protocol):
    """What a synthesizer reads of the request (a :class:`ssemock.stubs.Conversation`)."""

    @property
    def body(self) -> dict[str, Any]:
        """The request's JSON body (an object)."""

    @property
    def include_usage(self) -> bool:
        """Whether the request asked for usage in the stream (``stream_options.include_usage``)."""


class ReplyView(Protocol):
    """What a synthesizer reads of the stub's reply (a :class:`ssemock.stubs.Reply`)."""

    @property
    def text(self) -> str | None:
        """The answer's text (None: none)."""

    @property
    def reasoning(self) -> str | None:
        """The reasoning (thinking) text sent before the answer (None: none)."""

    @property
    def refusal(self) -> str | None:
        """A refusal instead of the text (None: none)."""

    @property
    def finish(self) -> str:
        """The finish reason in OpenAI's words: ``stop``, ``length``, ``tool_calls``, ``content_filter``."""


class CallView(Protocol):
    """What a synthesizer reads of one tool call of the reply (a :class:`ssemock.stubs.ToolCall`)."""

    @property
    def name(self) -> str:
        """The function's name."""

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments, as JSON values."""

    @property
    def arguments_json(self) -> str:
        """The arguments as the JSON text a provider streams."""

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept, as OpenAI and Anthropic send it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_NO_SYMBOLS = str.maketrans("+/", "xQ")
_SLOT = re.compile("\"\ue000([a-z_]+)\ue000\"")


def slot(name: str) -> str:
    """A placeholder string for :class:`Template` (filled by ``fill(name=...)``)."""
    return f"\ue000{name}\ue000"


Column = Sequence[str] | Sequence[int] | str | int
"""The values of one :class:`Template` slot for :meth:`Template.fill_many`: one per event (strings are
JSON-encoded, integers written as numbers), or one value for every event."""


class Template:
    """A JSON text with string slots, filled without encoding the rest again: ``fill(t="x")`` gives
    exactly ``dump(value)`` with ``"x"`` in place of ``slot("t")`` (one event per token stays cheap).

    Args:
        value: a JSON value holding :func:`slot` strings.
        dump: the encoder the provider uses (default :func:`dumps`); it must keep non-ASCII characters
            (``ensure_ascii=False``), and the constant strings of ``value`` must not look like a slot.
    """

    def __init__(self, value: Any, dump: Callable[[Any], str] | None = None) -> None:
        parts = _SLOT.split((dump or dumps)(value))
        self.literals = parts[0::2]
        self.names = parts[1::2]

    def fill(self, **slots: str | int) -> str:
        """The JSON text with each slot's value: a string (encoded) or an integer."""
        return self.fill_many(1, **slots)[0]

    def fill_many(self, count: int, **columns: Column) -> list[str]:
        """``count`` JSON texts, the ``i``-th with the ``i``-th value of each column (see :data:`Column`)."""
        return self.fill_joined(count, **columns).split("\x00") if count > 0 else []

    def fill_joined(self, count: int, **columns: Column) -> str:
        """The ``count`` texts of :meth:`fill_many` joined by NUL (a character JSON text never holds
        unescaped), built as one string so the per-event work stays in C (one ``encode_basestring``
        per value): the ``data`` of a :func:`run`. ``count`` must be at least 1."""
        literals, width = self.literals, 2 * len(self.names)
        if not width:
            return "\x00".join([literals[0]] * count)
        grid: list[str] = [""] * (count * width - 1)
        for j, name in enumerate(self.names):
            grid[2 * j::width] = _encoded(columns[name], count)
            glue = literals[j + 1] if j + 1 < len(self.names) else literals[-1] + "\x00" + literals[0]
            grid[2 * j + 1::width] = [glue] * (count - 1 if j + 1 == len(self.names) else count)
        return literals[0] + "".join(grid) + literals[-1]


def _encoded(column: Column, count: int) -> list[str]:
    if isinstance(column, int):
        return [str(column)] * count
    if isinstance(column, str):
        return [encode_basestring(column)] * count
    if len(column) != count:
        raise ValueError(f"a template column has {len(column)} values for {count} events")
    if column and isinstance(column[0], int):
        return list(map(str, column))
    return list(map(encode_basestring, column))  # type: ignore[arg-type]


@dataclass(slots=True)
class Piece:
    """One event, or a run of events (``count``): its SSE ``event`` name (None: none), its ``data``
    text, and the tokens it carries (0 for structural events, which follow the previous one without
    a gap). ``comment``: a comment line instead (OpenRouter's keep-alive)."""

    event: str | None
    data: str
    tokens: int = 0
    comment: bool = False
    count: int = 1
    """More than 1: a run of ``count`` events alike but for their data, each carrying ``tokens``;
    ``data`` holds their texts joined by NUL (see :func:`run`)."""

    def datas(self) -> list[str]:
        """The data text of each event of this piece (one, or ``count`` for a run)."""
        return self.data.split("\x00") if self.count > 1 else [self.data]


def nearest(events: list[tuple[str, Any]], spot: int, fits: Callable[[str, Any], bool]) -> Any:
    """The JSON value of the event nearest to index ``spot`` (those before it first) for which
    ``fits(type, value)``; raises ``LookupError`` when none fits."""
    order = [*range(min(spot, len(events)) - 1, -1, -1), *range(max(spot, 0), len(events))]
    for i in order:
        kind, value = events[i]
        if isinstance(value, dict) and fits(kind, value):
            return value
    raise LookupError("no event of this provider's text shape in the stream")


def pieces(event: str | None, datas: list[str], tokens: int = 1) -> list[Piece]:
    """One :class:`Piece` per text of ``datas``, all named ``event`` and carrying ``tokens`` each."""
    return list(map(Piece, repeat(event, len(datas)), datas, repeat(tokens)))


BATCH = 8192
"""The most events one C-level call writes: synthesis runs in a thread, and the event loop gets the
interpreter back only between bytecodes, so a long answer is written in batches of this many."""


def run(event: str | None, template: Template, count: int, tokens: int = 1, **columns: Column) -> list[Piece]:
    """``count`` events named ``event``, each carrying ``tokens``, their data ``template`` filled
    with the ``i``-th value of each column (:meth:`Template.fill_many`): runs of at most
    :data:`BATCH` events (none when ``count`` is 0)."""
    out = []
    for at in range(0, count, BATCH):
        size = min(BATCH, count - at)
        part = {k: v if isinstance(v, (str, int)) else v[at:at + size] for k, v in columns.items()}
        out.append(Piece(event, template.fill_joined(size, **part), tokens, count=size))
    return out


def event_count(pieces: list[Piece]) -> int:
    """How many events (and comments) ``pieces`` write."""
    return sum(p.count for p in pieces)


@dataclass
class Script:
    """Everything a synthesizer needs to write one answer.

    Attributes:
        conv: the request, read (:class:`RequestView`: a :class:`~ssemock.stubs.Conversation`).
        reply: the stub's reply (:class:`ReplyView`: a :class:`~ssemock.stubs.Reply`).
        model: the model reported.
        rng: identifiers and padding are drawn from it (seeded: the same test, the same bytes).
        created: Unix time in seconds.
        calls: the tool calls with their identifiers.
        input_tokens / output_tokens / reasoning_tokens: the usage reported.
        ids: identifiers drawn once per answer (see :meth:`named`).
    """

    conv: RequestView
    reply: ReplyView
    model: str
    rng: random.Random
    created: int
    calls: list[tuple[str, CallView]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    ids: dict[str, str] = field(default_factory=dict)
    _pool: str = field(default="", repr=False)
    _split: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _at: int = field(default=0, repr=False)

    def named(self, key: str, alphabet: str, size: int, prefix: str = "") -> str:
        """The identifier ``key`` of this answer (drawn once, then the same)."""
        if key not in self.ids:
            self.ids[key] = prefix + self.ident(alphabet, size)
        return self.ids[key]

    def tokens(self, text: str) -> list[str]:
        """``text`` cut by :func:`~ssemock.providers.tokens.split_tokens`, once per answer (usage counts
        and events share the pieces)."""
        found = self._split.get(text)
        if found is None:
            found = self._split[text] = split_tokens(text)
        return found

    def padding(self, low: int, high: int) -> str:
        """A random ``[A-Za-z0-9]`` string of ``low`` to ``high`` characters (OpenAI's ``obfuscation``)."""
        return self.paddings(1, low, high)[0]

    def paddings(self, count: int, low: int, high: int) -> list[str]:
        """``count`` :meth:`padding` strings in a row (the same as ``count`` calls), cut from a pool
        drawn in bulk: one per token-sized event stays cheap."""
        bits, span, pool, at = self.rng.getrandbits, high - low + 1, self._pool, self._at
        out = []
        for _ in range(count):
            size = low + bits(8) % span
            if len(pool) - at < size:
                pool = pool[at:] + base64.b64encode(self.rng.randbytes(3072)).decode().translate(_NO_SYMBOLS)
                at = 0
            out.append(pool[at:at + size])
            at += size
        self._pool, self._at = pool, at
        return out

    def ident(self, alphabet: str, size: int) -> str:
        """``size`` characters drawn from ``alphabet``."""
        return "".join(self.rng.choices(alphabet, k=size))


@dataclass(frozen=True)
class Synthesis:
    """How one provider answers without a recording; calling it gives the streamed events.

    Attributes:
        events: ``script -> [Piece]``: the streamed events, in order.
        answer: ``script -> JSON value``: the ``stream: false`` answer.
        headers: ``(script, stream) -> [(name, value)]``: the response headers (no framing headers).
        call_id: ``script -> str``: a new tool-call identifier in the provider's shape.
        eol: the line end of the stream (Gemini sends CRLF).
        text_event: ``(events, spot, text) -> (event type or None, data)``: one text-delta event carrying
            ``text`` in this provider's shape, its identifiers and model copied from the recorded events
            nearest to index ``spot`` (``events``: (event type, JSON value or None) per event); raises
            ``LookupError`` when no event of the stream has that shape. Used by the ``insert`` step.
    """

    events: Callable[[Script], list[Piece]]
    answer: Callable[[Script], Any]
    headers: Callable[[Script, bool], list[tuple[str, str]]]
    call_id: Callable[[Script], str]
    eol: str = "\n"
    text_event: Callable[[list[tuple[str, Any]], int, str], tuple[str | None, str]] | None = None

    def __call__(self, script: Script) -> list[Piece]:
        return self.events(script)
