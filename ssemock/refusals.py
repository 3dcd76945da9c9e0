"""The errors a request is answered with instead of a replay or a forwarded answer.

The replay server, the recorder and their network edge raise these (and the errors of
:mod:`ssemock.errors` that carry a status) where they find them; each class gives the HTTP
``status`` and the error ``code`` (the ``type`` of the JSON answer), and its :meth:`details`
the answer's other fields. :func:`ssemock.edge.replies.refuse` writes every answer, and
:data:`HTTP_ERRORS` lists them all (the docs' page of error codes is generated from it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import (
    BodyTimeoutError,
    CassetteNotFoundError,
    JSONTooDeepError,
    NoMatchError,
    ScenarioError,
    ScenarioTooLargeError,
    SSEMockError,
    StubError,
    did_you_mean,
)
from .limits import MAX_ITEMS

__all__ = [
    "HTTP_ERRORS",
    "AdminPathError",
    "BadCassetteError",
    "BadInteractionPinError",
    "BadQueryError",
    "BadRequestBodyError",
    "BodyNotRecordedError",
    "BodyTooLargeError",
    "ChangeBusyError",
    "ChangeIncompleteError",
    "CrossOriginError",
    "HTTPVersionError",
    "InvalidChangeError",
    "InvalidTextError",
    "MalformedRequestError",
    "MisdirectedHostError",
    "NeedsHTTP2Error",
    "NeedsTLSError",
    "NotRecordedError",
    "RequestError",
    "TooManyScenariosError",
    "UnknownAdminPathError",
    "UnknownCassetteError",
    "UnknownEventIdError",
    "UnknownScenarioError",
    "UnreadableBodyError",
    "UnsupportedEncodingError",
    "UpstreamError",
    "error_codes",
]


class RequestError(SSEMockError):
    """A request refused by a check of the replay server, the recorder or their network edge."""


class UnreadableBodyError(RequestError, ValueError):
    """The request body cannot be read, e.g. it is labelled ``Content-Encoding: gzip`` and is not gzip."""

    status = 400
    code = "ssemock_bad_request"
    close = True

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"cannot read the request body: {reason}")


class BadRequestBodyError(UnreadableBodyError):
    """A request body the recorder cannot read (the recorder's own type for it); nothing is forwarded."""

    code = "ssemock_bad_request_body"
    close = False


class MalformedRequestError(RequestError, ValueError):
    """Bytes the HTTP/1.1 parser refuses (not HTTP, a bad request line, a header line over 8,190 bytes,
    more than 128 headers, bytes after ``Connection: close``); the message gives the parser's reason, never
    the bytes; the connection is closed."""

    status = 400
    code = "ssemock_malformed_request"
    close = True

    def __init__(self, reason: str) -> None:
        super().__init__(f"malformed HTTP request: {reason}")


class InvalidTextError(RequestError, ValueError):
    """The request holds text that is not valid Unicode (a lone surrogate, valid in JSON), which a stub cannot echo."""

    status = 400
    code = "ssemock_bad_request"

    def __init__(self, error: UnicodeEncodeError) -> None:
        shown = error.object[error.start:error.end]
        super().__init__(f"the request holds text that is not valid Unicode ({error.reason} at {error.start}: "
                         f"{shown!r}); a stub cannot echo it")


class TooManyScenariosError(RequestError, ValueError):
    """More scenarios named for one request than are composed together (``limit``: 8, ``MAX_SCENARIOS``)."""

    status = 400
    code = "ssemock_too_many_scenarios"
    detail_names = ("limit",)

    def __init__(self, count: int, limit: int) -> None:
        self.limit = limit
        super().__init__(f"{count} scenarios named; at most {limit} are composed for one request")


class UnknownScenarioError(RequestError, LookupError):
    """A request names a scenario that is not served, or a list of no names (``known``: those served)."""

    status = 400
    code = "ssemock_unknown_scenario"
    detail_names = ("known",)

    def __init__(self, message: str, known: Iterable[str]) -> None:
        self.known = sorted(known)
        super().__init__(message)

    def withheld(self) -> tuple[str, str]:
        return "a scenario named is not served", "which one, nor the scenarios served"


class BadCassetteError(RequestError, ValueError):
    """The cassette a request sent to the recorder names: an invalid name, or a file that does not load."""

    status = 400
    code = "ssemock_bad_cassette"

    def __init__(self, cause: SSEMockError) -> None:
        self.cause = cause
        super().__init__(str(cause))


class BadInteractionPinError(RequestError, ValueError):
    """An ``X-SSEMock-Interaction`` header that is not an interaction index (a whole number from 0)."""

    status = 400
    code = "ssemock_bad_interaction"

    def __init__(self, value: str) -> None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        super().__init__(f"X-SSEMock-Interaction: {shown!r}: expected one header, the index of an interaction in "
                         f"its cassette: a whole number from 0 to {MAX_ITEMS - 1}")


class BadQueryError(RequestError, ValueError):
    """A query parameter of an admin path (``GET /_ssemock/requests?limit=0``) that is none of its own, or whose
    value is malformed or out of bounds (``parameter``: its name)."""

    status = 400
    code = "ssemock_bad_query"
    detail_names = ("parameter",)

    def __init__(self, parameter: str, expected: str) -> None:
        self.parameter = parameter
        super().__init__(f"query parameter {parameter!r}: {expected}")


class InvalidChangeError(RequestError, ValueError):
    """The body of a change to a running server (``POST /_ssemock/stubs``, ``PUT /_ssemock/scenario``) that
    the loader of its files refuses: ``kind`` (``stub``, ``scenario`` or ``chaos``), ``field`` (as in a file:
    ``stubs[0].reply.text``, ``steps[1].stall.seconds``, or ``line 3, column 5``; empty: the whole
    document) and ``expected``. Nothing was changed."""

    status = 400
    code = "ssemock_invalid_change"
    detail_names = ("kind", "field", "expected")

    def __init__(self, cause: StubError | ScenarioError) -> None:  # ChaosError is a ScenarioError
        self.kind, self.field, self.expected = cause.kind, cause.field, cause.expected
        super().__init__(str(cause))


class ChangeIncompleteError(RequestError, ConnectionError):
    """Under ``--workers``, a change to the running server that some worker process did not take:
    ``unanswered`` (process ids that did not answer in time, their state unchanged) and ``refused`` (process
    id: its error); ``workers`` holds the answer of each process that took it (this one's included)."""

    status = 503
    code = "ssemock_change_incomplete"
    detail_names = ("workers", "unanswered", "refused")

    def __init__(self, what: str, workers: Mapping[str, Any], unanswered: Iterable[int],
                 refused: Mapping[str, Any]) -> None:
        self.workers, self.unanswered, self.refused = dict(workers), sorted(unanswered), dict(refused)
        missing = [*map(str, self.unanswered), *(f"{pid} (refused)" for pid in self.refused)]
        super().__init__(f"{what}: taken by worker(s) {', '.join(self.workers) or '(none)'}, not by "
                         f"{', '.join(missing)}, which keep their state from before (a scenario change may be sent "
                         "again; stubs: DELETE /_ssemock/stubs, then add them again)")


class ChangeBusyError(RequestError, TimeoutError):
    """Under ``--workers``, a change that waited ``wait`` seconds for the changes sent before it (another worker
    held the change lock that long, its event loop held, or more changes came at once than are made in that
    time) and was not made: no worker's state changed."""

    status = 503
    code = "ssemock_change_busy"
    detail_names = ("wait",)

    def __init__(self, what: str, wait: float) -> None:
        self.wait = wait
        super().__init__(f"{what}: waited {wait:g} s for the changes before it (a worker held the change lock that "
                         "long: its event loop held, or more changes came at once than it made in that time); "
                         "nothing was changed: send it again")


class CrossOriginError(RequestError, PermissionError):
    """A web page of another origin asks what it may not read (admin paths, the recorder, a rebound name)."""

    status = 403
    code = "ssemock_cross_origin"


class UnknownAdminPathError(RequestError, LookupError):
    """A ``/_ssemock/`` path that is no admin endpoint of the replay server."""

    status = 404
    code = "ssemock_unknown_admin_path"

    def __init__(self, what: str) -> None:
        super().__init__(f"no admin endpoint {what}")


class AdminPathError(RequestError, LookupError):
    """A ``/_ssemock/`` path in any letter case (``/_SSEMOCK/health``) sent to the recorder, which forwards
    none and answers only its health."""

    status = 404
    code = "ssemock_admin_path"

    def __init__(self) -> None:
        super().__init__("/_ssemock/ paths are never forwarded; the recorder answers only GET /_ssemock/health")


class UnknownCassetteError(CassetteNotFoundError):
    """A request names a cassette that is not served (``known``: those served)."""

    status = 404
    code = "ssemock_unknown_cassette"
    detail_names = ("known",)

    def __init__(self, name: str, known: Iterable[str]) -> None:
        super().__init__(name)
        self.known = sorted(known)
        self.args = (str(self.args[0]) + did_you_mean(name, self.known),)

    def withheld(self) -> tuple[str, str]:
        return f"no cassette named {self.name!r}", "the cassettes served"


class NotRecordedError(NoMatchError):
    """No interaction of the recorder's cassette matches, and its record mode may not record one."""

    detail_names = ("cassette", "record_mode")

    def __init__(self, record_mode: str, cassette: str, request: str) -> None:
        self.cassette = cassette
        self.record_mode = record_mode
        super().__init__(f"record mode {record_mode}: cassette {cassette!r} has no interaction for {request}, "
                         "and the recorder may not record it", request, [])

    def details(self) -> dict[str, str]:
        return {"cassette": self.cassette, "record_mode": self.record_mode}


class UnknownEventIdError(RequestError, LookupError):
    """A ``Last-Event-ID`` that no stream sent on this path, nor the matched recording."""

    status = 404
    code = "ssemock_unknown_event_id"

    def __init__(self, event_id: str) -> None:
        self.event_id = event_id
        shown = event_id if len(event_id) <= 80 else event_id[:80] + "…"
        super().__init__(f"Last-Event-ID {shown!r}: no event with this id in the streams sent on this path nor in "
                         "the matched recording, so the stream cannot continue after it")


class BodyTooLargeError(RequestError, ValueError):
    """A request body over ``limit`` bytes (``max_request_body``), refused before all of it is read; the
    connection is closed."""

    status = 413
    code = "ssemock_body_too_large"
    close = True
    detail_names = ("limit",)

    def __init__(self, limit: int, option: str) -> None:
        self.limit = limit
        self.option = option
        super().__init__(f"request body larger than {limit} bytes; the limit is set by {option}")


class MisdirectedHostError(RequestError, PermissionError):
    """A ``Host`` name the server does not answer under (a web page reaching it through DNS rebinding)."""

    status = 421
    code = "ssemock_misdirected_host"


class UnsupportedEncodingError(RequestError, ValueError):
    """A request body in a ``Content-Encoding`` the server cannot decode (``br`` without the Brotli package,
    ``zstd`` without zstandard; gzip and deflate always decode); the connection is closed."""

    status = 415
    code = "ssemock_unsupported_encoding"
    close = True

    def __init__(self, reason: str) -> None:
        super().__init__(f"the request body cannot be decoded: {reason}")


class BodyNotRecordedError(RequestError, LookupError):
    """The interaction that matches was recorded without its body (``body_not_recorded``: it did not
    decode, e.g. ``br``), so no answer can be replayed; the answer's ``X-SSEMock-Body-Not-Recorded``
    header says why too."""

    status = 500
    code = "ssemock_body_not_recorded"
    detail_names = ("cassette", "interaction", "reason")

    def __init__(self, cassette: str, interaction: int, reason: str) -> None:
        self.cassette, self.interaction, self.reason = cassette, interaction, reason
        super().__init__(f"{cassette} #{interaction} matches, but its body was not recorded ({reason}): record it "
                         "again (the recorder forwards Accept-Encoding: identity unless told to keep the encoding)")

    def answer_headers(self) -> dict[str, str]:
        shown = self.reason.encode("ascii", "replace").decode("ascii")
        return {"X-SSEMock-Body-Not-Recorded": shown if len(shown) <= 300 else shown[:299] + "?"}


class UpstreamError(RequestError, ConnectionError):
    """The recorder's upstream failed, or answered with an interim (1xx) status as its final one."""

    status = 502
    code = "ssemock_upstream_error"


class HTTPVersionError(RequestError, ValueError):
    """A request in an HTTP version other than 1.0 and 1.1 (``HTTP/2.0`` as a request line, the HTTP/2
    connection preface ``PRI * HTTP/2.0`` of a client with prior knowledge, ``HTTP/3.0``): ssemock speaks
    HTTP/1.1 (RFC 9110 section 15.6.6); the connection is closed."""

    status = 505
    code = "ssemock_http_version_not_supported"
    close = True

    def __init__(self, version: str) -> None:
        super().__init__(f"{version} is not served: ssemock speaks HTTP/1.1 (and 1.0)")


class NeedsHTTP2Error(RequestError, ValueError):
    """The scenario has steps of the HTTP/2 layer (``h2-frames``, ``h2-reset``, ``h2-goaway``, ``h2-starve``)
    and the request came over HTTP/1.x: nothing is sent but this answer."""

    status = 400
    code = "ssemock_needs_http2"
    detail_names = ("steps",)

    def __init__(self, steps: Iterable[str], version: str) -> None:
        self.steps = list(steps)
        super().__init__(f"the scenario's step(s) {', '.join(self.steps)} act on HTTP/2 frames, and this request "
                         f"came over {version}: serve with --http2 (MockServer(http2=True)) and use an HTTP/2 "
                         "client (curl --http2-prior-knowledge, or --http2 over https; httpx with http2=True over "
                         "https, http1=False too for h2c)")


class NeedsTLSError(RequestError, ValueError):
    """The scenario has steps of the TLS layer (``tls-records``, ``tls-close``) and the request came without
    TLS (``http://``, h2c): nothing is sent but this answer."""

    status = 400
    code = "ssemock_needs_tls"
    detail_names = ("steps",)

    def __init__(self, steps: Iterable[str]) -> None:
        self.steps = list(steps)
        super().__init__(f"the scenario's step(s) {', '.join(self.steps)} act on TLS records, and this request "
                         "came without TLS: serve with --tls (MockServer(tls=True)) and use an https:// URL")


HTTP_ERRORS: tuple[type[SSEMockError], ...] = (
    UnreadableBodyError, BadRequestBodyError, MalformedRequestError, InvalidTextError, JSONTooDeepError,
    TooManyScenariosError, UnknownScenarioError, BadCassetteError, BadInteractionPinError, BadQueryError,
    InvalidChangeError, NeedsHTTP2Error, NeedsTLSError, CrossOriginError, NoMatchError, NotRecordedError,
    UnknownCassetteError, UnknownAdminPathError, AdminPathError, UnknownEventIdError, BodyTimeoutError,
    BodyTooLargeError,
    UnsupportedEncodingError, MisdirectedHostError, BodyNotRecordedError, ScenarioTooLargeError, UpstreamError,
    ChangeIncompleteError, ChangeBusyError, HTTPVersionError,
)
"""Every error answered over HTTP, by status: its class gives ``status``, ``code`` and ``detail_names``."""


def error_codes() -> dict[str, int]:
    """The ``type`` of each JSON error ssemock answers (``ssemock_no_match``...) and its HTTP status."""
    return {error.code: error.status for error in HTTP_ERRORS}
