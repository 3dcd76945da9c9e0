"""``cold_start``: from process start to the first answered request, and loading a 10 MB cassette.

* ``cold_start.first_request``: seconds from starting ``python -m ssemock serve --port 0``
  (bundled cassettes and scenarios) to the answer of ``GET /_ssemock/health``, the URL
  taken from its first line of output. Baseline: ``python -c`` starting a bare aiohttp
  server with one route, measured the same way (the same interpreter, the same imports of
  aiohttp, one listening socket, one JSON answer). Runs alternate ours/baseline; the first
  pair only warms the file cache, and fills ours's cache of parsed cassettes, as any start after
  the first finds it: the runs
  measured are starts with unchanged files; median, with min/median/max in ``spread``. Both
  processes may keep compiled bytecode, in a temporary ``PYTHONPYCACHEPREFIX`` (whatever
  ``PYTHONDONTWRITEBYTECODE`` says), as an installed package has it: otherwise ssemock, run
  from a source tree, would compile every module at every start while aiohttp's bytecode was
  compiled when it was installed. The warm-up pair compiles both. Goal: ratio <= 1.1.
  Physical bound: the baseline itself (importing aiohttp is most of it).
* ``cold_start.first_request_cpu``: the same runs' CPU seconds (user + system) of the
  server process until it answered (killed then, its usage read when reaped), which a loaded
  machine disturbs less than wall time.
* ``cold_start.first_request_no_pyc`` and ``cold_start.first_request_empty_cache``: the same start of
  ours in the cold states a user meets, interleaved with the runs above and against the same bare
  server: without ssemock's compiled bytecode (a source checkout with ``PYTHONDONTWRITEBYTECODE=1``:
  every module compiled at every start; aiohttp's and the standard library's bytecode kept, as
  installed), and with a new, empty cache directory (the bundled cassettes parsed, validated and
  cached). Reported. Two installs sharing one cache directory read each other's entries: an entry's key
  is the ssemock version and the files' bytes, no module's modification time.
* ``cold_start.cassette_10mb``: seconds for the second ``ssemock.cassette.load`` of a 10 MB cassette
  written by ssemock (the real recording's chunks repeated, with times): the load answered
  from the cache of parsed cassettes (:mod:`ssemock.cassette.cache`). Baseline: the same
  work done with the standard library: read the file, hash it (SHA-256) and unpickle the
  same cassette from a pickle file. Goal <= 0.5 s.
* ``cold_start.cassette_10mb_first``: the first load (parse, validate, write the cache entry),
  against the bare C YAML parser on the same file (``yaml.load(CSafeLoader)``, which builds
  plain data and validates nothing: less work). Reported, no goal.

With ``--quick`` the file is 2 MB and the times are scaled to 10 MB (loading is linear), and
fewer runs are made. The cache goes to a temporary directory (``SSEMOCK_CACHE_DIR``).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from ssemock.cassette import load, save
from ssemock.cassette.cache import SUBDIR, cache_dir

from . import figure, noisy, spread
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


def first_request(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds from starting ``command`` (with ``env``, default this process's) to the answer of its
    health endpoint, and the CPU seconds (user + system) the process had used by then: it is killed
    (SIGKILL) as soon as the answer is read, and its resource usage read when it is reaped
    (microseconds, where ``/proc`` counts ticks of 10 ms)."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    reaped = False
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = urlsplit(line.split()[-1])
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
        conn.request("GET", "/_ssemock/health")
        if conn.getresponse().status != 200:
            raise RuntimeError(f"{command[:3]}: health check failed")
        elapsed = time.perf_counter() - started
        proc.kill()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode, reaped = os.waitstatus_to_exitcode(status), True
        conn.close()
        return elapsed, usage.ru_utime + usage.ru_stime
    finally:
        if not reaped:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


@contextlib.contextmanager
def bytecode_kept(directory: Path) -> Iterator[None]:
    """Within it, the processes started keep their compiled bytecode in ``directory``
    (``PYTHONPYCACHEPREFIX``), even under ``PYTHONDONTWRITEBYTECODE``."""
    saved = {k: os.environ.pop(k, None) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    os.environ["PYTHONPYCACHEPREFIX"] = str(directory)
    try:
        yield
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


def load_times(path: Path, reps: int) -> dict[str, list[float]]:
    """Seconds per load of ``path``, alternating: ``first`` (parse, no cache entry yet), ``yaml``
    (the C YAML parser alone), ``cached`` (``ssemock.cassette.load`` from the cache), ``pickle`` (read,
    SHA-256, unpickle the same cassette)."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    pickled = path.with_suffix(".pickle")
    pickled.write_bytes(pickle.dumps(load(path), protocol=pickle.HIGHEST_PROTOCOL))
    times: dict[str, list[float]] = {"first": [], "yaml": [], "cached": [], "pickle": []}
    for _ in range(reps):
        for entry in (cache_dir() / SUBDIR).glob("*.msgpack"):  # type: ignore[operator]
            entry.unlink()
        started = time.perf_counter()
        load(path)
        times["first"].append(time.perf_counter() - started)
        started = time.perf_counter()
        yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
        times["yaml"].append(time.perf_counter() - started)
        started = time.perf_counter()
        load(path)
        times["cached"].append(time.perf_counter() - started)
        started = time.perf_counter()
        hashlib.sha256(path.read_bytes()).hexdigest()
        pickle.loads(pickled.read_bytes())
        times["pickle"].append(time.perf_counter() - started)
    return times


