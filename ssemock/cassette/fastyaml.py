"""A faster safe YAML load for cassettes: build the data straight from libyaml's events.

PyYAML's C loader parses quickly but composes a node graph and constructs it in Python,
which costs about 0.6 s per MB of cassette. For the documents ssemock writes (mappings,
sequences and scalars; no tags, anchors, aliases or merge keys) the data can be built
from the parse events directly, with the safe loader's own resolver and constructors
for plain scalars, so the result is the same as ``yaml.load(text, CSafeLoader)``.
Anything outside that subset raises :class:`Unsupported`, and :func:`strict_load` falls
back to the full safe loader. Whichever loader runs, anchors and aliases (a few nested
ones expand to gigabytes), duplicate keys, very deep nesting and integers of more than
:data:`MAX_INT_DIGITS` digits are refused with the line.

Nodes are counted as the events arrive, before the full loader would build anything: a document
of more than :data:`~ssemock.limits.MAX_YAML_NODES` nodes, denser than one node per
:data:`~ssemock.limits.YAML_NODE_CHARS` characters of the text read so far (past its first
:data:`~ssemock.limits.MAX_YAML_NODES_FULL` nodes), or a sequence holding more items than
an :class:`ItemBound` allows (a cassette's chunks), is refused soon after it passes the bound, so
a file of ``[{}, {}, ...]`` (3 bytes of text, about 80 bytes of memory per item) stops early
instead of exhausting memory. The full safe loader runs only on a document that passed them.

An :class:`ItemBuilder` turns each item of one top-level list into its final object as soon as the
item is parsed (a cassette's interactions), so that a large document is never held twice, as parsed
data and as objects: the parsed item is released once built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode
from yaml.resolver import Resolver

from ..errors import Described
from ..limits import MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_YAML_NODES, MAX_YAML_NODES_FULL, YAML_NODE_CHARS
from .yamlitems import ItemBound, ItemBuilder, Reread

__all__ = [
    "MAX_INT_DIGITS", "MAX_NESTING", "AliasFound", "ItemBound", "ItemBuilder", "Refused", "Reread", "TooMany",
    "Unsupported", "fast_safe_load", "strict_load",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()
_PLAIN_TYPES = {
    "tag:yaml.org,2002:int": SafeConstructor.construct_yaml_int,
    "tag:yaml.org,2002:float": SafeConstructor.construct_yaml_float,
    "tag:yaml.org,2002:bool": SafeConstructor.construct_yaml_bool,
    "tag:yaml.org,2002:null": SafeConstructor.construct_yaml_null,
}


class Unsupported(Exception):
    """The document uses YAML the fast path does not build (tags, merge keys, timestamps...)."""


class Refused(Exception):
    """The document is refused whatever the loader, at 1-based ``line``.

    Args:
        expected: what would be valid, e.g. ``"unique keys in every mapping"``.
        line: the line of the offending node in the text.
        got: the offending key, if any.
        field: the field at fault, when known (``interactions[0].response.chunks``).
    """

    def __init__(self, expected: str, line: int, got: Any = None, field: str | None = None) -> None:
        self.expected = expected
        self.line = line
        self.got = got
        self.field = field
        super().__init__(f"line {line}: expected {expected}")


class AliasFound(Refused, Unsupported):
    """The document uses anchors or aliases (``&a`` / ``*a``), which can expand without bound."""

    def __init__(self, line: int) -> None:
        super().__init__("YAML without anchors or aliases (& and *): ssemock never writes them, "
                         "and a few nested ones expand to gigabytes", line)


MAX_NESTING = MAX_JSON_DEPTH + 16
"""Deepest nesting of YAML sequences and mappings read: a JSON body's bound plus the
cassette's own levels (interactions, request, body...)."""


_INT_BOUND = 10**MAX_INT_DIGITS
_INT_TAG = "tag:yaml.org,2002:int"


def _int(constructor: SafeConstructor, node: ScalarNode, line: int) -> int:
    """A YAML integer of at most :data:`MAX_INT_DIGITS` digits, else :class:`Refused` at ``line``."""
    try:
        value: int = constructor.construct_yaml_int(node)
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        digits = sum(c.isdigit() for c in str(node.value))
    else:
        if -_INT_BOUND < value < _INT_BOUND:
            return value
        digits = int(abs(value).bit_length() * 0.30103) + 1  # written in hex, octal or binary
    raise Refused(f"a number of at most {MAX_INT_DIGITS} digits", line,
                  Described(None, f"a number of about {digits} digits"))


_plain_cache: dict[str, Any] = {}  # plain scalar text -> value (keys and times repeat)


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1


def _scalar(event: ScalarEvent) -> Any:
    if event.anchor is not None:
        raise AliasFound(_line(event))
    if event.tag not in (None, "!"):
        raise Unsupported("tag")
    if not event.implicit[0]:  # quoted and block scalars, and "!": strings
        return event.value
    text = event.value
    try:
        return _plain_cache[text]
    except KeyError:
        pass
    tag = _RESOLVER.resolve(ScalarNode, text, event.implicit)  # type: ignore[no-untyped-call]
    value: Any
    if tag == _STR:
        value = text
    else:
        construct = _PLAIN_TYPES.get(tag)
        if construct is None:  # timestamps, merge keys, "=" values: leave them to PyYAML
            raise Unsupported(tag)
        if tag == _INT_TAG:
            value = _int(_CONSTRUCTOR, ScalarNode(tag, text), _line(event))
        else:
            value = construct(_CONSTRUCTOR, ScalarNode(tag, text))
    if len(_plain_cache) >= 50_000:
        _plain_cache.clear()
    _plain_cache[text] = value
    return value


_CHECK_EVERY = 1 << 16
"""Nodes between two counts of the open bounded sequences' items (each is also counted when it ends)."""


class TooMany(Refused):
    """A sequence at an item position, or the whole document, holds more than its bound."""


def fast_safe_load(
    text: str | bytes | Reread, *, items: ItemBound | None = None, max_nodes: int = MAX_YAML_NODES,
    max_full_nodes: int = MAX_YAML_NODES_FULL, build: ItemBuilder | None = None,
) -> Any:
    """The single document in ``text`` (a string, its UTF-8 bytes or a :class:`Reread`), as
    ``yaml.load(text, CSafeLoader)`` would return it; with ``build``, the items of its list built as they
    are parsed (:class:`ItemBuilder`).

    Counted while it loads, so that memory stays proportionate to the bounds: the YAML nodes
    (scalars, sequences and mappings: at most ``max_nodes``) and, when ``items`` is given,
    the items of each sequence it names (at most ``items.most``). A document outside the
    subset (:class:`Unsupported`, left to the full safe loader, which takes about 700 bytes of
    memory per node) may hold at most ``max_full_nodes`` nodes.

    Raises:
        Refused: an anchor or alias (:class:`AliasFound`), nesting deeper than
            :data:`MAX_NESTING`, more than ``max_nodes`` nodes or too many items
            (:class:`TooMany`, naming the field), anywhere in the text, even after an
            unsupported node; more than ``max_full_nodes`` nodes in an unsupported document.
        Unsupported: the document is outside the subset (see the module docstring).
        yaml.YAMLError: the text is not valid YAML.
    """
    bounds = _Bounds.of(items, max_nodes, build)
    events = iter(yaml.parse(text, Loader=_Loader))
    built = _build(events, bounds)
    if built.unsupported is None:
        return built.result
    nodes = _skim(events, bounds, built)
    if nodes > max_full_nodes:  # the full loader takes about 700 bytes per node
        raise TooMany(f"YAML of at most {max_full_nodes:,} nodes when it holds what ssemock never writes "
                      f"({built.unsupported}: a tag, a timestamp such as an unquoted date, a merge key, "
                      f"a duplicate key...; quote it or remove it)", built.unsupported_at)
    raise built.unsupported


@dataclass(frozen=True)
class _Bounds:
    """What :func:`fast_safe_load` counts against: the node bound and the counted sequences."""

    items: ItemBound | None
    max_nodes: int
    depths: frozenset[int]  # the depths of the counted lists
    keyed: bool  # every counted list is a mapping's value: no list in a list is one
    build: ItemBuilder | None = None

    @classmethod
    def of(cls, items: ItemBound | None, max_nodes: int, build: ItemBuilder | None = None) -> _Bounds:
        if items is None:
            return cls(None, max_nodes, frozenset(), False, build)
        return cls(items, max_nodes, frozenset(len(path) for path, _ in items.fields),
                   all(path and path[-1] is not None for path, _ in items.fields), build)

    def builder(self, stack: list[list[Any]]) -> Callable[[int, Any], Any] | None:
        """The ``build`` function of a sequence opening inside ``stack``, if it is the builder's list."""
        build = self.build
        if build is None or len(stack) != 1 or stack[0][0] is not MappingStartEvent:
            return None
        top = stack[0][1]
        return build.begin(top[:-1]) if len(top) % 2 and top[-1] == build.key else None

    def counted(self, stack: list[list[Any]]) -> tuple[str, str] | None:
        """The field and item name of a sequence opening inside ``stack``, if its items are counted."""
        if self.items is None or len(stack) not in self.depths or (self.keyed and stack[-1][0] is SequenceStartEvent):
            return None
        return self.items.what(stack)


