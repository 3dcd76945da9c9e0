"""Placeholder routes: recorded paths and query values holding the filter's ``REDACTED``, and their index.

A recorded path segment or query value holding ``REDACTED`` (a secret the recorder removed, e.g. a bot
token in ``/botREDACTED/sendMessage``) stands for any non-empty text there (:func:`path_fits`,
:func:`query_fits`). Such routes cannot be found by equality, so :class:`PlaceholderIndex` files their
route keys in a tree of path segments, a *segment trie*: a literal segment is a child found by its
text, a segment holding the placeholder a child found by the literal texts before its first and after
its last placeholder (then confirmed with :func:`redacted_fits`); where a path ends, keys by method and
by the multiset of query names (which :func:`query_fits` requires equal). A request walks the tree along
its own segments, so it meets only the routes whose literal parts it holds: a 4,000-segment request
path against 100,000 routes recorded as ``/v1/files/REDACTED/content/N`` is decided in microseconds
(it held the event loop 5-11 s when compared with each route).
"""

from __future__ import annotations

from collections.abc import Iterable

from .redact import REDACTED

__all__ = [
    "PlaceholderIndex",
    "RouteKey",
    "aligned_path",
    "holds_placeholder",
    "path_fits",
    "query_fits",
    "redacted_fits",
]

RouteKey = tuple[str | None, str | None, tuple[tuple[str, str], ...] | None]
"""``(method, path, sorted query pairs)``, each None when its matcher is not required."""


def redacted_fits(received: str, recorded: str) -> bool:
    """Whether ``received`` is ``recorded`` with each ``REDACTED`` in it standing for a non-empty text
    (the rest of ``recorded`` compared character for character).

    Each literal piece between placeholders is found at its leftmost place after the previous one (a
    leftmost place never loses a match the others would give), so the time is linear in the lengths,
    whatever the received text (a regular expression ``.+a.+a.+b`` backtracks: a request path of 100
    characters held the loop 12 s against a recorded segment of six placeholders)."""
    if REDACTED not in recorded:
        return received == recorded
    first, *middle, last = recorded.split(REDACTED)
    if not (received.startswith(first) and received.endswith(last)):
        return False
    position, end = len(first), len(received) - len(last)  # the placeholders' text lies in [position, end)
    for piece in middle:  # at least one character before each piece, and one left after it
        found = received.find(piece, position + 1, end - 1)
        if found < 0:
            return False
        position = found + len(piece)
    return position < end


def path_fits(received: str, recorded: str) -> bool:
    """Whether the path ``received`` matches ``recorded``: equal, segment by segment, except that a
    recorded segment holding ``REDACTED`` matches a segment with any non-empty text in its place."""
    if received == recorded:
        return True
    if REDACTED not in recorded:
        return False
    if received.count("/") != recorded.count("/"):
        return False
    got, want = received.split("/"), recorded.split("/")
    return all(a == b or (REDACTED in b and redacted_fits(a, b)) for a, b in zip(got, want))


def aligned_path(received: str, recorded: str) -> str:
    """``received`` with each segment that a recorded ``REDACTED`` segment matches written as recorded
    (a message then shows where the paths differ, not the secret)."""
    if REDACTED not in recorded:
        return received
    want = recorded.split("/")
    got = received.split("/", len(want))  # the segments past the recorded ones kept as one text
    aligned = "/".join(b if REDACTED in b and redacted_fits(a, b) else a for a, b in zip(got, want))
    return aligned + "/" + got[-1] if len(got) > len(want) else aligned


def query_fits(received: Iterable[tuple[str, str]], recorded: Iterable[tuple[str, str]]) -> bool:
    """Whether the query parameters ``received`` match ``recorded``, order ignored: the same names as
    often, with equal values, except that a recorded value holding ``REDACTED`` matches any non-empty
    value in its place."""
    got, want = sorted(received), sorted(recorded)
    if got == want:
        return True
    if len(got) != len(want) or not any(REDACTED in v for _, v in want):
        return False
    left = []  # the received pairs no recorded pair equals
    for pair in got:
        if pair in want:
            want.remove(pair)
        else:
            left.append(pair)
    for name, value in want:  # the recorded pairs left: each must hold the placeholder and fit one received
        fit = next((i for i, (k, v) in enumerate(left) if k == name and redacted_fits(v, value)), None)
        if fit is None:
            return False
        del left[fit]
    return True


