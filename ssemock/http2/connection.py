"""One HTTP/2 connection: the ``h2`` state machine (python-hyper) on an asyncio transport, each stream a request
of aiohttp's own server.

Each request stream becomes the request record aiohttp's HTTP/1 handler would have made (method, path,
headers with ``Host`` from ``:authority``, the body as a stream reader) and is answered by the server's
own handler (``web.Server.request_handler``: the application's routes and middlewares), in a task of its
own; :mod:`.stream` writes the answer as DATA frames.

Bounds: at most ``SETTINGS_MAX_CONCURRENT_STREAMS`` (100) streams at once and a header list of at most
``SETTINGS_MAX_HEADER_LIST_SIZE`` (64 KiB), as the ``h2`` library enforces them; a request body is kept up to
one byte past ``max_request_body`` (the handler then answers 413) and the rest dropped; a connection with
no stream open for ``idle`` seconds gets ``GOAWAY`` and is closed; one whose client resets more than
:data:`MAX_RESETS` streams before their answer ended gets ``GOAWAY ENHANCE_YOUR_CALM``. A frame the state
machine refuses ends the connection with ``GOAWAY`` and the error code it names.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
from aiohttp import HttpVersion, StreamReader, web
from aiohttp.http_parser import RawRequestMessage
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from ..edge.framing import H2_STREAM
from ..edge.logs import ACCESS_LOGGER, AccessLogger
from ..h2faults import H2End
from .stream import H2Stream, StreamTransport, StreamWriter

__all__ = ["HTTP2", "MAX_RESETS", "H2Connection"]

HTTP2 = HttpVersion(2, 0)
MAX_RESETS = 1000
"""Streams a client may reset before their answer ended, on one connection: past it, ``GOAWAY
ENHANCE_YOUR_CALM`` (each reset stream cost a request's work)."""
_LOG = logging.getLogger("ssemock.http2")


class H2Connection(asyncio.Protocol):
    """The server side of one HTTP/2 connection (see the module docstring); aiohttp's server keeps it among
    its connections (``close`` and ``shutdown`` on a stop), as it keeps its own handlers.

    Args:
        server: aiohttp's low-level server of the application (its ``request_factory`` and ``request_handler``).
        max_body: ``max_request_body`` in bytes.
        idle: seconds a connection without a stream stays open.
    """

    _task_handler = None
    """What aiohttp's server reads of a connection it forgets: no task of the connection's own to wait for."""

    def __init__(self, server: web.Server, max_body: int, idle: float) -> None:
        self.server = server
        self.max_body = max_body
        self.idle = idle
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        self.transport: asyncio.Transport | None = None
        self.streams: dict[int, H2Stream] = {}
        self.bodies: dict[int, tuple[StreamReader, list[int]]] = {}
        self.writing_paused = False
        self.closing = False
        self.lost = False
        self.gone_away = False
        self.resets = 0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._access = AccessLogger(ACCESS_LOGGER, "")

    # ---- asyncio.Protocol ------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.server.connection_made(cast(Any, self), self.transport)
        self.h2.initiate_connection()
        self.flush()
        self._arm_idle()

    def data_received(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            _LOG.info("ssemock: HTTP/2 connection ended: %s", exc)
            self.gone_away = True  # the state machine queued its GOAWAY, and sends nothing after it
            self._close()
            return
        for event in events:
            self._event(event)
        self.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = self.lost = True
        for stream in list(self.streams.values()):
            stream.reset_by_peer(0)
        for reader, _ in self.bodies.values():
            reader.feed_eof()
        self.server.connection_lost(cast(Any, self), exc)
        if self._idle_timer is not None:
            self._idle_timer.cancel()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self.flush()

    # ---- web.Server's view of a connection ----------------------------------------------------------
    def close(self) -> None:
        """Stop taking streams (new ones are refused, ``REFUSED_STREAM``); once the streams open have ended,
        ``GOAWAY`` (``NO_ERROR``, the last stream taken) and the connection is closed."""
        self.closing = True
        if not self.streams:
            self._goaway()

    async def shutdown(self, timeout: float | None = 15.0) -> None:
        """Let the streams finish for ``timeout`` seconds, cancel the rest, close."""
        self.closing = True
        tasks = [s.task for s in self.streams.values() if s.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
            for task in tasks:
                task.cancel()
        self._goaway()

    def _goaway(self, code: int = 0, last_stream: int | None = None) -> None:
        """``GOAWAY`` now, then close the connection (the state machine sends nothing after it)."""
        if not self.gone_away and not self.lost:
            self.gone_away = True
            self.h2.close_connection(code, last_stream_id=last_stream)
        self._close()

    # ---- events -------------------------------------------------------------------------------------
    def _event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            self._request(event)
        elif isinstance(event, h2.events.DataReceived):
            self._body(event)
        elif isinstance(event, h2.events.StreamEnded):
            body = self.bodies.pop(event.stream_id, None)
            if body is not None:
                body[0].feed_eof()
        elif isinstance(event, h2.events.StreamReset):
            self.bodies.pop(event.stream_id, None)
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.reset_by_peer(event.error_code or 0)
                self.resets += 1
                if self.resets > MAX_RESETS:  # a "rapid reset" flood (CVE-2023-44487)
                    _LOG.info("ssemock: HTTP/2 connection ended: its client reset %d streams", self.resets)
                    self._goaway(h2.errors.ErrorCodes.ENHANCE_YOUR_CALM)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self._close()
        # WindowUpdated, RemoteSettingsChanged: flush() after the events sends what now fits

    def _request(self, event: h2.events.RequestReceived) -> None:
        stream_id = event.stream_id
        assert stream_id is not None
        if self.gone_away:
            return  # (after a GOAWAY in the same read): the connection closes
        if self.closing:
            self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
            return
        stream = self.streams[stream_id] = H2Stream(self, stream_id)
        reader = StreamReader(cast(Any, _ReaderProtocol(self)), 2**16, loop=self._loop)
        if event.stream_ended is None:
            self.bodies[stream_id] = (reader, [0])
        else:
            reader.feed_eof()
        message = _message(event.headers or [])
        stream.task = self._loop.create_task(self._answer(stream, message, reader))
        self._disarm_idle()

    def _body(self, event: h2.events.DataReceived) -> None:
        assert event.stream_id is not None
        self.h2.acknowledge_received_data(event.flow_controlled_length or 0, event.stream_id)
        body = self.bodies.get(event.stream_id)
        if body is None or not event.data:
            return
        reader, size = body
        if size[0] <= self.max_body:  # one byte past the bound is enough for the handler to answer 413
            kept = event.data[: self.max_body + 1 - size[0]]
            size[0] += len(kept)
            reader.feed_data(kept)

    async def _answer(self, stream: H2Stream, message: RawRequestMessage, reader: StreamReader) -> None:
        """Answer one stream with the server's handler, as aiohttp's HTTP/1 handler answers a request."""
        task = asyncio.current_task()
        assert task is not None
        protocol = _RequestProtocol(self, stream)
        writer = StreamWriter(stream)
        request = self.server.request_factory(message, reader, cast(Any, protocol), writer, task)
        request[H2_STREAM] = stream
        started = self._loop.time()
        response: web.StreamResponse | None = None
        try:
            try:
                response = await self.server.request_handler(request)
            except web.HTTPException as exc:
                response = exc
            await response.prepare(request)
            await response.write_eof()
        except (ConnectionError, asyncio.CancelledError):
            pass  # the client reset the stream or left; the journal says so
        except Exception:
            _LOG.exception("ssemock: error answering an HTTP/2 stream")
            stream.end_with(H2End("RST_STREAM", h2.errors.ErrorCodes.INTERNAL_ERROR))
        finally:
            if response is not None and self._access.enabled:
                self._access.log(request, response, self._loop.time() - started)
            self.streams.pop(stream.stream_id, None)
            self.bodies.pop(stream.stream_id, None)
            if not self.streams and self.closing:
                self._goaway()
            elif not self.streams:
                self._arm_idle()

    # ---- writing ------------------------------------------------------------------------------------
    def send_headers(self, stream: H2Stream, fields: list[tuple[str, str]]) -> None:
        if not stream.closed and not self.gone_away:
            self.h2.send_headers(stream.stream_id, fields)
            self.flush()

    def send_end(self, stream: H2Stream, end: H2End) -> None:
        """Send ``end`` on ``stream`` now (its bytes before it were sent)."""
        if end.frame == "END_STREAM":
            self.h2.end_stream(stream.stream_id)
        elif end.frame == "RST_STREAM":
            self.h2.reset_stream(stream.stream_id, end.code)
            stream.notes.append(f"h2: RST_STREAM error code {end.code} after {stream.sent_bytes} bytes")
        else:
            last = stream.stream_id if end.last_stream == "this" else max(0, stream.stream_id - 2)
            stream.notes.append(f"h2: GOAWAY error code {end.code}, last stream id {last}, after "
                                f"{stream.sent_bytes} bytes; connection closed")
            self.h2.close_connection(end.code, last_stream_id=last)
            self.gone_away = True
            self._loop.call_soon(self._close)

    def flush(self) -> None:
        """Send what the windows admit of every stream, in one write to the transport."""
        if self.transport is None or self.transport.is_closing():
            return
        now = self._loop.time()
        for stream in list(self.streams.values()):
            if self.gone_away:
                break  # (a stream's GOAWAY): the state machine sends no frame after it
            if stream.queue:
                stream.pump(now)
        data = self.h2.data_to_send()
        if data:
            self.transport.write(data)

    def flush_later(self, seconds: float) -> None:
        """Flush again in ``seconds`` (the end of a starvation or of a wait for the window; a flush after the
        connection closed does nothing)."""
        self._loop.call_later(seconds, self.flush)

    def whole_limit(self) -> int:
        """The largest piece worth waiting for a window to take whole: half the client's initial stream window,
        at most half the connection's initial window (65,535 bytes, RFC 9113 section 6.9.2); clients send
        ``WINDOW_UPDATE`` once they have read half a window."""
        return min(self.h2.remote_settings.initial_window_size, 65_535) // 2

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            data = self.h2.data_to_send()
            if data:
                self.transport.write(data)
            self.transport.close()

    def _arm_idle(self) -> None:
        self._disarm_idle()
        self._idle_timer = self._loop.call_later(self.idle, self._idle_end)

    def _disarm_idle(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_end(self) -> None:
        if not self.streams:
            self.close()


def _message(headers: list[tuple[bytes, bytes]] | Any) -> RawRequestMessage:
    """The request record aiohttp's HTTP/1 parser would have made of an HTTP/2 request's header list."""
    pseudo: dict[bytes, bytes] = {}
    fields: CIMultiDict[str] = CIMultiDict()
    raw: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        name, value = bytes(name), bytes(value)
        if name.startswith(b":"):
            pseudo[name] = value
            continue
        fields.add(name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
        raw.append((name, value))
    authority = pseudo.get(b":authority", b"")
    if "Host" not in fields and authority:
        fields["Host"] = authority.decode("utf-8", "surrogateescape")
        raw.append((b"host", authority))
    if len(cookies := fields.getall("Cookie", [])) > 1:  # RFC 9113 section 8.2.3: one field again
        fields["Cookie"] = "; ".join(cookies)
    path = pseudo.get(b":path", b"/").decode("utf-8", "surrogateescape")
    target, _, query = path.partition("?")
    url = URL.build(path=target, query_string=query, encoded=True)
    method = pseudo.get(b":method", b"GET").decode("ascii", "replace")
    return RawRequestMessage(method, path, HTTP2, CIMultiDictProxy(fields), tuple(raw), False, None, False, False, url)


class _RequestProtocol:
    """What aiohttp's request reads of its connection handler, for one stream."""

    max_field_size = 8190
    max_headers = 128

    def __init__(self, connection: H2Connection, stream: H2Stream) -> None:
        assert connection.transport is not None
        self.transport = StreamTransport(stream, connection.transport)
        self.ssl_context = connection.transport.get_extra_info("sslcontext")
        self.peername = connection.transport.get_extra_info("peername")
        self.sockname = connection.transport.get_extra_info("sockname")
        self._stream = stream

    @property
    def writing_paused(self) -> bool:
        return self._stream.writing_paused


class _ReaderProtocol:
    """What aiohttp's stream reader asks of its protocol: a body is bounded as it arrives, not paused."""

    _reading_paused = False

    def __init__(self, connection: H2Connection) -> None:
        self._connection = connection

    @property
    def connected(self) -> bool:
        return not self._connection.lost

    def pause_reading(self) -> None:
        pass

    def resume_reading(self, resume_parser: bool = True) -> None:
        pass
