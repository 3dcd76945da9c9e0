"""What differs between what a client printed and what it should have: the first differing event or
field, in one line, with the text around the first differing character (``repr``, so that U+2028 or a
lost CR shows)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .contract import PrintedEvent

__all__ = ["first_difference", "payload", "text_difference", "value_difference"]

_AROUND = 24


def payload(data: str) -> Any:
    """``data`` as its JSON value when it is JSON, else the text itself."""
    try:
        return json.loads(data)
    except ValueError:
        return data


def first_difference(
    got: Sequence[PrintedEvent], want: Sequence[PrintedEvent], *, as_json: bool = False, ids: bool = True
) -> str | None:
    """The first difference between the events ``got`` and ``want`` (type, data, and the id when printed
    and ``ids``), data compared as JSON values with ``as_json``; None when equal."""
    for number, (a, b) in enumerate(zip(got, want), 1):
        where = f"event {number} of {len(want)}"
        if a.type != b.type:
            return f"{where}: type {a.type!r}, expected {b.type!r}"
        same = payload(a.data) == payload(b.data) if as_json else a.data == b.data
        if not same:
            return f"{where}: data {text_difference(a.data, b.data)}"
        if ids and a.id is not None and b.id is not None and a.id != b.id:
            return f"{where}: id {a.id!r}, expected {b.id!r}"
    if len(got) < len(want):
        missing = want[len(got)]
        return (
            f"printed {len(got)} event(s), expected {len(want)}: the first missing is event {len(got) + 1} "
            f"({missing.type}, data {_cut(missing.data, 0)})"
        )
    if len(got) > len(want):
        extra = got[len(want)]
        return (
            f"printed {len(got)} event(s), expected {len(want)}: event {len(want) + 1} is extra "
            f"({extra.type}, data {_cut(extra.data, 0)})"
        )
    return None


def text_difference(got: str, want: str) -> str:
    """Where two texts first differ: ``...got... , expected ...want... (character N)``."""
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"{_cut(got, at)}, expected {_cut(want, at)} (they differ at character {at})"


def value_difference(got: Any, want: Any, path: str = "") -> str | None:
    """The first JSON path where two JSON values differ (``tool_calls[0].arguments: ...``), or None."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            if key not in got or key not in want:
                return f"{path or '.'}: key {key!r} {'missing' if key not in got else 'not expected'}"
            if (found := value_difference(got[key], want[key], f"{path}.{key}" if path else key)) is not None:
                return found
        return None
    if isinstance(got, list) and isinstance(want, list):
        for index, (a, b) in enumerate(zip(got, want)):
            if (found := value_difference(a, b, f"{path}[{index}]")) is not None:
                return found
        if len(got) != len(want):
            return f"{path or '.'}: {len(got)} item(s), expected {len(want)}"
        return None
    if got != want or type(got) is not type(want):
        if isinstance(got, str) and isinstance(want, str):
            return f"{path or '.'}: {text_difference(got, want)}"
        return f"{path or '.'}: {_short(got)}, expected {_short(want)}"
    return None


def _cut(text: str, at: int) -> str:
    start = max(0, at - _AROUND)
    piece = text[start : at + _AROUND]
    return ("…" if start else "") + repr(piece) + ("…" if at + _AROUND < len(text) else "")


def _short(value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 2 * _AROUND else shown[: 2 * _AROUND] + "…"
