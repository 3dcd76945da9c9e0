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
"""

from __future__ import annotations

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
from ..limits import MAX_INT_DIGITS, MAX_JSON_DEPTH

__all__ = ["MAX_INT_DIGITS", "MAX_NESTING", "AliasFound", "Refused", "Unsupported", "fast_safe_load", "strict_load"]

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
    """

    def __init__(self, expected: str, line: int, got: Any = None) -> None:
        self.expected = expected
        self.line = line
        self.got = got
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


def fast_safe_load(text: str) -> Any:
    """The single document in ``text``, as ``yaml.load(text, CSafeLoader)`` would return it.

    Raises:
        Refused: an anchor or alias (:class:`AliasFound`), or nesting deeper than
            :data:`MAX_NESTING`, anywhere in the text, even after an unsupported node.
        Unsupported: the document is outside the subset (see the module docstring).
        yaml.YAMLError: the text is not valid YAML.
    """
    stack: list[list[Any]] = []  # open containers: [kind, items]
    result: Any = None
    documents = 0
    unsupported: Unsupported | None = None  # once set, the rest is only checked for refusals
    event: Any
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is DocumentStartEvent:
            documents += 1
            if documents > 1 and unsupported is None:
                unsupported = Unsupported("several documents")
            continue
        try:
            if unsupported is not None:
                _track(event, kind, stack)
                continue
            if kind is ScalarEvent:
                value = _scalar(event)
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                _track(event, kind, stack)
                if event.tag is not None:
                    raise Unsupported("tag on a collection")
                continue
            elif kind is MappingEndEvent:
                value = _mapping(stack.pop()[1])
            elif kind is SequenceEndEvent:
                value = stack.pop()[1]
            elif kind is AliasEvent:
                raise AliasFound(_line(event))
            else:
                continue
        except Refused:
            raise
        except Unsupported as exc:
            unsupported = exc
            continue
        if stack:
            stack[-1][1].append(value)
        else:
            result = value
    if unsupported is not None:
        raise unsupported
    return result


def _mapping(items: list[Any]) -> dict[Any, Any]:
    value = {}
    for key, item in zip(items[::2], items[1::2]):
        if isinstance(key, (dict, list)):
            raise Unsupported("complex key")
        value[key] = item
    if 2 * len(value) != len(items):
        raise Unsupported("duplicate key")  # the full loader names it and its line
    return value


def _track(event: Any, kind: type, stack: list[list[Any]]) -> None:
    """Refuse anchors, aliases and nesting past :data:`MAX_NESTING`; push or pop ``stack`` for collections."""
    if kind is AliasEvent or getattr(event, "anchor", None) is not None:
        raise AliasFound(_line(event))
    if kind is MappingStartEvent or kind is SequenceStartEvent:
        if len(stack) >= MAX_NESTING:
            raise Refused(f"sequences and mappings nested at most {MAX_NESTING} deep", _line(event))
        stack.append([kind, []])
    elif kind is MappingEndEvent or kind is SequenceEndEvent:
        stack.pop()


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


def strict_load(text: str) -> Any:
    """The single document in ``text``, safely: the fast path, else the safe (C) loader.

    Refused everywhere, whichever loader runs: anchors and aliases, duplicate keys,
    nesting deeper than :data:`MAX_NESTING`, integers of more than :data:`MAX_INT_DIGITS` digits.

    Raises:
        Refused: names what and the line.
        yaml.YAMLError: the text is not valid YAML (or uses what the safe loader refuses).
    """
    try:
        return fast_safe_load(text)
    except Refused:
        raise
    except (Unsupported, yaml.YAMLError):
        pass  # the full safe loader decides, and words any error; no alias is left for it
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader
