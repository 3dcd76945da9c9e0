"""A faster safe YAML load for cassettes: build the data straight from libyaml's events.

PyYAML's C loader parses quickly but composes a node graph and constructs it in Python,
which costs about 0.6 s per MB of cassette. For the documents ssemock writes (mappings,
sequences and scalars; no tags, anchors, aliases or merge keys) the data can be built
from the parse events directly, with the safe loader's own resolver and constructors
for plain scalars, so the result is the same as ``yaml.load(text, CSafeLoader)``.
Anything outside that subset raises :class:`Unsupported`, and the caller falls back to
the full safe loader.
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
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

__all__ = ["AliasFound", "Unsupported", "fast_safe_load"]

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


class AliasFound(Unsupported):
    """The document uses anchors or aliases (``&a`` / ``*a``), which can expand without bound."""


_plain_cache: dict[str, Any] = {}  # plain scalar text -> value (keys and times repeat)


def _scalar(event: ScalarEvent) -> Any:
    if event.anchor is not None:
        raise AliasFound("anchor")
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
        value = construct(_CONSTRUCTOR, ScalarNode(tag, text))
    if len(_plain_cache) >= 50_000:
        _plain_cache.clear()
    _plain_cache[text] = value
    return value


def fast_safe_load(text: str) -> Any:
    """The single document in ``text``, as ``yaml.load(text, CSafeLoader)`` would return it.

    Raises:
        Unsupported: the document is outside the subset (see the module docstring).
        yaml.YAMLError: the text is not valid YAML.
    """
    stack: list[list[Any]] = []  # open containers: [kind, items]
    result: Any = None
    documents = 0
    event: Any
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is ScalarEvent:
            value = _scalar(event)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.anchor is not None:
                raise AliasFound("anchor on a collection")
            if event.tag is not None:
                raise Unsupported("tag on a collection")
            stack.append([kind, []])
            continue
        elif kind is MappingEndEvent:
            items = stack.pop()[1]
            value = {}
            for key, item in zip(items[::2], items[1::2]):
                if isinstance(key, (dict, list)):
                    raise Unsupported("complex key")
                value[key] = item
        elif kind is SequenceEndEvent:
            value = stack.pop()[1]
        elif kind is AliasEvent:
            raise AliasFound("alias")
        else:
            if kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise Unsupported("several documents")
            continue
        if stack:
            stack[-1][1].append(value)
        else:
            result = value
    return result