@dataclass
class _Built:
    """Where :func:`_build` stopped: the document, or the first node outside the subset and the state there."""

    result: Any = None
    unsupported: Unsupported | None = None
    unsupported_at: int = 0  # its line
    stack: list[list[Any]] = field(default_factory=list)  # open containers: [kind, items, counted field, build]
    nodes: int = 0
    check: int = 0  # the node count at which to count again


def _build(events: Iterator[Any], bounds: _Bounds) -> _Built:
    """Build the document from ``events``, counting; stop at the first node outside the subset."""
    built = _Built()
    stack = built.stack
    nodes, documents = 0, 0
    check = min(_CHECK_EVERY, bounds.max_nodes + 1)
    for event in events:
        kind = type(event)
        if kind is ScalarEvent:
            nodes += 1
            if nodes >= check:
                check = _count(event, nodes, bounds.max_nodes, stack, bounds.items)
            try:
                value = _scalar(event)
            except Unsupported as exc:
                if isinstance(exc, Refused):
                    raise
                built.unsupported, built.unsupported_at, value = exc, _line(event), None
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            nodes += 1
            if nodes >= check:
                check = _count(event, nodes, bounds.max_nodes, stack, bounds.items)
            _open(event, kind, stack, bounds)
            if event.tag is not None:
                built.unsupported, built.unsupported_at = Unsupported("tag on a collection"), _line(event)
            else:
                continue
        elif kind is MappingEndEvent:
            try:
                value = _mapping(stack.pop()[1])
            except Unsupported as exc:
                built.unsupported, built.unsupported_at, value = exc, _line(event), None
        elif kind is SequenceEndEvent:
            entry = stack.pop()
            value = _close(event, entry, bounds)
        elif kind is AliasEvent:
            raise AliasFound(_line(event))
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                built.unsupported, built.unsupported_at = Unsupported("several documents"), _line(event)
            else:
                continue
        else:
            continue
        if built.unsupported is not None:
            if kind is ScalarEvent or kind is MappingEndEvent:
                _append(stack, built, None)
            built.nodes, built.check = nodes, check
            return built
        if stack:
            parent = stack[-1]
            if parent[3] is not None:  # the builder's list: the item built now, the parsed one released
                value = _built_item(parent, value)
            parent[1].append(value)
        else:
            built.result = value
    return built


def _built_item(entry: list[Any], value: Any) -> Any:
    """``value``, the next item of the builder's list ``entry``, as its ``build`` makes it; as parsed
    (and no later item built) when ``build`` raises."""
    try:
        return entry[3](len(entry[1]), value)
    except Exception:  # the caller validates the items kept as parsed, and words the error
        entry[3] = None
        return value


def _skim(events: Iterator[Any], bounds: _Bounds, built: _Built) -> int:
    """Count and check the rest of ``events`` for refusals, keeping only the keys that name the
    counted fields; returns the node count."""
    stack, nodes, check = built.stack, built.nodes, built.check
    for event in events:
        kind = type(event)
        if kind is ScalarEvent or kind is MappingStartEvent or kind is SequenceStartEvent:
            nodes += 1
            if nodes >= check:
                check = _count(event, nodes, bounds.max_nodes, stack, bounds.items)
            if event.anchor is not None:
                raise AliasFound(_line(event))
            if kind is not ScalarEvent:
                _open(event, kind, stack, bounds)
                continue
            top = stack[-1] if stack else None  # only keys are kept: they name the counted fields
            value = event.value if top and top[0] is MappingStartEvent and not len(top[1]) % 2 else None
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = None
            entry = stack.pop()
            if kind is SequenceEndEvent:
                _close(event, entry, bounds)
        elif kind is AliasEvent:
            raise AliasFound(_line(event))
        else:
            continue
        if stack:
            stack[-1][1].append(value)
    return nodes


