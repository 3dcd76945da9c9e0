"""The body as lines, for the ``event`` and ``byte`` stages.

The body is split where a WHATWG parser ends a line (CRLF, LF or CR, §9.2.5).
Each :class:`Line` keeps its text, its line end and the index of the recorded
chunk that completed it, so that joining the lines back gives the recorded
bytes and chunk times, with one difference: a line that was split across
chunks arrives whole, with the chunk that completed it.

Lossless: bytes that are not UTF-8 are kept through ``surrogateescape``.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..cassette import Chunk
from ..sse import LineSplitter

__all__ = [
    "Block", "Line", "blocks", "field_line", "growth", "is_field_name", "join_lines", "json_payload", "lines_size",
    "map_blocks", "parse_field", "split_lines", "text_size",
]

@dataclass(frozen=True)
class Line:
    """One line of the event stream.

    Attributes:
        text: the line without its end (a leading BOM stays in the first line's text).
        eol: ``"\\n"``, ``"\\r\\n"``, ``"\\r"`` or ``""`` (last line without an end).
        chunk: index of the recorded chunk in which the line ends.
    """

    text: str
    eol: str
    chunk: int

    def with_text(self, text: str) -> Line:
        """The same line end and chunk, another text."""
        return replace(self, text=text)


def split_lines(chunks: list[Chunk]) -> list[Line]:
    """The body of ``chunks`` as lines (see module docstring)."""
    ends = list(itertools.accumulate(len(c.data) for c in chunks))
    lines: list[Line] = []
    offset = 0
    splitter = LineSplitter()  # fed the whole body: its lines join back to it
    # no UTF-8 sequence holds a CR or LF byte, so decoding line by line gives the text of the whole body
    for raw in splitter.feed(b"".join(c.data for c in chunks)) + splitter.close():
        offset += len(raw)
        piece = raw.rstrip(b"\r\n")
        text = piece.decode("utf-8", "surrogateescape")
        if len(piece) < len(raw):
            lines.append(Line(text, raw[len(piece) :].decode("ascii"), _chunk_of(ends, offset)))
        else:
            lines.append(Line(text, "", max(len(chunks) - 1, 0)))
    return lines


def _chunk_of(ends: list[int], offset: int) -> int:
    return min(bisect.bisect_left(ends, offset), max(len(ends) - 1, 0))


def join_lines(lines: list[Line], chunks: list[Chunk]) -> list[Chunk]:
    """The lines as chunks: chunk ``i`` holds the lines that end in recorded chunk ``i``.

    Args:
        lines: the edited lines.
        chunks: the recorded chunks (for their times).

    Returns:
        One chunk per recorded chunk that still holds bytes, at its recorded time.
    """
    parts: dict[int, list[str]] = {}
    for line in lines:
        parts.setdefault(line.chunk, []).append(line.text + line.eol)
    out: list[Chunk] = []
    for index in sorted(parts):
        data = "".join(parts[index]).encode("utf-8", "surrogateescape")
        t = chunks[index].t if index < len(chunks) else (chunks[-1].t if chunks else 0.0)
        if data:
            out.append(Chunk(t, data))
    return out


def text_size(text: str) -> int:
    """Bytes of ``text`` in the body (UTF-8; bytes that were not UTF-8 count one each)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def lines_size(lines: Iterable[Line]) -> int:
    """Bytes of ``lines`` in the body: their texts and line ends."""
    return sum(text_size(line.text) + len(line.eol) for line in lines)


def growth(old: list[Line], new: list[Line]) -> tuple[int, int]:
    """What ``new`` adds to the body in place of ``old``: (bytes, lines), each at least 0."""
    return max(lines_size(new) - lines_size(old), 0), max(len(new) - len(old), 0)


def json_payload(data: str) -> Any:
    """The JSON value of ``data`` when it is a JSON object or array, else None."""
    if not data.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def field_name_schema(maximum: int = 256) -> dict[str, Any]:
    """The JSON Schema of :func:`is_field_name`."""
    return {"type": "string", "minLength": 1, "maxLength": maximum,
            "not": {"pattern": "[:\\r\\n]|^\\ufeff"}}


def is_field_name(value: Any, maximum: int = 256) -> bool:
    """True for a field name a step may write: 1 to ``maximum`` characters, no colon, CR, LF or leading BOM."""
    return (isinstance(value, str) and 0 < len(value) <= maximum and not set(value) & {":", "\r", "\n"}
            and not value.startswith("\ufeff"))


def parse_field(text: str) -> tuple[str, str] | None:
    """``(name, value)`` of a field line per §9.2.6 (one leading space removed); None for a comment."""
    if text.startswith(":"):
        return None
    name, colon, value = text.partition(":")
    if colon and value.startswith(" "):
        value = value[1:]
    return name, value


def field_line(name: str, value: str, *, space: bool = True, spaces: int | None = None, trailing: int = 0) -> str:
    """A field line ``name:`` + spaces + ``value`` + ``trailing`` spaces.

    Args:
        space: one space after the colon (``name: value``) or none (``name:value``).
        spaces: exactly this many spaces after the colon instead (overrides ``space``).
        trailing: spaces written after the value.

    WHATWG removes one space after the colon (§9.2.6), so with no space a value
    that itself starts with a space keeps one separating space (the value stays
    the same); with ``spaces`` >= 2 the value gains ``spaces - 1`` leading spaces,
    and ``trailing`` spaces stay in the value.
    """
    count = (1 if space else 0) if spaces is None else spaces
    if count == 0 and value.startswith(" "):
        count = 1
    return f"{name}:{' ' * count}{value}{' ' * trailing}"


@dataclass
class Block:
    """The lines of one event block, up to and including the blank line that ends it.

    Attributes:
        lines: the block's lines (the last one is blank unless the stream ended first).
        start: index of the first line in the whole stream.
    """

    lines: list[Line]
    start: int

    @property
    def data(self) -> str | None:
        """The data buffer this block dispatches (LF-joined ``data`` values), or None without data."""
        values = [f[1] for f in map(parse_field, (ln.text for ln in self.lines)) if f and f[0] == "data"]
        return "\n".join(values) if values else None

    @property
    def data_lines(self) -> list[int]:
        """Indexes (in ``lines``) of the block's ``data`` field lines."""
        return [i for i, ln in enumerate(self.lines) if (parse_field(ln.text) or ("",))[0] == "data"]

    @property
    def event_type(self) -> str:
        """The event type set in this block (``message`` when none)."""
        kinds = [f[1] for f in map(parse_field, (ln.text for ln in self.lines)) if f and f[0] == "event"]
        return kinds[-1] if kinds else "message"

    @property
    def eol(self) -> str:
        """The line end this block uses (its first line's, LF if none)."""
        return next((ln.eol for ln in self.lines if ln.eol), "\n")

    @property
    def dispatches(self) -> bool:
        """True when the block has data and ends with a blank line (so a parser dispatches it)."""
        return self.data is not None and bool(self.lines) and self.lines[-1].text == "" and self.lines[-1].eol != ""

    def with_data(self, data: str) -> list[Line]:
        """The block's lines with its ``data`` lines replaced by ``data`` (one line per LF-separated part).

        The new data lines stand where the first data line was, keep its spacing
        style, its line end and its chunk.
        """
        out: list[Line] = []
        done = False
        for line in self.lines:
            parsed = parse_field(line.text)
            if parsed is None or parsed[0] != "data":
                out.append(line)
            elif not done:
                done = True
                space = line.text.startswith("data: ") or line.text == "data"
                out.extend(line.with_text(field_line("data", part, space=space)) for part in data.split("\n"))
        return out


def blocks(lines: list[Line]) -> list[Block]:
    """Group lines into event blocks, each ending with its blank line."""
    out: list[Block] = []
    current: list[Line] = []
    start = 0
    for index, line in enumerate(lines):
        if not current:
            start = index
        current.append(line)
        if line.text == "" and line.eol:
            out.append(Block(current, start))
            current = []
    if current:
        out.append(Block(current, start))
    return out


def map_blocks(lines: list[Line], edit: Callable[[int, Block], list[Line] | None],
               charge: Callable[[int, int], None] | None = None) -> list[Line]:
    """Apply ``edit(event_index, block)`` to each dispatching block; None keeps the block.

    ``event_index`` counts dispatching blocks from 0. ``charge(bytes, lines)`` (a plan's
    :meth:`~ssemock.plan.Plan.charge`) is told what each edited block adds (:func:`growth`).
    """
    out: list[Line] = []
    index = 0
    for block in blocks(lines):
        if block.dispatches:
            new = edit(index, block)
            index += 1
            if new is not None and charge is not None:
                charge(*growth(block.lines, new))
            out.extend(block.lines if new is None else new)
        else:
            out.extend(block.lines)
    return out
