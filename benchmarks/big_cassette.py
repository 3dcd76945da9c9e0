"""``big_cassette``: the memory a large cassette takes while it loads, against what it takes once loaded.

A cassette file of about 100 MB (8 MB with ``--quick``): 38 interactions (3 quick) of the real
recording's chunks repeated, 2 MB of body each (about 14,000 chunks), written by ssemock
(:func:`ssemock.cassette.dumps`). Each load runs in a process of its own
(``python -m benchmarks.big_cassette --load FILE``), which reads its peak resident memory
(``VmHWM``) and its resident memory once the cassette is loaded and the garbage collected
(``VmRSS``, the interpreter and ssemock's modules included) from ``/proc/self/status``.

* ``big_cassette.first_load``: the peak of a first load (an empty cache directory: the YAML is
  parsed and the cache entry written), in MiB; baseline: the same process's resident memory once
  loaded. Goal: ratio <= 1.5.
* ``big_cassette.cached_load``: the same for a second load of the same file in a new process (from
  the cache of parsed cassettes), reported.

Both carry the load's seconds in their unit. ``python -m benchmarks.big_cassette [--quick]``.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import figure
from .common import ROOT, bulk_cassette, standalone

__all__ = ["run"]

GOAL = 1.5
BODY = 2_000_000
"""Body bytes of each interaction."""


def write_cassette(path: Path, interactions: int) -> int:
    """A cassette of ``interactions`` interactions of :data:`BODY` bytes each at ``path``; its size in bytes."""
    from ssemock.cassette import Cassette, Interaction, Request, dumps

    response = bulk_cassette(BODY, timed=True).interactions[0].response
    items = [Interaction(Request(method="POST", path="/v1/chat/completions", body=b'{"n": %d}' % i), response)
             for i in range(interactions)]
    data = dumps(Cassette("big", items)).encode()
    path.write_bytes(data)
    return len(data)


def _status(key: str) -> float:
    """A ``/proc/self/status`` memory line, MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} in /proc/self/status")


def load_main(file: str) -> None:
    """``--load FILE``: load the cassette, print ``{"peak", "resident", "seconds", "interactions"}`` (MiB, s)."""
    from ssemock.cassette import load

    began = time.perf_counter()
    cassette = load(file)
    seconds = time.perf_counter() - began
    gc.collect()
    print(json.dumps({"peak": _status("VmHWM"), "resident": _status("VmRSS"), "seconds": seconds,
                      "interactions": len(cassette.interactions)}))


def _load(file: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "SSEMOCK_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.big_cassette", "--load", str(file)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def run(quick: bool = False) -> list[dict[str, Any]]:
    interactions = 3 if quick else 38
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as name:
        tmp = Path(name)
        size = write_cassette(tmp / "big.yaml", interactions)
        first = _load(tmp / "big.yaml", tmp / "cache")
        cached = _load(tmp / "big.yaml", tmp / "cache")
    what = f"{size / 1e6:.0f} MB cassette, {interactions} interactions"

    def one(name: str, measured: dict[str, Any], how: str, **goal: Any) -> dict[str, Any]:
        unit = f"MiB peak, {how} ({what}; loaded in {measured['seconds']:.1f} s; baseline: resident once loaded)"
        return figure(f"big_cassette.{name}", measured["peak"], unit, baseline=measured["resident"],
                      goal=goal.get("goal", "reported"), met=goal.get("met", True))

    return [
        one("first_load", first, "first load (YAML parsed, cache entry written)", goal=f"ratio <= {GOAL:g}",
            met=first["peak"] <= GOAL * first["resident"]),
        one("cached_load", cached, "second load, from the cache"),
    ]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:
        load_main(sys.argv[2])
    else:
        standalone(run)
