"""``replay_throughput``: one stream, no delays, a 20 MB SSE body at the recording's chunk sizes.

Ours: ssemock's replay server (``timing_scale=0``) serving a cassette made of the real
recording's chunks repeated (about 140 bytes each, so ~150,000 writes for 20 MB).
Baseline: a bare aiohttp handler writing the same chunks, one ``write`` each, with the same
chunked framing, and keeping the same boundaries (``benchmarks.servers.KeepBoundaries``: each write
waits until the client has read the one before, within the same 2 s budget, as timing scale 0
does in ours: :mod:`ssemock.pacing`), so both do the same work. Each server runs in its own process, the client in
a third; a warm-up stream each (both at once; with ``--quick`` its first MB only), then runs
alternate ours / bare (the first of each pair alternating too), one client process per run so
that each server's CPU time is read around its own stream (``/proc``). ``--quick`` makes 2 runs
(7 in the full run) of the first 3 MB of the same body, its CPU time scaled to 20 MB (what a
stream costs beyond its writes, the request and its match, is a few milliseconds: a few per cent of
either at 3 MB): the chunk sizes and the arrangement of the measured runs stay those of the full run.

Figures (median over the runs; min–max of ours and bare in the unit):

* ``replay_throughput``: MB/s, goal ratio ours / bare >= 1.0;
* ``replay_throughput.server_cpu``: the server's CPU seconds (user + system) per 20 MB
  stream, goal ratio <= 1.0.
"""

from __future__ import annotations

from typing import Any

from . import figure
from .common import (
    Clients,
    ServerProcess,
    bulk_cassette,
    finish_client,
    handed_over,
    median,
    standalone,
    stream_job,
    together,
)
from .timing_fidelity import cpu_seconds, spread

MB = 1_000_000
SIZE = 20 * MB
QUICK_SIZE = 3 * MB


def run(quick: bool = False) -> list[dict[str, Any]]:
    runs, size = (2, QUICK_SIZE) if quick else (7, SIZE)
    note = f"quick: {runs} runs of {size // MB} MB, CPU scaled; " if quick else ""
    cassette = bulk_cassette(size)
    expected = sum(len(c.data) for c in cassette.interactions[0].response.chunks)
    count = len(cassette.interactions[0].response.chunks)
    speeds: dict[str, list[float]] = {"ours": [], "bare": []}
    cpu: dict[str, list[float]] = {"ours": [], "bare": []}
    with handed_over(cassette) as path, \
            together(ServerProcess("ours", path, 0),
                     ServerProcess("bare", path, 0, drop_stderr=quick)) as (ours, bare), \
            Clients(2) as clients:  # quick: bare's warm-up client leaves (a traceback)
        servers = {"ours": ours, "bare": bare}
        # Warm-up, both at once (not measured): the first MB of a stream (the servers' first request,
        # the plan built, the send path run); quick, only that, the full run a whole stream.
        warm = {"leave_after": MB} if quick else {}
        warming = [clients.start([stream_job(server.url, keep_times=False, timeout=120) | warm])
                   for server in servers.values()]
        clients.spawn(2 * runs)  # the measuring clients start during the warm-up
        for client in warming:
            finish_client(client)
        clients.ready()
        for index in range(runs):
            for kind in ("ours", "bare") if index % 2 == 0 else ("bare", "ours"):
                server = servers[kind]
                before = cpu_seconds(server.pid)
                [result] = clients.run([stream_job(server.url, keep_times=False, timeout=120)])
                cpu[kind].append((cpu_seconds(server.pid) - before) * SIZE / size)
                stream = result["streams"][0]
                if not stream["ok"] or sum(stream["sizes"]) != expected or len(stream["sizes"]) != count:
                    raise RuntimeError(f"replay_throughput: {kind} sent a wrong body: {stream}"[:300])
                speeds[kind].append(expected / MB / stream["elapsed"])
    value, baseline = median(speeds["ours"]), median(speeds["bare"])
    cpu_value, cpu_baseline = median(cpu["ours"]), median(cpu["bare"])
    return [
        figure("replay_throughput", value, f"MB/s ({note}{spread(speeds, runs)})", baseline=baseline,
               goal="ratio >= 1.0", met=value / baseline >= 1.0),
        figure("replay_throughput.server_cpu", cpu_value, f"s CPU per 20 MB ({note}{spread(cpu, runs)})",
               baseline=cpu_baseline, goal="ratio <= 1.0", met=cpu_value <= cpu_baseline),
    ]


if __name__ == "__main__":
    standalone(run)
