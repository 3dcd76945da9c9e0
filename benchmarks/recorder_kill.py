"""``kill -9`` of ``ssemock record`` during 100 concurrent recordings: what is on disk.

An upstream on 127.0.0.1 (a thread of this process) streams SSE events; ``ssemock
record`` runs in its own process, as it is used; 100 aiohttp clients start within
0.5 s (seeded), each a stream of 5-40 events 20 ms apart into one of 10 cassettes, and
the recorder is killed with SIGKILL while some are still streaming: the moment the 30th,
50th or 70th client has its whole answer, or 1.5 s in. Then:

* **finished interactions on disk**: of the clients that had their whole answer (the
  chunked terminator) before the kill, how many find their interaction in the cassette
  files, byte for byte (baseline: the number of such clients; goal: all);
* **files that do not load**: cassette files :func:`ssemock.cassette.load` refuses (goal 0);
* **partial interactions without a mark**: loaded interactions that are not the whole
  answer, ended ``clean`` (goal 0); torn last interactions (a begin mark with no end
  mark, left out by the loader) are counted apart;
* **stale temporary files after a restart**: ``.NAME.yaml.*.tmp`` left once the recorder
  has started again on the same directory (goal 0);
* **end-of-answer delay**: how much later than on a direct connection a client gets the
  end of its answer, the interaction being written and fsynced first (p50 and p99 over
  100 concurrent streams, no kill; the stated bound for "on disk before the last byte").

Run: ``python -m benchmarks.recorder_kill [--quick]``.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ssemock import SSEMockError
from ssemock.cassette import load
from ssemock.cassette.append import torn_start

from . import figure
from .common import ROOT, percentile, serve_in_thread

__all__ = ["run"]

CLIENTS = 100
CASSETTES = 10
INTERVAL = 0.02  # seconds between events


def event(i: int, k: int) -> bytes:
    """Event ``k`` of stream ``i``."""
    return f'data: {{"stream":{i},"n":{k},"text":"lorem ipsum dolor sit amet"}}\n\n'.encode()


def answer(i: int, count: int) -> bytes:
    """The whole body of stream ``i`` with ``count`` events."""
    return b"".join(event(i, k) for k in range(count))


class _Upstream:
    def __init__(self) -> None:
        self.ended: dict[int, float] = {}  # stream -> when its last byte was written (perf_counter)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        job = await request.json()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        try:
            for k in range(job["count"]):
                await asyncio.sleep(INTERVAL)
                await resp.write(event(job["i"], k))
            self.ended[job["i"]] = time.perf_counter()
            await resp.write_eof()
        except ConnectionError:  # the recorder was killed
            pass
        return resp


def _upstream(upstream: _Upstream) -> AbstractContextManager[str]:
    app = web.Application()
    app.router.add_post("/v1/stream", upstream.stream)
    return serve_in_thread(app)


def _launch_recorder(target: str, cassettes: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ssemock", "record", "--target", target, "--cassettes", str(cassettes),
         "--port", "0", "--record-mode", "all"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )


def _recorder_url(proc: subprocess.Popen[str]) -> str:
    """The URL of a launched recorder, once it listens."""
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("ssemock recording on "):
        proc.kill()
        raise RuntimeError(f"ssemock record did not start: {line!r}")
    return line.split(" ")[3]


def _start_recorder(target: str, cassettes: Path) -> tuple[subprocess.Popen[str], str]:
    proc = _launch_recorder(target, cassettes)
    return proc, _recorder_url(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    if proc.stdout is not None:
        proc.stdout.close()


async def _crowd(base: str, jobs: list[dict[str, Any]], kill: tuple[str, float] | None,
                 proc: subprocess.Popen[str] | None) -> dict[int, float]:
    """Run the clients; returns, per stream that got its whole answer, when it did (perf_counter).

    ``kill``: ``("after", seconds)`` kills the recorder that long after the start,
    ``("finished", n)`` the moment the ``n``-th client has its whole answer.
    """
    finished: dict[int, float] = {}
    loop = asyncio.get_running_loop()
    if kill is not None and proc is not None and kill[0] == "after":
        loop.call_later(kill[1], proc.kill)
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:

        async def one(job: dict[str, Any]) -> None:
            await asyncio.sleep(job["delay"])
            headers = {"X-SSEMock-Cassette": f"c{job['i'] % CASSETTES}"}
            try:
                async with session.post(f"{base}/v1/stream", json=job, headers=headers) as resp:
                    body = await resp.read()  # raises if the chunked terminator never came
            except (aiohttp.ClientError, OSError):
                return
            if body == answer(job["i"], job["count"]):
                finished[job["i"]] = time.perf_counter()
                if kill is not None and proc is not None and kill == ("finished", len(finished)):
                    proc.kill()  # no time for anything this client did not wait for

        await asyncio.gather(*(one(job) for job in jobs))
    return finished


def _jobs(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"i": i, "count": rng.randint(5, 40), "delay": rng.uniform(0, 0.5)} for i in range(CLIENTS)]


def _inspect(directory: Path, jobs: list[dict[str, Any]]) -> tuple[dict[str, int], set[int]]:
    """What the files hold: counts of unloadable files, torn tails and partial interactions,
    and the streams whose whole answer is on disk."""
    counts = {"unloadable": 0, "torn": 0, "partial": 0}
    on_disk: set[int] = set()
    want = {job["i"]: answer(job["i"], job["count"]) for job in jobs}
    for path in sorted(directory.glob("*.yaml")):
        data = path.read_bytes()
        counts["torn"] += torn_start(data) < len(data)
        try:
            cassette = load(path)
        except SSEMockError:
            counts["unloadable"] += 1
            continue
        for inter in cassette.interactions:
            i = (inter.request.json() or {}).get("i")
            if inter.response.body != want.get(i) or inter.response.end.how != "clean":
                counts["partial"] += 1
            else:
                on_disk.add(i)
    return counts, on_disk


STALE_AGE = 1.1
"""Seconds after the kill before the restart: a temporary file is stale once its writer is gone
and it is 1 s old."""


def _kill_round(target: str, directory: Path, seed: int, kill: tuple[str, float]) -> tuple[dict[str, int], float]:
    """Record into ``directory``, kill the recorder, inspect the files; the counts and when it was killed."""
    proc, base = _start_recorder(target, directory)
    jobs = _jobs(seed)
    try:
        finished = asyncio.run(_crowd(base, jobs, kill, proc))
    finally:
        proc.kill()
        proc.wait()
        killed = time.monotonic()
        if proc.stdout is not None:
            proc.stdout.close()
    counts, ids = _inspect(directory, jobs)
    counts["finished"] = len(finished)
    counts["finished_on_disk"] = len(set(finished) & ids)
    return counts, killed


def _stale_after_restart(target: str, directory: Path, killed: float) -> int:
    """Temporary files left in ``directory`` once the recorder started again there (it removes stale ones)."""
    time.sleep(max(0.0, killed + STALE_AGE - time.monotonic()))
    proc, _ = _start_recorder(target, directory)
    _stop(proc)
    return len(list(directory.rglob(".*.tmp")))


def _end_delays(target: str, upstream: _Upstream, recorder: subprocess.Popen[str] | None) -> list[float]:
    """Milliseconds from the upstream's last byte to the client having the end of its answer:
    direct, or through ``recorder`` (launched, recording into a directory of its own; stopped after)."""
    jobs = _jobs(1)
    upstream.ended.clear()
    if recorder is None:
        finished = asyncio.run(_crowd(target, jobs, None, None))
    else:
        try:
            finished = asyncio.run(_crowd(_recorder_url(recorder), jobs, None, None))
        finally:
            _stop(recorder)
    return [(t - upstream.ended[i]) * 1000 for i, t in finished.items() if i in upstream.ended]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures (see the module docstring); ``quick``: one kill instead of three."""
    # The moment the 50th client has its answer; or 1.5 s in (some done, some streaming).
    kills = [("finished", 50.0)] if quick else [("finished", 30.0), ("after", 1.5), ("finished", 70.0)]
    upstream = _Upstream()
    with _upstream(upstream) as target, tempfile.TemporaryDirectory(prefix="ssemock-kill-") as tmp:
        root = Path(tmp)
        # The recorder of the end-of-answer delays starts now, side by side with the first
        # one killed; it waits idle until its turn.
        later = _launch_recorder(target, root / "delays")
        try:
            rounds, killed = [], []
            for seed, kill in enumerate(kills, start=1):
                counts, at = _kill_round(target, root / f"kill{seed}", seed, kill)
                rounds.append(counts)
                killed.append(at)
            direct = _end_delays(target, upstream, None)  # meanwhile the killed files grow stale
            for seed, at in enumerate(killed, start=1):
                rounds[seed - 1]["stale_tmp"] = _stale_after_restart(target, root / f"kill{seed}", at)
            recorded = _end_delays(target, upstream, later)
        finally:
            if later.poll() is None:
                later.kill()
                later.wait()
    total = {k: sum(r[k] for r in rounds) for k in rounds[0]}
    out = [
        figure(f"finished interactions on disk after kill -9 ({len(kills)} kill(s) of 100 streams)",
               total["finished_on_disk"], "interactions", baseline=total["finished"],
               goal="all (ratio 1)", met=total["finished_on_disk"] == total["finished"]),
        figure("cassette files that do not load after kill -9", total["unloadable"], "files", baseline=None,
               goal="0", met=total["unloadable"] == 0),
        figure("partial interactions without a mark after kill -9", total["partial"], "interactions",
               baseline=None, goal="0", met=total["partial"] == 0),
        {"name": "torn last interactions after kill -9 (marked, left out when loading)", "value": total["torn"],
         "unit": "interactions", "baseline": None, "ratio": None, "goal": None, "met": None},
        figure("stale temporary files after a restart", total["stale_tmp"], "files", baseline=None, goal="0",
               met=total["stale_tmp"] == 0),
    ]
    for q in (50, 99):
        base, via = percentile(direct, q), percentile(recorded, q)
        delay = figure(f"end of answer p{q}, written and fsynced first (100 concurrent streams)",
                       round(via, 3), "ms", baseline=round(base, 3), goal="", met=True)
        out.append(delay | {"goal": None, "met": None})  # the bound stated in the README, measured
    return out


if __name__ == "__main__":
    for fig in run(quick="--quick" in sys.argv):
        print(json.dumps(fig))
