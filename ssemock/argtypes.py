"""argparse value types of the ``ssemock`` command's options: the text of every number option checked by one
rule (:func:`option_number`; with a unit, :func:`option_quantity`), its range by :func:`ssemock.limits.within`.

A module of its own, below :mod:`ssemock.cli` and the option groups of :mod:`ssemock.edge.arguments` and
:mod:`ssemock.recorder.cli`, which all use them.
"""

from __future__ import annotations

import argparse
import math
import os
import re

from .errors import ConfigError
from .names import comma_names, scenario_names

__all__ = [
    "FORMS",
    "MAX_WORKERS",
    "UNITS",
    "age_days",
    "body_path",
    "integer",
    "matcher_names",
    "option_number",
    "option_quantity",
    "port_number",
    "positive_count",
    "positive_size",
    "scale_factor",
    "scenario_list",
    "seconds",
    "worker_count",
]

_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def option_number(text: str, expected: str, *, integer: bool, low: float | None = None, high: float | None = None,
                  above: bool = False) -> float:
    """The one check of every number option's text: ASCII digits (an optional leading ``-``; a decimal point and
    an exponent when not ``integer``), nothing around them, finite, within ``low`` (exclusive when ``above``) and
    ``high`` when given.

    Python's ``int``/``float`` (argparse's usual types) also take spaces around the digits, a ``+``, ``_``
    between digits and the digits of any script (``"٢"``): none of which is a number one types on purpose.

    Raises:
        argparse.ArgumentTypeError: ``expected EXPECTED, got 'TEXT'`` (argparse names the option before it).
    """
    from .limits import within

    if (_INTEGER if integer else _DECIMAL).fullmatch(text):
        try:
            value = int(text) if integer else float(text)
        except ValueError:  # more digits than int() converts
            value = math.nan
        if math.isfinite(value) and within(value, low, high) and not (above and value == low):
            return value
    raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")


UNITS: dict[str, dict[str, float]] = {
    "bytes": {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30},
    "seconds": {"": 1, "s": 1, "ms": 0.001},
}
"""The units a number option of each kind takes after its digits (any letter case), by their size in the
kind's own unit: bytes in SI (``kB``, ``MB``, ``GB``: powers of 1000) or IEC units (``KiB``, ``MiB``, ``GiB``:
powers of 1024), seconds in ``s`` or ``ms``; a plain number is bytes or seconds."""
FORMS = {"bytes": "a size in bytes (65536, 64KiB, 120MB or 1GiB)", "seconds": "a number of seconds (30, 30s or 500ms)"}
"""What an option of each kind of :data:`UNITS` takes, as its errors say."""
_SUFFIX = re.compile(r"(.*?)([A-Za-z]*)")


def option_quantity(text: str, unit: str, *, integer: bool, expected: str | None = None) -> int | float:
    """The one reading of a number option's text with a unit of :data:`UNITS` (``64MiB`` is 67108864, ``500ms``
    0.5): its digits read by :func:`option_number`, its bounds left to the caller.

    Args:
        text: the option's text.
        unit: ``"bytes"``, ``"seconds"``, or another name (a plain number then).
        integer: the value is an integer (a size in bytes is).
        expected: what errors say is expected (default: :data:`FORMS` of ``unit``, else "an integer" or "a number").

    Raises:
        argparse.ArgumentTypeError: ``expected EXPECTED, got 'TEXT'``.
    """
    expected = expected or FORMS.get(unit, "an integer" if integer else "a number")
    number, suffix = _SUFFIX.fullmatch(text).groups()  # type: ignore[union-attr]  # matches every text
    scale = UNITS.get(unit, {"": 1}).get(suffix.lower())
    try:
        if scale is None:
            raise argparse.ArgumentTypeError(expected)
        value = option_number(number, expected, integer=integer)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    return int(value) * int(scale) if integer else value * scale


def positive_size(text: str) -> int:
    """argparse type: a size in bytes >= 1, with an optional unit (``120MB``, ``1GiB``: :func:`option_quantity`)."""
    expected = FORMS["bytes"].replace(" (", " >= 1 (", 1)  # a size in bytes >= 1 (65536, 64KiB, ...)
    value = int(option_quantity(text, "bytes", integer=True, expected=expected))
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def integer(text: str) -> int:
    """argparse type: an integer (its bounds checked where it is used)."""
    return int(option_number(text, "an integer", integer=True))


def seconds(text: str) -> float:
    """argparse type: a number of seconds (its bounds checked where it is used)."""
    return option_number(text, "a number of seconds", integer=False)


def port_number(text: str) -> int:
    """argparse type: a TCP port 0-65535."""
    return int(option_number(text, "a port number 0-65535", integer=True, low=0, high=65535))


def scale_factor(text: str) -> float:
    """argparse type: a finite number >= 0."""
    return option_number(text, "a finite number >= 0", integer=False, low=0)


MAX_WORKERS = 256
"""The most processes ``serve --workers`` starts."""


def worker_count(text: str) -> int:
    """argparse type: ``--workers N|auto``, an integer 1-:data:`MAX_WORKERS` or the cores this process may use."""
    if text == "auto":
        return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0))))
    return int(option_number(text, f"a number of processes 1-{MAX_WORKERS} or 'auto'", integer=True, low=1,
                             high=MAX_WORKERS))


def positive_count(text: str) -> int:
    """argparse type: an integer >= 1 (a count; a size is :func:`positive_size`)."""
    return int(option_number(text, "an integer >= 1", integer=True, low=1))


def age_days(text: str) -> float:
    """argparse type: a number of days > 0, as seconds."""
    return option_number(text, "a number of days > 0", integer=False, low=0, above=True) * 86_400.0


def body_path(text: str) -> str:
    """argparse type: ``--ignore-body-field metadata.trace_id``, one body path (:mod:`ssemock.body_paths`)."""
    from .body_paths import parse_path

    try:
        return parse_path(text).text
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def matcher_names(text: str) -> tuple[str, ...]:
    """argparse type: ``--match-on method,path`` as a tuple of matcher names (:data:`~ssemock.matching.MATCHERS`)."""
    from .matching import MATCHERS, check_match_on

    try:
        return check_match_on(comma_names(text))
    except ConfigError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated matchers among {', '.join(MATCHERS)}, got {text!r}") from None


def scenario_list(text: str) -> tuple[str, ...]:
    """argparse type: ``--scenario crlf,split-bytes`` as a tuple of names (their existence checked where served)."""
    try:
        return scenario_names(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None

