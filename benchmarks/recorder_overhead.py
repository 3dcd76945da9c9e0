"""What the recorder costs a streaming client, against a direct connection in the same run.

* **Added latency per chunk**: an upstream on 127.0.0.1 writes one SSE event every
  ``interval`` seconds and notes when; a raw-socket client notes when each event
  arrives. The figure is the p50 (p99) of arrival minus write through the recorder,
  minus the same percentile on a direct connection. Goal: p50 <= 0.5 ms.
* **Throughput**: the upstream sends ``size`` bytes of events as fast as the client
  reads them; MB/s through the recorder divided by MB/s direct. Goal: >= 0.8. Medians of
  3 rounds, each measuring direct, bare relay (below) and recorder in turn, the recorder
  left to finish writing the previous round's cassette first.
  A second baseline, in the same run: a bare aiohttp reverse proxy of a few lines
  (:mod:`benchmarks.bare_relay`, one ``readany`` and one chunked ``write`` + ``drain`` per
  upstream read, as the recorder does, and nothing else), in its own process like the
  recorder: the throughput any aiohttp relay reaches here, and the recorder's against it.
* **CPU per MB** (what bounds the throughput, and hardly moved by a busy machine): CPU
  seconds of the recorder process per MB while it relays (up to the client's last byte: the
  part of the secret scan that runs beside the relay is included, what is scanned and written
  after the last byte is not), and of the bare relay per MB relayed, against the CPU seconds the upstream and the client
  together spend per MB on the direct run (Linux ``/proc``; left out elsewhere).

Everything runs on 127.0.0.1: the upstream in a thread with its own event loop, the
recorder and the bare relay each in its own process (``ssemock record``, as it is used),
the client in the calling thread, reading the same bytes with the same ``recv`` size on
every path. Run: ``python -m benchmarks.recorder_overhead``.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from .common import ROOT, serve_in_thread, stop_processes

__all__ = ["figures"]

EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"lorem ipsum dolor sit amet "}}]}\n\n'


class _Upstream:
    def __init__(self) -> None:
        self.sent: dict[int, float] = {}

    async def paced(self, request: web.Request) -> web.StreamResponse:
        count, interval = int(request.query["count"]), float(request.query["interval"])
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for i in range(count):
            await asyncio.sleep(interval)
            self.sent[i] = time.perf_counter()
            await resp.write(b"data: %d\n\n" % i)
        await resp.write_eof()
        return resp

    async def bulk(self, request: web.Request) -> web.StreamResponse:
        size = int(request.query["size"])
        block = EVENT * (65536 // len(EVENT))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        sent = 0
        while sent < size:
            await resp.write(block)
            sent += len(block)
        await resp.write_eof()
        return resp


def _serve(upstream: _Upstream) -> AbstractContextManager[str]:
    app = web.Application()
    app.router.add_get("/paced", upstream.paced)
    app.router.add_get("/bulk", upstream.bulk)
    return serve_in_thread(app)


def _recorder(target: str, cassettes: str) -> tuple[list[str], str]:
    """``ssemock record`` recording every request: its command and the start of its first line."""
    return ([sys.executable, "-m", "ssemock", "record", "--target", target, "--cassettes", cassettes,
             "--port", "0", "--record-mode", "all", "--max-body-size", "-1"], "ssemock recording on ")


def _bare_relay(target: str) -> tuple[list[str], str]:
    """The bare aiohttp reverse proxy: its command and the start of its first line."""
    return [sys.executable, "-m", "benchmarks.bare_relay", target], "relaying on "


@contextmanager
def _relays(*commands: tuple[list[str], str]) -> Iterator[list[tuple[str, int]]]:
    """Run each ``(command, started)`` in its own process, all started side by side, until the
    block ends (then killed); yields their URLs and pids (a first stdout line is ``started`` then the URL)."""
    procs = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for command, _ in commands]
    try:
        found = []
        for proc, (command, started) in zip(procs, commands):
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if not line.startswith(started):
                raise RuntimeError(f"{command[2]} did not start: {line!r}")
            found.append((line.removeprefix(started).split(" ")[0], proc.pid))
        yield found
    finally:  # killed: what they would still do (the recorder writing its last cassette) is not measured
        for proc in procs:
            proc.kill()
        stop_processes(procs, timeout=30)


def _get(base: str, path: str, on_data: Any) -> int:
    """GET over a raw socket; ``on_data(bytes)`` for every recv; returns the bytes received."""
    parts = urlsplit(base)
    total = 0
    with socket.create_connection((parts.hostname, parts.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
        tail = b""
        while data := sock.recv(1 << 18):
            total += len(data)
            on_data(data)
            tail = (tail + data)[-5:]
            if tail == b"0\r\n\r\n":  # the terminating chunk: the answer is complete
                break
    return total


def _latencies(base: str, upstream: _Upstream, count: int, interval: float) -> list[float]:
    upstream.sent.clear()
    arrived: dict[int, float] = {}
    buffer = bytearray()

    def on_data(data: bytes) -> None:
        now = time.perf_counter()
        buffer.extend(data)
        while (start := buffer.find(b"data: ")) >= 0 and (end := buffer.find(b"\n\n", start)) >= 0:
            arrived[int(buffer[start + 6 : end])] = now
            del buffer[: end + 2]

    _get(base, f"/paced?count={count}&interval={interval}", on_data)
    return [(arrived[i] - upstream.sent[i]) * 1000 for i in range(count) if i in arrived]


def _throughput(base: str, size: int) -> float:
    start = time.perf_counter()
    total = _get(base, f"/bulk?size={size}", lambda data: None)
    return total / (time.perf_counter() - start) / 1e6


def _cpu_seconds(pid: int | None = None) -> float | None:
    """CPU seconds (user + system) used so far by process ``pid`` (Linux), or by this process."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def _idle(pid: int, quiet: float = 0.2, timeout: float = 120.0) -> None:
    """Wait until process ``pid`` has used no CPU for ``quiet`` seconds (e.g. a cassette written)."""
    deadline = time.monotonic() + timeout
    last = _cpu_seconds(pid)
    while time.monotonic() < deadline and last is not None:
        time.sleep(quiet)
        now = _cpu_seconds(pid)
        if now == last:
            return
        last = now


class _Rounds:
    """Throughput (MB/s) and CPU seconds per MB of each path, one list entry per round."""

    def __init__(self) -> None:
        self.rate: dict[str, list[float]] = {"direct": [], "bare": [], "recorder": []}
        self.cpu: dict[str, list[float]] = {"direct": [], "bare": [], "recorder": []}

    def measure(self, path: str, url: str, size: int, pid: int | None) -> None:
        before = _cpu_seconds(pid)
        self.rate[path].append(_throughput(url, size))
        after = _cpu_seconds(pid)
        if before is not None and after is not None:
            self.cpu[path].append((after - before) / (size / 1e6) * 1000)

    def median(self, path: str, what: str = "rate") -> float | None:
        values = (self.rate if what == "rate" else self.cpu)[path]
        return statistics.median(values) if values else None


def figures(
    count: int = 400, interval: float = 0.005, size: int = 64 * 1024 * 1024, rounds: int = 3,
) -> list[dict[str, Any]]:
    """Measure the recorder against a direct connection and a bare aiohttp relay.

    Args:
        count: events in the latency run.
        interval: seconds between events in the latency run.
        size: bytes in each throughput run.
        rounds: throughput rounds, each running direct, bare relay and recorder in turn, so
            that a busy machine slows the three alike; figures are medians over the rounds.
            Before each round the recorder is left to finish writing the previous cassette
            (tens of MB of YAML, seconds of CPU) until it is idle.

    Returns:
        Figure dicts with keys ``name``, ``value``, ``unit``, ``baseline`` (direct),
        ``ratio`` (value / baseline), ``goal`` (text or None) and ``met`` (bool or None).
    """
    upstream = _Upstream()
    with _serve(upstream) as direct, tempfile.TemporaryDirectory() as tmp, \
            _relays(_recorder(direct, tmp), _bare_relay(direct)) as [(rec, pid), (bare, bare_pid)]:
        _latencies(direct, upstream, 20, interval)  # warm up both paths
        _latencies(rec, upstream, 20, interval)
        base_lat = _latencies(direct, upstream, count, interval)
        rec_lat = _latencies(rec, upstream, count, interval)
        _throughput(bare, 1 << 20)  # its client session connects
        measured = _Rounds()
        for _ in range(rounds):
            _idle(pid)
            measured.measure("direct", direct, size, None)  # the upstream and the client: this process
            measured.measure("bare", bare, size, bare_pid)
            measured.measure("recorder", rec, size, pid)
    out = []
    for q, goal in ((50, 0.5), (99, None)):
        base, via = _pct(base_lat, q), _pct(rec_lat, q)
        added = via - base
        out.append({
            "name": f"recorder added latency per chunk p{q}", "value": round(added, 3), "unit": "ms",
            "baseline": round(base, 3), "ratio": round(via / base, 2) if base else None,
            "goal": f"<= {goal} ms" if goal is not None else None,
            "met": added <= goal if goal is not None else None,
        })
    base_tp, bare_tp, rec_tp = (measured.median(k) or 0.0 for k in ("direct", "bare", "recorder"))
    ratio = rec_tp / base_tp
    out.append({
        "name": "recorder throughput", "value": round(rec_tp, 1), "unit": "MB/s", "baseline": round(base_tp, 1),
        "ratio": round(ratio, 3), "goal": ">= 0.8 of direct", "met": ratio >= 0.8,
    })
    out.append({
        "name": "bare aiohttp relay throughput", "value": round(bare_tp, 1), "unit": "MB/s",
        "baseline": round(base_tp, 1), "ratio": round(bare_tp / base_tp, 3), "goal": None, "met": None,
    })
    out.append({
        "name": "recorder throughput (bare aiohttp relay as baseline)", "value": round(rec_tp, 1), "unit": "MB/s",
        "baseline": round(bare_tp, 1), "ratio": round(rec_tp / bare_tp, 3), "goal": None, "met": None,
    })
    direct_ms = measured.median("direct", "cpu")
    for name, key in (("recorder", "recorder"), ("bare aiohttp relay", "bare")):
        used = measured.median(key, "cpu")
        if used is not None and direct_ms is not None:
            out.append({
                "name": f"{name} CPU per MB while relaying (upstream + client direct as baseline)",
                "value": round(used, 2), "unit": "ms/MB", "baseline": round(direct_ms, 2),
                "ratio": round(used / direct_ms, 1) if direct_ms else None, "goal": None, "met": None,
            })
    return out


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures for ``python -m benchmarks``; ``quick``: 200 events, 16 MB, one round."""
    return figures(200, size=16 * 1024 * 1024, rounds=1) if quick else figures()


if __name__ == "__main__":
    for figure in figures():
        print(json.dumps(figure))
