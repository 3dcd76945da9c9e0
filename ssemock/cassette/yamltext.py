"""Cassette, scenario and stub files as text and as YAML: read within a size bound, decoded as
UTF-8, parsed safely with the item bounds of :mod:`ssemock.cassette.fastyaml`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CassetteError, ScenarioError, StubError
from ..limits import (
    MAX_ITEMS,
)
from .files import YAML_START, FileError, read_file

if TYPE_CHECKING:
    from .fastyaml import ItemBound, ItemBuilder, Reread


def cassette_items() -> ItemBound:
    """The lists of a cassette counted while it loads: interactions, and each response's chunks or
    events, at most :data:`~ssemock.limits.MAX_ITEMS` each."""
    from .fastyaml import ItemBound

    return ItemBound(MAX_ITEMS, (
        (("interactions",), "interactions"),
        (("interactions", None, "response", "chunks"), "chunks"),
        (("interactions", None, "response", "events"), "events"),
    ))


def load_yaml(
    text: str | bytes | Reread, source: str, error: FileError = CassetteError, *, items: ItemBound | None = None,
    build: ItemBuilder | None = None,
) -> Any:
    """Parse YAML safely (:func:`.fastyaml.strict_load`) from text, its UTF-8 bytes or a file read again
    (:class:`.fastyaml.Reread`): anchors, aliases,
    duplicate keys and nesting past :data:`.fastyaml.MAX_NESTING` are refused with their line; more than
    :data:`~ssemock.limits.MAX_YAML_NODES` nodes, or a list named by ``items`` (e.g.
    :func:`cassette_items`) longer than its bound, as soon as the count passes it. ``build`` builds
    the items of one list as they are parsed (:class:`.fastyaml.ItemBuilder`).

    Raises:
        CassetteError (or ``error``): names ``source``, the line or field and what was wrong.
    """
    import yaml  # imported when a file is parsed: a start answered from the caches needs no parser

    from .fastyaml import MAX_NESTING, Refused, strict_load

    try:
        return strict_load(text, items=items, build=build)
    except Refused as exc:
        raise error(source, exc.field or f"line {exc.line}", exc.expected, exc.got) from None
    except MemoryError:  # within the bounds, but not within this process's memory
        pass  # the data built so far goes with the exception, before the error is made
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, error) from None
    except RecursionError:  # the safe loader's constructors on deep flow collections
        raise error(source, "", f"YAML nested at most {MAX_NESTING} deep", None) from None
    unit = "characters" if isinstance(text, str) else "bytes"
    raise error(source, "", f"YAML whose data fits in memory ({len(text):,} {unit} did not)", None)


_TAG = r"constructor for the tag '([^']*)'"  # compiled on first use (re's cache), not at every start


def _yaml_error(exc: Exception, source: str, error: FileError) -> CassetteError | ScenarioError | StubError:
    """One short line for a YAML error (``yaml.YAMLError``): its line and column, and what went wrong."""
    from .fastyaml import MAX_NESTING

    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = str(getattr(exc, "problem", None) or exc).replace("\n", " ")
    context = getattr(exc, "context", None)
    if context == "while increasing flow level":  # libyaml's own bound, before ours could count
        return error(source, where, f"YAML nested at most {MAX_NESTING} deep", None)
    tag = re.search(_TAG, problem)
    if tag is not None:
        return error(source, where, "plain YAML data (no application-specific tag such as !!python/...)",
                     tag.group(1).replace("tag:yaml.org,2002:", "!!", 1))
    return error(source, where, "valid YAML", f"{context} {problem}" if context else problem)


def read_yaml(path: Path, source: str, *, limit: int, error: FileError = CassetteError) -> Any:
    """Read and parse the YAML file ``path`` of at most ``limit`` bytes.

    Raises:
        FileNotFoundError: the file does not exist.
        CassetteError (or ``error``): too large, unreadable, not UTF-8, or refused by :func:`load_yaml`.
    """
    return load_yaml(read_text(path, source, limit=limit, error=error), source, error)


def read_text(
    path: Path, source: str, *, limit: int, error: FileError = CassetteError,
    keep: Callable[[bytes], int] | None = None,
) -> str:
    """The text of the UTF-8 file ``path`` of at most ``limit`` bytes.

    ``keep(data)``, when given, says how many of the file's bytes to decode (the rest is
    left out, e.g. a torn last interaction, which may end inside a character).

    Raises:
        FileNotFoundError: the file does not exist.
        CassetteError (or ``error``): too large, unreadable or not UTF-8.
    """
    data = read_file(path, source, limit=limit, error=error, start=YAML_START)
    return utf8_text(data[: keep(data)] if keep is not None else data, source, error)


def utf8_text(data: bytes, source: str, error: FileError = CassetteError) -> str:
    """``data`` decoded as UTF-8. Raises ``error`` (default CassetteError) naming ``source`` if it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(source, "", "a readable UTF-8 YAML file", str(exc)) from None
