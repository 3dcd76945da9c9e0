"""Reading a JSON text from its outer levels down, one member at a time.

``json.loads`` builds the whole document before anything can be counted: a HAR file of 200,000
entries took 12.5 s and 742 MB before its entries were counted. :class:`JSONWalk` reads the
objects and arrays of the outer levels member by member, each value below them by json's own
scanner (the C one), so that a reader can stop where a bound is passed, the rest unparsed.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["JSONWalk"]

_SPACE = re.compile(r"[ \t\n\r]*").match  # JSON's whitespace (RFC 8259 section 2)


class JSONWalk:
    """Reads a JSON text from its outer levels down, one member at a time (each value by json's own scanner).

    Args:
        text: the JSON text.
        decoder: reads each value (its ``parse_int``, ``parse_constant``... apply).

    Every method raises ``json.JSONDecodeError`` (a ValueError) where the text is not JSON, and
    ``RecursionError`` for a value nested too deep for the scanner.
    """

    def __init__(self, text: str, decoder: json.JSONDecoder) -> None:
        self.text, self.pos = text, 0
        self.scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(decoder)  # type: ignore[arg-type]

    def next(self) -> str:
        """The next character that is not JSON whitespace (``""`` at the end); the position moves to it."""
        self.pos = _SPACE(self.text, self.pos).end()  # type: ignore[union-attr]  # it matches "" too
        return self.text[self.pos : self.pos + 1]

    def value(self) -> Any:
        """The value at the position, parsed whole; the position moves past it."""
        self.next()
        try:
            value, self.pos = self.scan(self.text, self.pos)
        except StopIteration as exc:
            raise json.JSONDecodeError("Expecting value", self.text, exc.value) from None
        return value

    def members(self, opening: str) -> Iterator[str | None]:
        """For the object (``{``) or array (``[``) at the position: each member's key (None for an array's
        items), the position at its value, which the caller reads (:meth:`value`, :meth:`members`) before
        asking for the next."""
        close = "}" if opening == "{" else "]"
        if self.next() != opening:
            raise json.JSONDecodeError(f"Expecting {opening!r}", self.text, self.pos)
        self.pos += 1
        if self.next() == close:
            self.pos += 1
            return
        while True:
            key = None
            if opening == "{":
                if self.next() != '"':
                    raise json.JSONDecodeError("Expecting property name enclosed in double quotes", self.text, self.pos)
                key = self.value()
                if self.next() != ":":
                    raise json.JSONDecodeError("Expecting ':' delimiter", self.text, self.pos)
                self.pos += 1
            yield key
            sep = self.next()
            self.pos += 1
            if sep == close:
                return
            if sep != ",":
                raise json.JSONDecodeError(f"Expecting ',' delimiter or {close!r}", self.text, self.pos - 1)

    def end(self) -> None:
        """Nothing but whitespace is left."""
        if self.next():
            raise json.JSONDecodeError("Extra data", self.text, self.pos)
