"""``concurrent_streams``: 2,000 concurrent clients (200 with ``--quick``) replaying a recording with timing.

The stream is a real OpenAI chat completion with tool calls (bundled
``openai-chat-tool-calls-usage``, 12 chunks) with made-up recorded times (the bundled
recordings keep none): first chunk at 0.4 s, then gaps of 20-100 ms (see
:func:`benchmarks.common.timed_cassette`). All clients connect at once from one client
process (a minimal asyncio HTTP/1.1 client, ``benchmarks.clients``).

Ours (ssemock's replay server, ``timing_scale=1``) against a bare aiohttp handler doing the
same timing work: sleeping (``asyncio.sleep``) until each chunk's absolute deadline, then
writing the same chunks (``benchmarks.servers``); neither spins. Each round starts every
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
10,000 streams (200 in one round with ``--quick``).

Physical bound: on 2 cores the client process shares the cores with the servers, so ``auto``
cannot double the throughput; and every stream has the same recorded times and starts at
once, so each chunk is due in all streams at the same instant: a burst of N writes for the
server(s) and N reads for the one client process. The client times a chunk when its event
loop reads it, so its own lag is part of every gap it measures: each ``gap_error_p99`` says how
late the client's loop woke up (p99 over a 5 ms probe) and how much of a core the client used.
When that lag alone is near the goal, the figure measures the machine, not the server. It
also gives the share of gaps *collapsed* (two chunks read together, see :data:`COLLAPSED`):
when most are, the server (or the client) is behind the schedule, every gap measures as 0,
and the p99 is merely the largest recorded gap (about 86 ms for this cassette).
"""

from __future__ import annotations

import contextlib
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
from .timing_fidelity import cpu_seconds, gap_errors_ms, spread

SOURCE = "openai-chat-tool-calls-usage"


def _sample(rss: Callable[[], int], samples: list[int], done: threading.Event) -> None:
    """Note the resident memory ``rss()`` every 20 ms until ``done``."""
    while not done.wait(0.02):
        samples.append(rss())


class BareWorkers(ServerProcess):
    """``bare-workers`` (see :mod:`benchmarks.servers`): gunicorn's master and its workers."""

    def __init__(self, cassette: Path, timing_scale: float) -> None:
        super().__init__("bare-workers", cassette, timing_scale)

    pids = master_and_workers
    rss_kb = tree_rss_kb


def _server(kind: str, path: Any, yaml_dir: Path) -> ServerProcess | WorkersProcess:
    if kind.startswith("workers-"):
        return WorkersProcess(yaml_dir, kind.removeprefix("workers-"), 1)
    if kind == "bare-workers":
        return BareWorkers(path, 1)
    return ServerProcess(kind, path, 1)


def one_round(kind: str, path: Any, n: int, recorded: list[float], yaml_dir: Path,
              started: ServerProcess | WorkersProcess | None = None) -> dict[str, Any]:
    """Run ``n`` concurrent streams against a fresh ``kind`` server; its completion, errors, memory, throughput.
    ``started``: that server, started and warmed up (see :func:`side_by_side`)."""
    with _server(kind, path, yaml_dir) if started is None else contextlib.nullcontext(started) as server:
        if started is None:
            run_client([stream_job(server.url)])  # warm-up: imports, first request
        idle = server.rss_kb()
        samples = [idle]
        done = threading.Event()
        sampler = threading.Thread(target=_sample, args=(server.rss_kb, samples, done), daemon=True)
        sampler.start()
        pids = server.pids() if isinstance(server, (WorkersProcess, BareWorkers)) else [server.pid]
        before = sum(cpu_seconds(pid) for pid in pids)
        try:
            [result] = run_client([stream_job(server.url, n=n, timeout=300)], timeout=900)
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
    return {"complete": complete, "errors": errors, "cpu_per_stream": cpu * 1000 / n,
            "rss_per_stream": (peak - idle) / n,
            "throughput": complete / result["elapsed"] if result.get("elapsed") else 0.0,
            "collapsed": collapsed / max(1, complete * (len(recorded) - 1)),
            "client_lag_p99": percentile(result["lags"], 99) * 1000,
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


KINDS = ("ours", "bare", "workers-1", "workers-auto", "bare-workers")
COLLAPSED = 0.001
"""A replayed gap shorter than this (seconds; every recorded gap is 20 ms or more) is collapsed: its two
chunks were read together, because the server wrote them late back to back or the client read late."""


def run(quick: bool = False) -> list[dict[str, Any]]:
    sizes = (200,) if quick else (2000, 10000)
    cassette = timed_cassette(SOURCE, 1, gap=(0.02, 0.1))
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    figures = []
    with handed_over(cassette) as path, tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        yaml_dir = Path(tmp)
        cassette.save(yaml_dir / "timed.yaml")
        for n in sizes:
            rounds = 1 if n > 2000 or quick else 3
            runs: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
            for index in range(rounds):  # interleaved; which kind goes first alternates
                order = KINDS if index % 2 == 0 else tuple(reversed(KINDS))
                with side_by_side(order, path, yaml_dir) as started:
                    for kind in order:
                        runs[kind].append(one_round(kind, path, n, recorded, yaml_dir, started[kind]))
            figures.extend(_figures(runs, n, rounds, quick))
    return figures


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
            ("lag", per("client_lag_p99")), ("client_cpu", per("client_cpu_share")), ("collapsed", per("collapsed")))}
    cores = len(os.sched_getaffinity(0))
    out = []
    # --workers auto is compared with the bare handler in as many gunicorn workers (same arrangement).
    for kind, bare, label in (("ours", "bare", ""), ("workers-auto", "bare-workers", f" --workers auto ({cores})")):
        name = f"concurrent_streams{label} [{n:,} streams]"
        pair = {kind: p99s[kind], bare: p99s[bare]}
        client = (f"the client's own loop wakes up late by p99 {mid['lag'][kind]:.1f} ms ({bare} "
                  f"{mid['lag'][bare]:.1f}), its CPU {mid['client_cpu'][kind]:.0%} of a core; gaps collapsed "
                  f"(chunks read together) {mid['collapsed'][kind]:.0%} ({bare} {mid['collapsed'][bare]:.0%})")
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