def _open(event: Any, kind: type, stack: list[list[Any]], bounds: _Bounds) -> None:
    """A mapping or sequence starts: refuse an anchor or nesting too deep, and push it."""
    if event.anchor is not None:
        raise AliasFound(_line(event))
    if len(stack) >= MAX_NESTING:
        raise Refused(f"sequences and mappings nested at most {MAX_NESTING} deep", _line(event))
    sequence = kind is SequenceStartEvent
    stack.append([kind, [], bounds.counted(stack) if sequence else None, bounds.builder(stack) if sequence else None])


def _close(event: Any, entry: list[Any], bounds: _Bounds) -> list[Any]:
    """A sequence ends: refuse it when it is counted and holds too many items; its items."""
    if entry[2] is not None and len(entry[1]) > bounds.items.most:  # type: ignore[union-attr]
        raise _too_many(event, entry[2], bounds.items)  # type: ignore[arg-type]
    return entry[1]  # type: ignore[no-any-return]


def _append(stack: list[list[Any]], built: _Built, value: Any) -> None:
    if stack:
        stack[-1][1].append(value)
    else:
        built.result = value


def _too_many(event: Any, counted: tuple[str, str], items: ItemBound) -> TooMany:
    return TooMany(f"a list of at most {items.most} {counted[1]}", _line(event), field=counted[0])


def _count(event: Any, nodes: int, max_nodes: int, stack: list[list[Any]], items: ItemBound | None) -> int:
    """Refuse more than ``max_nodes`` nodes, more than one per :data:`~ssemock.limits.YAML_NODE_CHARS`
    characters up to ``event`` (past the first :data:`~ssemock.limits.MAX_YAML_NODES_FULL`), or a counted
    sequence of ``stack`` holding too many items; else the node count at which to count again."""
    if nodes > max_nodes:
        raise TooMany(f"YAML of at most {max_nodes:,} nodes (scalars, sequences and mappings)", _line(event))
    if nodes > MAX_YAML_NODES_FULL + event.start_mark.index // YAML_NODE_CHARS:
        raise TooMany(f"YAML of at most one node (scalar, sequence or mapping) per {YAML_NODE_CHARS} characters "
                      f"past its first {MAX_YAML_NODES_FULL:,} nodes", _line(event))
    if items is not None:
        for _, held, counted, _ in stack:
            if counted is not None and len(held) > items.most:
                raise _too_many(event, counted, items)
    return min(nodes + _CHECK_EVERY, max_nodes + 1)


def _mapping(items: list[Any]) -> dict[Any, Any]:
    value = {}
    for key, item in zip(items[::2], items[1::2]):
        if isinstance(key, (dict, list)):
            raise Unsupported("complex key")
        value[key] = item
    if 2 * len(value) != len(items):
        raise Unsupported("duplicate key")  # the full loader names it and its line
    return value


class _StrictLoader(_Loader):  # type: ignore[misc]
    """The safe loader, refusing duplicate keys and integers of more than :data:`MAX_INT_DIGITS` digits
    (aliases are refused before it runs)."""

    def construct_bounded_int(self, node: Any) -> int:
        return _int(self, node, int(node.start_mark.line) + 1)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # unhashable: the safe loader refuses it with its own message
                if duplicate:
                    raise Refused("unique keys in every mapping", int(key_node.start_mark.line) + 1, key)
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(_INT_TAG, _StrictLoader.construct_bounded_int)


def strict_load(
    text: str | bytes | Reread, *, items: ItemBound | None = None, max_nodes: int = MAX_YAML_NODES,
    max_full_nodes: int = MAX_YAML_NODES_FULL, build: ItemBuilder | None = None,
) -> Any:
    """The single document in ``text`` (a string, its UTF-8 bytes or a :class:`Reread`), safely: the fast path (with
    ``build``, its list's items built as they are parsed), else the safe (C) loader (items as parsed).

    Refused everywhere, whichever loader runs: anchors and aliases, duplicate keys,
    nesting deeper than :data:`MAX_NESTING`, integers of more than :data:`MAX_INT_DIGITS` digits,
    more than ``max_nodes`` nodes (``max_full_nodes`` for what the full loader reads), more items
    than ``items`` allows (see :func:`fast_safe_load`).

    Raises:
        Refused: names what and the line.
        yaml.YAMLError: the text is not valid YAML (or uses what the safe loader refuses).
    """
    try:
        return fast_safe_load(text, items=items, max_nodes=max_nodes, max_full_nodes=max_full_nodes, build=build)
    except Refused:
        raise
    except (Unsupported, yaml.YAMLError):
        pass  # the full safe loader decides, and words any error; no alias is left for it
    if not isinstance(text, (str, bytes)):
        text.seek(0)
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader
