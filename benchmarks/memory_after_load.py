"""``memory_after_load``: resident memory of a server after rounds of clients that read the start of a
long answer and leave.

Ours: ``ssemock serve`` (bundled cassettes) under the ``long-lines`` scenario, answering the real
Anthropic recording with three data lines of 64 KiB, 128 KiB and 1 MiB (1.2 MB). Baseline: a bare
aiohttp handler writing the same bytes (our answer, read once whole) in 64 KiB pieces, nothing else.
Both are warmed up with one whole answer, measured idle, then given 3 rounds of 300 clients (100 at a
time; 1 round of 100, 50 at a time, with ``--quick``) that each read 150 KB of the answer and close
the connection, one round after the other for ours and the baseline in turn; then each is given 2 s
(1 s with ``--quick``) to settle and measured again from outside (``/proc/PID``). Ours clears its journal before both
measurements (it keeps an entry per request, up to its capacity, by design).

* ``memory_after_load.rss_after``: ours, resident MiB after the rounds; baseline the bare server's
  after the same rounds. Goal: ratio <= 1.5.
* ``memory_after_load.rss_idle``: the same, before the rounds (reported).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import figure
from .aimock_peer import post
from .common import REQUEST_BODY, ROOT, STREAM_PATH, raise_open_files_limit, rss_kb, standalone, stop_processes

__all__ = ["run"]

READ_BYTES = 150_000
GOAL_RATIO = 1.5

BARE_SERVER = """
import sys
from aiohttp import web
body = open(sys.argv[1], "rb").read()
async def answer(request):
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
    await response.prepare(request)
    for at in range(0, len(body), 65536):
        await response.write(body[at:at + 65536])
    await response.write_eof()
    return response
async def main():
    app = web.Application()
    app.router.add_post("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    print(site._server.sockets[0].getsockname()[1], flush=True)
    import asyncio
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
import asyncio
asyncio.run(main())
"""


async def _leave_early(url: str, clients: int, at_once: int) -> int:
    """``clients`` connections, ``at_once`` at a time, each reading :data:`READ_BYTES` of the answer and
    closing; how many read that much."""
    parts = urlsplit(url)
    request = (f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(REQUEST_BODY)}\r\n\r\n").encode() + REQUEST_BODY
    gate = asyncio.Semaphore(at_once)

    async def one() -> bool:
        async with gate:
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            try:
                writer.write(request)
                got = 0
                while got < READ_BYTES:
                    data = await reader.read(65536)
                    if not data:
                        return False
                    got += len(data)
                return True
            finally:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()

    return sum(await asyncio.gather(*(one() for _ in range(clients))))


@contextlib.contextmanager
def servers(tmp: Path) -> Iterator[dict[str, tuple[subprocess.Popen[str], str]]]:
    """Ours and the bare server: kind -> (process, stream URL); stopped on exit."""
    ours = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--quiet", "--scenario",
                             "long-lines"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    procs = [ours]
    try:
        assert ours.stdout is not None
        first = ours.stdout.readline()
        if not first.startswith("ssemock serving on "):
            raise RuntimeError(f"ssemock serve did not start: {first!r}")
        base = first.split()[3].rstrip("/")
        answer = tmp / "answer.bin"
        answer.write_bytes(post(base + STREAM_PATH, REQUEST_BODY))
        bare = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(answer)], cwd=ROOT, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(bare)
        assert bare.stdout is not None
        bare_url = f"http://127.0.0.1:{int(bare.stdout.readline())}{STREAM_PATH}"
        if post(bare_url, REQUEST_BODY) != answer.read_bytes():
            raise RuntimeError("memory_after_load: the bare server sent other bytes")
        yield {"ours": (ours, base), "bare": (bare, bare_url)}
    finally:
        stop_processes(procs, timeout=10)


def run(quick: bool = False) -> list[dict[str, Any]]:
    import httpx

    raise_open_files_limit()
    rounds, clients, at_once = (1, 100, 50) if quick else (3, 300, 100)
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as name, servers(Path(name)) as found:
        base = found["ours"][1]
        urls = {"ours": base + STREAM_PATH, "bare": found["bare"][1]}

        def rss_mib(kind: str) -> float:
            if kind == "ours":
                httpx.delete(base + "/_ssemock/requests", timeout=30)
            return rss_kb(found[kind][0].pid) / 1024

        idle = {kind: rss_mib(kind) for kind in urls}
        read = {kind: 0 for kind in urls}
        for index in range(rounds):
            for kind in ("ours", "bare") if index % 2 == 0 else ("bare", "ours"):
                read[kind] += asyncio.run(_leave_early(urls[kind], clients, at_once))
        time.sleep(1 if quick else 2)
        after = {kind: rss_mib(kind) for kind in urls}
    if read["ours"] != read["bare"] or read["ours"] < rounds * clients * 0.99:
        raise RuntimeError(f"memory_after_load: clients that read {READ_BYTES:,} bytes: {read}")
    load = f"{rounds} round(s) of {clients} clients, {at_once} at a time, each reading {READ_BYTES:,} bytes"
    ratio = after["ours"] / after["bare"]
    return [
        figure("memory_after_load.rss_after", after["ours"], f"MiB resident after {load} of a long-lines answer "
               "(baseline: bare aiohttp writing the same bytes in 64 KiB pieces)", baseline=after["bare"],
               goal=f"ratio <= {GOAL_RATIO:g}", met=ratio <= GOAL_RATIO,
               spread=f"idle -> after: ours {idle['ours']:.1f} -> {after['ours']:.1f}, baseline {idle['bare']:.1f} -> "
                      f"{after['bare']:.1f} MiB"),
        figure("memory_after_load.rss_idle", idle["ours"], "MiB resident before the rounds, after one whole answer",
               baseline=idle["bare"], goal="reported", met=True),
    ]


if __name__ == "__main__":
    standalone(run)
