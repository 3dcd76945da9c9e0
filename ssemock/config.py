"""Options as typed records: each field's default, unit, bounds and help written once.

A record (:class:`Limits` here, :class:`~ssemock.edge.NetworkOptions`) is a frozen dataclass whose
fields are declared with :func:`knob`: the default, the unit (``bytes``, ``seconds``, ``levels``...),
the bounds and a one-line help. The record checks its values once, when it is made
(:func:`check_knobs`: a :class:`ConfigError` naming the field, what is expected and the value given),
and the command line makes its flags from the same fields (:mod:`ssemock.edge.arguments`: a
repeatable ``--limit NAME=VALUE`` and the long flags, ``--max-request-body``, that predate it), so
adding a bound is one field here, and ``--help`` and the checks follow from it.

``MockServer(limits=Limits(max_request_body=64 << 20), network=NetworkOptions(header_timeout=5))``;
``ssemock serve --limit max_request_body=64MiB --limit header_timeout=5s``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from .limits import (
    JOURNAL_BODY,
    JOURNAL_CAPACITY,
    JSON_DEPTH_CEILING,
    MAX_JSON_DEPTH,
    MAX_REQUEST_BODY,
    MAX_SCENARIO_GROWTH,
    Field,
    bounds_text,
    check_option,
    is_integer,
    is_number,
    within,
)

__all__ = ["Knob", "Limits", "check_knobs", "knob", "knobs", "replace_fields"]

T = TypeVar("T")
R = TypeVar("R")
N = TypeVar("N")
Kind = Literal["integer", "number", "names"]
_KNOB = "ssemock_knob"
_KINDS: dict[str, Kind] = {"int": "integer", "float": "number", "frozenset[str]": "names"}
"""The kind of a field by its annotation, as written (the records' modules postpone annotations)."""


@dataclass(frozen=True)
class Knob:
    """One option field of a record, as :func:`knobs` lists it.

    Attributes:
        name: the field's name (also the ``--limit`` name and the argparse destination).
        default: its default value.
        kind: ``integer``, ``number`` (int or float) or ``names`` (a set of strings, checked by its record).
        help: one line saying what it bounds and what happens past it.
        unit: what it counts: ``bytes`` and ``seconds`` take units on the command line
            (``64MiB``, ``30s``); others (``levels``, ``entries``) are shown only.
        low, high: the bounds (None: unbounded), inclusive unless ``above`` (then ``low`` is exclusive).
        flag: the long flag of its own it has besides ``--limit`` (``--max-request-body``), or None.
        commands: the commands (``serve``, ``record``) that take it.
    """

    help: str
    unit: str = ""
    low: float | None = 0
    high: float | None = None
    above: bool = False
    flag: str | None = None
    commands: frozenset[str] = frozenset({"serve", "record"})
    name: str = ""
    default: Any = None
    kind: Kind = "integer"

    @property
    def expected(self) -> str:
        """What the field accepts, as errors say it: ``an integer >= 0 (bytes)``, ``a finite number of
        seconds > 0``, ``an integer from 1 to 65535``."""
        if self.kind == "integer":
            shown = bounds_text(self.low, self.high, in_bytes=self.unit == "bytes")
            return f"an integer{shown}" + (" (bytes)" if self.unit == "bytes" else "")
        shown = bounds_text(self.low, self.high)
        if self.above:
            shown = f" > {self.low:g}" + ("" if self.high is None else f" and <= {self.high:g}")
        return f"a finite number of {self.unit or 'units'}{shown}"

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` is of the field's kind and within its bounds (a ``names`` field: its record checks)."""
        if self.kind == "names":
            return True
        if self.kind == "integer":
            return is_integer(value) and within(value, self.low, self.high)
        return (is_number(value) and math.isfinite(value) and within(value, self.low, self.high)
                and not (self.above and value == self.low))


def knob(
    default: T, help: str, *, unit: str = "", low: float | None = 0, high: float | None = None,  # noqa: A002
    above: bool = False, flag: str | None = None, commands: Iterable[str] = ("serve", "record"),
) -> T:
    """A dataclass field with its default and its :class:`Knob` metadata (see :class:`Knob` for the arguments)."""
    spec = Knob(help, unit, low, high, above, flag, frozenset(commands))
    return dataclasses.field(default=default, metadata={_KNOB: spec})


def knobs(record: type[Any]) -> tuple[Knob, ...]:
    """The fields of ``record`` declared with :func:`knob`, in order, with name, default and kind filled in."""
    found = _LISTED.get(record)
    if found is None:
        found = _LISTED[record] = tuple(
            dataclasses.replace(f.metadata[_KNOB], name=f.name, default=f.default, kind=_KINDS[str(f.type)])
            for f in dataclasses.fields(record) if _KNOB in f.metadata
        )
    return found


_LISTED: dict[type[Any], tuple[Knob, ...]] = {}


def check_knobs(record: Any) -> None:
    """Check every :func:`knob` field of ``record`` (call it from ``__post_init__``).

    Raises:
        ConfigError: ``NAME: expected WHAT, got VALUE`` for the first field out of its kind or bounds.
    """
    for spec in knobs(type(record)):
        check_option(spec.name, getattr(record, spec.name), Field(spec.expected, spec.accepts))


def replace_fields(owner: str, command: str, keywords: Mapping[str, Any], limits: Limits, network: N,
                   ) -> tuple[Limits, N]:
    """``limits`` and ``network`` with the fields named in ``keywords`` replaced: the keyword form that predates
    the records (``MockServer(max_request_body=N)`` is ``MockServer(limits=Limits(max_request_body=N))``).

    Raises:
        TypeError: a keyword that names no field ``command`` (``serve``, ``record``) takes, as Python says
            it of an unknown keyword argument of ``owner``.
        ConfigError: a value out of its field's bounds.
    """
    left = dict(keywords)
    limits, network = _replaced(limits, command, left), _replaced(network, command, left)
    if left:
        raise TypeError(f"{owner}() got an unexpected keyword argument {next(iter(left))!r}")
    return limits, network


def _replaced(record: R, command: str, keywords: dict[str, Any]) -> R:
    names = [k.name for k in knobs(type(record)) if command in k.commands and k.name in keywords]
    return dataclasses.replace(record, **{n: keywords.pop(n) for n in names}) if names else record  # type: ignore[type-var]


@dataclass(frozen=True)
class Limits:
    """The bounds on what one request may make a replay server (or the recorder) hold or do.

    Every field is an integer; past a bound the request gets the error named, and the server goes on.
    The recorder reads ``max_request_body`` and ``max_json_depth`` only.

    Attributes:
        max_request_body: bytes of a request body (default 32 MiB); larger: ``413 ssemock_body_too_large``
            (the recorder forwards nothing).
        max_json_depth: levels of arrays and objects in a JSON request body (default 128, at most 256);
            deeper: ``400 ssemock_json_too_deep``.
        max_scenario_growth: bytes a request's scenario steps may add to its response body (default
            256 MiB; each added line counts :data:`~ssemock.limits.LINE_COST` bytes more); past it:
            ``500 ssemock_scenario_too_large``, nothing sent.
        journal_capacity: journal entries kept, the oldest dropped first (default 1,000).
        journal_body_limit: bytes of a request body journaled as it is (default 64 KiB); a larger one is
            journaled as ``{"sha256", "size", "prefix"}``.

    Raises:
        ConfigError: a field that is not an integer within its bounds (the message names it).
    """

    max_request_body: int = knob(
        MAX_REQUEST_BODY, "answer larger request bodies with 413 ssemock_body_too_large",
        unit="bytes", flag="--max-request-body")
    max_json_depth: int = knob(
        MAX_JSON_DEPTH, "answer JSON request bodies nested deeper with 400 ssemock_json_too_deep",
        unit="levels", low=1, high=JSON_DEPTH_CEILING, flag="--max-json-depth")
    max_scenario_growth: int = knob(
        MAX_SCENARIO_GROWTH, "answer 500 ssemock_scenario_too_large when a request's scenario steps would add "
        "more to its response body (each added line counts 128 bytes more)",
        unit="bytes", flag="--max-scenario-growth", commands=("serve",))
    journal_capacity: int = knob(
        JOURNAL_CAPACITY, "journal entries kept, the oldest dropped first (at most 10,000,000)",
        unit="entries", low=1, high=10_000_000, flag="--journal-capacity", commands=("serve",))
    journal_body_limit: int = knob(
        JOURNAL_BODY, "journal larger request bodies as sha256 + size + prefix",
        unit="bytes", flag="--journal-body-limit", commands=("serve",))

    def __post_init__(self) -> None:
        check_knobs(self)
