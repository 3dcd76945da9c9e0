"""Starting a server on its network edge: limits, admin guard, access log, stop.

:func:`start_runner` runs an aiohttp application with aiohttp's own options set from
:class:`NetworkOptions` (``keepalive_timeout`` = header timeout, listen ``backlog``,
``shutdown_timeout`` = grace) and one middleware, :func:`edge_middleware`, that

* refuses an HTTP version other than 1.x (505, :mod:`.malformed`; the parser's own refusals are
  answered there too);
* refuses admin requests (every request, for the recorder) from other sites (:mod:`.guard`);
* gives the request body ``body_timeout`` seconds to arrive (then ``408
  ssemock_body_timeout``, connection closed);
* ends the connection with an answer that leaves the request body unread (``413
  ssemock_body_too_large``): the client sees the end at once;
* keeps the requests in flight, so that a stop lets them finish for ``grace`` seconds
  and then cancels them, and writes the access line of a request cut by a stop or by
  its client leaving (aiohttp writes the others, see :mod:`.logs`).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from aiohttp import web

from ..errors import BodyTimeoutError
from .guard import admin_path, refusal
from .logs import (
    ACCESS_LOGGER,
    ACCESS_NOTE,
    NO_NOTE,
    ROUTED,
    SELF_REPORTED,
    SERVER_LOGGER,
    AccessLogger,
    access_line,
    limit_accept_errors,
)
from .malformed import ConnectionFront, EdgeServer, version_refusal
from .options import NetworkOptions, is_loopback
from .replies import refuse

__all__ = ["EDGE", "Edge", "activity", "edge_middleware", "make_runner", "start_runner", "stopping"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_LOG = logging.getLogger("ssemock.edge")


class Edge:
    """What the middleware of one server knows: its options, its address, who logs for itself.

    Attributes:
        options: the network options.
        host: the address the server is bound to (for the ``Host`` check).
        self_reporting: route handlers that write their own line per request.
        handlers: the tasks answering requests now.
        stopping: the server is stopping (requests cut now are ``stopped``).
        guard_every_path: every path is guarded, not only the admin ones (the recorder).
        closing: the connections reading and dropping a body after their answer (their tasks).
    """

    def __init__(
        self, options: NetworkOptions, host: str, self_reporting: tuple[Handler, ...] = (),
        guard_every_path: bool = False,
    ) -> None:
        self.options = options
        self.host = host
        self.self_reporting = self_reporting
        self.guard_every_path = guard_every_path
        self.handlers: set[asyncio.Task[Any]] = set()
        self.closing: set[asyncio.Task[Any]] = set()
        self.stopping = False

    async def stop(self, app: web.Application) -> None:
        """``on_shutdown``: let the requests in flight finish for ``grace`` seconds, then cancel them.

        (aiohttp's own shutdown would wait ``grace`` twice and then cut the connections
        before cancelling, so that a cut request could not tell a stop from a client leaving.)
        """
        self.stopping = True
        if self.handlers:
            await asyncio.wait(set(self.handlers), timeout=self.options.grace)
        for task in self.handlers | self.closing:
            task.cancel()
        if self.handlers or self.closing:
            await asyncio.wait(self.handlers | self.closing, timeout=1.0)


EDGE: web.AppKey[Edge] = web.AppKey("ssemock_edge", Edge)


class _BodyDeadline:
    """Fails the reads of a request body that is not complete ``seconds`` after its headers."""

    def __init__(self, request: web.Request, seconds: float) -> None:
        self.fired = False
        self.seconds = seconds
        self._content = request.content
        self._timer = asyncio.get_running_loop().call_later(seconds, self._fire)
        self._content.on_eof(self.cancel)

    def _fire(self) -> None:
        if not self._content.is_eof():
            self.fired = True
            self._content.set_exception(BodyTimeoutError(self.seconds))

    def cancel(self) -> None:
        self._timer.cancel()


def _body_timeout_reply(request: web.Request, seconds: float) -> web.Response:
    request.pop(SELF_REPORTED, None)  # the handler never answered: the access line is ours
    return refuse(BodyTimeoutError(seconds))  # the connection closes: the rest of the body will not be read


@web.middleware
async def edge_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Admin guard, body deadline, in-flight count, access line of cut requests (see module docstring)."""
    request[ROUTED] = True
    edge = request.app[EDGE]
    wrong_version = version_refusal(request)
    if wrong_version is not None:
        return wrong_version
    if edge.guard_every_path or admin_path(request.path):
        refused = refusal(request, edge.host, edge.options.allowed_hosts, every_path=edge.guard_every_path)
        if refused is not None:
            return refuse(refused)
    deadline = None if request.content.is_eof() else _BodyDeadline(request, edge.options.body_timeout)
    if edge.self_reporting and request.match_info.handler in edge.self_reporting:  # the replay server has none
        request[SELF_REPORTED] = True
    loop = asyncio.get_running_loop()
    started = loop.time()
    task = asyncio.current_task()
    assert task is not None  # a middleware runs in its request's task
    edge.handlers.add(task)
    try:
        response = await handler(request)
    except BodyTimeoutError:
        return _body_timeout_reply(request, edge.options.body_timeout)
    except asyncio.CancelledError:
        if not request.get(SELF_REPORTED):
            outcome = request.get(ACCESS_NOTE, NO_NOTE).outcome or ("stopped" if edge.stopping else "client_gone")
            ACCESS_LOGGER.info(access_line(request, None, loop.time() - started, outcome=outcome))
        raise
    finally:
        edge.handlers.discard(task)
        if deadline is not None:
            deadline.cancel()
    if deadline is not None and deadline.fired and not response.prepared:
        return _body_timeout_reply(request, edge.options.body_timeout)  # the handler answered the failed read
    if response.keep_alive is False and not response.prepared and not request.content.is_eof():
        await _answer_then_half_close(request, response, edge)
    return response


