"""``ssemock serve --workers N|auto``: N replay processes on one port, run by gunicorn.

gunicorn's master process loads the cassettes and scenarios once (they are shared with
the workers by ``fork``), binds the port and keeps N workers alive; each worker serves
the port with aiohttp's gunicorn worker class (:class:`aiohttp.worker.GunicornWebWorker`),
with the same network edge as a single server (:func:`ssemock.edge.runner.make_runner`).
The kernel hands each new connection to one of the workers.

Journal and admin routes across workers:

* each worker keeps its own journal (of ``--journal-capacity`` entries) and play counts;
  ``seq`` counts per worker and every entry read through the admin route names its
  ``worker`` (the process id that answered);
* ``GET /_ssemock/requests`` on any worker gathers the journals of all workers (each worker
  also listens on a Unix socket in a private directory for this), ordered by ``time``;
  ``DELETE /_ssemock/requests`` clears them all and answers ``{"cleared": TOTAL, "workers":
  {"PID": CLEARED, ...}, "unanswered": [PID, ...]}``;
* the other workers are asked at once and each gets :data:`PEER_TIMEOUT` (2 s) to answer: a
  worker whose event loop is held longer is left out and named, by ``unanswered`` (DELETE)
  or by the header ``X-SSEMock-Unanswered-Workers: PID,PID`` (GET, empty when all answered),
  and a line on stderr; an unanswered worker keeps its journal (a DELETE it reads late,
  when its loop runs again, clears nothing);
  a worker that is gone (restarted) is left out silently, its journal went with it;
* ``GET /_ssemock/requests?path=…`` (:mod:`ssemock.journal_query`): each worker applies the filters
  to its own journal (``since`` to its own ``seq``), then ``limit`` to the gathered entries;
* ``GET /_ssemock/metrics`` on any worker shows every worker's counts, each sample labelled with its
  ``worker`` (:mod:`ssemock.telemetry`), gathered and left out the same way;
* a change (``POST``/``DELETE /_ssemock/stubs``, ``PUT``/``DELETE /_ssemock/scenario``:
  :mod:`ssemock.change_routes`) is applied by the worker that receives it, then handed to every other
  worker as the same :class:`~ssemock.changes.Change` record, asked as the journal is (each gets
  :data:`PEER_TIMEOUT` plus twice the time the receiving worker took to read the document), one change at
  a time (:mod:`ssemock.change_lock`: every worker makes them in one order); the answer names each worker
  that took it (``workers``: process id → its answer), or is ``503 ssemock_change_incomplete`` naming those
  that did not answer in time (``unanswered``: a change read late is not applied) or refused it
  (``refused``). A worker started later (gunicorn replaces one that died) starts from the loaded files,
  without the changes, and says so on stderr;
* ``health``, ``cassettes``, ``scenarios``, ``GET /_ssemock/stubs`` and ``GET /_ssemock/scenario`` are this
  worker's (the same in every worker once a change reached them all; a stub's ``used`` counts this worker's
  answers).

Play counts ("the first interaction not yet played" among equal matches) are kept per
worker: with N > 1, repeated identical requests that land on different workers may get
the same interaction. A test that relies on the order of repeated requests uses one
process (no ``--workers``), as does :class:`~ssemock.MockServer`, which is single-process.

SIGTERM or SIGINT stops the master and every worker (requests in flight get ``--grace``
seconds); the workers exit within a second. A worker that has not exited 1 s + ``--grace``
after the signal (its event loop held) is killed (gunicorn's graceful timeout). When the
master is killed outright (``kill -9``), the workers notice within a second, stop, and the
last one removes the private socket directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.worker import GunicornWebWorker
from gunicorn.app.base import BaseApplication

from .change_lock import LOCK_FILE, hold_change_lock
from .change_routes import SPREAD, Spreading
from .changes import MAX_CHANGE_RECORD, Change, prepare_change
from .edge import refuse
from .edge.runner import make_runner
from .errors import ServerError, SSEMockError
from .journal import send_journal
from .journal_query import JournalQuery, check_clear
from .matching import prepare_indexes
from .mockserver import MockServer
from .refusals import BadQueryError
from .server import ServerState, create_app
from .telemetry import METER, Meter, send_metrics

__all__ = ["KeptBacklog", "Worker", "serve_workers"]

JOURNAL_PATH = "/_ssemock/requests"
METRICS_PATH = "/_ssemock/metrics"
PEER_TIMEOUT = 2.0
"""Seconds a worker waits for each other worker's journal (all are asked at once)."""
STOP_TIMEOUT = 1.0
"""Seconds after SIGTERM, beyond ``--grace``, before a worker that has not exited is killed."""
PEER_LINE_SIZE = 64 * 1024
"""Bytes of a request line a worker reads from another (the journal query passed on): above three times
aiohttp's 8,190 bytes of a client's request line, as each character of a query may be passed on as
``%XX``; at that bound a query within :mod:`~ssemock.journal_query`'s bounds reaches every worker."""
UNANSWERED_HEADER = "X-SSEMock-Unanswered-Workers"
CHANGED = "changed"
"""The file of the workers' directory that says a change was made at run time (for workers started later)."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Worker(GunicornWebWorker):
    """aiohttp's gunicorn worker, woken at once by SIGTERM (aiohttp's notices it within a second),
    keeping the listen queue of ``--backlog`` (see :class:`KeptBacklog`)."""

    def init_process(self) -> None:
        inherited: list[Any] = self.sockets  # type: ignore[has-type]  # gunicorn's, untyped
        self.sockets = [KeptBacklog(sock, self.cfg.backlog) for sock in inherited]
        super().init_process()

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        self._notify_waiter_done()


class KeptBacklog:
    """A listening socket whose ``listen(n)`` keeps a queue of at least ``backlog`` connections.

    aiohttp's worker starts its sites with asyncio's default backlog, and asyncio listens again
    with it (128), which would shrink the queue gunicorn listened with (``--backlog``): a burst of
    connections beyond 128 would then wait for SYN retries (1 s, 3 s, ...). asyncio still accepts
    at most 128 connections per wake-up, so one worker does not take a whole burst.
    Everything else is the wrapped socket's.
    """

    def __init__(self, sock: Any, backlog: int) -> None:
        self._sock = sock
        self._backlog = backlog

    def listen(self, backlog: int = 128) -> None:
        """Listen with ``backlog`` or the kept one, whichever is larger."""
        self._sock.listen(max(backlog, self._backlog))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Peers:
    """This worker's end of the journal exchange: its Unix socket, and the others' journals."""

    def __init__(self, directory: Path, state: ServerState, meter: Meter) -> None:
        self.directory = directory
        self.state = state
        self.meter = meter
        self.pid = os.getpid()
        self.master = os.getppid()
        self.runner: web.AppRunner | None = None
        self.queue = asyncio.Lock()

    def tagged(self, query: JournalQuery | None = None) -> list[dict[str, Any]]:
        return (query or JournalQuery()).apply({**entry.to_json(), "worker": self.pid} for entry in self.state.journal)

    async def start(self, app: web.Application) -> None:
        peer = web.Application(client_max_size=MAX_CHANGE_RECORD)  # a change's document, escaped
        peer.router.add_get("/journal", self._journal)
        peer.router.add_delete("/journal", self._clear)
        peer.router.add_get("/metrics", self._metrics)
        peer.router.add_post("/change", self._change)
        self.runner = web.AppRunner(peer, handle_signals=False, access_log=None, max_line_size=PEER_LINE_SIZE)
        await self.runner.setup()
        await web.UnixSite(self.runner, str(self.directory / f"{self.pid}.sock")).start()
        if (self.directory / CHANGED).exists():  # a worker started after a change (gunicorn replaced one)
            print(f"ssemock: worker {self.pid} started after changes at run time (/_ssemock/stubs, /_ssemock/scenario) "
                  "and serves without them: send them again", file=sys.stderr, flush=True)

    async def stop(self, app: web.Application) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
        with contextlib.suppress(OSError):
            (self.directory / f"{self.pid}.sock").unlink()
        if os.getppid() != self.master:  # the master was killed: the last worker out removes the directory
            dead = [p.name for p in self.directory.glob("*.sock") if p.stem.isdigit() and not _alive(int(p.stem))]
            for name in (CHANGED, LOCK_FILE, *dead):  # no worker is started after this; a killed one left its socket
                with contextlib.suppress(OSError):
                    (self.directory / name).unlink()
            with contextlib.suppress(OSError):
                self.directory.rmdir()

    async def _journal(self, request: web.Request) -> web.StreamResponse:
        return await send_journal(request, self.tagged(JournalQuery.parse(request.query, ignore=["deadline"])))

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.json_response(self.meter.to_json())

    async def _clear(self, request: web.Request) -> web.Response:
        if _late(request):  # the asker has given up and reported this worker as unanswered: keep all
            return web.json_response({"cleared": 0, "late": True}, status=504)
        count = len(self.state.journal)
        self.state.reset()
        return web.json_response({"cleared": count})

    async def _change(self, request: web.Request) -> web.Response:
        """Another worker's change: ``{"applied": ANSWER}`` or ``{"refused": ERROR}``; 504 (not applied) late."""
        if _late(request):
            return web.json_response({"late": True}, status=504)
        try:
            change = Change.from_json(await request.json())
            commit = await asyncio.to_thread(prepare_change, self.state, change)
            if _late(request):  # read after the asker gave up: not made
                return web.json_response({"late": True}, status=504)
            return web.json_response({"applied": commit()})
        except SSEMockError as exc:
            return web.json_response({"refused": {"type": exc.code, "message": str(exc)}})
        except (ValueError, KeyError) as exc:
            return web.json_response({"refused": {"type": "ssemock_error", "message": f"not a change: {exc!s}"}})

    def ordered(self, what: str) -> contextlib.AbstractAsyncContextManager[None]:
        """The workers' change lock (:mod:`ssemock.change_lock`), held while the change ``what`` is made."""
        return hold_change_lock(self.directory, what, queue=self.queue)

    async def spread(self, change: Change, applied: dict[str, Any], read: float) -> Spreading:
        """Hand ``change``, which this worker applied with the answer ``applied`` after ``read`` seconds of
        reading it, to every other worker; each gets :data:`PEER_TIMEOUT` and twice that time to answer."""
        (self.directory / CHANGED).touch()
        answers, unanswered = await self.ask("POST", "/change", body=change.to_json(), shown=change.source,
                                             timeout=PEER_TIMEOUT + 2 * read)
        done = Spreading({str(self.pid): applied}, unanswered)
        for pid, answer in sorted(answers.items()):
            if isinstance(answer, dict) and "applied" in answer:
                done.workers[str(pid)] = answer["applied"]
            else:
                done.refused[str(pid)] = answer.get("refused") if isinstance(answer, dict) else answer
        return done

    async def ask(self, method: str, path: str = "/journal", params: dict[str, str] | None = None, *,
                  body: Any = None, shown: str,
                  timeout: float = PEER_TIMEOUT) -> tuple[dict[int, Any], list[int]]:
        """Every other worker's answer to ``method path`` (``/journal``, ``/metrics``, ``/change``) with
        ``params`` and the JSON ``body``, by process id, and the ids of the workers that did not answer within
        ``timeout`` seconds (a worker that is gone is in neither); ``shown``: the asking request's name on stderr."""
        sockets = {int(p.stem): p for p in self.directory.glob("*.sock")
                   if p.stem.isdigit() and int(p.stem) != self.pid}
        results = await asyncio.gather(*(self._ask(p, method, path, params or {}, body, timeout)
                                         for p in sockets.values()))
        answers = {pid: result for pid, result in zip(sockets, results) if result not in (_GONE, _SILENT)}
        unanswered = sorted(pid for pid, result in zip(sockets, results) if result is _SILENT)
        if unanswered:
            print(f"ssemock: worker(s) {', '.join(map(str, unanswered))} did not answer {shown} "
                  f"within {timeout:.3g} s; left out", file=sys.stderr, flush=True)
        return answers, unanswered

    async def _ask(self, socket: Path, method: str, path: str, params: dict[str, str], body: Any,
                   seconds: float) -> Any:
        timeout = aiohttp.ClientTimeout(total=seconds)
        # a DELETE or change read after this (the worker's loop was held) does nothing: "unanswered" means "kept"
        deadline = {**params, "deadline": repr(time.time() + seconds - _DEADLINE_MARGIN)}
        try:
            async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(socket)),
                                             timeout=timeout) as session, \
                    session.request(method, f"http://worker{path}", params=deadline, json=body) as resp:
                resp.raise_for_status()
                return await resp.json()
        except (FileNotFoundError, ConnectionRefusedError):
            return _GONE  # a worker that stopped or restarted meanwhile
        except aiohttp.ClientConnectorError as exc:
            return _GONE if isinstance(exc.os_error, (FileNotFoundError, ConnectionRefusedError)) else _SILENT
        except (TimeoutError, OSError, aiohttp.ClientError, ValueError):
            return _SILENT


