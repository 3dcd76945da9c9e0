"""What a server tells its operator: one line per request, single-line errors, no flood.

* ``ssemock.access`` (INFO): one line per request, written when its answer ended::

      POST /v1/chat/completions -> 200 complete, 16611 bytes, 812 ms; cassette anthropic-messages-thinking #0;
      scenario split-crlf; from 127.0.0.1

  (one line). ``outcome`` is the journal's (``complete``, ``cut``, ``reset``,
  ``client_gone``, ``refused``, ``stopped``); a request the HTTP parser refused
  (garbage bytes, a bad request line, a header too long) is one line
  ``malformed HTTP request from ADDRESS -> 400: REASON``.
* ``ssemock.server``: aiohttp's own server log. A malformed request is already the
  access line, so the parser's traceback is dropped; a failure of ssemock itself keeps
  its traceback.
* ``asyncio``: ``socket.accept() out of system resource`` (no file descriptor left) is
  written once with the limit, then at most once a minute with a count, never per
  accept (asyncio logs it with a traceback for every attempt, thousands a second; the
  filter, installed by :func:`limit_accept_errors` when a server starts, touches no
  other message).
"""

from __future__ import annotations

import logging
import resource
import sys
import time
from dataclasses import dataclass
from typing import Protocol, TextIO

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError

from ..errors import redacted

__all__ = [
    "ACCESS_LOGGER",
    "ACCESS_NOTE",
    "NO_NOTE",
    "REFUSED_REASON",
    "ROUTED",
    "SELF_REPORTED",
    "SERVER_LOGGER",
    "AccessLogger",
    "AccessNote",
    "Outcome",
    "access_line",
    "configure_logging",
    "limit_accept_errors",
]

ACCESS_LOGGER = logging.getLogger("ssemock.access")
SERVER_LOGGER = logging.getLogger("ssemock.server")


class AccessNote(Protocol):
    """What the handler knows of a request for its access line (a :class:`ssemock.journal.JournalEntry`,
    or an :class:`Outcome`); each field may be None."""

    @property
    def status(self) -> int | None: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def bytes_sent(self) -> int | None: ...
    @property
    def cassette(self) -> str | None: ...
    @property
    def interaction(self) -> int | None: ...
    @property
    def stub(self) -> str | None: ...
    @property
    def scenario(self) -> str | None: ...
    @property
    def fault(self) -> str | None: ...


@dataclass(frozen=True)
class Outcome:
    """An access note that knows only how the answer ended (e.g. ``client_gone``)."""

    outcome: str | None
    status: int | None = None
    bytes_sent: int | None = None
    cassette: str | None = None
    interaction: int | None = None
    stub: str | None = None
    scenario: str | None = None
    fault: str | None = None


NO_NOTE = Outcome(None)
ACCESS_NOTE: web.RequestKey[AccessNote] = web.RequestKey("ssemock_access_note")
# Set on requests whose handler writes its own line (the recorder's progress line).
SELF_REPORTED: web.RequestKey[bool] = web.RequestKey("ssemock_self_reported")
# Set on every request that reached the application (the others were refused by the HTTP parser).
ROUTED: web.RequestKey[bool] = web.RequestKey("ssemock_routed")
# The one-line reason of a request the HTTP parser refused (ssemock.edge.malformed).
REFUSED_REASON: web.RequestKey[str] = web.RequestKey("ssemock_refused_reason")
_HANDLER_NAME = "ssemock-cli"


def _clean(text: str, limit: int) -> str:
    """``text`` on one line: non-printable characters as ``?``, at most ``limit`` characters."""
    text = text[: limit + 1]
    if not text.isprintable():
        text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def access_line(
    request: web.BaseRequest, status: int | None, seconds: float, *, outcome: str | None = None,
    body_bytes: int | None = None, reason: str | None = None,
) -> str:
    """The one-line description of a request and how its answer ended (see the module docstring)."""
    remote = request.remote or "-"
    if not request.get(ROUTED):  # refused by the HTTP parser: no method, no path
        shown = _clean(redacted(" ".join((reason or "").split())), 200)  # the parser's reason, scanned as all shown
        return f"malformed HTTP request from {remote} -> {status}: {shown}"
    note = request.get(ACCESS_NOTE, NO_NOTE)
    status = note.status or status
    outcome = note.outcome or outcome or ("refused" if (status or 0) >= 400 else "complete")
    sent = body_bytes if note.bytes_sent is None else note.bytes_sent
    path = _clean(redacted(request.path), 300)  # decoded, then scanned: a key in the path is never logged
    line = (f"{request.method} {path} -> {status if status is not None else '-'} {outcome}, "
            f"{sent if sent is not None else '-'} bytes, {seconds * 1000:.0f} ms")
    if note.cassette:
        index = note.interaction
        line += f"; cassette {_clean(redacted(note.cassette), 120)}" + (f" #{index}" if index is not None else "")
    if note.stub:
        line += f"; stub {_clean(redacted(note.stub), 120)}"
    if note.scenario:
        line += f"; scenario {_clean(redacted(note.scenario), 120)}"
    if note.fault:
        line += f"; fault {_clean(note.fault, 120)} by chance"
    return f"{line}; from {remote}"


