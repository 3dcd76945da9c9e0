"""argparse value types of the ``ssemock`` command's options: the text of every number option checked by one
rule (:func:`option_number`), its range by :func:`ssemock.limits.within`.

A module of its own, below :mod:`ssemock.cli` and the option groups of :mod:`ssemock.edge.arguments` and
:mod:`ssemock.recorder.cli`, which all use them.
"""

from __future__ import annotations

import argparse
import math
import os
import re

__all__ = ["MAX_WORKERS", "age_days", "integer", "option_number", "port_number", "positive_count",
           "scale_factor", "seconds", "worker_count"]

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
    """argparse type: an integer >= 1 (a count or a size in bytes)."""
    return int(option_number(text, "an integer >= 1", integer=True, low=1))


def age_days(text: str) -> float:
    """argparse type: a number of days > 0, as seconds."""
    return option_number(text, "a number of days > 0", integer=False, low=0, above=True) * 86_400.0
