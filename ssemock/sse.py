"""The WHATWG event-stream codec, sans I/O: an incremental decoder and an encoder.

Source: WHATWG HTML Living Standard, §9.2 "Server-sent events", sections 9.2.5
"Parsing an event stream" and 9.2.6 "Interpreting an event stream".
https://html.spec.whatwg.org/multipage/server-sent-events.html

The decoder takes bytes split anywhere (inside a UTF-8 character, between the CR
and LF of a CRLF) and returns what a conforming user agent would see: dispatched
:class:`Event` objects and, for observability, :class:`Comment` lines. Under it,
:class:`LineSplitter` cuts the bytes into lines; it is the one place that ends
lines (CRLF, LF or CR), for the decoder and for every other reader of lines. No
aiohttp or other I/O import lives here.

Deliberate additions to the spec, which keep its results unchanged:

* comments are returned (the spec ignores them) so keep-alive comments such as
  ``: OPENROUTER PROCESSING`` can be observed; one leading space is removed from
  the comment text, as from a field value;
* :attr:`Event.retry` carries the ``retry`` value given inside that event's
  block (the spec only sets the reconnection time, also kept in
  :attr:`Decoder.reconnection_time`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["BLANK_LINES", "Comment", "Decoder", "Event", "LineSplitter", "decode", "encode", "split_blocks"]

# §9.2.5: end-of-line = ( cr lf / cr / lf ). Bytes are cut by LineSplitter (bytes.splitlines ends
# lines at exactly these three); this pattern splits the text values encode() writes, where
# str.splitlines would also end lines at U+2028, U+0085 and others.
_EOL = re.compile(r"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
BLANK_LINES = frozenset({b"\n", b"\r\n", b"\r"})
"""A blank line as :class:`LineSplitter` returns it: its end alone."""


@dataclass(frozen=True, slots=True)
class Event:
    """A dispatched event, as a WHATWG user agent would fire it.

    Attributes:
        data: the data buffer with its final LF removed; lines joined by ``"\\n"``.
        type: the event type (``"message"`` when no ``event`` field was given).
        last_event_id: the last event ID string at dispatch time (persists across events).
        retry: the reconnection time in milliseconds set inside this event's block, or None.
    """

    data: str
    type: str = "message"
    last_event_id: str = ""
    retry: int | None = None


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment line (starting with ``:``), with one leading space removed."""

    text: str


class LineSplitter:
    """Bytes split anywhere → complete lines, each with its end (WHATWG §9.2.5, sans I/O).

    A line ends at CRLF, LF or CR. A CR ends its line at once, also as the last byte of a
    feed (a user agent dispatches on it without waiting for more bytes); a LF that starts
    the next feed completes that CRLF and is dropped, so such a line comes back ending in
    ``b"\\r"``. Fed a whole body at once, the lines join back to it exactly
    (:meth:`close` gives the unfinished last line).

    Args:
        keep: None keeps every byte of a line. A number (at least 1) bounds the memory a
            line that spans feeds takes: of its bytes in earlier feeds only the first
            ``keep`` are held, so such a line may come back with bytes missing after its
            first ``keep``; those and its end are always right (a line within one feed
            comes back whole). A caller that sets it reads only a line's start and end.

    Raises:
        ValueError: a ``keep`` below 1.

    Example::

        >>> lines = LineSplitter()
        >>> lines.feed(b"data: a\\r") + lines.feed(b"\\nid") + lines.feed(b": 1\\n\\n")
        [b'data: a\\r', b'id: 1\\n', b'\\n']
    """

    __slots__ = ("_held", "_keep", "_pieces", "_skip_lf")

    def __init__(self, keep: int | None = None) -> None:
        if keep is not None and keep < 1:
            raise ValueError(f"LineSplitter keep must be >= 1 byte, got {keep}")
        self._keep = keep
        self._pieces: list[bytes] = []  # the start of the unfinished line
        self._held = 0  # bytes in _pieces, counted when keep is set
        self._skip_lf = False  # the last feed ended in CR: a leading LF completes a CRLF

    def feed(self, data: bytes) -> list[bytes]:
        """The lines completed by ``data`` (any number of bytes, split anywhere), in order,
        each ending in ``b"\\n"``, ``b"\\r\\n"`` or ``b"\\r"``."""
        if type(data) is not bytes:
            data = bytes(data)  # a bytearray or memoryview, as the decoder has always taken
        if self._skip_lf and data:
            self._skip_lf = False
            if data[0] == 10:  # LF
                data = data[1:]
        if b"\n" not in data and b"\r" not in data:
            if data:
                self._hold(data)  # no line end yet: O(1) per feed
            return []
        lines = data.splitlines(keepends=True)  # bytes end lines at CRLF, LF and CR only
        pieces = self._pieces
        if pieces:  # the held start of the first line
            pieces.append(lines[0])
            lines[0] = b"".join(pieces)
            pieces.clear()
            self._held = 0
        last = lines[-1]
        end = last[-1]
        if end == 13:  # CR: a CRLF may be split between two feeds
            self._skip_lf = True
        elif end != 10:  # an unfinished line: held (nothing is held now)
            lines.pop()
            if self._keep is not None:
                last = last[: self._keep]
                self._held = len(last)
            pieces.append(last)
        return lines

    def close(self) -> list[bytes]:
        """End of input: the unfinished last line (without an end) if there is one, else ``[]``.
        The splitter can then be fed a new input."""
        self._skip_lf = False
        if not self._pieces:
            return []
        line = b"".join(self._pieces)
        self._pieces.clear()
        self._held = 0
        return [line]

    def _hold(self, piece: bytes) -> None:
        if self._keep is not None:
            piece = piece[: self._keep - self._held]
            if not piece:
                return
            self._held += len(piece)
        self._pieces.append(piece)