class AccessLogger(AbstractAccessLogger):
    """aiohttp's access-log hook: :func:`access_line` at INFO, once the answer has ended."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        if request.get(SELF_REPORTED):
            return
        reason = request.get(REFUSED_REASON) if not request.get(ROUTED) else None
        size = response.content_length if response.content_length is not None else response.body_length
        self.logger.info(access_line(request, response.status, time, body_bytes=size, reason=reason))

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


class _DropMalformedHttp(logging.Filter):
    """Drops aiohttp's traceback for a request its parser refused, or whose body did not decode (the
    access line reports it: the client got its 400 or 415; aiohttp logs the second when it reads the
    rest of the body after the answer)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, web.RequestPayloadError) and isinstance(exc.__cause__, HttpProcessingError):
            return False
        return not isinstance(exc, HttpProcessingError)


class _AcceptExhaustion(logging.Filter):
    """asyncio's ``socket.accept() out of system resource``: one line, then one a minute at most."""

    every = 60.0  # seconds

    def __init__(self) -> None:
        super().__init__()
        self._last = -float("inf")
        self._suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if self._retry_after_close(record):
            return False
        if not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = time.monotonic()
        if now - self._last < self.every:
            self._suppressed += 1
            return False
        exc = record.exc_info[1] if record.exc_info else None
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        more = f" ({self._suppressed} more in the last {self.every:.0f} s)" if self._suppressed else ""
        record.msg = (f"ssemock: cannot accept connections: {exc or 'out of system resource'}; "
                      f"new connections wait in the listen queue until a connection closes "
                      f"(open files limit {soft}: raise it with ulimit -n){more}")
        record.args = ()
        record.exc_info = record.exc_text = None
        self._last, self._suppressed = now, 0
        return True


    @staticmethod
    def _retry_after_close(record: logging.LogRecord) -> bool:
        """After an accept failed, asyncio retries with one timer per failed accept; a timer that
        fires once the server has stopped meets the closed socket (``Invalid file descriptor: -1``)
        and asyncio logs a traceback. Nothing is lost: the server is gone."""
        exc = record.exc_info[1] if record.exc_info else None
        return (isinstance(exc, ValueError) and "Invalid file descriptor" in str(exc)
                and "_start_serving" in record.getMessage())


SERVER_LOGGER.addFilter(_DropMalformedHttp())
_ACCEPT_FILTER = _AcceptExhaustion()


def limit_accept_errors() -> None:
    """Install the ``asyncio`` logger's filter of accept failures (once per process)."""
    asyncio_logger = logging.getLogger("asyncio")
    if _ACCEPT_FILTER not in asyncio_logger.filters:
        asyncio_logger.addFilter(_ACCEPT_FILTER)


class _CurrentStderr(logging.StreamHandler[TextIO]):
    """A stream handler that writes to ``sys.stderr`` as it is at each line."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass  # always the current sys.stderr


def configure_logging(*, quiet: bool, stream: TextIO | None = None) -> None:
    """Send ssemock's logs to ``stream`` (default: whatever ``sys.stderr`` is when a line is written, so that a
    stream a test runner swapped in and closed since is never written to) for the command line.

    One line per request unless ``quiet`` (then warnings and errors only), and asyncio's
    errors with the same handler. Calling it again replaces the previous set-up.
    """
    handler = logging.StreamHandler(stream) if stream is not None else _CurrentStderr()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    for name in ("ssemock", "asyncio"):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if h.get_name() == _HANDLER_NAME]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.propagate = False
    logging.getLogger("ssemock").setLevel(logging.WARNING if quiet else logging.INFO)
    limit_accept_errors()
