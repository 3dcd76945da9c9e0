"""Body paths: the JSON fields of a request body that matching ignores or the recorder drops.

A body path names fields of a JSON request body, the way the ``body`` matcher's differences name
them (``body: metadata.trace_id: "b" != recorded "a"``)::

    metadata              the key "metadata" of the top-level object
    metadata.trace_id     the key "trace_id" of the object under "metadata"
    messages[*].id        the key "id" of every item of the list "messages"
    messages[0]           the first item of the list "messages"
    tools.*.cache         "cache" under every key of "tools" (``*``: every key of an object or item of a list)
    [*].id                "id" of every item of a top-level list

Steps are separated by ``.``; a step is a key (any characters but ``.``, ``[``, ``]``; a key ``*`` means
every key or item), optionally followed by ``[*]`` (every item of a list) or ``[N]`` (item N, from 0),
repeatable (``grid[*][0]``). A key step meets only objects and an index step only lists: a path whose
steps do not fit the body names nothing there, which is no error (the field is just absent).

*Ignoring* paths means deleting them on both sides before comparing: a request matches an interaction
when the two bodies are equal once every path is deleted from both, in the order given (deleting
``messages[0]`` twice deletes the first two items). *Dropping* a path (the recorder's
``--drop-body-field``) deletes it from the body stored in the cassette; the cassette says so
(``match: {dropped_body: [...]}``) and matching against that cassette ignores it too.

Bounds: at most :data:`~ssemock.limits.MAX_BODY_PATHS` paths in a list (64), each at most
:data:`~ssemock.limits.MAX_BODY_PATH_CHARS` characters (256) and
:data:`~ssemock.limits.MAX_BODY_PATH_STEPS` steps (32); anything else is refused with a
:class:`~ssemock.errors.ConfigError` naming the path and what was expected.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, short_repr
from .limits import MAX_BODY_PATH_CHARS, MAX_BODY_PATH_STEPS, MAX_BODY_PATHS

__all__ = [
    "EVERY",
    "PATH_PATTERN",
    "BodyPath",
    "check_paths",
    "compile_paths",
    "differing_paths",
    "parse_path",
    "path_problem",
    "without",
]

_KEY = r"[^.\[\]]+"
_INDEX = r"\[(?:\*|[0-9]{1,7})\]"
PATH_PATTERN = rf"(?:{_KEY}(?:{_INDEX})*|(?:{_INDEX})+)(?:\.{_KEY}(?:{_INDEX})*)*"
"""A body path's syntax as a regular expression (the JSON schemas use it too)."""
_STEP = re.compile(rf"({_KEY})|\[(\*|[0-9]+)\]")

EVERY = None
"""The step ``*`` / ``[*]``: every key of an object or item of a list."""
Step = str | int | None
"""One step of a path: a key (str), a list index (int) or :data:`EVERY` (None)."""


@dataclass(frozen=True, slots=True)
class BodyPath:
    """A parsed body path.

    Attributes:
        text: the path as written (``messages[*].id``).
        steps: its steps: a key (str), a list index (int) or :data:`EVERY` (None).
    """

    text: str
    steps: tuple[Step, ...]

    def __str__(self) -> str:
        return self.text


def path_problem(text: Any) -> str | None:
    """What ``text`` should be to be a body path (``"at most 256 characters"``), or None when it is one."""
    if not isinstance(text, str) or not text:
        return "a non-empty string such as metadata.trace_id"
    if len(text) > MAX_BODY_PATH_CHARS:
        return f"a body path of at most {MAX_BODY_PATH_CHARS} characters (this one has {len(text)})"
    if not re.fullmatch(PATH_PATTERN, text):
        return "keys separated by '.', each optionally followed by [*] or [N] (metadata.trace_id, messages[*].id)"
    steps = len(_STEP.findall(text))
    if steps > MAX_BODY_PATH_STEPS:
        return f"a body path of at most {MAX_BODY_PATH_STEPS} steps (this one has {steps})"
    return None


