"""The ssemock exception tree.

Every error ssemock raises on purpose is an :class:`SSEMockError`. Leaves also
subclass the builtin exception they resemble, so callers may catch either::

    SSEMockError
    ├── CassetteError (ValueError)          a cassette file is malformed
    │   └── ImportFormatError               a foreign file cannot be imported
    ├── CassetteNotFoundError (FileNotFoundError, KeyError)
    ├── ScenarioError (ValueError)          a scenario file or step is malformed
    ├── ScenarioTooLargeError (ValueError)  a scenario would add more to a response than the bound
    ├── StubError (ValueError)              a stub (file or inline) is malformed
    ├── NoMatchError (LookupError)          no interaction matches a request
    ├── ConfigError (ValueError)            an invalid option (port, timing scale, matcher, name, limit)
    ├── JSONTooDeepError (ValueError)       a JSON body nests deeper than the bound
    ├── ServerError (RuntimeError)          the replay server failed to start or stop
    ├── BodyTimeoutError (TimeoutError)     a request body did not arrive in time (answered 408)
    ├── RecorderError (RuntimeError)        the recorder failed to start or to write a cassette
    ├── RecorderConfigError (ValueError)    a record mode, target URL, cassette name or filter is invalid
    └── PlotError (ValueError)              a picture cannot be drawn (no matplotlib, bad file type or interaction)
"""

from __future__ import annotations

import reprlib
from pathlib import Path
from typing import Any

__all__ = [
    "BodyTimeoutError",
    "CassetteError",
    "CassetteNotFoundError",
    "ConfigError",
    "ImportFormatError",
    "JSONTooDeepError",
    "NoMatchError",
    "PlotError",
    "RecorderConfigError",
    "RecorderError",
    "SSEMockError",
    "ScenarioError",
    "ScenarioTooLargeError",
    "ServerError",
    "StubError",
    "short_repr",
]


class SSEMockError(Exception):
    """Base class of every error raised by ssemock."""


class _FileFieldError(SSEMockError, ValueError):
    """An error in a data file, naming the file, the field and what was expected.

    Args:
        file: path of the file, or a label such as ``"<string>"``.
        field: dotted path of the faulty field, e.g. ``"interactions[0].response.status"``.
        expected: what would have been valid.
        got: the value found, if any (shown with a bounded ``repr``: at most 80 characters,
            built without rendering the whole of a large or deeply nested value).
    """

    kind = "file"

    def __init__(
        self,
        file: str | Path | None,
        field: str,
        expected: str,
        got: Any = None,
        *,
        show_got: bool = True,
    ) -> None:
        self.file = str(file) if file is not None else "<memory>"
        self.field = field
        self.expected = expected
        self.got = got
        where = f"{self.file}: {field}" if field else self.file
        message = f"{where}: expected {expected}"
        if show_got and got is not None:
            message += f", got {short_repr(got)}"
        super().__init__(message)


class _ShortRepr(reprlib.Repr):
    def repr_bytes(self, value: bytes, level: int) -> str:  # reprlib renders all of it, then cuts
        return repr(value[: self.maxstring]) + ("..." if len(value) > self.maxstring else "")


_REPR = _ShortRepr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 78, 78, 40
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 6


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, without first rendering all of a large value."""
    shown = _REPR.repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


class CassetteError(_FileFieldError):
    """A cassette file cannot be read: names the file, the field and what was expected."""

    kind = "cassette"


class ImportFormatError(CassetteError):
    """A foreign recording (VCR cassette, raw body, chunks file) cannot be imported."""


class ScenarioError(_FileFieldError):
    """A scenario file or step is invalid: names the file, the step field and the valid choices."""

    kind = "scenario"


class ScenarioTooLargeError(SSEMockError, ValueError):
    """Applying a scenario to a response would add more to its body than the bound
    (:data:`ssemock.limits.MAX_SCENARIO_GROWTH`, 256 MiB by default): the plan is left half built
    and must be dropped (the replay server answers 500 ``ssemock_scenario_too_large``).

    Attributes:
        scenario: the name of the scenario whose step went over the bound.
        step: the step, as in its file: ``steps[0].edit``.
        limit: the bound, in bytes.
        added: the bytes counted when the step went over it (at least this much would have been
            added; each added line counts :data:`ssemock.limits.LINE_COST` bytes more).
    """

    def __init__(self, scenario: str, step: str, limit: int, added: int, *, line_cost: int = 128) -> None:
        self.scenario = scenario
        self.step = step
        self.limit = limit
        self.added = added
        super().__init__(
            f"scenario {scenario!r}, {step}: would add more than {limit} bytes to this response body (the bound "
            f"on what scenario steps add); {added} bytes counted when this step went over it, each added line "
            f"counting {line_cost} bytes more"
        )


class StubError(_FileFieldError):
    """A stub is invalid: names the file (or ``<inline>``), the field and what was expected."""

    kind = "stub"


class CassetteNotFoundError(SSEMockError, FileNotFoundError, KeyError):
    """A cassette asked for by name or path does not exist.

    Args:
        name: the name or path asked for.
        known: the names that do exist (shown sorted).
        path: ``name`` is a file or directory path (``--cassettes DIR``), not a cassette name.
    """

    def __init__(self, name: str, known: list[str] | None = None, *, path: bool = False) -> None:
        self.name = name
        self.known = sorted(known or [])
        message = f"{name}: no such cassette file or directory" if path else f"no cassette named {name!r}"
        if known is not None:
            message += f"; known: {', '.join(self.known) or '(none)'}"
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class NoMatchError(SSEMockError, LookupError):
    """No recorded interaction matches a request.

    Attributes:
        request: a short description of the request (``"POST /v1/chat/completions"``).
        closest: descriptions of the closest interactions with the matchers that failed.
    """

    def __init__(self, message: str, request: str, closest: list[dict[str, Any]]) -> None:
        self.request = request
        self.closest = closest
        super().__init__(message)


class JSONTooDeepError(SSEMockError, ValueError):
    """A JSON document nests arrays and objects deeper than the bound.

    Attributes:
        limit: the bound (``ssemock.limits.MAX_JSON_DEPTH`` by default).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"JSON nested deeper than {limit} levels of arrays and objects")


class ServerError(SSEMockError, RuntimeError):
    """The replay server could not start, or failed while serving."""


class BodyTimeoutError(SSEMockError, TimeoutError):
    """A request body did not arrive within the server's ``body_timeout`` (the client gets a 408)."""


class ConfigError(SSEMockError, ValueError):
    """An invalid option given to ``MockServer`` or the command line (port, timing scale, matcher...)."""


class RecorderError(SSEMockError, RuntimeError):
    """The recorder could not start (e.g. the port is taken) or could not write a cassette."""


class RecorderConfigError(SSEMockError, ValueError):
    """Invalid recorder input: record mode, target URL, cassette name or filter pattern."""


class PlotError(SSEMockError, ValueError):
    """A timeline picture cannot be drawn: the ``plot`` extra is missing, or a bad file type or interaction."""
