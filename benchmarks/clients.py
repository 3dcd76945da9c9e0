"""A benchmark client process: reads a JSON list of jobs on stdin, prints one result per job.

Each job (see :func:`benchmarks.common.stream_job`) opens ``n`` concurrent connections
and sends ``POST url`` with ``Connection: close``; each response is read (``recvmsg`` from the
loop's reader callback) by a minimal protocol that parses HTTP/1.1 chunked framing as bytes
arrive and notes when each HTTP chunk (one server ``write``) was complete, so the client costs
little next to the server it measures. Results::

    {"elapsed": s, "cpu": s, "lags": [s, ...], "read_late": [s, ...],
     "streams": [{"ok": bool, "status": int, "sizes": [bytes per chunk],
                  "times": [s after send per chunk], "elapsed": s}, ...]}

``cpu`` is the client's CPU time during the job; ``lags`` (sorted) how late each 5 ms wake-up of
its event loop was; ``read_late`` (sorted, a sample of at most :data:`READ_LATE_SAMPLE`) how long after
its bytes arrived each read was made.

A chunk is timed when its bytes arrived in the client's socket: the kernel's receive time of the
last segment read (``SO_TIMESTAMPNS``, read with ``recvmsg``; Linux), so that the client's own loop
lag (a busy client on a loaded machine wakes up late) is not in the gaps it measures, as long as it
reads each chunk before the next one arrives. Chunks read together (the server wrote them late back
to back, or the client read after both had arrived) get the same time: the last one's. Where the
kernel gives no time, the time of the read is used. ``times`` count from the moment the request
was sent, on the same clock (``time.time()``).

``times`` is omitted when the job says ``keep_times: false`` (throughput runs). A job with
``leave_after: N`` closes each connection once N bytes of the answer arrived (a warm-up that
need not read a whole long stream); its streams are not ``ok``. A job with ``stagger: S`` starts
its streams evenly over S seconds instead of all at once (stream ``i`` of ``n`` connects
``S × i / n`` seconds after the first); each stream's ``times`` still count from its own send.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from .common import raise_open_files_limit

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
"""Linux socket option: each ``recvmsg`` carries the kernel's receive time (``struct timespec``)."""
_TIMESPEC = struct.Struct("@qq")
READ_SIZE = 1 << 16
READ_LATE_SAMPLE = 20_000
"""Reads whose lateness a job keeps at most (a uniform sample, for its percentiles)."""


class Connection:
    """A connected non-blocking socket read by the loop's reader callback with ``recvmsg``: hands the
    protocol each read's bytes after setting its ``arrived`` (the kernel's receive time, ``time.time()``
    clock). The transport side is what :class:`StreamProtocol` uses: ``write`` (a short request) and ``close``."""

    def __init__(self, sock: socket.socket, protocol: StreamProtocol, read_late: _Sample) -> None:
        self.sock = sock
        self.protocol = protocol
        self.read_late = read_late
        self.loop = asyncio.get_running_loop()
        self.closed = False
        protocol.connection_made(self)  # type: ignore[arg-type]
        self.loop.add_reader(sock.fileno(), self._readable)

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)  # a request of a few hundred bytes: the socket buffer takes it at once

    def close(self, exc: Exception | None = None) -> None:
        if self.closed:
            return
        self.closed = True
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        self.protocol.connection_lost(exc)

    def _readable(self) -> None:
        try:
            data, ancillary, _, _ = self.sock.recvmsg(READ_SIZE, socket.CMSG_SPACE(_TIMESPEC.size))
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self.close(exc)
            return
        if not data:
            self.close()
            return
        read = time.time()
        arrived = read
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= _TIMESPEC.size:
                seconds, nanoseconds = _TIMESPEC.unpack_from(value)
                arrived = seconds + nanoseconds / 1e9
        self.read_late.add(read - arrived)
        self.protocol.arrived = arrived
        self.protocol.data_received(data)


class _Sample:
    """A uniform sample of at most :data:`READ_LATE_SAMPLE` values (reservoir sampling)."""

    def __init__(self) -> None:
        self.values: list[float] = []
        self.seen = 0

    def add(self, value: float) -> None:
        self.seen += 1
        if len(self.values) < READ_LATE_SAMPLE:
            self.values.append(value)
        else:
            slot = random.randrange(self.seen)
            if slot < READ_LATE_SAMPLE:
                self.values[slot] = value


