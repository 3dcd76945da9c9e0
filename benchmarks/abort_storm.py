"""``abort_storm``: 10,000 clients (300 with ``--quick``) leave streams mid-way, a third with a TCP RST.

The stream is the first 20 chunks of the bundled real Anthropic recording with recorded
timing (first chunk at 0.4 s, then gaps of 200-300 ms; with ``--quick`` the first 10 chunks,
the first at 0.1 s, then gaps of 50-100 ms; :func:`benchmarks.common.timed_cassette`), so
that the clients leave before its end.
Each storm client, 1,000 (300) at a time from one client process, sends the request, reads
the answer up to 1-5 chunks (seeded) and leaves: two thirds close the connection (FIN), one third reset it
(``SO_LINGER`` 0, RST). Ours: a real ``ssemock serve`` process (access lines to a file).
Baseline: a bare aiohttp handler writing the same chunks (``benchmarks.servers``), same storm.

Each server is warmed up (one whole stream, then a first storm of the same size: the
memory an allocator keeps after a peak is there before the first measurement), measured
idle, stormed, given up to 15 s to settle, then measured again, from outside (``/proc/PID``).
Ours and the baseline go through this at the same time (counts, not times, are compared);
the stop time is measured alone, after. Open descriptors are counted once the server has
closed the connections of the harness's own admin requests (which it does a moment after
their answer): counted at once, one of them could be taken for a leak.

* ``abort_storm.rss_growth``: resident memory after the storm against before, % (goal
  <= 10 %). Ours clears its journal before both measurements: the journal keeps an entry
  per request by design, up to its own capacity; what is measured is what leaks.
* ``abort_storm.leaked_fds``: open file descriptors after minus before (goal 0).
* ``abort_storm.leaked_tasks``: ours, asyncio tasks after minus before
  (``/_ssemock/health``, goal 0).
* ``abort_storm.answers_after``: ours, a whole stream after the storm: 1 when every chunk
  arrived (goal 1); baseline the same for the bare server.
* ``abort_storm.lines_per_request``: ours, access lines of the storm's requests per request
  sent (goal 1, and no traceback in the log); ``abort_storm.client_gone``: the share of
  them saying ``client_gone`` (the others ended before their client left: a busy client
  process reads late), %.
* ``abort_storm.stop_seconds``: ours, SIGTERM to exit with 1,000 (100) streams stalled for
  10 minutes by a scenario (goal <= 1 s).

``python -m benchmarks.abort_storm storm URL N CONCURRENCY SEED`` is the storm client process.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import figure
from .common import (
    REQUEST_BODY,
    ROOT,
    STREAM_PATH,
    Clients,
    handed_over,
    raise_open_files_limit,
    rss_kb,
    standalone,
    stream_job,
    timed_cassette,
)

STALL = """ssemock_scenario: 1
name: long-stall
description: "ten minutes of silence after the first event"
preserves: nothing
steps:
- stall: {after_events: 1, seconds: 600}
"""


# ---- the storm client ------------------------------------------------------------------
class _Leaver(asyncio.Protocol):
    """Sends the request, counts HTTP chunks as they complete, leaves after ``chunks`` of them."""

    def __init__(self, request: bytes, chunks: int, reset: bool, done: asyncio.Future[str]) -> None:
        self.request, self.chunks, self.reset, self.done = request, chunks, reset, done
        self.buf = b""
        self.seen = 0
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.seen = self.buf.count(b"\r\n", self.buf.find(b"\r\n\r\n") + 4) // 2 if b"\r\n\r\n" in self.buf else 0
        if self.seen >= self.chunks and self.transport is not None and not self.done.done():
            if self.reset:
                sock = self.transport.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.transport.abort()
            else:
                self.transport.close()
            self.done.set_result("reset" if self.reset else "closed")

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result("ended by the server")


async def _storm(url: str, n: int, concurrency: int, seed: int) -> dict[str, int]:
    parts = urlsplit(url)
    request = (f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(REQUEST_BODY)}\r\n\r\n").encode() + REQUEST_BODY
    rng = random.Random(seed)
    plan = [(rng.randint(1, 5), i % 3 == 2) for i in range(n)]
    gate = asyncio.Semaphore(concurrency)
    loop = asyncio.get_running_loop()
    counts: dict[str, int] = {}

    async def one(chunks: int, reset: bool) -> None:
        async with gate:
            done: asyncio.Future[str] = loop.create_future()
            try:
                async with asyncio.timeout(60):
                    await loop.create_connection(lambda: _Leaver(request, chunks, reset, done),
                                                 parts.hostname, parts.port)
                    how = await done
            except (OSError, TimeoutError) as exc:
                how = type(exc).__name__
            counts[how] = counts.get(how, 0) + 1

    await asyncio.gather(*(one(c, r) for c, r in plan))
    return counts


def spawn_storm(url: str, n: int, concurrency: int, seed: int) -> subprocess.Popen[str]:
    """A storm client process, started now (its start-up then falls outside the storm); it storms
    when :func:`storm` lets it."""
    argv = ["storm", url, str(n), str(concurrency), str(seed), "--on-go"]
    return subprocess.Popen([sys.executable, "-m", "benchmarks.abort_storm", *argv], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def storm(proc: subprocess.Popen[str]) -> dict[str, int]:
    """Run the storm of a client process from :func:`spawn_storm`; how each client ended (``closed``,
    ``reset``, errors)."""
    out, _ = proc.communicate("go\n", timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"storm client failed with status {proc.returncode}")
    return json.loads(out)  # type: ignore[no-any-return]


# ---- measuring a server ----------------------------------------------------------------
def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _settle(pid: int, floor: int, health: str | None) -> None:
    """Wait (15 s at most) until the server is idle (ours: no request in flight) and holds no more
    file descriptors than ``floor``, or the same number for a while (:func:`_quiet_fds`)."""
    import httpx

    deadline = time.monotonic() + 15
    while health is not None and time.monotonic() < deadline:
        if httpx.get(health, timeout=10).json()["in_flight"] == 0:
            break
        time.sleep(0.1)
    _quiet_fds(pid, floor, patience=max(1.0, deadline - time.monotonic()))


def _quiet_fds(pid: int, floor: int | None = None, patience: float = 5.0, steady: float = 0.5) -> int:
    """The server's open file descriptors once it has closed the connections that ended (the
    storm's, and the harness's own admin requests: an answered client closes its end first,
    and the server's end stays open until its event loop has seen that, a moment later).
    Counted every 20 ms until at most ``floor``, else until unchanged for ``steady`` seconds
    (``patience`` seconds at most)."""
    deadline = time.monotonic() + patience
    count, since = _fds(pid), time.monotonic()
    while time.monotonic() < deadline and not (floor is not None and count <= floor):
        if time.monotonic() - since >= steady:
            break
        time.sleep(0.02)
        now = _fds(pid)
        if now != count:
            count, since = now, time.monotonic()
    return count


def _whole_stream(url: str, chunks: int, clients: Clients) -> bool:
    [result] = clients.run([stream_job(url, keep_times=False)])
    stream = result["streams"][0]
    return bool(stream["ok"]) and len(stream["sizes"]) == chunks


def _measure(pid: int, url: str, n: int, concurrency: int, chunks: int, admin: str | None,
             clients: Clients) -> dict[str, Any]:
    """Warm up, measure, storm, settle, measure: the server process ``pid`` serving ``url``."""
    import httpx

    health = admin and admin + "/_ssemock/health"

    def clear() -> None:
        if admin:
            httpx.delete(admin + "/_ssemock/requests", timeout=30)

    def tasks() -> int:
        return int(httpx.get(health, timeout=10).json()["tasks"]) if health else 0

    def measured(floor: int | None) -> dict[str, int]:
        clear()
        counted = {"tasks": tasks(), "rss": rss_kb(pid)}
        return {**counted, "fds": _quiet_fds(pid, floor)}  # after the requests above are closed

    storms = [spawn_storm(url, n, concurrency, seed) for seed in (1, 2)]  # their start-ups: while warming up
    try:
        opened = _fds(pid)  # listening, no connection yet
        assert _whole_stream(url, chunks, clients)
        idle = _quiet_fds(pid, opened)  # no connection open (as many as before, or unchanged for a while)
        storm(storms[0])
        _settle(pid, idle, health)
        before = measured(idle)
        ended = storm(storms[1])
        _settle(pid, before["fds"], health)
        after = measured(before["fds"])
        return {"before": before, "after": after, "ended": ended, "answers": _whole_stream(url, chunks, clients)}
    finally:
        for proc in storms:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def _start_bare(pickled: Path) -> subprocess.Popen[str]:
    """The baseline server process (stderr dropped: aiohttp logs a traceback per client that left)."""
    return subprocess.Popen([sys.executable, "-m", "benchmarks.servers", "bare", str(pickled), "1"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _bare_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return f"http://127.0.0.1:{int(proc.stdout.readline())}{STREAM_PATH}"


def _serve(workdir: Path) -> tuple[subprocess.Popen[str], str, Path]:
    log = workdir / "stderr"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--cassettes", str(workdir / "cassettes"),
             "--scenarios", str(workdir / "scenarios")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True,
        )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("ssemock serving on "):
        proc.kill()
        raise RuntimeError(f"ssemock serve did not start: {log.read_text()[-2000:]}")
    return proc, first.split()[3], log


def _stop_seconds(proc: subprocess.Popen[str], base: str, streams: int) -> float:
    """Open ``streams`` streams stalled by the scenario, then SIGTERM: seconds until the process exited."""
    parts = urlsplit(base)
    request = (f"POST /_ssemock/s/long-stall{STREAM_PATH} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
               f"Content-Length: {len(REQUEST_BODY)}\r\n\r\n").encode() + REQUEST_BODY
    socks = []
    try:
        for _ in range(streams):
            sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
            sock.sendall(request)
            socks.append(sock)
        for sock in socks:  # each at its first event: stalled
            got = b""
            while b"\n\n" not in got.partition(b"\r\n\r\n")[2]:
                got += sock.recv(65536)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        return time.monotonic() - start
    finally:
        for sock in socks:
            sock.close()


def run(quick: bool = False) -> list[dict[str, Any]]:
    from ssemock.cassette import save

    raise_open_files_limit()
    n, concurrency, stalled = (300, 300, 100) if quick else (10_000, 1000, 1000)
    # Quick: 10 chunks, the first after 0.1 s (a whole stream lasts about 0.8 s, not 5.4 s);
    # the clients still leave after 1-5 of them, mid-stream.
    cassette = (timed_cassette(limit=10, first=0.1, gap=(0.05, 0.1)) if quick
                else timed_cassette(limit=20, gap=(0.2, 0.3)))
    chunks = len(cassette.interactions[0].response.chunks)
    quick_note = f" (quick: {n} clients per storm)" if quick else ""
    with tempfile.TemporaryDirectory(prefix="ssemock-storm-") as tmp, handed_over(cassette) as pickled:
        workdir = Path(tmp)
        save(cassette, workdir / "cassettes" / "timed.yaml")
        (workdir / "scenarios").mkdir()
        (workdir / "scenarios" / "long-stall.yaml").write_text(STALL)
        bare_proc = _start_bare(pickled)  # both servers start side by side, and the clients of their whole streams
        clients = Clients(4)
        proc, base, log = _serve(workdir)
        try:
            bare_url = _bare_url(bare_proc)
            # Ours and the baseline are stormed at the same time: what is measured is counted
            # (memory, descriptors, tasks, lines), not timed, and each has a core's share.
            with ThreadPoolExecutor(2) as pool:
                theirs_f = pool.submit(_measure, bare_proc.pid, bare_url, n, concurrency, chunks, None, clients)
                ours = _measure(proc.pid, base + STREAM_PATH, n, concurrency, chunks, base, clients)
                theirs = theirs_f.result()
            bare_proc.kill()
            bare_proc.wait()
            stop = _stop_seconds(proc, base, stalled)  # timed: alone
        finally:
            clients.close()
            for p in (proc, bare_proc):
                if p.poll() is None:
                    p.kill()
                    p.wait()
        lines = log.read_text()
    # The storm's lines: after the first whole stream's, before the last one's.
    storm_lines = re.findall(r"POST /v1/messages -> \S+ (\w+)", lines)[1:-1]
    gone = storm_lines.count("client_gone") / len(storm_lines) * 100
    per_request = len(storm_lines) / (2 * n)
    tracebacks = lines.count("Traceback")

    def growth(m: dict[str, Any]) -> float:
        return (m["after"]["rss"] - m["before"]["rss"]) / m["before"]["rss"] * 100

    def leaked(m: dict[str, Any], key: str) -> int:
        return int(m["after"][key] - m["before"][key])

    return [
        figure("abort_storm.rss_growth", growth(ours), "%", baseline=growth(theirs), ratio=None,
               goal="<= 10 %", met=growth(ours) <= 10),
        figure("abort_storm.leaked_fds", leaked(ours, "fds"), "fds", baseline=leaked(theirs, "fds"), ratio=None,
               goal="0", met=leaked(ours, "fds") <= 0),
        figure("abort_storm.leaked_tasks", leaked(ours, "tasks"), "tasks", baseline=None, goal="0",
               met=leaked(ours, "tasks") <= 0),
        figure("abort_storm.answers_after", int(ours["answers"]), "whole streams", baseline=int(theirs["answers"]),
               ratio=None, goal="1", met=bool(ours["answers"])),
        figure("abort_storm.lines_per_request", per_request, f"lines, {2 * n} requests{quick_note}", baseline=None,
               goal="1 and no traceback", met=per_request == 1 and tracebacks == 0),
        figure("abort_storm.client_gone", gone, "% of the lines", baseline=None, goal="> 0 (clients left mid-stream)",
               met=gone > 0),
        figure("abort_storm.stop_seconds", stop, f"s with {stalled} stalled streams", baseline=None, goal="<= 1 s",
               met=stop <= 1),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["storm"]:
        raise_open_files_limit()
        if sys.argv[6:7] == ["--on-go"]:
            sys.stdin.readline()
        print(json.dumps(asyncio.run(_storm(sys.argv[2], *map(int, sys.argv[3:6])))))
    else:
        standalone(run)
