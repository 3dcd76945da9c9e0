"""``timing_fidelity``: one stream with recorded timing; how far each replayed gap is from the recorded one.

The stream is the bundled real Anthropic recording (118 chunks) with made-up recorded
times (the bundled recordings keep none): first chunk at 0.4 s, then gaps of 10-50 ms
(see :func:`benchmarks.common.timed_cassette`). The client, in its own process, notes
when each HTTP chunk (one server write) arrived complete in its socket (the kernel's receive
time, see :mod:`benchmarks.clients`); the error of gap ``i`` is
``|(arrival[i] - arrival[i-1]) - (t[i] - t[i-1])|``.

Ours: ssemock's replay server at ``timing_scale=1``. Baseline: a bare aiohttp handler doing
the same timing work — sleeping (``asyncio.sleep``) until each chunk's absolute deadline
(request arrival + recorded time), then writing (``benchmarks.servers``); neither spins.
Runs alternate ours / bare (the first of each pair alternating too), one client process per
run, so each server's CPU time is read around its own stream (``/proc``).

Figures (median over runs; p50 and the min–max over runs in the unit):

* ``timing_fidelity``: p99 gap error, ms, goal <= 2 ms (bounded below by the machine: asyncio's
  timers wake in whole milliseconds, epoll's resolution, and a loaded CPU adds its own delay);
* ``timing_fidelity.server_cpu``: the server's CPU per stream, ms, goal ratio <= 1.2.

``--quick``: one run of the first :data:`QUICK_CHUNKS` chunks (the p99 of 29 gaps is their
worst, so it cannot flatter), after a warm-up of both servers at once whose clients leave after
4 KB.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from . import figure
from .common import (
    Clients,
    ServerProcess,
    finish_client,
    handed_over,
    median,
    percentile,
    run_client,
    standalone,
    start_client,
    stream_job,
    timed_cassette,
)


def cpu_seconds(pid: int) -> float:
    """CPU time of process ``pid`` so far, in seconds: the sum over its live threads of the
    scheduler's run time (Linux ``/proc/PID/task/*/schedstat``, nanoseconds; ``/proc/PID/stat``
    counts in 10 ms ticks, too coarse for one stream)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that just ended
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def spread(values: dict[str, list[float]], runs: int) -> str:
    """``"N runs, ours MIN–MAX, bare MIN–MAX"`` for a figure's unit (3 significant digits)."""
    parts = [f"{kind} {min(v):.3g}–{max(v):.3g}" for kind, v in values.items() if v]
    return f"{runs} runs, " + ", ".join(parts)


def gap_errors_ms(times: list[float], recorded: list[float]) -> list[float]:
    """``|replayed gap - recorded gap|`` in ms for each pair of consecutive chunks."""
    return [
        abs((times[i] - times[i - 1]) - (recorded[i] - recorded[i - 1])) * 1000
        for i in range(1, min(len(times), len(recorded)))
    ]


def stream_errors(kind: str, stream: dict[str, Any], recorded: list[float]) -> list[float]:
    """Gap errors of one stream; raises when it did not complete."""
    if not stream["ok"] or len(stream["times"]) != len(recorded):
        raise RuntimeError(f"{kind} stream incomplete: {stream.get('error', stream['status'])}")
    return gap_errors_ms(stream["times"], recorded)


QUICK_CHUNKS = 30
"""Chunks of the timed stream a ``--quick`` run replays."""


def run(quick: bool = False) -> list[dict[str, Any]]:
    # quick: the first 30 chunks (the p99 of 29 gaps is their worst: it cannot flatter)
    cassette = timed_cassette(limit=QUICK_CHUNKS if quick else None)
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    runs = 1 if quick else 6
    p99: dict[str, list[float]] = {"ours": [], "bare": []}
    p50: dict[str, list[float]] = {"ours": [], "bare": []}
    cpu: dict[str, list[float]] = {"ours": [], "bare": []}
    with handed_over(cassette) as path, ServerProcess("ours", path, 1) as ours, \
            ServerProcess("bare", path, 1, drop_stderr=True) as bare, \
            Clients(2 + 2 * runs) as clients:  # the bare one prints the warm-up's leaving; clients ahead
        servers = {"ours": ours, "bare": bare}
        # warm-up: both at once (a client each: a client runs its jobs one after the other), each leaving
        # after its first 4 KB
        warming = [start_client([{**stream_job(server.url), "leave_after": 4096}]) for server in servers.values()]
        for client in warming:
            finish_client(client)
        clients.ready()
        for index in range(runs):
            for kind in ("ours", "bare") if index % 2 == 0 else ("bare", "ours"):
                before = cpu_seconds(servers[kind].pid)
                [result] = run_client([stream_job(servers[kind].url)])
                cpu[kind].append((cpu_seconds(servers[kind].pid) - before) * 1000)
                errors = stream_errors(kind, result["streams"][0], recorded)
                p99[kind].append(percentile(errors, 99))
                p50[kind].append(percentile(errors, 50))
    value, baseline = median(p99["ours"]), median(p99["bare"])
    cpu_value, cpu_baseline = median(cpu["ours"]), median(cpu["bare"])
    p50_text = f"p50 ours {median(p50['ours']):.2f}, bare {median(p50['bare']):.2f}"
    return [
        figure("timing_fidelity", value, f"ms p99 gap error ({p50_text}; {spread(p99, runs)})",
               baseline=baseline, goal="<= 2 ms", met=value <= 2.0),
        figure("timing_fidelity.server_cpu", cpu_value, f"ms CPU per stream ({spread(cpu, runs)})",
               baseline=cpu_baseline, goal="ratio <= 1.2", met=cpu_value <= 1.2 * cpu_baseline),
    ]


if __name__ == "__main__":
    standalone(run)