class StreamProtocol(asyncio.Protocol):
    """One request; records the size and completion time of every HTTP chunk of the answer."""

    def __init__(self, request: bytes, done: asyncio.Future[dict[str, Any]], keep_times: bool,
                 leave_after: int | None = None) -> None:
        self.request = request
        self.done = done
        self.keep_times = keep_times
        self.leave_after = leave_after
        self.transport: asyncio.BaseTransport | None = None
        self.buf = bytearray()
        self.received = 0
        self.head: bytes | None = None
        self.sizes: list[int] = []
        self.times: list[float] = []
        self.complete = False
        self.sent = 0.0
        self.started = 0.0
        self.arrived = 0.0  # set by :class:`Connection` before each ``data_received``

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.started = time.perf_counter()
        self.transport = transport
        transport.write(self.request)  # type: ignore[attr-defined]
        self.sent = time.time()

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received += len(data)
        if self.leave_after is not None and self.received >= self.leave_after and self.transport is not None:
            self.transport.close()
            return
        if self.keep_times or self.head is None:
            self._parse(self.arrived)

    def _parse(self, now: float) -> None:
        buf = self.buf
        if self.head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head = bytes(buf[:end])
            del buf[: end + 4]
        while not self.complete:
            eol = buf.find(b"\r\n")
            if eol < 0:
                return
            size = int(bytes(buf[:eol]).split(b";")[0], 16)
            if len(buf) < eol + size + 4:
                return
            del buf[: eol + size + 4]
            if size == 0:
                self.complete = True
            else:
                self.sizes.append(size)
                self.times.append(now - self.sent)

    def connection_lost(self, exc: Exception | None) -> None:
        elapsed = time.perf_counter() - self.started
        if not self.keep_times:
            self._parse(self.arrived)
        status = int(self.head[9:12]) if self.head else 0
        if not self.done.done():
            result = {"ok": self.complete and status == 200, "status": status, "sizes": self.sizes,
                      "elapsed": elapsed}
            if self.keep_times:
                result["times"] = self.times
            self.done.set_result(result)


async def one_stream(job: dict[str, Any], read_late: _Sample, delay: float = 0.0) -> dict[str, Any]:
    """One stream of ``job``, connecting ``delay`` seconds from now."""
    if delay > 0:
        await asyncio.sleep(delay)
    url = urlsplit(job["url"])
    body = job["body"].encode()
    target = f"{url.path}?{url.query}" if url.query else url.path
    request = (
        f"POST {target} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    loop = asyncio.get_running_loop()
    done: asyncio.Future[dict[str, Any]] = loop.create_future()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    connection: Connection | None = None
    try:
        async with asyncio.timeout(job["timeout"]):
            await loop.sock_connect(sock, (url.hostname, url.port))
            protocol = StreamProtocol(request, done, job["keep_times"], job.get("leave_after"))
            connection = Connection(sock, protocol, read_late)
            return await done
    except (OSError, TimeoutError) as exc:
        return {"ok": False, "status": 0, "sizes": [], "times": [], "elapsed": 0.0, "error": repr(exc)}
    finally:
        if connection is not None:
            connection.close()
        else:
            sock.close()


LAG_TICK = 0.005
"""Seconds between two wake-ups of the lag probe."""


async def _probe_lag(lags: list[float]) -> None:
    """Note how late (seconds) each :data:`LAG_TICK` wake-up of this loop is, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        asked = loop.time() + LAG_TICK
        await asyncio.sleep(LAG_TICK)
        lags.append(loop.time() - asked)


async def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """``n`` streams at once; with them, how late this client's own loop was (its wake-ups, s) and its CPU (s):
    a chunk is timed when the loop reads it, so a busy client adds its lag to every gap it measures."""
    lags: list[float] = []
    probe = asyncio.ensure_future(_probe_lag(lags))
    started, cpu = time.perf_counter(), time.process_time()
    n, stagger = job["n"], job.get("stagger", 0.0)
    read_late = _Sample()
    streams = await asyncio.gather(*(one_stream(job, read_late, stagger * i / n) for i in range(n)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    probe.cancel()
    return {"elapsed": elapsed, "streams": streams, "cpu": cpu, "lags": sorted(lags),
            "read_late": sorted(read_late.values)}


async def run_all(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [await run_job(job) for job in jobs]


def main() -> None:
    raise_open_files_limit()
    jobs = json.loads(sys.stdin.read())
    json.dump(asyncio.run(run_all(jobs)), sys.stdout)


if __name__ == "__main__":
    main()
