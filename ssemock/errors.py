"""The ssemock exception tree.

Every error ssemock raises on purpose is an :class:`SSEMockError`. Leaves also
subclass the builtin exception they resemble, so callers may catch either. An error
that is the answer to an HTTP request carries its status and its ``type`` (``code``)::

    SSEMockError
    ├── CassetteError (ValueError)          a cassette file is malformed
    │   └── ImportFormatError               a foreign file cannot be imported
    ├── CassetteNotFoundError (FileNotFoundError, KeyError)
    │   └── UnknownCassetteError            404 ssemock_unknown_cassette
    ├── ScenarioError (ValueError)          a scenario file or step is malformed
    │   └── ChaosError                      faults by rate given at run time (PUT /_ssemock/chaos) are refused
    ├── ScenarioTooLargeError (ValueError)  500 ssemock_scenario_too_large: more added to a response than the bound
    ├── StubError (ValueError)              a stub (file or inline) is malformed
    ├── NoMatchError (LookupError)          404 ssemock_no_match: no interaction matches a request
    │   └── NotRecordedError                404 ssemock_no_match: and the recorder's mode may not record it
    ├── ConfigError (ValueError)            an invalid option (port, timing scale, matcher, name, limit)
    │   └── RecorderConfigError             a record mode, target URL, cassette name or filter is invalid
    ├── JSONTooDeepError (ValueError)       400 ssemock_json_too_deep: a JSON body nests deeper than the bound
    ├── ServerError (RuntimeError)          the replay server failed to start or stop
    ├── BodyTimeoutError (TimeoutError)     408 ssemock_body_timeout: a request body did not arrive in time
    ├── RecorderError (RuntimeError)        the recorder failed to start or to write a cassette
    ├── PlotError (ValueError)              a picture cannot be drawn (no matplotlib, bad file type or interaction)
    ├── ContentCodingError (ValueError)     a body does not decode from its Content-Encoding (ssemock.coding)
    └── RequestError                        a request refused by a check (ssemock.refusals)
        ├── UnreadableBodyError (ValueError)      400 ssemock_bad_request
        │   └── BadRequestBodyError               400 ssemock_bad_request_body (the recorder)
        ├── MalformedRequestError (ValueError)    400 ssemock_malformed_request (the HTTP parser refused it)
        ├── InvalidTextError (ValueError)         400 ssemock_bad_request
        ├── TooManyScenariosError (ValueError)    400 ssemock_too_many_scenarios
        ├── UnknownScenarioError (LookupError)    400 ssemock_unknown_scenario
        ├── BadCassetteError (ValueError)         400 ssemock_bad_cassette (the recorder)
        ├── BadInteractionPinError (ValueError)   400 ssemock_bad_interaction (X-SSEMock-Interaction)
        ├── BadQueryError (ValueError)            400 ssemock_bad_query (an admin path's query parameter)
        ├── InvalidChangeError (ValueError)       400 ssemock_invalid_change (a stub or scenario body refused)
        ├── NeedsHTTP2Error (ValueError)          400 ssemock_needs_http2 (HTTP/2 steps, HTTP/1.1 request)
        ├── NeedsTLSError (ValueError)            400 ssemock_needs_tls (TLS steps, request without TLS)
        ├── CrossOriginError (PermissionError)    403 ssemock_cross_origin
        ├── UnknownAdminPathError (LookupError)   404 ssemock_unknown_admin_path
        ├── AdminPathError (LookupError)          404 ssemock_admin_path (the recorder)
        ├── UnknownEventIdError (LookupError)     404 ssemock_unknown_event_id
        ├── BodyTooLargeError (ValueError)        413 ssemock_body_too_large
        ├── UnsupportedEncodingError (ValueError) 415 ssemock_unsupported_encoding
        ├── MisdirectedHostError (PermissionError)  421 ssemock_misdirected_host
        ├── BodyNotRecordedError (LookupError)    500 ssemock_body_not_recorded
        ├── UpstreamError (ConnectionError)       502 ssemock_upstream_error (the recorder)
        ├── ChangeIncompleteError (ConnectionError)  503 ssemock_change_incomplete (--workers)
        ├── ChangeBusyError (TimeoutError)        503 ssemock_change_busy (--workers)
        └── HTTPVersionError (ValueError)         505 ssemock_http_version_not_supported

:data:`ssemock.refusals.HTTP_ERRORS` lists every error answered over HTTP;
:func:`ssemock.edge.replies.refuse` writes the answer.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "BodyTimeoutError",
    "CassetteError",
    "CassetteNotFoundError",
    "ChaosError",
    "ConfigError",
    "ContentCodingError",
    "Described",
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
    "did_you_mean",
    "redacted",
    "short_repr",
    "shown_field",
]


class SSEMockError(Exception):
    """Base class of every error raised by ssemock.

    When it answers an HTTP request, the answer is ``{"error": {"type": code, "message": str(error),
    **details()}}`` with the HTTP ``status`` (:func:`ssemock.edge.replies.refuse`).

    Attributes:
        status: the HTTP status of that answer (class attribute; 500 unless the class says otherwise).
        code: the ``type`` of the JSON error, ``ssemock_…`` (class attribute).
        close: the connection ends with the answer: the request body was left unread (class attribute).
        detail_names: the attributes :meth:`details` adds to the JSON error, in order (class attribute).
    """

    status: ClassVar[int] = 500
    code: ClassVar[str] = "ssemock_error"
    close: ClassVar[bool] = False
    detail_names: ClassVar[tuple[str, ...]] = ()

    def details(self) -> dict[str, Any]:
        """The JSON error's fields besides ``type`` and ``message``: each of :attr:`detail_names`."""
        return {name: getattr(self, name) for name in self.detail_names}

    def answer_headers(self) -> dict[str, str]:
        """Headers of the answer besides ``Content-Type`` (none unless the class says otherwise)."""
        return {}

    def withheld(self) -> tuple[str, str] | None:
        """What a web page of another origin is told instead of the message, when the message holds
        what the server serves or has recorded: ``(what failed, what is not told)``; None: the
        whole error may be told."""
        return None


