"""Shared pieces: statistics, benchmark cassettes, server and client processes, memory.

Servers (``benchmarks.servers``) and clients (``benchmarks.clients``) run in their own
processes, so that a client's work and memory never count as the server's.

Importing this module imports the standard library only (aiohttp and ssemock on first use):
a client process starts in a tenth of the time, which adds up over the runs of a benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import copyreg
import json
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from aiohttp import web

    from ssemock.cassette import Cassette, Chunk

ROOT = Path(__file__).resolve().parent.parent
ServerT = TypeVar("ServerT", "ServerProcess", "WorkersProcess")

# The real recording every benchmark replays: an Anthropic Messages stream with extended
# thinking (118 chunks, 16.6 KB), recorded by a public project and bundled in cassettes/.
SOURCE_CASSETTE = "anthropic-messages-thinking"
STREAM_PATH = "/v1/messages"
REQUEST_BODY = b'{"model": "claude-sonnet-4-5", "stream": true, "max_tokens": 1024}'


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, nearest-rank; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (0.0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def raise_open_files_limit() -> None:
    """Lift the soft limit on open files to the hard one, as ``ssemock serve`` does
    (:func:`ssemock.edge.arguments.raise_open_files_limit`, whose package imports the server)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))


def rss_kb(pid: int) -> int:
    """Resident set size of process ``pid`` in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ---- benchmark cassettes ------------------------------------------------------------
def real_chunks(source: str = SOURCE_CASSETTE, interaction: int = 0) -> list[bytes]:
    """The chunks of a bundled real recording, as recorded."""
    from ssemock.bundled import bundled_cassettes
    from ssemock.cassette import load

    cassette = load(bundled_cassettes() / f"{source}.yaml")
    return [c.data for c in cassette.interactions[interaction].response.chunks]


def _cassette(name: str, chunks: list[Chunk], *, timed: bool, start: float, end: float, source: str) -> Cassette:
    from ssemock.cassette import Cassette, End, Interaction, Request, Response

    response = Response(
        status=200,
        headers=[("content-type", "text/event-stream; charset=utf-8"), ("cache-control", "no-cache")],
        chunks=chunks, start=start, end=End(end, "clean"), timed=timed,
    )
    interaction = Interaction(Request(method="POST", path=STREAM_PATH), response)
    return Cassette(name, [interaction], provenance={"built_from": source})


def timed_cassette(
    source: str = SOURCE_CASSETTE, interaction: int = 0, *, seed: int = 6, first: float = 0.4,
    gap: tuple[float, float] = (0.01, 0.05), limit: int | None = None,
) -> Cassette:
    """A real recording's chunks with recorded timing.

    The bundled recordings keep no timing, so times are made up like a provider's: the
    first chunk ``first`` seconds after the request, then gaps drawn (seeded) uniformly
    from ``gap`` (typical token-streaming intervals). ``limit`` keeps the first chunks only.
    """
    from ssemock.cassette import Chunk

    rng = random.Random(seed)
    t = first
    chunks = []
    for data in real_chunks(source, interaction)[:limit]:
        chunks.append(Chunk(round(t, 6), data))
        t += rng.uniform(*gap)
    end = round(chunks[-1].t, 6)
    return _cassette("timed", chunks, timed=True, start=round(first * 0.8, 6), end=end, source=source)


def bulk_cassette(size: int, *, timed: bool = False) -> Cassette:
    """At least ``size`` bytes of the real recording's chunks, repeated; untimed by default."""
    from ssemock.cassette import Chunk

    source = real_chunks()
    chunks: list[Chunk] = []
    total = 0
    while total < size:
        data = source[len(chunks) % len(source)]
        chunks.append(Chunk(round(len(chunks) * 0.001, 6) if timed else 0.0, data))
        total += len(data)
    end = chunks[-1].t if chunks else 0.0
    return _cassette("bulk", chunks, timed=timed, start=0.0, end=end, source=SOURCE_CASSETTE)


@contextlib.contextmanager
def handed_over(cassette: Cassette) -> Iterator[Path]:
    """``cassette`` pickled to a temporary file for the server processes, removed afterwards.

    Pickle, not YAML: handing a 20 MB cassette over is not what is measured here. Each chunk is
    pickled as a call ``Chunk(t, data)``, which loads in a third of the time of its dataclass state.
    """
    from ssemock.cassette import Chunk

    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        path = Path(tmp) / f"{cassette.name}.pickle"
        with path.open("wb") as out:
            pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = {**copyreg.dispatch_table, Chunk: lambda chunk: (Chunk, (chunk.t, chunk.data))}
            pickler.dump(cassette)
        yield path


