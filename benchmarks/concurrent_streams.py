"""``concurrent_streams``: 2,000 concurrent clients (200 with ``--quick``) replaying a recording with timing.

The stream is a real OpenAI chat completion with tool calls (bundled
``openai-chat-tool-calls-usage``, 12 chunks) with made-up recorded times (the bundled
recordings keep none): first chunk at 0.4 s, then gaps of 20-100 ms (see
:func:`benchmarks.common.timed_cassette`). All clients connect at once from one client
process (a minimal asyncio HTTP/1.1 client, ``benchmarks.clients``).

Ours (ssemock's replay server, ``timing_scale=1``) against a bare aiohttp handler doing the
same timing work: sleeping (``asyncio.sleep``) until each chunk's absolute deadline, then
writing the same chunks (``benchmarks.servers``); neither spins. Each round starts both
servers in fresh processes and runs ours and bare one after the other (which goes first
alternates); figures are medians over rounds, with the min–max over rounds in the unit:

* ``concurrent_streams.completed``: share of streams complete with every chunk (goal 100 %);
* ``concurrent_streams.gap_error_p99``: p99 of ``|replayed gap - recorded gap|`` over every
  gap of every stream of a round, ms (goal <= 10 ms); the unit gives the p50 too;
* ``concurrent_streams.server_cpu``: the server's CPU time (user + system, ``/proc``) during
  the round, per stream, ms (goal ratio ours / bare <= 1.2);
* ``concurrent_streams.rss_per_stream``: growth of the server's resident memory from idle
  (after one warm-up stream) to its peak during the round, divided by the number of streams,
  KiB (goal <= 30 KiB). The clients' memory is in another process and not counted.
"""

from __future__ import annotations

import threading
from typing import Any

from . import figure
from .common import (
    ServerProcess,
    handed_over,
    median,
    percentile,
    rss_kb,
    run_client,
    standalone,
    stream_job,
    timed_cassette,
)
from .timing_fidelity import cpu_seconds, gap_errors_ms, spread

SOURCE = "openai-chat-tool-calls-usage"


def _sample(pid: int, samples: list[int], done: threading.Event) -> None:
    """Note the resident memory of ``pid`` every 20 ms until ``done``."""
    while not done.wait(0.02):
        samples.append(rss_kb(pid))


def one_round(kind: str, path: Any, n: int, recorded: list[float]) -> dict[str, Any]:
    """Run ``n`` concurrent streams against a fresh ``kind`` server; its completion, errors, memory."""
    with ServerProcess(kind, path, 1) as server:
        run_client([stream_job(server.url)])  # warm-up: imports, first request
        idle = rss_kb(server.pid)
        samples = [idle]
        done = threading.Event()
        sampler = threading.Thread(target=_sample, args=(server.pid, samples, done), daemon=True)
        sampler.start()
        before = cpu_seconds(server.pid)
        try:
            [result] = run_client([stream_job(server.url, n=n, timeout=120)])
        finally:
            cpu = cpu_seconds(server.pid) - before
            done.set()
            sampler.join()
        peak = max(samples)
    errors: list[float] = []
    complete = 0
    for stream in result["streams"]:
        if stream["ok"] and len(stream["times"]) == len(recorded):
            complete += 1
            errors.extend(gap_errors_ms(stream["times"], recorded))
    return {"complete": complete, "p99": percentile(errors, 99), "p50": percentile(errors, 50),
            "cpu_per_stream": cpu * 1000 / n, "rss_per_stream": (peak - idle) / n}


def run(quick: bool = False) -> list[dict[str, Any]]:
    n = 200 if quick else 2000
    rounds = 2 if quick else 3
    cassette = timed_cassette(SOURCE, 1, gap=(0.02, 0.1))
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "bare": []}
    with handed_over(cassette) as path:
        for index in range(rounds):
            for kind in ("ours", "bare") if index % 2 == 0 else ("bare", "ours"):
                runs[kind].append(one_round(kind, path, n, recorded))

    def per(key: str) -> dict[str, list[float]]:
        return {kind: [r[key] for r in results] for kind, results in runs.items()}

    complete = {k: sum(per("complete")[k]) / (n * rounds) * 100 for k in runs}
    p99, cpu, rss = per("p99"), per("cpu_per_stream"), per("rss_per_stream")
    p50 = {k: median(v) for k, v in per("p50").items()}
    mid = {name: {k: median(v) for k, v in values.items()} for name, values in
           (("p99", p99), ("cpu", cpu), ("rss", rss))}
    return [
        figure("concurrent_streams.completed", complete["ours"], f"% of {n} streams × {rounds} rounds",
               baseline=complete["bare"], goal="100 %", met=complete["ours"] == 100),
        figure("concurrent_streams.gap_error_p99", mid["p99"]["ours"],
               f"ms (p50 ours {p50['ours']:.2f}, bare {p50['bare']:.2f}; {spread(p99, rounds)})",
               baseline=mid["p99"]["bare"], goal="<= 10 ms", met=mid["p99"]["ours"] <= 10),
        figure("concurrent_streams.server_cpu", mid["cpu"]["ours"], f"ms CPU per stream ({spread(cpu, rounds)})",
               baseline=mid["cpu"]["bare"], goal="ratio <= 1.2", met=mid["cpu"]["ours"] <= 1.2 * mid["cpu"]["bare"]),
        figure("concurrent_streams.rss_per_stream", mid["rss"]["ours"], f"KiB ({spread(rss, rounds)})",
               baseline=mid["rss"]["bare"], goal="<= 30 KiB", met=mid["rss"]["ours"] <= 30),
    ]


if __name__ == "__main__":
    standalone(run)
