"""Parsing a large JSON text in pieces, so that a thread parsing it never holds the interpreter long.

``json.loads`` runs in C and keeps the interpreter for the whole text: 1 MiB of tiny items
takes 30-100 ms, during which the event loop's thread cannot run, even when the parse runs in
another thread. :func:`loads_in_pieces` gives the same value (or raises the same kinds of
error) by parsing the outer arrays and objects a run of items at a time: each run of at most
:data:`PIECE` characters ending at a comma is parsed by one ``json.loads`` call, wrapped in
brackets. Such a call succeeds only when the run ends at a comma of the container itself (a
run ending inside a string, or inside a nested array or object, leaves something unclosed),
so a failed call only means a shorter run, or a single item, is tried next.

Only the outer :data:`LEVELS` levels are walked this way; deeper values are parsed whole.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable
from typing import Any

__all__ = ["LEVELS", "PIECE", "WHOLE", "loads_in_pieces"]

WHOLE = 64 * 1024
"""Texts of up to this many bytes (characters) are parsed by one ``json.loads`` call."""
PIECE = 32 * 1024
"""Characters of a container parsed by one ``json.loads`` call, at most (about 1-3 ms of C)."""
LEVELS = 4
"""Nesting levels walked piece by piece; values nested deeper are parsed by one call each."""

_OPENERS = (b"{", b"[")
_SHORTEST = 512  # a run is tried at PIECE characters, then an eighth as long, not shorter than this
_WS = re.compile(r"[ \t\n\r]*").match  # JSON's whitespace, as json.decoder skips it
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def loads_in_pieces(data: bytes | str) -> Any:
    """``json.loads(data)``; over :data:`WHOLE` bytes, parsed in pieces (see the module docstring).

    Raises:
        ValueError: not JSON (``json.JSONDecodeError``, or a ``UnicodeDecodeError``).
        RecursionError: nested too deep for the parser.
    """
    if len(data) <= WHOLE:
        if isinstance(data, bytes) and data[:1] in _OPENERS and data[1:2] != b"\x00":
            # What json.loads does with it: detect_encoding says UTF-8 when the text starts with a
            # byte other than a BOM's or 0, then a byte other than 0; no whitespace to skip before it.
            text = data.decode("utf-8", "surrogatepass")
            try:
                value, end = _SCAN(text, 0)  # json.JSONDecoder.decode's steps, without whitespace before
            except StopIteration as exc:
                raise json.JSONDecodeError("Expecting value", text, exc.value) from None
            if end != len(text) and (end := _skip(text, end)) != len(text):
                raise json.JSONDecodeError("Extra data", text, end)
            return value
        return json.loads(data)
    text = data.decode(json.detect_encoding(data), "surrogatepass") if isinstance(data, bytes) else data
    if text.startswith("\ufeff"):
        return json.loads(text)  # the same error as json.loads gives
    idx = _skip(text, 0)
    value, idx = _value(text, idx, 0)
    if _skip(text, idx) != len(text):
        raise json.JSONDecodeError("Extra data", text, idx)
    return value


def _value(text: str, idx: int, level: int) -> tuple[Any, int]:
    """The value starting at ``idx`` (no whitespace before it) and the index after it."""
    opening = text[idx:idx + 1]
    if level < LEVELS and opening in ("[", "{"):
        return _container(text, idx, level, opening == "{")
    try:
        return _SCAN(text, idx)
    except StopIteration as exc:
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None


def _container(text: str, idx: int, level: int, is_object: bool) -> tuple[Any, int]:
    close = "}" if is_object else "]"
    members: dict[str, Any] = {}
    elements: list[Any] = []
    items = members if is_object else elements
    idx = _skip(text, idx + 1)
    if text[idx:idx + 1] == close:
        return items, idx + 1
    count = failures = 0
    ending = ","
    while True:
        if count >= _FIRST and failures < _GIVE_UP:  # a container this long may be long: runs
            before = idx
            idx = _run(text, idx, is_object, items, ending)
            failures = 0 if idx != before else failures + 1
        if is_object:
            key, idx = _key(text, idx)
            idx = _skip(text, idx)
            opening = text[idx:idx + 1]
            value, idx = _value(text, idx, level + 1)
            members[key] = value
        else:
            opening = text[idx:idx + 1]
            value, idx = _value(text, idx, level + 1)
            elements.append(value)
        if count == 0:  # runs end after an item like the first: an object's "}," or an array's "],"
            ending = {"{": "},", "[": "],"}.get(opening, ",")
        count += 1
        idx = _skip(text, idx)
        sep = text[idx:idx + 1]
        if sep == close:
            return items, idx + 1
        if sep != ",":
            raise json.JSONDecodeError(f"Expecting ',' delimiter or {close!r}", text, idx)
        idx = _skip(text, idx + 1)


_FIRST = 16  # items of a container parsed one by one before runs are tried
_GIVE_UP = 4  # runs that failed in a row, after which a container's items are parsed one by one


def _run(text: str, idx: int, is_object: bool, items: dict[str, Any] | list[Any], ending: str) -> int:
    """Parse runs of whole items from ``idx`` into ``items`` while some parse; the index after them
    (the start of an item that is parsed on its own next). A run ends at the last ``ending``
    (``,`` or, for items that are objects or arrays, ``},`` or ``],``) within :data:`PIECE`
    characters, else within an eighth of that."""
    size = PIECE
    while size >= _SHORTEST:
        cut = text.rfind(ending, idx, idx + size) + len(ending) - 1
        if cut <= idx:
            size //= 8
            continue
        try:
            parsed = json.loads(("{" if is_object else "[") + text[idx:cut] + ("}" if is_object else "]"))
        except ValueError:
            size //= 8
            continue
        if isinstance(items, dict):
            items.update(parsed)
        else:
            items.extend(parsed)
        idx = _skip(text, cut + 1)
        size = PIECE
    return idx


def _skip(text: str, idx: int) -> int:
    """The index of the first character at or after ``idx`` that is not JSON whitespace."""
    found = _WS(text, idx)
    return found.end() if found else idx


def _key(text: str, idx: int) -> tuple[str, int]:
    """An object's key and the index after its colon."""
    if text[idx:idx + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, idx)
    key, idx = _SCAN(text, idx)  # a string: the key
    idx = _skip(text, idx)
    if text[idx:idx + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, idx)
    return key, idx + 1
