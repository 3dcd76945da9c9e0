"""``cold_start``: from process start to the first answered request, and loading a 10 MB cassette.

* ``cold_start.first_request``: seconds from starting ``python -m ssemock serve --port 0``
  (bundled cassettes and scenarios) to the answer of ``GET /_ssemock/health``, the URL
  taken from its first line of output. Baseline: ``python -c`` starting a bare aiohttp
  server with one route, measured the same way. Runs alternate; medians. Goal <= 0.3 s.
* ``cold_start.cassette_10mb``: seconds for ``Cassette.load`` of a 10 MB cassette written
  by ssemock (the real recording's chunks repeated, with times). Baseline: the bare C YAML
  loader (``yaml.load(text, CSafeLoader)``) on the same file. Goal <= 0.5 s. With
  ``--quick`` the file is 2 MB and both times are scaled to 10 MB (loading is linear).
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ssemock import Cassette

from . import figure
from .common import ROOT, bulk_cassette, median, standalone

BARE_SERVER = """
from aiohttp import web
async def health(request):
    return web.json_response({"status": "ok"})
async def main():
    app = web.Application()
    app.router.add_get("/_ssemock/health", health)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(f"serving on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    await asyncio.Event().wait()
import asyncio
asyncio.run(main())
"""

COMMANDS = {
    "ours": [sys.executable, "-m", "ssemock", "serve", "--port", "0"],
    "bare": [sys.executable, "-c", BARE_SERVER],
}


def first_request(command: list[str]) -> float:
    """Seconds from starting ``command`` to the answer of its health endpoint."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = urlsplit(line.split()[-1])
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        conn.request("GET", "/_ssemock/health")
        if conn.getresponse().status != 200:
            raise RuntimeError(f"{command[:3]}: health check failed")
        elapsed = time.perf_counter() - started
        conn.close()
        return elapsed
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def load_times(path: Path, reps: int) -> dict[str, list[float]]:
    """Seconds to load ``path`` with ``Cassette.load`` (ours) and the bare C YAML loader, alternating."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    times: dict[str, list[float]] = {"ours": [], "bare": []}
    for _ in range(reps):
        started = time.perf_counter()
        Cassette.load(path)
        times["ours"].append(time.perf_counter() - started)
        started = time.perf_counter()
        yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        times["bare"].append(time.perf_counter() - started)
    return times


def run(quick: bool = False) -> list[dict[str, Any]]:
    reps = 3 if quick else 7
    starts: dict[str, list[float]] = {"ours": [], "bare": []}
    for _ in range(reps + 1):
        for kind, command in COMMANDS.items():
            starts[kind].append(first_request(command))
    start = {k: median(v[1:]) for k, v in starts.items()}  # the first pair warms the file cache
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        size = 2_000_000 if quick else 10_000_000
        path = bulk_cassette(size, timed=True).save(Path(tmp) / "big.yaml")
        loads = load_times(path, 1 if quick else 3)
    load = {k: median(v) * 10_000_000 / size for k, v in loads.items()}
    return [
        figure("cold_start.first_request", start["ours"], "s", baseline=start["bare"], goal="<= 0.3 s",
               met=start["ours"] <= 0.3),
        figure("cold_start.cassette_10mb", load["ours"], "s per 10 MB", baseline=load["bare"], goal="<= 0.5 s",
               met=load["ours"] <= 0.5),
    ]


if __name__ == "__main__":
    standalone(run)