class Decoder:
    """Incremental event-stream decoder (WHATWG §9.2.5-9.2.6).

    Feed it bytes as they arrive, split anywhere; it returns the events and
    comments completed by those bytes, in stream order. Call :meth:`close` at the
    end of the stream: an unfinished event is discarded, as the spec requires.

    Attributes:
        last_event_id: the last event ID string (``""`` until an ``id`` field is seen).
        reconnection_time: the last valid ``retry`` value in milliseconds, or None.

    Example::

        >>> d = Decoder()
        >>> d.feed(b"data: a\\r") + d.feed(b"\\n\\r\\n")
        [Event(data='a', type='message', last_event_id='', retry=None)]
    """

    def __init__(self) -> None:
        self._lines = LineSplitter()
        self._first = True  # no line yet: the first may start with a BOM
        self._data: list[str] = []
        self._type = ""
        self._retry: int | None = None
        self._id_buffer = ""
        self.last_event_id = ""
        self.reconnection_time: int | None = None
        self._closed = False

    def feed(self, data: bytes) -> list[Event | Comment]:
        """Decode the next bytes of the stream.

        Args:
            data: any number of bytes (0 included), split anywhere.

        Returns:
            The events and comments completed by these bytes, in order.

        Raises:
            ValueError: if called after :meth:`close`.
        """
        if self._closed:
            raise ValueError("Decoder.feed() after close()")
        lines = self._lines.feed(data)
        if not lines:
            return []
        if self._first:  # the WHATWG "UTF-8 decode" drops one leading BOM
            self._first = False
            lines[0] = lines[0].removeprefix(_BOM)
        out: list[Event | Comment] = []
        for line in lines:
            # No UTF-8 sequence holds a CR or LF byte, so decoding line by line gives the text of
            # decoding the whole stream: invalid sequences become U+FFFD, a character split across
            # feeds is whole in its line.
            self._process_line(line.rstrip(b"\r\n").decode("utf-8", "replace"), out)
        return out

    def close(self) -> list[Event | Comment]:
        """End of stream: discard any unfinished line and event (§9.2.6, last paragraph).

        Returns:
            Always an empty list; it exists so callers can treat the end uniformly.
        """
        self._closed = True
        self._lines.close()
        self._data.clear()
        return []

    def _process_line(self, line: str, out: list[Event | Comment]) -> None:
        if not line:  # "If the line is empty (a blank line): Dispatch the event"
            self._dispatch(out)
            return
        if line[0] == ":":  # "If the line starts with a U+003A COLON: Ignore the line"
            text = line[1:]
            out.append(Comment(text[1:] if text[:1] == " " else text))
            return
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":  # "remove it from value"
            value = value[1:]
        if name == "data":  # append value, then a single LF
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id" and "\0" not in value:  # an id containing NULL is ignored
            self._id_buffer = value
        elif name == "retry" and value.isascii() and value.isdigit():  # only ASCII digits
            self.reconnection_time = self._retry = int(value)
        # any other field name is ignored

    def _dispatch(self, out: list[Event | Comment]) -> None:
        # Step 1: the last event ID string is set even if nothing is dispatched.
        self.last_event_id = self._id_buffer
        if self._data:
            # Joining with LF equals "append value + LF, then remove the final LF".
            out.append(
                Event("\n".join(self._data), self._type or "message", self.last_event_id, self._retry)
            )
        # Step 2 and the end of dispatch: reset data and event type buffers.
        self._data = []
        self._type = ""
        self._retry = None