def cold_env(kind: str, tmp: Path, run: int) -> dict[str, str] | None:
    """The environment of a start of ``kind``: ``no_pyc``, ssemock without compiled bytecode (a copy
    of the kept bytecode without ssemock's, none written: a source checkout under
    ``PYTHONDONTWRITEBYTECODE=1``; aiohttp's and the standard library's kept, as installed);
    ``empty_cache``, a new, empty cache directory; otherwise the environment as it is."""
    if kind == "no_pyc":  # a copy of the kept bytecode without ssemock's, made once, never written to
        bare = tmp / "bytecode-no-ssemock"
        if not bare.exists():
            shutil.copytree(os.environ["PYTHONPYCACHEPREFIX"], bare)
            shutil.rmtree(Path(str(bare) + str(ROOT / "ssemock")), ignore_errors=True)
        return {**os.environ, "PYTHONPYCACHEPREFIX": str(bare), "PYTHONDONTWRITEBYTECODE": "1"}
    if kind == "empty_cache":
        return {**os.environ, "SSEMOCK_CACHE_DIR": str(tmp / f"cache-{run}")}
    return None


def run(quick: bool = False) -> list[dict[str, Any]]:
    reps = 3 if quick else 21  # a ratio near its goal moves by 0.1 between runs of 9 on a loaded machine
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        os.environ["SSEMOCK_CACHE_DIR"] = str(Path(tmp) / "cache")  # also for the server processes
        try:
            starts: dict[str, list[tuple[float, float]]] = {"ours": [], "bare": [], "no_pyc": [], "empty_cache": []}
            with bytecode_kept(Path(tmp) / "bytecode"):  # ours and the baseline alike
                for index in range(reps + 1):
                    for kind in starts:
                        command = COMMANDS["bare" if kind == "bare" else "ours"]
                        starts[kind].append(first_request(command, cold_env(kind, Path(tmp), index)))
            wall = {k: [w for w, _ in v[1:]] for k, v in starts.items()}  # the first pair warms the file cache
            cpu = {k: [c for _, c in v[1:]] for k, v in starts.items()}
            size = 2_000_000 if quick else 10_000_000
            path = save(bulk_cassette(size, timed=True), Path(tmp) / "big.yaml")
            loads = {k: [t * 10_000_000 / size for t in v] for k, v in load_times(path, 2 if quick else 4).items()}
        finally:
            del os.environ["SSEMOCK_CACHE_DIR"]
    m = {k: median(v) for d in (wall, loads) for k, v in d.items()}  # distinct keys
    cpu_m = {k: median(v) for k, v in cpu.items()}
    ratio = m["ours"] / m["bare"]

    def within(ours: float, bare: float) -> bool:
        return ours <= 1.1 * bare

    return [
        figure("cold_start.first_request", m["ours"], "s", baseline=m["bare"], goal="ratio <= 1.1",
               met=ratio <= 1.1, spread=spread(wall["ours"], wall["bare"]) + noisy(wall["ours"], wall["bare"], within)),
        figure("cold_start.first_request_cpu", cpu_m["ours"], "CPU s", baseline=cpu_m["bare"], goal="ratio <= 1.1",
               met=cpu_m["ours"] / cpu_m["bare"] <= 1.1,
               spread=spread(cpu["ours"], cpu["bare"]) + noisy(cpu["ours"], cpu["bare"], within)),
        *(figure(f"cold_start.first_request_{kind}", m[kind], f"s, {what} (baseline: the bare server, as above)",
                 baseline=m["bare"], goal="reported", met=True, spread=spread(wall[kind], wall["bare"]))
          for kind, what in (("no_pyc", "ssemock without compiled bytecode (a source checkout, "
                                        "PYTHONDONTWRITEBYTECODE=1)"),
                             ("empty_cache", "a new, empty cache directory"))),
        figure("cold_start.cassette_10mb", m["cached"], "s per 10 MB (second load)", baseline=m["pickle"],
               goal="<= 0.5 s", met=m["cached"] <= 0.5, spread=spread(loads["cached"], loads["pickle"])),
        figure("cold_start.cassette_10mb_first", m["first"], "s per 10 MB (first load)", baseline=m["yaml"],
               goal="reported", met=True, spread=spread(loads["first"], loads["yaml"])),
    ]


if __name__ == "__main__":
    standalone(run)
