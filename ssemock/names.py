"""Lists of names: a tuple inside ssemock, a comma-separated string at its edges only.

The ``X-SSEMock-Scenario`` header, the ``/_ssemock/s/A,B/`` path prefix, ``--scenario`` and
``--match-on`` write a list of names as ``"a,b"``; :func:`comma_names` reads that text once,
where it arrives, and everything past it holds a ``tuple[str, ...]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import ConfigError, did_you_mean, short_repr

__all__ = ["check_names_in", "comma_names", "scenario_names"]


def comma_names(text: str, what: str = "names") -> tuple[str, ...]:
    """``"a, b"`` as ``("a", "b")`` (spaces around a name dropped); ``""``: ``()``.

    Raises:
        ConfigError: an empty name (``","``, ``"a,,b"``, ``"a,"``, ``" "``), the message starting with ``what``.
    """
    if not text:
        return ()
    names = tuple(name.strip() for name in text.split(","))
    if not all(names):
        raise ConfigError(f"{what}: an empty name in {short_repr(text)} (expected names, comma-separated)")
    return names


def scenario_names(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Scenario names as a tuple: ``("crlf", "split-bytes")`` as it is, ``"crlf,split-bytes"`` split
    (the header, path prefix and command-line form, also accepted from Python: one name is a string);
    None or ``""``: ``()``, no scenario. Whether the names exist is checked where they are served.

    Raises:
        ConfigError: an empty name, or a value that is neither a string nor a sequence of strings.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return comma_names(value, "scenario")
    if not isinstance(value, Sequence) or not all(isinstance(name, str) for name in value):
        raise ConfigError(f"scenario: expected scenario names (a tuple of str, or one str), got {short_repr(value)}")
    names = tuple(value)
    if not all(names):
        raise ConfigError(f"scenario: an empty name in {short_repr(names)}")
    return names


def check_names_in(names: Iterable[str], scenarios: Mapping[str, Any]) -> None:
    """Raise :class:`~ssemock.ConfigError` for a name of ``names`` that is not a scenario of ``scenarios``."""
    for name in names:
        if name not in scenarios:
            known = ", ".join(sorted(scenarios)) or "(none)"
            raise ConfigError(f"no scenario named {name!r}{did_you_mean(name, scenarios)}; known: {known}")