def parse_path(text: Any) -> BodyPath:
    """The :class:`BodyPath` written ``text`` (see the module docstring).

    Raises:
        ConfigError: ``text`` is not a string, is empty, longer than
            :data:`~ssemock.limits.MAX_BODY_PATH_CHARS` characters, not of the syntax, or of more than
            :data:`~ssemock.limits.MAX_BODY_PATH_STEPS` steps (:func:`path_problem` says which).
    """
    problem = path_problem(text)
    if problem is not None:
        raise ConfigError(f"body path {short_repr(text)}: expected {problem}")
    steps: list[Step] = []
    for match in _STEP.finditer(text):
        key, index = match.groups()
        if key is not None:
            steps.append(EVERY if key == "*" else key)
        else:
            steps.append(EVERY if index == "*" else int(index))
    return BodyPath(text, tuple(steps))


def check_paths(paths: Any, what: str = "body paths") -> tuple[str, ...]:
    """``paths`` (a list of body path texts) as a tuple, each one checked, duplicates removed.

    Args:
        paths: the texts; a single string is taken as one path.
        what: how errors name the list (``ignore_body``, ``--drop-body-field``).

    Raises:
        ConfigError: not a list of strings, more than :data:`~ssemock.limits.MAX_BODY_PATHS`, or a path
            :func:`parse_path` refuses (the message starts with ``what``).
    """
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, (list, tuple)):
        raise ConfigError(f"{what}: expected a list of body paths such as metadata.trace_id, got {short_repr(paths)}")
    if len(paths) > MAX_BODY_PATHS:
        raise ConfigError(f"{what}: expected at most {MAX_BODY_PATHS} body paths, got {len(paths)}")
    for text in paths:
        try:
            parse_path(text)
        except ConfigError as exc:
            raise ConfigError(f"{what}: {exc}") from None
    return tuple(dict.fromkeys(paths))


@functools.lru_cache(maxsize=256)
def compile_paths(*groups: tuple[str, ...]) -> tuple[BodyPath, ...]:
    """The parsed paths of ``groups`` (tuples of texts, e.g. the server's and a cassette's), in order,
    each once. Raises :class:`~ssemock.errors.ConfigError` as :func:`parse_path` does."""
    return tuple(parse_path(text) for text in dict.fromkeys(t for group in groups for t in group))


def without(value: Any, paths: Iterable[BodyPath]) -> Any:
    """``value`` (parsed JSON) with every field ``paths`` name deleted, in order. ``value`` is not
    changed: the objects and lists on the way to a deleted field are copied, the rest is shared."""
    for path in paths:
        value = _without(value, path.steps)
    return value


def _without(node: Any, steps: Sequence[Step]) -> Any:
    step, rest = steps[0], steps[1:]
    if isinstance(node, dict):
        if isinstance(step, int):
            return node
        keys = list(node) if step is EVERY else [step] if step in node else []
        if not keys:
            return node
        if not rest:
            return {k: v for k, v in node.items() if k not in keys} if step is not EVERY else {}
        out = dict(node)
        for key in keys:
            out[key] = _without(node[key], rest)
        return out
    if isinstance(node, list):
        if isinstance(step, str):
            return node
        if step is EVERY:
            return [] if not rest else [_without(item, rest) for item in node]
        if step >= len(node):
            return node
        if not rest:
            return node[:step] + node[step + 1 :]
        return [*node[:step], _without(node[step], rest), *node[step + 1 :]]
    return node


def differing_paths(got: Any, want: Any, paths: Sequence[BodyPath], same: Callable[[Any, Any], bool]) -> list[str]:
    """The texts of ``paths`` whose fields differ between ``got`` and ``want`` (parsed JSON bodies): those
    without which the two are not ``same`` once every other path is deleted. ``[]`` when the bodies
    differ outside ``paths`` as well (or not at all). ``same`` is the ``body`` matcher's equality."""
    if not paths or not same(without(got, paths), without(want, paths)):
        return []
    found = []
    for path in paths:
        others = [p for p in paths if p is not path]
        if not same(without(got, others), without(want, others)):
            found.append(path.text)
    return found