_DEADLINE_MARGIN = 0.5  # seconds for a late worker's answer to travel back before the asker gives up


def _late(request: web.Request) -> bool:
    """Whether the asking worker has given up on this request (its ``deadline``, a time in seconds, passed)."""
    try:
        deadline = float(request.query.get("deadline", "inf"))
    except ValueError:
        deadline = math.inf
    return time.time() > deadline
_GONE = object()
_SILENT = object()


_PEERS: web.AppKey[_Peers] = web.AppKey("ssemock_peers", _Peers)


@web.middleware
async def _gather_journal(request: web.Request, handler: Handler) -> web.StreamResponse:
    """``GET``/``DELETE /_ssemock/requests`` and ``GET /_ssemock/metrics``: every worker's, not only this one's."""
    if request.path == METRICS_PATH and request.method == "GET":
        return await _gather_metrics(request)
    if request.path != JOURNAL_PATH or request.method not in ("GET", "DELETE"):
        return await handler(request)
    peers = request.app[_PEERS]
    if request.method == "DELETE":
        try:
            check_clear(request.query)
        except BadQueryError as exc:
            return refuse(exc)
        cleared = {str(peers.pid): len(peers.state.journal)}
        peers.state.reset()
        others, unanswered = await peers.ask("DELETE", shown=f"DELETE {JOURNAL_PATH}")
        cleared.update({str(pid): int(answer.get("cleared", 0)) for pid, answer in others.items()})
        return web.json_response({"cleared": sum(cleared.values()), "workers": cleared, "unanswered": unanswered})
    try:
        query = JournalQuery.parse(request.query)
    except BadQueryError as exc:
        return refuse(exc)
    entries = peers.tagged(query)
    journals, unanswered = await peers.ask("GET", params=query.params(), shown=f"GET {JOURNAL_PATH}")
    for journal in journals.values():
        entries.extend(journal)
    entries.sort(key=lambda e: (e.get("time") or 0.0, e.get("worker") or 0, e.get("seq") or 0))
    # every worker's entries passed the filters where they were kept: what is left is the limit, over them all
    return await send_journal(request, entries[: query.limit],
                              headers={UNANSWERED_HEADER: ",".join(map(str, unanswered))})


