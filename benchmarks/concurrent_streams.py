"""``concurrent_streams``: 2,000 concurrent clients (200 with ``--quick``) replaying a recording with timing.

The stream is a real OpenAI chat completion with tool calls (bundled
``openai-chat-tool-calls-usage``, 12 chunks) with made-up recorded times (the bundled
recordings keep none): first chunk at 0.4 s, then gaps of 20-100 ms (see
:func:`benchmarks.common.timed_cassette`). All clients connect at once from one client
process (a minimal asyncio HTTP/1.1 client, ``benchmarks.clients``).

Ours (ssemock's replay server, ``timing_scale=1``) against a bare aiohttp handler doing the
same timing work: sleeping (``asyncio.sleep``) until each chunk's absolute deadline, then
writing the same chunks (``benchmarks.servers``), as one would write it with aiohttp. Ours writes
the same chunks at the same deadlines, from one loop timer for all its streams
(:mod:`ssemock.timeline`); neither spins. Each round starts every
server in a fresh process, all side by side, warms each up with one stream (all at once), then
runs them one after the other (which goes first alternates); figures are medians over rounds,
with the min–max over rounds in the unit:

* ``concurrent_streams.completed``: share of streams complete with every chunk (goal 100 %);
* ``concurrent_streams.gap_error_p99``: p99 of ``|replayed gap - recorded gap|`` over every
  gap of every stream of a round, ms (goal <= 10 ms); the unit gives the p50 too;
* ``concurrent_streams.server_cpu``: the server's CPU time (user + system, ``/proc``) during
  the round, per stream, ms (goal ratio ours / bare <= 1.2);
* ``concurrent_streams.rss_per_stream``: growth of the server's resident memory from idle
  (after one warm-up stream) to its peak during the round, divided by the number of streams,
  KiB (goal <= 30 KiB). The clients' memory is in another process and not counted.

The same figures for ``ssemock serve --workers auto`` (gunicorn, one worker per core,
memory and CPU of the master and all workers added up) against the bare handler in as many
gunicorn workers (``bare-workers``: aiohttp's worker class, the socket shared by fork, the same
backlog), with its ``server_cpu`` reported; and the scaling ratio: streams completed per second
of the run with ``--workers auto`` over the same with ``--workers 1``. Both loads run: 2,000 and
10,000 streams (200 in one round with ``--quick``, of the recording's first :data:`QUICK_CHUNKS` chunks).

Beside them, a floor: ``floor-workers`` (:func:`benchmarks.servers.serve_floor`), the same answers
from a raw asyncio protocol in as many processes, with no HTTP framework (the request's head
scanned for its end, every chunk framed in advance, one loop timer per chunk set when the request
arrived). It is the least work a Python asyncio server can do for these streams, so its
``floor_gap_error_p99`` is the timing this machine allows under this load: when the floor itself is
over the goal, the goal is bound by the machine, not by the server.

Physical bound: on 2 cores the client process shares the cores with the servers, so ``auto``
cannot double the throughput; and every stream has the same recorded times and starts at
once, so each chunk is due in all streams at the same instant: a burst of N writes for the
server(s) and N reads for the one client process. The client times a chunk when its bytes
arrived in its socket (the kernel's receive time, see :mod:`benchmarks.clients`), not when its
busy event loop got round to reading them, so the client's own lag is not in the gaps it
measures as long as it reads each chunk before the next one arrives: each ``gap_error_p99``
says how late after their arrival the client read (p99), how late its loop woke up (p99 over a
5 ms probe) and how much of a core it used. It also gives the share of gaps *collapsed* (two
chunks that arrived together, or that the client read together after both had arrived, see
:data:`COLLAPSED`): when most are, the server (or the client) is behind, every gap measures as
0, and the p99 is merely the largest recorded gap (about 86 ms for this cassette).

At 2,000 streams (full run only) two more figures take that error apart, each from one more
round of ``ours`` and ``bare`` (not counted in the figures above):

* ``concurrent_streams [2,000 streams].server_gap_error_p99``: the same p99, of the gaps between
  the writes as the server itself made them (each write's loop time noted in the server process,
  see :data:`benchmarks.servers.WRITES_ENV`), beside the client-measured one of the same round,
  how far the writes fell behind their stream's own schedule, and the CPU the server needs to keep
  it: streams × CPU per stream (measured above) within the 1.07 s a stream lasts, in cores. When
  the server's own gaps are as wrong as the client's, the error is the server's lateness, not the
  client's reading; when the demand is over one core, one process cannot keep the schedule.
* ``concurrent_streams [2,000 streams] started over 1 s.gap_error_p99``: the same streams started
  evenly over 1 s (:data:`RAMP`) instead of at once, so that their chunks are not all due at the
  same instant and the connections do not all arrive with the first deadlines.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from . import figure
from .common import (
    Clients,
    ServerProcess,
    WorkersProcess,
    close_together,
    finish_client,
    handed_over,
    master_and_workers,
    median,
    percentile,
    run_client,
    standalone,
    start_client,
    stream_job,
    timed_cassette,
    tree_rss_kb,
)
from .servers import WRITES_ENV
from .timing_fidelity import cpu_seconds, gap_errors_ms, spread

SOURCE = "openai-chat-tool-calls-usage"


def _sample(rss: Callable[[], int], samples: list[int], done: threading.Event) -> None:
    """Note the resident memory ``rss()`` every 20 ms until ``done``."""
    while not done.wait(0.02):
        samples.append(rss())


class BareWorkers(ServerProcess):
    """``bare-workers`` or ``floor-workers`` (see :mod:`benchmarks.servers`): a master and its workers."""

    def __init__(self, cassette: Path, timing_scale: float, kind: str = "bare-workers") -> None:
        super().__init__(kind, cassette, timing_scale)

    pids = master_and_workers
    rss_kb = tree_rss_kb


def _server(kind: str, path: Any, yaml_dir: Path) -> ServerProcess | WorkersProcess:
    if kind.startswith("workers-"):
        return WorkersProcess(yaml_dir, kind.removeprefix("workers-"), 1)
    if kind in ("bare-workers", "floor-workers"):
        return BareWorkers(path, 1, kind)
    return ServerProcess(kind, path, 1)


@contextlib.contextmanager
def _noting_writes(file: Path | None) -> Iterator[None]:
    """Server processes started meanwhile note the time of each of their writes to ``file`` (None: not)."""
    if file is None:
        yield
        return
    os.environ[WRITES_ENV] = str(file)
    try:
        yield
    finally:
        del os.environ[WRITES_ENV]


def one_round(kind: str, path: Any, n: int, recorded: list[float], yaml_dir: Path,
              started: ServerProcess | WorkersProcess | None = None, *,
              stagger: float = 0.0, writes: Path | None = None) -> dict[str, Any]:
    """Run ``n`` concurrent streams against a fresh ``kind`` server; its completion, errors, memory, throughput.

    ``stagger``: the streams start evenly over that many seconds instead of all at once.
    ``writes``: a file where the server (``ours`` or ``bare``) notes the time of each of its writes;
    the result then has ``server_errors``, the gap errors of the writes themselves (ms), and
    ``behind``, how late each write was on its stream's first write plus the recorded gap (ms).
    ``started``: that server, started and warmed up (see :func:`side_by_side`).
    """
    with _noting_writes(writes):
        server = _server(kind, path, yaml_dir) if started is None else started
    with server if started is None else contextlib.nullcontext(server):
        if started is None:
            run_client([stream_job(server.url)])  # warm-up: imports, first request
        idle = server.rss_kb()
        samples = [idle]
        done = threading.Event()
        sampler = threading.Thread(target=_sample, args=(server.rss_kb, samples, done), daemon=True)
        sampler.start()
        pids = server.pids() if isinstance(server, (WorkersProcess, BareWorkers)) else [server.pid]
        before = sum(cpu_seconds(pid) for pid in pids)
        job = stream_job(server.url, n=n, timeout=300)
        if stagger:
            job["stagger"] = stagger
        try:
            [result] = run_client([job], timeout=900)
        finally:
            cpu = sum(cpu_seconds(pid) for pid in pids) - before
            done.set()
            sampler.join()
        peak = max(samples)
    errors: list[float] = []
    complete = collapsed = 0
    for stream in result["streams"]:
        if stream["ok"] and len(stream["times"]) == len(recorded):
            complete += 1
            errors.extend(gap_errors_ms(stream["times"], recorded))
            times = stream["times"]
            collapsed += sum(times[i] - times[i - 1] < COLLAPSED for i in range(1, len(times)))
    noted: dict[str, list[float]] = {}
    if writes is not None:  # the server saved them when it stopped
        streams = [w for w in json.loads(writes.read_text()) if len(w) == len(recorded)]
        noted["server_errors"] = [e for w in streams for e in gap_errors_ms(w, recorded)]
        noted["behind"] = [((w[i] - w[0]) - (recorded[i] - recorded[0])) * 1000
                           for w in streams for i in range(1, len(w))]
    return {**noted, "complete": complete, "errors": errors, "cpu_per_stream": cpu * 1000 / n,
            "rss_per_stream": (peak - idle) / n,
            "throughput": complete / result["elapsed"] if result.get("elapsed") else 0.0,
            "collapsed": collapsed / max(1, complete * (len(recorded) - 1)),
            "client_lag_p99": percentile(result["lags"], 99) * 1000,
            "read_late_p99": percentile(result["read_late"], 99) * 1000,
            "client_cpu_share": result["cpu"] / result["elapsed"] if result.get("elapsed") else 0.0}


@contextlib.contextmanager
def side_by_side(kinds: tuple[str, ...], path: Any, yaml_dir: Path) -> Iterator[dict[str, Any]]:
    """A fresh server of each kind, all started side by side and warmed up at once (one stream each:
    imports, first request), with a client started ahead for each; closed together at the end."""
    servers = {kind: _server(kind, path, yaml_dir) for kind in kinds}
    try:
        with Clients(len(kinds)) as clients:
            warming = [start_client([stream_job(server.url)]) for server in servers.values()]
            clients.spawn(len(kinds))  # the measuring clients start during the warm-up
            for client in warming:
                finish_client(client)
            clients.ready()
            yield servers
    finally:
        close_together(servers.values())


KINDS = ("ours", "bare", "workers-1", "workers-auto", "bare-workers", "floor-workers")
COLLAPSED = 0.001
"""A replayed gap shorter than this (seconds; every recorded gap is 20 ms or more) is collapsed: its two
chunks arrived together (the server wrote them late back to back) or were read together (the client read
late, after both had arrived: then both get the later one's arrival time)."""


def run(quick: bool = False) -> list[dict[str, Any]]:
    from ssemock.cassette import save

    sizes = (200,) if quick else (2000, 10000)
    cassette = timed_cassette(SOURCE, 1, gap=(0.02, 0.1), first=QUICK_FIRST if quick else 0.4,
                              limit=QUICK_CHUNKS if quick else None)
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    figures = []
    with handed_over(cassette) as path, tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        yaml_dir = Path(tmp)
        save(cassette, yaml_dir / "timed.yaml")
        for n in sizes:
            rounds = 1 if n > 2000 or quick else 3
            runs: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
            for index in range(rounds):  # interleaved; which kind goes first alternates
                order = KINDS if index % 2 == 0 else tuple(reversed(KINDS))
                with side_by_side(order, path, yaml_dir) as started:
                    for kind in order:
                        runs[kind].append(one_round(kind, path, n, recorded, yaml_dir, started[kind]))
            figures.extend(_figures(runs, n, rounds, quick))
            if n == DECOMPOSED:
                figures.extend(_decomposition(path, n, recorded, yaml_dir, runs))
    return figures


QUICK_CHUNKS = 6
"""Chunks of the recording a ``--quick`` run replays (its first; the full run all 12)."""
QUICK_FIRST = 0.2
"""Seconds to the first chunk in a ``--quick`` run (0.4 in the full run): 200 clients connect well within it."""
DECOMPOSED = 2000
"""The load whose timing error is taken apart (full run only): the servers' own write times, and a
ramped start (:data:`RAMP`), one more round of ``ours`` and ``bare`` each."""
RAMP = 1.0
"""Seconds over which the ramped variant starts its streams (evenly)."""


def _demand(runs: dict[str, list[dict[str, Any]]], kind: str, n: int, length: float) -> float:
    """Cores ``kind`` needs to keep the schedule: its CPU for ``n`` streams over the ``length`` s a stream lasts."""
    return median([r["cpu_per_stream"] for r in runs[kind]]) * n / 1000 / length


def _decomposition(path: Any, n: int, recorded: list[float], yaml_dir: Path,
                   runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The at-once ``gap_error_p99`` taken apart: the servers' own lateness and a ramped start."""
    noted: dict[str, dict[str, Any]] = {}
    ramped: dict[str, dict[str, Any]] = {}
    for kind in ("ours", "bare"):
        noted[kind] = one_round(kind, path, n, recorded, yaml_dir, writes=yaml_dir / f"writes-{kind}.json")
    for kind in ("bare", "ours"):
        ramped[kind] = one_round(kind, path, n, recorded, yaml_dir, stagger=RAMP)
    length = recorded[-1]
    p99 = {k: percentile(r["server_errors"], 99) for k, r in noted.items()}
    client = {k: percentile(r["errors"], 99) for k, r in noted.items()}
    behind = {k: percentile(r["behind"], 99) for k, r in noted.items()}
    demand = {k: _demand(runs, k, n, length) for k in ("ours", "bare")}
    ramp = {k: percentile(r["errors"], 99) for k, r in ramped.items()}
    name = f"concurrent_streams [{n:,} streams]"
    return [
        figure(f"{name}.server_gap_error_p99", p99["ours"],
               f"ms vs bare: the gaps between the server's own writes, noted in the server (one more round each, "
               f"not in the CPU figures), p99 of |written gap - recorded gap|; the same round read by the client: "
               f"ours {client['ours']:.1f}, bare {client['bare']:.1f}; p99 of how far a write was behind its "
               f"stream's own schedule: ours {behind['ours']:.0f}, bare {behind['bare']:.0f}; CPU the server needs "
               f"to keep the schedule: {n:,} × its CPU per stream within the {length:.2f} s a stream lasts = "
               f"ours {demand['ours']:.2f}, bare {demand['bare']:.2f} cores (one process runs on one)",
               baseline=p99["bare"], goal="reported", met=True),
        figure(f"{name} started over {RAMP:g} s.gap_error_p99", ramp["ours"],
               f"ms vs bare: the same streams started evenly over {RAMP:g} s, not at once (one round each); "
               f"gaps collapsed ours {ramped['ours']['collapsed']:.0%}, bare {ramped['bare']['collapsed']:.0%}; "
               f"the client read p99 ours {ramped['ours']['read_late_p99']:.1f}, "
               f"bare {ramped['bare']['read_late_p99']:.1f} ms after arrival",
               baseline=ramp["bare"], goal="reported", met=True),
    ]


def _figures(runs: dict[str, list[dict[str, Any]]], n: int, rounds: int, quick: bool = False) -> list[dict[str, Any]]:
    quick_note = " (quick: 1 round)" if quick else ""
    def per(key: str) -> dict[str, list[Any]]:
        return {kind: [r[key] for r in results] for kind, results in runs.items()}

    complete = {k: sum(v) / (n * rounds) * 100 for k, v in per("complete").items()}
    p99s = {k: [percentile(errs, 99) for errs in v] for k, v in per("errors").items()}
    p50 = {k: percentile([e for errs in v for e in errs], 50) for k, v in per("errors").items()}
    cpu, rss = per("cpu_per_stream"), per("rss_per_stream")
    mid = {name: {k: median(v) for k, v in values.items()} for name, values in
           (("p99", p99s), ("cpu", cpu), ("rss", rss), ("throughput", per("throughput")),
            ("lag", per("client_lag_p99")), ("read_late", per("read_late_p99")),
            ("client_cpu", per("client_cpu_share")), ("collapsed", per("collapsed")))}
    cores = len(os.sched_getaffinity(0))
    out = []
    # --workers auto is compared with the bare handler in as many gunicorn workers (same arrangement).
    for kind, bare, label in (("ours", "bare", ""), ("workers-auto", "bare-workers", f" --workers auto ({cores})")):
        name = f"concurrent_streams{label} [{n:,} streams]"
        pair = {kind: p99s[kind], bare: p99s[bare]}
        client = (f"gaps timed at arrival; the client read p99 {mid['read_late'][kind]:.1f} ms after arrival ({bare} "
                  f"{mid['read_late'][bare]:.1f}), its loop woke up late by p99 {mid['lag'][kind]:.1f} ms ({bare} "
                  f"{mid['lag'][bare]:.1f}), its CPU {mid['client_cpu'][kind]:.0%} of a core; gaps collapsed "
                  f"(chunks arrived or read together) {mid['collapsed'][kind]:.0%} "
                  f"({bare} {mid['collapsed'][bare]:.0%})")
        one = f"; one-process bare {mid['p99']['bare']:.1f} ms" if bare != "bare" else ""
        out += [
            figure(f"{name}.completed", complete[kind], f"% of {n} streams × {rounds} rounds{quick_note}",
                   baseline=complete[bare], goal="100 %", met=complete[kind] == 100),
            figure(f"{name}.gap_error_p99", mid["p99"][kind],
                   f"ms vs {bare} (p50 {kind} {p50[kind]:.2f}, {bare} {p50[bare]:.2f}; {spread(pair, rounds)}{one}; "
                   f"{client})",
                   baseline=mid["p99"][bare], goal="<= 10 ms", met=mid["p99"][kind] <= 10),
            figure(f"{name}.rss_per_stream", mid["rss"][kind], f"KiB vs {bare} ({spread({kind: rss[kind]}, rounds)})",
                   baseline=mid["rss"][bare], goal="<= 30 KiB", met=mid["rss"][kind] <= 30),
        ]
        if bare != "bare":
            out.append(figure(f"{name}.server_cpu", mid["cpu"][kind],
                              f"ms CPU per stream, all processes, vs {bare} "
                              f"({spread({kind: cpu[kind], bare: cpu[bare]}, rounds)})",
                              baseline=mid["cpu"][bare], goal="reported", met=True))
            floor = "floor-workers"
            out.append(figure(f"{name}.floor_gap_error_p99", mid["p99"][floor],
                              f"ms: the same streams from {floor}, a raw asyncio protocol in as many processes "
                              f"(no HTTP framework, chunks framed in advance, a loop timer per chunk set when the "
                              f"request arrived): the least a Python asyncio server does, the timing this machine "
                              f"allows; its CPU {mid['cpu'][floor]:.3f} ms per stream; the client read p99 "
                              f"{mid['read_late'][floor]:.1f} ms after arrival "
                              f"({spread({floor: p99s[floor]}, rounds)})",
                              baseline=None, goal="reported", met=True))
    out.append(figure(f"concurrent_streams [{n:,} streams].server_cpu", mid["cpu"]["ours"],
                      f"ms CPU per stream ({spread({'ours': cpu['ours'], 'bare': cpu['bare']}, rounds)})",
                      baseline=mid["cpu"]["bare"], goal="ratio <= 1.2",
                      met=mid["cpu"]["ours"] <= 1.2 * mid["cpu"]["bare"]))
    throughput = mid["throughput"]
    scaling = throughput["workers-auto"] / throughput["workers-1"] if throughput["workers-1"] else 0.0
    out.append(figure(f"concurrent_streams scaling [{n:,} streams]: --workers auto over --workers 1", scaling,
                      "ratio of streams/s", baseline=None, goal="reported", met=True,
                      spread=f"workers-1 {throughput['workers-1']:.0f}/s, auto {throughput['workers-auto']:.0f}/s, "
                             f"one process {throughput['ours']:.0f}/s, bare {throughput['bare']:.0f}/s, "
                             f"bare-workers {throughput['bare-workers']:.0f}/s"))
    return out


if __name__ == "__main__":
    standalone(run)
