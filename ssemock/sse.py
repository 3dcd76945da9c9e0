"""The WHATWG event-stream codec, sans I/O: an incremental decoder and an encoder.

Source: WHATWG HTML Living Standard, §9.2 "Server-sent events", sections 9.2.5
"Parsing an event stream" and 9.2.6 "Interpreting an event stream".
https://html.spec.whatwg.org/multipage/server-sent-events.html

The decoder takes bytes split anywhere (inside a UTF-8 character, between the CR
and LF of a CRLF) and returns what a conforming user agent would see: dispatched
:class:`Event` objects and, for observability, :class:`Comment` lines. No
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

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Comment", "Decoder", "Event", "decode", "encode", "split_blocks"]

# §9.2.5: end-of-line = ( cr lf / cr / lf ) — the one line-end rule, for text and for bytes.
_EOL_RULE = r"\r\n|\r|\n"
_EOL = re.compile(_EOL_RULE)
_EOL_BYTES = re.compile(_EOL_RULE.encode("ascii"))


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
        # "utf-8-sig" is the WHATWG "UTF-8 decode": one leading BOM is dropped,
        # invalid sequences become U+FFFD, a character split across feeds is kept.
        self._text = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._pieces: list[str] = []  # the current, unfinished line
        self._skip_lf = False  # last text ended in CR: a leading LF completes a CRLF
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
        return self._feed_text(self._text.decode(data))

    def close(self) -> list[Event | Comment]:
        """End of stream: discard any unfinished line and event (§9.2.6, last paragraph).

        Returns:
            Always an empty list; it exists so callers can treat the end uniformly.
        """
        self._closed = True
        self._text.decode(b"", final=True)
        self._pieces.clear()
        self._data.clear()
        return []

    def _feed_text(self, text: str) -> list[Event | Comment]:
        if not text:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
                if not text:
                    return []
        if "\n" not in text and "\r" not in text:
            self._pieces.append(text)  # no line end yet: O(1) per feed
            return []
        if self._pieces:
            self._pieces.append(text)
            text = "".join(self._pieces)
            self._pieces.clear()
        lines = _EOL.split(text)
        rest = lines.pop()
        if rest:
            self._pieces.append(rest)
        elif text[-1] == "\r":
            self._skip_lf = True  # a CRLF may be split between two reads
        out: list[Event | Comment] = []
        for line in lines:
            self._process_line(line, out)
        return out

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
    start = 0
    line_start = 3 if body.startswith(b"\xef\xbb\xbf") else 0  # one leading BOM is ignored
    for m in _EOL_BYTES.finditer(body):
        if m.start() == line_start:  # "If the line is empty (a blank line)"
            pieces.append(body[start : m.end()])
            start = m.end()
        line_start = m.end()
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