# ---- processes -------------------------------------------------------------------------
class ServerProcess:
    """A replay server in its own process: ``kind`` is ``ours`` (ssemock) or ``bare`` (aiohttp).

    Both serve the first interaction of ``cassette`` at ``POST /v1/messages`` with
    recorded times multiplied by ``timing_scale``. Stops when the harness closes its stdin.

    The process starts at once; :attr:`url` waits until it listens, so that servers made one
    after the other start side by side. ``drop_stderr``: for a server whose clients leave
    mid-stream (aiohttp logs a traceback for each).
    """

    def __init__(self, kind: str, cassette: Path, timing_scale: float, *, drop_stderr: bool = False) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.servers", kind, str(cassette), str(timing_scale)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            stderr=subprocess.DEVNULL if drop_stderr else None,
        )
        self._url: str | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/v1/messages``, once the server listens (raises if it did not start)."""
        if self._url is None:
            self._url = _listening(self, lambda line: f"http://127.0.0.1:{int(line)}" if line.strip().isdigit()
                                   else None, f"{self.kind} server")
        return self._url

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kb(self) -> int:
        return rss_kb(self.pid)

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _listening(server: ServerProcess | WorkersProcess, base: Callable[[str], str | None], what: str) -> str:
    """The stream URL of ``server``, read from the first line its process prints (``base(line)``: the
    ``http://HOST:PORT`` it names, None when the process did not start: then it is closed and
    RuntimeError raised naming ``what``)."""
    assert server.proc.stdout is not None
    line = server.proc.stdout.readline()
    url = base(line)
    if url is None:
        server.close()
        raise RuntimeError(f"{what} did not start: {line!r}")
    return url + STREAM_PATH


def master_and_workers(server: Any) -> list[int]:
    """The process ids of ``server`` (its ``pid``: a gunicorn master) and of its workers."""
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    return [server.pid, *map(int, children)]


def tree_rss_kb(server: Any) -> int:
    """Resident memory of ``server``'s master and workers together, KiB."""
    total = 0
    for pid in master_and_workers(server):
        with contextlib.suppress(OSError):  # a worker that just ended
            total += rss_kb(pid)
    return total


