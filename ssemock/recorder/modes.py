"""Record modes, with the meanings VCR.py gives them.

=================  ==============================================================
``none``           never reach the upstream: replay what the cassette holds,
                   answer anything else with 404 ``ssemock_no_match``.
``once``           a cassette that existed when first used is only replayed (as
                   ``none``); a new cassette records every request.
``new_episodes``   replay a request that matches an interaction of the cassette
                   not yet played; record every other one (appended).
``all``            forward and record every request; never replay (new
                   interactions are appended after the old ones).
=================  ==============================================================
"""

from __future__ import annotations

from enum import StrEnum

from ..errors import RecorderConfigError

__all__ = ["RecordMode", "record_mode"]


class RecordMode(StrEnum):
    """VCR record modes (see the module docstring); the value (a ``str``) is the name used on the CLI."""

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"


def record_mode(value: str | RecordMode) -> RecordMode:
    """The :class:`RecordMode` named ``value`` (case-insensitive; ``-`` may replace ``_``).

    Raises:
        RecorderConfigError: not a record mode; the message lists the valid values.
    """
    if isinstance(value, RecordMode):
        return value
    try:
        return RecordMode(str(value).strip().lower().replace("-", "_"))
    except ValueError:
        valid = ", ".join(m.value for m in RecordMode)
        raise RecorderConfigError(f"unknown record mode {value!r}; valid: {valid}") from None