def holds_placeholder(key: RouteKey) -> bool:
    """Whether the recorded path or a recorded query value of a route key holds ``REDACTED``."""
    return (key[1] is not None and REDACTED in key[1]) or (
        key[2] is not None and any(REDACTED in value for _, value in key[2])
    )


Ending = tuple[str | None, tuple[str, ...] | None]
"""Where keys wait at the node their path ends at: ``(method, query names)`` (None: not required)."""


def _ending(key: RouteKey) -> Ending:
    return key[0], None if key[2] is None else tuple(name for name, _ in key[2])


class _Node:
    """One segment of the trie: children by literal segment, and by the pieces around placeholders.

    Attributes:
        literal: child by the segment's text (no placeholder in it).
        patterned: by ``(text before the first placeholder, text after the last)``, the
            ``(recorded segment, child)`` pairs of the segments holding the placeholder.
        shapes: the distinct ``(len(before), len(after))`` of :attr:`patterned`'s keys.
        ends: the route keys whose path ends here, by :data:`Ending`, in cassette order.
    """

    __slots__ = ("ends", "literal", "patterned", "shapes")

    def __init__(self) -> None:
        self.literal: dict[str, _Node] = {}
        self.patterned: dict[tuple[str, str], list[tuple[str, _Node]]] = {}
        self.shapes: list[tuple[int, int]] = []
        self.ends: dict[Ending, list[RouteKey]] = {}

    def child(self, segment: str) -> _Node:
        """The child for a recorded ``segment``, made when new."""
        if REDACTED not in segment:
            return self.literal.setdefault(segment, _Node())
        pieces = segment.split(REDACTED)
        around = (pieces[0], pieces[-1])
        pairs = self.patterned.setdefault(around, [])
        for text, node in pairs:
            if text == segment:
                return node
        node = _Node()
        pairs.append((segment, node))
        shape = (len(around[0]), len(around[1]))
        if shape not in self.shapes:
            self.shapes.append(shape)
        return node

    def fitting(self, segment: str) -> Iterable[_Node]:
        """The children a received ``segment`` fits: :func:`path_fits`'s rule for one segment."""
        same = self.literal.get(segment)
        if same is not None:
            yield same
        size = len(segment)
        for before, after in self.shapes:
            if before + after < size:  # each placeholder stands for one character at least
                for text, node in self.patterned.get((segment[:before], segment[size - after :]), ()):
                    if redacted_fits(segment, text):
                        yield node


class PlaceholderIndex:
    """The route keys holding a placeholder (:func:`holds_placeholder`), found by a received route key.

    :meth:`fitting` gives the same keys as comparing the received key with each one filed
    (method equal, :func:`path_fits`, :func:`query_fits`), in the order they were added; its cost
    grows with the received path's segments and the routes sharing its literal parts, not with
    the number of keys filed.
    """

    __slots__ = ("_order", "_pathless", "_root")

    def __init__(self) -> None:
        self._root = _Node()
        self._pathless = _Node()  # keys recorded with no path compared: their ends only
        self._order: dict[RouteKey, int] = {}

    def __len__(self) -> int:
        return len(self._order)

    def add(self, key: RouteKey) -> None:
        """File ``key`` (once: a key added again keeps its first place)."""
        if key in self._order:
            return
        self._order[key] = len(self._order)
        node = self._pathless
        if key[1] is not None:
            node = self._root
            for segment in key[1].split("/"):
                node = node.child(segment)
        node.ends.setdefault(_ending(key), []).append(key)

    def fitting(self, received: RouteKey) -> list[RouteKey]:
        """The keys filed that ``received`` (a received request's route key, with the same fields
        required) matches, in the order they were added."""
        ending = _ending(received)
        found: list[RouteKey] = []
        for node in self._ends(received[1]):
            for key in node.ends.get(ending, ()):
                if received[2] is None or key[2] is None or query_fits(received[2], key[2]):
                    found.append(key)
        if len(found) > 1:
            found.sort(key=self._order.__getitem__)
        return found

    def _ends(self, path: str | None) -> list[_Node]:
        """The nodes where the recorded paths that ``path`` fits end (one walk along its segments)."""
        if path is None:
            return [self._pathless]
        level = [self._root]
        for segment in path.split("/"):
            level = [child for node in level for child in node.fitting(segment)]
            if not level:
                break
        return level