class WorkersProcess:
    """``ssemock serve --workers N`` (gunicorn, N worker processes) serving ``cassette_dir``.

    ``pid`` is the master's; :meth:`rss_kb` adds up the master's and every worker's memory.
    Starts at once; :attr:`url` waits until it listens (as :class:`ServerProcess`). Stops
    (SIGTERM) when closed.
    """

    def __init__(self, cassette_dir: Path, workers: str, timing_scale: float) -> None:
        self.workers = workers
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ssemock", "serve", "--workers", workers, "--cassettes", str(cassette_dir),
             "--port", "0", "--timing-scale", str(timing_scale), "--quiet", "--backlog", "16384"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self._url: str | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/v1/messages``, once the server listens (raises if it did not start)."""
        if self._url is None:
            self._url = _listening(self, lambda line: line.split()[3] if line.startswith("ssemock serving on ")
                                   else None, f"ssemock serve --workers {self.workers}")
        return self._url

    @property
    def pid(self) -> int:
        return self.proc.pid

    pids = master_and_workers
    rss_kb = tree_rss_kb

    def close(self) -> None:
        stop_processes([self.proc], timeout=30)

    def __enter__(self) -> WorkersProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def together(*servers: ServerT) -> Iterator[tuple[ServerT, ...]]:
    """``servers`` (started side by side), closed together at the end of the block."""
    try:
        yield servers
    finally:
        close_together(servers)


def close_together(servers: Iterable[ServerProcess | WorkersProcess]) -> None:
    """Close every server of ``servers`` at the same time (each ``close`` waits for its process to end)."""
    servers = list(servers)
    if servers:
        with ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda server: server.close(), servers))


def stop_processes(procs: list[subprocess.Popen[str]], *, timeout: float) -> None:
    """SIGTERM every process of ``procs``, then wait for each up to ``timeout`` seconds (killed past it),
    and close its output pipe."""
    for proc in procs:
        with contextlib.suppress(OSError):
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


CLIENT = [sys.executable, "-c", "import benchmarks.clients as c; print('ready', flush=True); c.main()"]
"""A client process (:mod:`benchmarks.clients`) that says ``ready`` once it has imported what it needs."""


def spawn_client() -> subprocess.Popen[str]:
    """A client process, started now, waiting for its jobs (:func:`give_jobs`)."""
    return subprocess.Popen(CLIENT, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


_READY: weakref.WeakSet[subprocess.Popen[str]] = weakref.WeakSet()


def client_ready(proc: subprocess.Popen[str]) -> subprocess.Popen[str]:
    """Wait until a client from :func:`spawn_client` has started (raises if it did not); returns it."""
    if proc not in _READY:
        assert proc.stdout is not None
        if proc.stdout.readline() != "ready\n":
            raise RuntimeError(f"benchmark client did not start (status {proc.wait()})")
        _READY.add(proc)
    return proc


def give_jobs(proc: subprocess.Popen[str], jobs: list[dict[str, Any]]) -> subprocess.Popen[str]:
    """Hand ``jobs`` (run one after the other) to a client from :func:`spawn_client`, once it is
    ready; returns it, for :func:`finish_client`."""
    client_ready(proc)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(jobs))
    proc.stdin.close()
    return proc


def start_client(jobs: list[dict[str, Any]]) -> subprocess.Popen[str]:
    """Start a client process running ``jobs`` one after the other (see ``benchmarks.clients``): a
    spare one of the innermost :class:`Clients` block that has one left, else a new one."""
    pool = next((clients for clients in reversed(Clients.blocks) if clients.spare), None)
    return pool.start(jobs) if pool is not None else give_jobs(spawn_client(), jobs)


def finish_client(proc: subprocess.Popen[str], timeout: float = 300) -> list[dict[str, Any]]:
    """Wait for a client process; its results, one per job."""
    assert proc.stdout is not None
    out = proc.stdout.read()
    if proc.wait(timeout=timeout) != 0:
        raise RuntimeError(f"benchmark client failed with status {proc.returncode}")
    return json.loads(out)  # type: ignore[no-any-return]


def run_client(jobs: list[dict[str, Any]], timeout: float = 300) -> list[dict[str, Any]]:
    """Run ``jobs`` in a client process and return its results, one per job."""
    return finish_client(start_client(jobs), timeout)


class Clients:
    """Client processes started ahead (``count`` of them, side by side), so that a measured run
    does not wait for its client's start-up (imports, about 0.1 s of CPU): make them while the
    servers start or warm up, and call :meth:`ready` before the first measured run, so that none
    is still starting during one. A run beyond ``count`` starts its own client. Within a
    ``with Clients(…)`` block, :func:`start_client` and :func:`run_client` use its spare clients
    too. Those left are ended on closing."""

    blocks: ClassVar[list[Clients]] = []
    """The ``with`` blocks open, innermost last."""

    def __init__(self, count: int) -> None:
        self.spare: list[subprocess.Popen[str]] = []
        self.spawn(count)

    def spawn(self, count: int) -> None:
        """Start ``count`` more spare clients."""
        self.spare += [spawn_client() for _ in range(count)]

    def ready(self) -> None:
        """Wait until every spare client has started."""
        for proc in self.spare:
            client_ready(proc)

    def start(self, jobs: list[dict[str, Any]]) -> subprocess.Popen[str]:
        """A client running ``jobs`` (a spare one if any is left), for :func:`finish_client`."""
        return give_jobs(self.spare.pop(0) if self.spare else spawn_client(), jobs)

    def run(self, jobs: list[dict[str, Any]], timeout: float = 300) -> list[dict[str, Any]]:
        """Run ``jobs`` in a client process; its results, one per job."""
        return finish_client(self.start(jobs), timeout)

    def close(self) -> None:
        """End the spare clients left (each given no job)."""
        spare, self.spare = self.spare, []
        for proc in spare:
            finish_client(give_jobs(proc, []))

    def __enter__(self) -> Clients:
        Clients.blocks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Clients.blocks.remove(self)
        self.close()


def stream_job(url: str, *, n: int = 1, keep_times: bool = True, timeout: float = 60) -> dict[str, Any]:
    """A client job: ``n`` concurrent ``POST`` streams to ``url``."""
    return {"url": url, "n": n, "body": REQUEST_BODY.decode(), "keep_times": keep_times, "timeout": timeout}


def standalone(run: Any) -> None:
    """``python -m benchmarks.NAME [--quick]``: print the module's figures as JSON lines."""
    quick = "--quick" in sys.argv[1:]
    for fig in run(quick):
        print(json.dumps(fig))


@contextlib.contextmanager
def serve_in_thread(app: web.Application, backlog: int = 1024) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 (a free port) from a thread with its own event loop; yields its URL."""
    from aiohttp import web

    ready, url, stop = threading.Event(), [], []
    loop = asyncio.new_event_loop()

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0, backlog=backlog).start()
        url.append(f"http://127.0.0.1:{runner.addresses[0][1]}")
        stop.append(asyncio.Event())
        ready.set()
        await stop[0].wait()
        await runner.cleanup()

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield url[0]
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(10)
        loop.close()
