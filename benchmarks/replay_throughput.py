"""``replay_throughput``: one stream, no delays, a 20 MB SSE body (5 MB with ``--quick``).

Ours: ssemock's replay server (``timing_scale=0``) serving a cassette made of the real
recording's chunks repeated (about 140 bytes each, so ~150,000 writes for 20 MB).
Baseline: a bare aiohttp handler writing the same chunks, one ``write`` each
(``benchmarks.servers``). Each server runs in its own process, the client in a third;
repetitions alternate ours / baseline and the figure compares the medians.
Goal: throughput ratio ours / baseline >= 0.9.
"""

from __future__ import annotations

from typing import Any

from . import figure
from .common import ServerProcess, bulk_cassette, handed_over, median, run_client, standalone, stream_job

MB = 1_000_000


def run(quick: bool = False) -> list[dict[str, Any]]:
    size = (5 if quick else 20) * MB
    reps = 3 if quick else 5
    cassette = bulk_cassette(size)
    expected = sum(len(c.data) for c in cassette.interactions[0].response.chunks)
    count = len(cassette.interactions[0].response.chunks)
    with handed_over(cassette) as path, ServerProcess("ours", path, 0) as ours, ServerProcess("bare", path, 0) as bare:
        urls = {"ours": ours.url, "bare": bare.url}
        order = ["ours", "bare"] * (reps + 1)  # the first pair warms up both
        jobs = [stream_job(urls[kind], keep_times=False, timeout=120) for kind in order]
        results = run_client(jobs, timeout=600)
    speeds: dict[str, list[float]] = {"ours": [], "bare": []}
    for index, (kind, result) in enumerate(zip(order, results)):
        stream = result["streams"][0]
        if not stream["ok"] or sum(stream["sizes"]) != expected or len(stream["sizes"]) != count:
            raise RuntimeError(f"replay_throughput: {kind} sent a wrong body: {stream}"[:300])
        if index >= 2:
            speeds[kind].append(expected / MB / stream["elapsed"])
    value, baseline = median(speeds["ours"]), median(speeds["bare"])
    return [figure(
        "replay_throughput", value, "MB/s", baseline=baseline, goal="ratio >= 0.9",
        met=value / baseline >= 0.9,
    )]


if __name__ == "__main__":
    standalone(run)
