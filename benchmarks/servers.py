"""A benchmark server: ``python -m benchmarks.servers ours|bare|bare-workers|floor-workers|floor-burst FILE SCALE``.

PICKLE is a pickled :class:`ssemock.Cassette` (see :func:`benchmarks.common.handed_over`); SCALE the
timing scale.

``ours`` is ssemock's replay server (:class:`ssemock.MockServer`, no scenario) serving
the cassette. ``bare`` is the baseline: a bare aiohttp handler that writes the same
chunks, one ``write`` each, at the same times (recorded time × scale, from the moment the
request arrived; below scale 1 each boundary kept as ours keeps it, :class:`KeepBoundaries`), with
nothing else: no matching, journal, plan or scenario; served with the same listen backlog as ours
(2,048 connections).
``bare-workers`` is the baseline of ``ssemock serve --workers auto``: the same bare handler
in gunicorn with aiohttp's worker class, one worker per core, the listening socket shared by
fork, the same backlog (16384) as the benchmark gives ``ssemock serve``, kept as ssemock's
workers keep it (:class:`ssemock.workers.KeptBacklog`), and the same worker timeout (120 s).
``floor-workers`` is no HTTP framework at all: a raw asyncio protocol in as many processes writing
the same bytes at the same times (:func:`serve_floor`), the least a Python server does for them.
``floor-burst`` (FILE a response body of SSE events, SCALE unused) is the floor of a burst: one such
raw protocol in one process sending that body's events, each its own write of one HTTP chunk, with no
timer (:func:`serve_burst`): the least a Python server does to answer with every event boundary kept.

Prints the port on the first line of stdout, then serves until stdin is closed.

With the environment variable :data:`WRITES_ENV` set to a file name (``ours`` and ``bare`` only),
the process also notes the loop time (seconds) of every body write of every response, and saves
them to that file as JSON (one list per response) when it stops: the server's own schedule,
beside the one its clients read (:mod:`benchmarks.concurrent_streams`). Both kinds pay the same
note per write; rounds whose CPU or memory are reported do not set it.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import signal
import socket
import sys
import threading
from http import HTTPStatus
from pathlib import Path
from typing import Any

from aiohttp import web

from ssemock import Cassette, MockServer
from ssemock.edge.options import DEFAULT_BACKLOG
from ssemock.edge.reads import client_reads
from ssemock.limits import DEFAULT_BUDGET
from ssemock.pacing import READ_WAIT
from ssemock.workers import KeptBacklog

from .common import STREAM_PATH, raise_open_files_limit


def bare_app(cassette: Cassette, timing_scale: float) -> web.Application:
    """The baseline: a plain aiohttp handler replaying the first interaction's chunks."""
    recorded = cassette.interactions[0].response
    chunks = [(c.t * timing_scale, c.data) for c in recorded.chunks]
    start = recorded.start * timing_scale
    headers = dict(recorded.headers)

    async def handler(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        arrived = loop.time()
        await request.read()
        response = web.StreamResponse(headers=headers)
        response.enable_chunked_encoding()
        if start > 0:
            await asyncio.sleep(max(0.0, arrived + start - loop.time()))
        await response.prepare(request)
        keep = KeepBoundaries(request) if timing_scale < 1 else None
        for t, data in chunks:
            if timing_scale:
                delay = arrived + t - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
            if keep is not None:
                await keep.wait(loop)
            await response.write(data)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post(STREAM_PATH, handler)
    return app


class KeepBoundaries:
    """The baseline's share of ssemock's pacing below timing scale 1 (:mod:`ssemock.pacing`): before
    each write but the first, wait until the client has read everything (the kernel's count,
    :func:`ssemock.edge.reads.client_reads`), at most 0.1 s a boundary and 2 s a response, so that
    every chunk reaches the client as a read of its own, as ours does."""

    def __init__(self, request: web.Request) -> None:
        transport = request.transport
        self.reads = client_reads(transport.get_extra_info("socket") if transport is not None else None)
        self.first = True
        self.left = DEFAULT_BUDGET

    async def wait(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.first or self.reads is None or self.left <= 0:
            self.first = False
            return
        start = loop.time()
        until = start + min(self.left, READ_WAIT)
        while self.reads.unread() and loop.time() < until:
            await asyncio.sleep(0)
        self.left -= loop.time() - start


WRITES_ENV = "SSEMOCK_BENCH_WRITES"
"""Environment variable: a file to save the time of every body write to (see the module docstring)."""


def note_writes() -> list[list[float]]:
    """From now on, note the loop time of each body write of this process, per response: each call of
    aiohttp's ``StreamWriter.write``, which ours and the bare handler both write every chunk with
    (the bare one through ``StreamResponse.write``)."""
    from aiohttp.http_writer import StreamWriter

    written: list[list[float]] = []
    write = StreamWriter.write

    async def noted(self: StreamWriter, chunk: Any, **options: Any) -> None:
        times = getattr(self, "_bench_writes", None)
        if times is None:
            times = self._bench_writes = []  # type: ignore[attr-defined]
            written.append(times)
        times.append(asyncio.get_running_loop().time())
        await write(self, chunk, **options)

    StreamWriter.write = noted  # type: ignore[method-assign]
    return written


async def serve(kind: str, cassette_file: str, timing_scale: float) -> None:
    cassette = pickle.loads(Path(cassette_file).read_bytes())
    writes_file = os.environ.get(WRITES_ENV)
    written = note_writes() if writes_file else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    if kind == "ours":
        server = MockServer([cassette], scenarios=[], timing_scale=timing_scale)
        await server.start()
        port = server.port
    else:
        runner = web.AppRunner(bare_app(cassette, timing_scale), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=DEFAULT_BACKLOG)  # the listen queue ours has
        await site.start()
        port = runner.addresses[0][1]
    print(port, flush=True)
    await stop.wait()
    if kind == "ours":
        await server.stop()
    else:
        await runner.cleanup()
    if writes_file and written is not None:
        Path(writes_file).write_text(json.dumps(written))


def serve_workers(cassette_file: str, timing_scale: float) -> None:
    """``bare-workers``: :func:`bare_app` in gunicorn, one aiohttp worker per core, until stdin is closed."""
    from aiohttp.worker import GunicornWebWorker
    from gunicorn.app.base import BaseApplication

    cassette = pickle.loads(Path(cassette_file).read_bytes())
    master = os.getpid()

    class Worker(GunicornWebWorker):  # type: ignore[misc]
        def init_process(self) -> None:  # the listen queue kept as ssemock's workers keep it
            self.sockets = [KeptBacklog(sock, self.cfg.backlog) for sock in self.sockets]
            super().init_process()

        def handle_exit(self, sig: int, frame: Any) -> None:  # woken at once, as ssemock's workers are
            super().handle_exit(sig, frame)
            self._notify_waiter_done()

    class Bare(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            settings = {"bind": ["127.0.0.1:0"], "workers": len(os.sched_getaffinity(0)),
                        "worker_class": Worker, "preload_app": True, "backlog": 16384, "timeout": 120,
                        "loglevel": "warning", "accesslog": None, "control_socket_disable": True,
                        "when_ready": self.ready}
            for key, value in settings.items():
                self.cfg.set(key, value)

        def ready(self, arbiter: Any) -> None:
            print(arbiter.LISTENERS[0].sock.getsockname()[1], flush=True)
            threading.Thread(target=lambda: (sys.stdin.read(), os.kill(master, signal.SIGTERM)), daemon=True).start()

        def load(self) -> web.Application:
            return bare_app(cassette, timing_scale)

    try:
        Bare().run()
    except SystemExit:
        if os.getpid() != master:
            os._exit(0)


class _FloorStream(asyncio.Protocol):
    """``floor-workers``' answer to one request: the least work a Python asyncio server can do for it.

    ``schedule``: (seconds after the request, bytes) of each write: the head, then the chunks framed
    in advance (chunks due at the same time in one write, since asyncio does not order timers of the
    same time), the last one ending the body."""

    def __init__(self, schedule: list[tuple[float, bytes]]) -> None:
        self.schedule = schedule
        self.buf: bytes | None = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.buf is None:
            return
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        lines = self.buf[:end].lower().split(b"\r\n")
        length = next((int(line[15:]) for line in lines if line.startswith(b"content-length:")), 0)
        if len(self.buf) < end + 4 + length:
            return
        self.buf = None
        loop = asyncio.get_running_loop()
        arrived = loop.time()
        assert self.transport is not None
        write = self.transport.write
        last = len(self.schedule) - 1
        for index, (t, data) in enumerate(self.schedule):
            if index == last:
                loop.call_at(arrived + t, self._end, data)
            elif t > 0:
                loop.call_at(arrived + t, write, data)
            else:
                write(data)

    def _end(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)
        self.transport.close()


def serve_floor(cassette_file: str, timing_scale: float) -> None:
    """``floor-workers``: the same answers from a raw asyncio protocol (no HTTP framework: the request's
    head scanned for its end and ``Content-Length``, every chunk framed in advance, each written by a
    loop timer set when the request arrived), in one process per core sharing the listening socket
    (forked), until stdin is closed. The least a Python asyncio server does for a timed stream: how
    good the timing can be on this machine."""
    cassette = pickle.loads(Path(cassette_file).read_bytes())
    recorded = cassette.interactions[0].response
    head = (f"HTTP/1.1 {recorded.status} {HTTPStatus(recorded.status).phrase}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in recorded.headers
                      if k.lower() not in ("content-length", "transfer-encoding", "connection"))
            + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
    writes: dict[float, bytes] = {recorded.start * timing_scale: head}
    for chunk in recorded.chunks:
        t = max(chunk.t, recorded.start) * timing_scale
        writes[t] = writes.get(t, b"") + b"%x\r\n%s\r\n" % (len(chunk.data), chunk.data)
    schedule = sorted(writes.items())
    schedule[-1] = (schedule[-1][0], schedule[-1][1] + b"0\r\n\r\n")  # the body ends with the last chunk
    sock = socket.create_server(("127.0.0.1", 0), backlog=DEFAULT_FLOOR_BACKLOG)
    kept = KeptBacklog(sock, DEFAULT_FLOOR_BACKLOG)  # asyncio listens again with its own backlog
    children = []
    for _ in range(len(os.sched_getaffinity(0))):
        pid = os.fork()
        if pid == 0:
            async def run() -> None:
                loop = asyncio.get_running_loop()
                await loop.create_server(lambda: _FloorStream(schedule), sock=kept,  # type: ignore[call-overload]
                                         backlog=128)
                await asyncio.Event().wait()
            signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
            asyncio.run(run())
        children.append(pid)
    print(sock.getsockname()[1], flush=True)
    sys.stdin.read()
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    for pid in children:
        os.waitpid(pid, 0)


DEFAULT_FLOOR_BACKLOG = 16384
"""``floor-workers``' listen queue: the one the benchmark gives ``ssemock serve --workers``."""


def burst_schedule(body: bytes) -> list[tuple[float, bytes]]:
    """``floor-burst``'s writes of ``body``: the head, then each event (up to and with its blank line,
    ``\n\n``) framed as one HTTP chunk, all at time 0, the last one ending the body."""
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    events = [part + b"\n\n" for part in body.split(b"\n\n") if part]
    schedule = [(0.0, head), *((0.0, b"%x\r\n%s\r\n" % (len(e), e)) for e in events)]
    schedule[-1] = (0.0, schedule[-1][1] + b"0\r\n\r\n")
    return schedule


def serve_burst(body_file: str) -> None:
    """``floor-burst``: answer every request with the events of ``body_file`` (see :func:`burst_schedule`)
    in one process until stdin is closed."""
    schedule = burst_schedule(Path(body_file).read_bytes())

    async def run() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _FloorStream(schedule), "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await loop.run_in_executor(None, sys.stdin.read)

    asyncio.run(run())


def main() -> None:
    raise_open_files_limit()
    kind, cassette_file, scale = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if kind not in ("ours", "bare", "bare-workers", "floor-workers", "floor-burst"):
        raise SystemExit(f"usage: python -m benchmarks.servers ours|bare|bare-workers|floor-workers|floor-burst FILE "
                         f"TIMING_SCALE (got {kind!r})")
    if kind == "floor-burst":
        serve_burst(cassette_file)
    elif kind == "bare-workers":
        serve_workers(cassette_file, scale)
    elif kind == "floor-workers":
        serve_floor(cassette_file, scale)
    else:
        asyncio.run(serve(kind, cassette_file, scale))


if __name__ == "__main__":
    main()
