"""``timing_fidelity``: one stream with recorded timing; how far each replayed gap is from the recorded one.

The stream is the bundled real Anthropic recording (118 chunks) with made-up recorded
times (the bundled recordings keep none): first chunk at 0.4 s, then gaps of 10-50 ms
(see :func:`benchmarks.common.timed_cassette`). The client, in its own process, notes
when each HTTP chunk (one server write) is complete; the error of gap ``i`` is
``|(arrival[i] - arrival[i-1]) - (t[i] - t[i-1])|``.
Ours: ssemock's replay server at ``timing_scale=1``. Baseline: a bare aiohttp handler
sleeping until each recorded time, then writing (``benchmarks.servers``); runs alternate.
Goal: p99 of ours <= 2 ms.
"""

from __future__ import annotations

from typing import Any

from . import figure
from .common import ServerProcess, handed_over, percentile, run_client, standalone, stream_job, timed_cassette


def gap_errors_ms(times: list[float], recorded: list[float]) -> list[float]:
    """``|replayed gap - recorded gap|`` in ms for each pair of consecutive chunks."""
    return [
        abs((times[i] - times[i - 1]) - (recorded[i] - recorded[i - 1])) * 1000
        for i in range(1, min(len(times), len(recorded)))
    ]


def collect(results: list[dict[str, Any]], order: list[str], recorded: list[float]) -> dict[str, list[float]]:
    """Gap errors per server kind; raises when a stream did not complete."""
    errors: dict[str, list[float]] = {kind: [] for kind in order}
    for kind, result in zip(order, results):
        for stream in result["streams"]:
            if not stream["ok"] or len(stream["times"]) != len(recorded):
                raise RuntimeError(f"{kind} stream incomplete: {stream.get('error', stream['status'])}")
            errors[kind].extend(gap_errors_ms(stream["times"], recorded))
    return errors


def run(quick: bool = False) -> list[dict[str, Any]]:
    cassette = timed_cassette(limit=50 if quick else None)
    recorded = [c.t for c in cassette.interactions[0].response.chunks]
    reps = 1 if quick else 3
    with handed_over(cassette) as path, ServerProcess("ours", path, 1) as ours, ServerProcess("bare", path, 1) as bare:
        urls = {"ours": ours.url, "bare": bare.url}
        order = ["ours", "bare"] * reps
        results = run_client([stream_job(urls[kind]) for kind in order])
    errors = collect(results, order, recorded)
    value, baseline = percentile(errors["ours"], 99), percentile(errors["bare"], 99)
    return [figure(
        "timing_fidelity", value, "ms (p99 gap error)", baseline=baseline, goal="<= 2 ms", met=value <= 2.0,
    )]


if __name__ == "__main__":
    standalone(run)
