"""Shared pieces: statistics, benchmark cassettes, server and client processes, memory.

Servers (``benchmarks.servers``) and clients (``benchmarks.clients``) run in their own
processes, so that a client's work and memory never count as the server's.

Importing this module imports the standard library only (aiohttp and ssemock on first use):
a client process starts in a tenth of the time, which adds up over the runs of a benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiohttp import web

    from ssemock.cassette import Cassette, Chunk

ROOT = Path(__file__).resolve().parent.parent

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
    from ssemock.cassette import Cassette

    cassette = Cassette.load(bundled_cassettes() / f"{source}.yaml")
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

    Pickle, not YAML: handing a 20 MB cassette over is not what is measured here.
    """
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        path = Path(tmp) / f"{cassette.name}.pickle"
        path.write_bytes(pickle.dumps(cassette, protocol=pickle.HIGHEST_PROTOCOL))
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
            assert self.proc.stdout is not None
            line = self.proc.stdout.readline()
            if not line.strip().isdigit():
                self.close()
                raise RuntimeError(f"{self.kind} server did not start: {line!r}")
            self._url = f"http://127.0.0.1:{int(line)}{STREAM_PATH}"
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
    Stops (SIGTERM) when closed.
    """

    def __init__(self, cassette_dir: Path, workers: str, timing_scale: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ssemock", "serve", "--workers", workers, "--cassettes", str(cassette_dir),
             "--port", "0", "--timing-scale", str(timing_scale), "--quiet", "--backlog", "16384"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("ssemock serving on "):
            self.close()
            raise RuntimeError(f"ssemock serve --workers {workers} did not start: {line!r}")
        self.url = line.split()[3] + STREAM_PATH

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


def start_client(jobs: list[dict[str, Any]]) -> subprocess.Popen[str]:
    """Start a client process running ``jobs`` one after the other (see ``benchmarks.clients``)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.clients"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(jobs))
    proc.stdin.close()
    return proc


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
