"""``concurrent_streams``: 2,000 concurrent clients (200 with ``--quick``) replaying a recording with timing.

The stream is a real OpenAI chat completion with tool calls (bundled
``openai-chat-tool-calls-usage``, 12 chunks) with made-up recorded times (the bundled
recordings keep none): first chunk at 0.4 s, then gaps of 20-100 ms (see
:func:`benchmarks.common.timed_cassette`). All clients connect at once from one client
process (a minimal asyncio HTTP/1.1 client, ``benchmarks.clients``).

Figures, ours (ssemock's replay server, ``timing_scale=1``) against a bare aiohttp handler
sleeping until each recorded time and writing the same chunks (``benchmarks.servers``),
each server in a fresh process, runs alternating:

* ``concurrent_streams.completed``: share of streams complete with every chunk (goal 100 %);
* ``concurrent_streams.gap_error_p99``: p99 of ``|replayed gap - recorded gap|`` over every
  gap of every stream, ms (goal <= 10 ms);
* ``concurrent_streams.rss_per_stream``: growth of the server's resident memory from idle
  (after one warm-up stream) to its peak during the run, divided by the number of streams,
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
from .timing_fidelity import gap_errors_ms

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
        try:
            [result] = run_client([stream_job(server.url, n=n, timeout=120)])
        finally:
            done.set()
            sampler.join()
        peak = max(samples)
    errors: list[float] = []
    complete = 0
    for stream in result["streams"]:
        if stream["ok"] and len(stream["times"]) == len(recorded):
            complete += 1
            errors.extend(gap_errors_ms(stream["times"], recorded))
    return {"complete": complete, "errors": errors, "rss_per_stream": (peak - idle) / n}


def run(quick: bool = False) -> list[dict[str, Any]]:
    n = 200 if quick else 2000
    rounds = 1 if quick else 2
    cassette = timed_cassette(SOURCE, 1, gap=(0.02, 0.1))
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "bare": []}
    with handed_over(cassette) as path:
        for _ in range(rounds):
            for kind in ("ours", "bare"):
                runs[kind].append(one_round(kind, path, n, recorded))

    def total(kind: str, key: str) -> Any:
        return [r[key] for r in runs[kind]]

    complete = {k: sum(total(k, "complete")) / (n * rounds) * 100 for k in runs}
    p99 = {k: percentile([e for errs in total(k, "errors") for e in errs], 99) for k in runs}
    rss = {k: median(total(k, "rss_per_stream")) for k in runs}
    return [
        figure("concurrent_streams.completed", complete["ours"], f"% of {n} streams", baseline=complete["bare"],
               goal="100 %", met=complete["ours"] == 100),
        figure("concurrent_streams.gap_error_p99", p99["ours"], "ms", baseline=p99["bare"], goal="<= 10 ms",
               met=p99["ours"] <= 10),
        figure("concurrent_streams.rss_per_stream", rss["ours"], "KiB", baseline=rss["bare"], goal="<= 30 KiB",
               met=rss["ours"] <= 30),
    ]


if __name__ == "__main__":
    standalone(run)
