"""What a YAML load counts and builds as it goes (:mod:`ssemock.cassette.fastyaml`): the lists whose
items are bounded (:class:`ItemBound`), the list whose items are built as they are parsed
(:class:`ItemBuilder`), and YAML read again from a file rather than held (:class:`Reread`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from yaml.events import MappingStartEvent

__all__ = ["ItemBound", "ItemBuilder", "Reread"]


class Reread(Protocol):
    """YAML bytes read a piece at a time (a file read again, rather than held in memory)."""

    def read(self, size: int = -1) -> bytes:
        """The next bytes, at most ``size`` (all that are left when negative); ``b""`` at the end."""

    def seek(self, offset: int) -> None:
        """Read from ``offset`` (0: from the start) again."""

    def __len__(self) -> int:
        """The number of bytes."""


@dataclass(frozen=True)
class ItemBound:
    """The sequences whose items are counted while a document loads, and the most each may hold.

    Args:
        most: the most items in one such sequence (a cassette's: :data:`~ssemock.limits.MAX_ITEMS`).
        fields: ``(path, what)`` pairs: ``path`` the keys from the top down, ``None`` for any list
            index (``("interactions", None, "response", "chunks")``), ``what`` the items' name in the
            error (``"chunks"``).
    """

    most: int
    fields: tuple[tuple[tuple[str | None, ...], str], ...]

    def what(self, stack: list[list[Any]]) -> tuple[str, str] | None:
        """The field (``interactions[0].response.chunks``) and item name of a sequence opening
        inside the open collections ``stack``, if its items are counted."""
        path: list[Any] = []
        for kind, items, *_ in stack:
            if kind is MappingStartEvent:
                path.append(items[-1] if len(items) % 2 else None)
            else:
                path.append(len(items))
        for pattern, what in self.fields:
            if len(pattern) == len(path) and all(
                (key is None and type(got) is int) or (key is not None and got == key)
                for key, got in zip(pattern, path)
            ):
                return "".join(f"[{p}]" if type(p) is int else f".{p}" for p in path).lstrip("."), what
        return None


@dataclass(frozen=True)
class ItemBuilder:
    """Builds each item of the list under one key of the top-level mapping as soon as it is parsed.

    Args:
        key: the top-level key of the list (``"interactions"``).
        begin: called when the list opens, with the keys and values of the top-level mapping parsed
            before it (``[key, value, key, value, ...]``); returns ``build(index, item)``, whose result
            the list holds instead of the parsed item, or None to keep the items as parsed. When
            ``build`` raises, that item and the ones after it are kept as parsed: the caller then
            validates them itself, and says what is wrong in its own order.
    """

    key: str
    begin: Callable[[list[Any]], Callable[[int, Any], Any] | None]