async def _answer_then_half_close(request: web.Request, response: web.StreamResponse, edge: Edge) -> None:
    """Send ``response`` (it closes the connection: a 413 leaves the body unread), then end the
    connection's sending side, so that the client sees the connection end with the answer.

    aiohttp then reads and drops what the client still sends, until it closes or for 10 s at most,
    and closes too: a close with unread bytes would send a TCP RST, which may destroy the answer
    before the client has read it (RFC 9112 §9.6). The client used to see the end only after those
    10 s. A stop cuts that reading short (:attr:`Edge.closing`).
    """
    try:
        await response.prepare(request)
        await response.write_eof()
        transport = request.transport
        if transport is not None and transport.can_write_eof():
            transport.write_eof()  # FIN once the answer has left
            edge.closing.add(request.task)
            request.task.add_done_callback(edge.closing.discard)
    except OSError:  # the client left without reading the answer (ConnectionResetError, ENOTCONN): nothing to end
        pass


def activity(app: web.Application) -> dict[str, int]:
    """``in_flight``: requests being answered besides the caller's; ``tasks``: asyncio tasks alive."""
    edge = app.get(EDGE)
    return {"in_flight": max(0, len(edge.handlers) - 1) if edge else 0, "tasks": len(asyncio.all_tasks())}


def stopping(request: web.BaseRequest) -> bool:
    """Whether the server answering ``request`` is stopping (a cut request is then ``stopped``)."""
    edge = request.app.get(EDGE) if isinstance(request, web.Request) else None
    return edge is not None and edge.stopping


def make_runner(
    app: web.Application, host: str, options: NetworkOptions, *, handler_cancellation: bool = False,
    self_reporting: Sequence[Handler] = (), guard_every_path: bool = False, front: ConnectionFront | None = None,
) -> web.AppRunner:
    """The runner of ``app`` with the edge's middleware and ``options``, not set up yet and
    serving no address: :func:`start_runner` binds it to a TCP port, ``ssemock serve --workers``
    to the sockets gunicorn shares between its workers. ``host``: the address served (for the
    ``Host`` check); the other arguments are :func:`start_runner`'s."""
    limit_accept_errors()
    edge = app[EDGE] = Edge(options, host, tuple(self_reporting), guard_every_path=guard_every_path)
    app.middlewares.insert(0, edge_middleware)
    app.on_shutdown.append(edge.stop)
    runner = _EdgeRunner(
        app, handle_signals=False, access_log=ACCESS_LOGGER, access_log_class=AccessLogger, logger=SERVER_LOGGER,
        keepalive_timeout=options.header_timeout, handler_cancellation=handler_cancellation,
        shutdown_timeout=max(options.grace, 0.001),  # aiohttp waits without limit for 0
    )
    runner.front = front
    return runner


class _EdgeRunner(web.AppRunner):
    """An application runner whose connections answer their parser's refusals as ssemock's own
    (:mod:`.malformed`)."""

    front: ConnectionFront | None = None

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = EdgeServer  # the same server; only the connection handler it makes differs
        assert isinstance(server, EdgeServer)
        server.front = self.front
        return server


async def start_runner(
    app: web.Application, host: str, port: int, options: NetworkOptions, *, exposure: str,
    handler_cancellation: bool = False, self_reporting: Sequence[Handler] = (), guard_every_path: bool = False,
    ssl_context: ssl.SSLContext | None = None, front: ConnectionFront | None = None,
) -> web.AppRunner:
    """Serve ``app`` on ``host:port`` in the running loop, with ``options``; returns its runner.

    Args:
        exposure: what anyone who can reach the server could do, for the warning logged
            when ``host`` is not a loopback address.
        handler_cancellation: cancel a handler when its client disconnects (aiohttp's option).
        self_reporting: route handlers that write their own line per request.
        guard_every_path: refuse a foreign ``Host`` or ``Origin`` on every path (the recorder,
            which forwards requests with the target's credentials), not only on admin paths.
        ssl_context: serve over TLS with it (:mod:`ssemock.tls`); None: plain TCP.
        front: makes each connection's protocol (the HTTP/2 front, :func:`ssemock.http2.front`); None:
            aiohttp's HTTP/1 handler.

    Raises:
        OSError: the address cannot be bound (the runner is cleaned up).
    """
    runner = make_runner(app, host, options, handler_cancellation=handler_cancellation,
                         self_reporting=self_reporting, guard_every_path=guard_every_path, front=front)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=options.backlog, ssl_context=ssl_context)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    if not is_loopback(host):
        _LOG.warning("ssemock: warning: listening on %r, not a loopback address: %s; bind 127.0.0.1 unless "
                     "other machines must connect", host, exposure)
    return runner
