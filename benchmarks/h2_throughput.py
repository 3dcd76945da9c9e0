"""``h2_throughput``: one stream, no delays, a 20 MB SSE body at the recording's chunk sizes, over HTTP/2.

Ours: ssemock's replay server with HTTP/2 on (``MockServer(http2=True, timing_scale=0)``), read over h2c
with prior knowledge. Baselines, in the same run: a bare server on the same ``h2`` state machine writing the
same chunks as DATA frames (:class:`benchmarks.h2_peer.BareH2`: flow control, nothing else), and ours again
over HTTP/1.1 on the same port (the same cassette; chunked framing, and the pacing of timing scale 0 for its
first 2 s: :mod:`ssemock.pacing`; HTTP/2 frames keep their boundaries unpaced). Each server runs in its own
process, the reader in another: curl (nghttp2, C; ``--http2-prior-knowledge``), whose reads cost little beside
the servers' writes (a Python ``h2`` reader reads about 2 MB/s, whatever the server). A warm-up stream of each,
read by a raw ``h2`` or h11 client (:mod:`benchmarks.h2_peer`), checks that every chunk came as one DATA frame
(one HTTP chunk). Runs alternate ours-h2 / bare-h2 / ours-HTTP/1.1 (the order rotating); the server's CPU time is read
around each stream (``/proc``). ``--quick``: 2 runs of the first 2 MB (7 runs of 20 MB in the full run),
CPU scaled to 20 MB.

Figures (median over the runs):

* ``h2_throughput``: MB/s over h2, baseline the bare h2 server; goal ratio >= 0.5 (the bare server has no
  pipeline: this is what ssemock's request handling and sending layer cost over HTTP/2);
* ``h2_throughput.server_cpu``: ours' CPU seconds per 20 MB stream over h2, baseline the bare h2 server's;
  goal ratio <= 2.0;
* ``h2_throughput.vs_http1``: MB/s over h2, baseline ours over HTTP/1.1; goal ratio >= 0.5 (a DATA frame costs
  more than an HTTP chunk: the state machine is pure Python).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import figure, spread
from .common import REQUEST_BODY, ROOT, STREAM_PATH, bulk_cassette, handed_over, median, standalone
from .h2_peer import read_h2, read_http1
from .timing_fidelity import cpu_seconds

MB = 1_000_000
SIZE = 20 * MB
QUICK_SIZE = 2 * MB
KINDS = ("ours-h2", "bare-h2", "ours-http1")


@contextlib.contextmanager
def peer(kind: str, cassette: Path) -> Iterator[tuple[int, int]]:
    """A server of :mod:`benchmarks.h2_peer` in its own process: ``(port, pid)`` while it runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.h2_peer", kind, str(cassette)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            raise RuntimeError(f"h2_throughput: the {kind} server did not start ({line!r})")
        yield int(line), proc.pid
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def curl(port: int, *, http2: bool, expected: int) -> float:
    """Seconds curl takes to read the stream (from its start to the last byte).

    Raises:
        RuntimeError: curl failed, or read another number of bytes than ``expected``.
    """
    how = ["--http2-prior-knowledge"] if http2 else ["--http1.1"]
    done = subprocess.run(
        [
            "curl",
            "-sS",
            *how,
            "-o",
            "/dev/null",
            "-w",
            "%{size_download} %{time_total}",
            "--data-binary",
            REQUEST_BODY.decode(),
            f"http://127.0.0.1:{port}{STREAM_PATH}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    size, seconds = done.stdout.split() if done.returncode == 0 else ("0", "0")
    if int(size) != expected:
        raise RuntimeError(f"h2_throughput: curl read {size} bytes, expected {expected}: {done.stderr[-300:]}")
    return float(seconds)


def run(quick: bool = False) -> list[dict[str, Any]]:
    if shutil.which("curl") is None:
        raise RuntimeError("h2_throughput: needs curl with HTTP/2 (nghttp2)")
    runs, size = (2, QUICK_SIZE) if quick else (7, SIZE)
    note = f"quick: {runs} runs of {size // MB} MB, CPU scaled; " if quick else ""
    cassette = bulk_cassette(size)
    chunks = cassette.interactions[0].response.chunks
    expected, count = sum(len(c.data) for c in chunks), len(chunks)
    speeds: dict[str, list[float]] = {kind: [] for kind in KINDS}
    cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}
    with (
        handed_over(cassette) as path,
        peer("ours", path) as (ours_port, ours_pid),
        peer("bare", path) as (bare_port, bare_pid),
    ):
        where = {
            "ours-h2": (ours_port, ours_pid, read_h2),
            "bare-h2": (bare_port, bare_pid, read_h2),
            "ours-http1": (ours_port, ours_pid, read_http1),
        }
        for kind, (port, _, read) in where.items():  # warm-up (not measured): each server's first stream
            got = read(port, STREAM_PATH, REQUEST_BODY)
            if got["bytes"] != expected or got["frames"] != count:
                raise RuntimeError(f"h2_throughput: {kind} sent {got}, expected {expected} bytes in {count} frames")
        for index in range(runs):
            for kind in KINDS[index % 3 :] + KINDS[: index % 3]:
                port, pid, _ = where[kind]
                before = cpu_seconds(pid)
                elapsed = curl(port, http2=kind != "ours-http1", expected=expected)
                cpu[kind].append((cpu_seconds(pid) - before) * SIZE / size)
                speeds[kind].append(expected / MB / elapsed)
    return [
        _figure("h2_throughput", speeds, "ours-h2", "bare-h2", f"MB/s ({note}vs a bare h2 server)", 0.5),
        _figure("h2_throughput.server_cpu", cpu, "ours-h2", "bare-h2", f"s CPU per 20 MB ({note}vs a bare h2 server)",
                -2.0),
        _figure("h2_throughput.vs_http1", speeds, "ours-h2", "ours-http1", f"MB/s ({note}vs ours over HTTP/1.1)", 0.5),
    ]


def _figure(name: str, values: dict[str, list[float]], ours: str, base: str, unit: str, goal: float) -> dict[str, Any]:
    """The figure of ``values[ours]`` against ``values[base]`` (medians); ``goal``: the least ratio, or (negative)
    the most."""
    value, baseline = median(values[ours]), median(values[base])
    met = value / baseline >= goal if goal > 0 else value / baseline <= -goal
    return figure(name, value, unit, baseline=baseline, goal=f"ratio {'>=' if goal > 0 else '<='} {abs(goal):g}",
                  met=met, spread=spread(values[ours], values[base]))


if __name__ == "__main__":
    standalone(run)
