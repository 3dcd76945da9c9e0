"""The checks of a stub's values, shared by its two forms: stub files (:mod:`.files`) and the inline
calls (:mod:`.inline`). Each raises :class:`~ssemock.errors.StubError` naming the file (``"<inline>"``
for a call), the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import StubError
from ..limits import MAX_JSON_DEPTH, is_integer, plain_json_problem
from .model import FINISH_REASONS, MAX_TEXT, Usage

__all__ = ["COUNTS", "ERROR_STATUSES", "TIMES", "USAGE_KEYS", "check_finish", "check_json", "check_status",
           "check_text", "check_times", "checked_mapping", "parse_usage"]

ERROR_STATUSES = (400, 599)
"""The statuses of a stub's ``error`` (an HTTP error answer)."""
TIMES = (1, 10**9)
"""The bounds of a stub's ``times``."""
COUNTS = (0, 10**9)
"""The bounds of each token count of ``usage``."""
USAGE_KEYS = ("input_tokens", "output_tokens", "reasoning_tokens")
"""The keys of ``usage``."""


def check_status(status: Any, file: str, field: str) -> int:
    """``status`` when it is an HTTP error status (400-599). Raises :class:`StubError`."""
    if not is_integer(status) or not ERROR_STATUSES[0] <= status <= ERROR_STATUSES[1]:
        raise StubError(file, field, f"an HTTP error status from {ERROR_STATUSES[0]} to {ERROR_STATUSES[1]}", status)
    return int(status)


def check_times(times: Any, file: str, field: str) -> None:
    """Refuse a ``times`` that is not None or an integer from 1 to 1,000,000,000."""
    if times is not None and (not is_integer(times) or not TIMES[0] <= times <= TIMES[1]):
        raise StubError(file, field, f"an integer from {TIMES[0]} to {TIMES[1]} (or none: any number)", times)


def check_finish(finish: Any, file: str, field: str) -> None:
    """Refuse a finish reason that is not None or one of :data:`~.model.FINISH_REASONS`."""
    if finish is not None and finish not in FINISH_REASONS:
        raise StubError(file, field, f"one of {', '.join(FINISH_REASONS)}", finish)


def checked_mapping(value: Any, file: str, field: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    """``value`` when it is a mapping of none but ``keys``. Raises :class:`StubError` naming the first other key."""
    if not isinstance(value, Mapping):
        raise StubError(file, field, "a mapping", value)
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise StubError(file, f"{field}.{unknown[0]}" if field else unknown[0], f"one of the keys {', '.join(keys)}",
                        unknown[0])
    return value


def parse_usage(value: Any, file: str, field: str) -> Usage:
    """A :class:`Usage` from its mapping (counts 0 to 1,000,000,000). Raises :class:`StubError`."""
    data = checked_mapping(value, file, field, USAGE_KEYS)
    for key, count in data.items():
        if not is_integer(count) or not COUNTS[0] <= count <= COUNTS[1]:
            raise StubError(file, f"{field}.{key}", f"an integer from {COUNTS[0]} to {COUNTS[1]}", count)
    return Usage(**data)


def check_text(value: Any, file: str, field: str) -> str | None:
    """``value``: None, or a string of at most ``MAX_TEXT`` characters that UTF-8 can encode (no lone
    surrogate: the answer would fail to encode at the first request). Raises :class:`StubError`."""
    if value is None:
        return None
    expected = f"a string of at most {MAX_TEXT} characters without lone surrogates"
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise StubError(file, field, expected, value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise StubError(file, field, expected, value) from None
    return value


def check_json(value: Any, file: str, field: str) -> None:
    """Refuse (:class:`~ssemock.errors.StubError` naming ``field``) a value that is not plain JSON
    (:func:`~ssemock.limits.plain_json_problem`: nested deeper than 128 levels, NaN, infinities,
    lone surrogates, objects JSON has no form for)."""
    problem = plain_json_problem(value)
    if problem is not None:
        raise StubError(file, field, f"plain JSON nested at most {MAX_JSON_DEPTH} deep ({problem})", None,
                        show_got=False)