async def _gather_metrics(request: web.Request) -> web.StreamResponse:
    """``GET /_ssemock/metrics``: every worker's meter, each labelled with its process id."""
    peers = request.app[_PEERS]
    meters = {peers.pid: request.app[METER]}
    answers, unanswered = await peers.ask("GET", "/metrics", shown=f"GET {METRICS_PATH}")
    for pid, answer in answers.items():
        try:
            meters[pid] = Meter.from_json(answer)
        except (KeyError, TypeError, ValueError):
            unanswered.append(pid)
    return send_metrics(request, [(str(pid), meter) for pid, meter in sorted(meters.items())],
                        headers={UNANSWERED_HEADER: ",".join(map(str, sorted(unanswered)))})


class _Application(BaseApplication):  # type: ignore[misc]
    """gunicorn's application: settings from the command line, one replay app per worker."""

    def __init__(self, server: MockServer, workers: int, directory: Path) -> None:
        self.server = server
        self.workers = workers
        self.directory = directory
        self.url = ""
        super().__init__()

    def load_config(self) -> None:
        grace = self.server.network.grace
        settings = {
            "bind": [f"{_bracketed(self.server.host)}:{self.server.port}"],
            "workers": self.workers,
            "worker_class": Worker,
            "preload_app": True,  # cassettes loaded once, shared by fork
            "graceful_timeout": math.ceil(grace + STOP_TIMEOUT),  # (an int; set exactly below)
            "timeout": 120,  # a worker whose event loop stays blocked this long is restarted
            "keepalive": math.ceil(self.server.network.header_timeout),
            "backlog": self.server.network.backlog,
            "loglevel": "warning",
            "errorlog": "-",
            "accesslog": None,
            "control_socket_disable": True,
            "when_ready": self._ready,
        }
        for key, value in settings.items():
            self.cfg.set(key, value)
        # then gunicorn kills what is left: gunicorn's setting takes whole seconds, its arbiter any number
        self.cfg.settings["graceful_timeout"].value = grace + STOP_TIMEOUT

    def _ready(self, arbiter: Any) -> None:
        gc.freeze()  # the loaded cassettes stay shared between the workers (no copy on write by the GC)
        port = arbiter.LISTENERS[0].sock.getsockname()[1]
        self.url = f"http://{_bracketed(self.server.host)}:{port}"
        print(f"ssemock serving on {self.url}", flush=True)
        names = ", ".join(self.server.state.cassettes) or "(none)"
        print(f"{len(self.server.state.cassettes)} cassette(s): {names}; {self.workers} worker process(es)",
              file=sys.stderr, flush=True)

    def load(self) -> Callable[[], Awaitable[web.AppRunner]]:
        state, network, host, directory = self.server.state, self.server.network, self.server.host, self.directory
        # once, before the fork
        prepare_indexes(state.indexes, state.cassettes.values(), state.match_on, state.ignore_body)

        async def worker_runner() -> web.AppRunner:
            app = create_app(state)
            peers = app[_PEERS] = _Peers(directory, state, app[METER])
            app[SPREAD] = peers
            app.middlewares.append(_gather_journal)
            app.on_startup.append(peers.start)
            app.on_cleanup.append(peers.stop)
            return make_runner(app, host, network, handler_cancellation=True)

        return worker_runner


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def serve_workers(server: MockServer, workers: int) -> int:
    """Serve ``server``'s cassettes and options from ``workers`` processes until SIGTERM/SIGINT.

    Prints ``ssemock serving on http://HOST:PORT`` on stdout once the port is bound.

    Raises:
        ServerError: the address cannot be bound.

    Returns:
        The exit status: 0 after a stop by signal, else gunicorn's (e.g. 3 when a worker
        cannot boot, 1 when the port cannot be bound).
    """
    if server.port:  # gunicorn would retry a taken port for 5 s, then exit with several lines
        try:
            socket.create_server((server.host, server.port)).close()
        except OSError as exc:
            raise ServerError(f"cannot listen on {server.host}:{server.port}: {exc.strerror or exc}") from None
    directory = _socket_directory()
    master = os.getpid()
    status = 0
    try:
        _Application(server, workers, directory).run()
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if os.getpid() != master:  # a worker's exit comes up here through gunicorn: it ends now
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)
    shutil.rmtree(directory, ignore_errors=True)
    return status


def _alive(pid: int) -> bool:
    with contextlib.suppress(PermissionError):  # another user's process took the number
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
    return True


SOCKET_PATH = 107
"""Bytes a Unix socket's path may hold (Linux ``sun_path``, less its terminating NUL)."""


def _socket_directory() -> Path:
    """A new private directory (mode 0700: the journal sockets are private) for the workers'
    sockets: in the temporary directory (``TMPDIR``), or in ``/tmp`` when that path is too long
    for a socket path (``DIR/PID.sock``).

    Raises:
        ServerError: neither is short enough.
    """
    for parent in (None, "/tmp"):  # noqa: S108 - mkdtemp makes a new directory of mode 0700
        directory = Path(tempfile.mkdtemp(prefix="ssemock-workers-", dir=parent))
        if len(os.fsencode(directory / "4194304.sock")) <= SOCKET_PATH:
            return directory
        directory.rmdir()
    raise ServerError(f"--workers: no directory short enough for a Unix socket path ({SOCKET_PATH} bytes) in "
                      f"{tempfile.gettempdir()} or /tmp")