def decode(data: bytes | Iterable[bytes], *, comments: bool = False) -> list[Event | Comment]:
    """Decode a whole stream at once.

    Args:
        data: the stream bytes, or an iterable of byte chunks.
        comments: also return :class:`Comment` items (default: events only).

    Returns:
        The events (and comments) a WHATWG user agent would see, end of stream included.
    """
    decoder = Decoder()
    chunks = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
    out: list[Event | Comment] = []
    for chunk in chunks:
        out.extend(decoder.feed(bytes(chunk)))
    out.extend(decoder.close())
    return out if comments else [item for item in out if isinstance(item, Event)]


def split_blocks(body: bytes) -> list[bytes]:
    """Cut a whole event stream after each blank line; the pieces join back to ``body``.

    Lines end as the decoder ends them (§9.2.5): CRLF is one line end, so ``event: x\\r\\n``
    is one line, not a line and a blank line; a lone CR or LF is a line end too. A blank
    line is an empty line: a line end at the start of the stream (or after a leading
    U+FEFF), or right after another line end. Every piece but the last ends with the line
    end of a blank line (an event block, a comment block, or a lone blank line); the last
    piece is whatever follows the last blank line, if anything (an unfinished block).

    Args:
        body: the stream bytes, complete (a CR at the very end is taken as a line end).

    Returns:
        The pieces, in order; ``[]`` for an empty body.
    """
    pieces: list[bytes] = []
    start = end = 0
    for line in LineSplitter().feed(body):  # what follows the last line end is the last piece
        end += len(line)
        # "If the line is empty (a blank line)"; the first line may start with the one ignored BOM
        if line in BLANK_LINES or (end == len(line) and line.removeprefix(_BOM) in BLANK_LINES):
            pieces.append(body[start:end])
            start = end
    if start < len(body):
        pieces.append(body[start:])
    return pieces


def _one_line(name: str, value: str) -> str:
    # aiohttp-sse habit: a CR or LF would end the field early, so it cannot be sent.
    if "\r" in value or "\n" in value:
        raise ValueError(f"SSE field {name!r} cannot contain CR or LF: {value!r}")
    return value


def encode(
    data: str | None = None,
    *,
    event: str | None = None,
    id: str | None = None,  # noqa: A002 - the field's name in the spec
    retry: int | None = None,
    comment: str | None = None,
    eol: str = "\n",
    space: bool = True,
) -> bytes:
    """Encode one event block (fields, then a blank line) as UTF-8 bytes.

    Args:
        data: the event data; each of its lines becomes a ``data:`` line. None
            writes no ``data`` field (a meta-only block, which dispatches nothing).
        event: the event type, or None for the default ``message``.
        id: the event ID (must not contain CR, LF or NULL).
        retry: reconnection time in milliseconds (non-negative).
        comment: comment text; each of its lines becomes a ``:`` line, written first.
        eol: the line ending: ``"\\n"``, ``"\\r\\n"`` or ``"\\r"``.
        space: write ``field: value`` (True) or ``field:value`` (False).

    Returns:
        The encoded block, ending with a blank line.

    Raises:
        ValueError: for a field that cannot be encoded (CR/LF in ``event``/``id``,
            NULL in ``id``, a negative ``retry``, an unknown ``eol``).
    """
    if eol not in ("\n", "\r\n", "\r"):
        raise ValueError(f"eol must be LF, CRLF or CR, got {eol!r}")
    sep = ": " if space else ":"
    lines: list[str] = []
    if comment is not None:
        lines.extend(f":{' ' if space and text else ''}{text}" for text in _EOL.split(comment))
    if event is not None:
        lines.append(f"event{sep}{_one_line('event', event)}")
    if id is not None:
        if "\0" in id:
            raise ValueError(f"SSE id cannot contain NULL: {id!r}")
        lines.append(f"id{sep}{_one_line('id', id)}")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"SSE retry must be >= 0 milliseconds, got {retry}")
        lines.append(f"retry{sep}{int(retry)}")
    if data is not None:
        lines.extend(f"data{sep}{line}" for line in _EOL.split(data))
    return (eol.join(lines) + eol + eol).encode("utf-8")