class _FileFieldError(SSEMockError, ValueError):
    """An error in a data file, naming the file, the field and what was expected.

    Args:
        file: path of the file, or a label such as ``"<string>"``.
        field: dotted path of the faulty field, e.g. ``"interactions[0].response.status"``.
        expected: what would have been valid.
        got: the value found, if any (shown with a bounded ``repr``: at most 80 characters,
            built without rendering the whole of a large or deeply nested value).

    The field (which may quote a key of the file) and the value are shown bounded, on one
    line, with key-shaped text replaced by ``REDACTED`` (:func:`short_repr`, :func:`shown_field`).
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
        self.field = field = shown_field(field)
        self.expected = expected
        self.got = got
        where = f"{self.file}: {field}" if field else self.file
        message = f"{where}: expected {expected}"
        if show_got and got is not None:
            message += f", got {short_repr(got)}"
        super().__init__(message)


_WINDOW = 4096
"""Characters of each end of a long string read for secrets before it is cut for a message."""
_MAX_INT_BITS = 14_000
"""Integers up to this many bits (about 4,214 digits) are written out; Python refuses to write
an integer of more than 4,300 digits as text."""
# Text that cannot hold a key shape nor a ``name=value`` credential: the common case skips the scanner.
# The patterns are compiled on first use (re's cache): most processes write no error message.
_PLAIN = r"[A-Za-z0-9_\-\[\]. ()]*\Z"
_LONG_RUN = r"[A-Za-z0-9]{16}"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'split-utf8'?`` for the known name closest to a misspelt one (difflib), else ``""``."""
    from difflib import get_close_matches  # only an error needs it

    close = get_close_matches(name, list(known), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def redacted(text: str) -> str:
    """``text`` with what the recorder's scanner calls secret replaced by ``REDACTED``: key
    shapes, values after a credential name (``password=…``, ``"api_key": "…"``) — see
    :mod:`ssemock.scanner`. Imported only when a message may quote a secret."""
    if len(text) < 8 or (re.match(_PLAIN, text) and not re.search(_LONG_RUN, text)):
        return text
    try:
        from .scanner.scrub import scrub_text
    except ImportError:  # pragma: no cover - the scanner is a dependency; never show what was not scanned
        return "(not shown)"
    return scrub_text(text)[0]


class _ShortRepr(reprlib.Repr):
    """reprlib's bounded repr, reading each string for secrets before it is cut."""

    def repr_str(self, value: str, level: int) -> str:
        if len(value) > 2 * _WINDOW:  # the ends shown are read, not the middle
            value = value[:_WINDOW] + value[-_WINDOW:]
        return super().repr_str(redacted(value), level)

    def repr_bytes(self, value: bytes, level: int) -> str:  # reprlib renders all of it, then cuts
        value = value[: self.maxstring + _WINDOW]
        value = redacted(value.decode("latin-1")).encode("latin-1")
        return repr(value[: self.maxstring]) + ("..." if len(value) > self.maxstring else "")

    def repr_int(self, value: int, level: int) -> str:
        if value.bit_length() > _MAX_INT_BITS:  # repr() would raise ValueError past 4,300 digits
            return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        return super().repr_int(value, level)


_REPR = _ShortRepr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, 78, 78, 40
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 6


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, without first rendering all of a large value.

    Strings (also inside lists and mappings) are read by :func:`redacted` first: a key-shaped
    string reads ``REDACTED``, so a message never quotes a secret from the file it names.
    """
    shown = redacted(_REPR.repr(value))
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


FIELD_LIMIT = 120
"""Characters of a field path shown in a message (a key quoted from a file may be any length)."""


def shown_field(field: str, limit: int = FIELD_LIMIT) -> str:
    """A field path as a message shows it: on one line (control characters escaped as in
    ``repr``), at most ``limit`` characters (its middle cut), secrets ``REDACTED``."""
    field = _middle_cut(field, limit)
    if not field.isprintable():
        field = _middle_cut("".join(c if c.isprintable() else repr(c)[1:-1] for c in field), limit)
    return redacted(field)


def _middle_cut(text: str, limit: int) -> str:
    """``text``, or its two ends around ``...`` in ``limit`` characters when it is longer."""
    return text if len(text) <= limit else text[: limit // 2] + "..." + text[-(limit - limit // 2 - 3):]


class Described:
    """A value shown by a description instead of its text (e.g. ``a string of 58 characters``):
    for what a file holds where no content of its own would help, such as the top level of a
    file that is not a cassette at all."""

    def __init__(self, value: Any, text: str | None = None) -> None:
        if text is not None:
            self.text = text
        elif isinstance(value, str):
            self.text = f"a string of {len(value)} characters"
        elif isinstance(value, list):
            self.text = f"a list of {len(value)} items"
        else:
            self.text = f"a {type(value).__name__}"

    def __repr__(self) -> str:
        return self.text


class CassetteError(_FileFieldError):
    """A cassette file cannot be read: names the file, the field and what was expected."""

    kind = "cassette"


class ImportFormatError(CassetteError):
    """A foreign recording (VCR cassette, raw body, chunks file) cannot be imported."""


class ScenarioError(_FileFieldError):
    """A scenario file or step is invalid: names the file, the step field and the valid choices."""

    kind = "scenario"


class ChaosError(ScenarioError):
    """Faults by rate given to a running server (``PUT /_ssemock/chaos``, :meth:`MockServer.set_chaos`) are
    invalid: a malformed rule, a rate out of [0, 1], rates summing to more than 1, or a scenario not served."""

    kind = "chaos"


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
        line_cost: the bytes each added line counts besides its own.
        option: how to change the bound, when a replay server refused a request for it (the
            message then says that nothing was sent), else None.
    """

    status = 500
    code = "ssemock_scenario_too_large"
    detail_names = ("scenario", "step", "limit", "added")

    def __init__(self, scenario: str, step: str, limit: int, added: int, *, line_cost: int = 128,
                 option: str | None = None) -> None:
        self.scenario = scenario
        self.step = step
        self.limit = limit
        self.added = added
        self.line_cost = line_cost
        self.option = option
        super().__init__(
            f"scenario {scenario!r}, {step}: would add more than {limit} bytes to this response body (the bound "
            f"on what scenario steps add); {added} bytes counted when this step went over it, each added line "
            f"counting {line_cost} bytes more" + (f"; nothing was sent ({option})" if option else "")
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
        if known and not path:
            message += did_you_mean(name, known)
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
        closest_stub: the stub nearest to answering it, ``{"stub", "match", "differences"}``, or None.
    """

    status = 404
    code = "ssemock_no_match"
    detail_names = ("closest", "closest_stub")

    def __init__(self, message: str, request: str, closest: list[dict[str, Any]], *,
                 closest_stub: dict[str, Any] | None = None) -> None:
        self.request = request
        self.closest = closest
        self.closest_stub = closest_stub
        super().__init__(message)

    def details(self) -> dict[str, Any]:
        """``closest``, and ``closest_stub`` when there is one."""
        return {"closest": self.closest} | ({} if self.closest_stub is None else {"closest_stub": self.closest_stub})

    def withheld(self) -> tuple[str, str]:
        return f"no recorded interaction matches {self.request}", "which ones come closest nor how they differ"


class JSONTooDeepError(SSEMockError, ValueError):
    """A JSON document nests arrays and objects deeper than the bound.

    Attributes:
        limit: the bound (``ssemock.limits.MAX_JSON_DEPTH`` by default).
        option: how to change the bound, when a request was refused for it, else None.
    """

    status = 400
    code = "ssemock_json_too_deep"
    detail_names = ("limit",)

    def __init__(self, limit: int, option: str | None = None) -> None:
        self.limit = limit
        self.option = option
        super().__init__(f"JSON nested deeper than {limit} levels of arrays and objects"
                         + (f"; the limit is set by {option}" if option else ""))


class ServerError(SSEMockError, RuntimeError):
    """The replay server could not start, or failed while serving."""


class BodyTimeoutError(SSEMockError, TimeoutError):
    """A request body did not arrive within ``body_timeout`` (``seconds``); the connection is closed."""

    status = 408
    code = "ssemock_body_timeout"
    close = True

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"the request body did not arrive within {seconds:g} s (body_timeout, --body-timeout)")


class ConfigError(SSEMockError, ValueError):
    """An invalid option of ``MockServer``, ``Recorder``, the pytest plugin or the command line (port, timing
    scale, matcher, network option, limit...)."""


class RecorderError(SSEMockError, RuntimeError):
    """The recorder could not start (e.g. the port is taken) or could not write a cassette."""


class RecorderConfigError(ConfigError):
    """An invalid recorder option: record mode, target URL, cassette name or directory, filter pattern."""


class PlotError(SSEMockError, ValueError):
    """A timeline picture cannot be drawn: the ``plot`` extra is missing, or a bad file type or interaction."""


class ContentCodingError(SSEMockError, ValueError):
    """A body cannot be decoded from its ``Content-Encoding`` (:mod:`ssemock.coding`): an unknown
    coding (``br``, ``zstd``), too many stacked, corrupt data, bytes after the last member, or a
    complete body that ends inside a member.

    Attributes:
        coding: the ``Content-Encoding`` value, as given.
        reason: why, in a few words (no byte of the body is quoted).
    """

    def __init__(self, coding: str, reason: str) -> None:
        self.coding, self.reason = coding, reason
        super().__init__(f"Content-Encoding {coding!r} does not decode: {reason}")
