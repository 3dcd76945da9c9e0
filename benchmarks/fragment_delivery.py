"""Fragment delivery: do the boundaries that matter reach a client as reads of their own, and
how long does ``split-bytes`` take on the largest bundled recording?

A replay server runs in another process (``ssemock serve``, timing scale 1, seed 0). It sends
the largest bundled recording (``alibaba-qwen-chat-emoji-split``: 82,487 bytes, 276 events in
276 recorded chunks, emoji) with the ``split-bytes`` preset. Every byte is asked for; within
the default pacing budget (2 s at 2 ms a boundary) the step keeps the boundaries that break
readers (:mod:`ssemock.scenario.boundaries`: inside UTF-8 characters, between CR and LF,
around the blank line ending each event, inside each ``data:`` value) and the recorded ones,
all paced 2 ms apart (the recording keeps no timing). Two readers record where their reads end:

* aiohttp ``StreamReader.iter_any()`` (whatever is buffered: reads coalesce unless the
  fragments arrive apart);
* httpx ``Response.iter_raw()`` (one item per h11 ``Data`` event: h11 ends one at every HTTP
  chunk, so this reader sees each chunk even when they arrive together).

Figures:

* the share of the paced boundaries each reader sees as the end of a read; baseline 100 %,
  the physical bound (each boundary a read of its own); goal >= 99 %;
* seconds from the request to the last byte; baseline: the pacing the plan asks for (paced
  boundaries x pace), the lower bound at this pace, so the ratio is our overhead; goal: within
  the budget plus 1 s (the transfer, and sleeps that wake late on a loaded machine);
* how many boundaries are paced; baseline: the cuts ``split-bytes`` asks for (every byte,
  which would take ``cuts x pace`` = about 165 s); goal <= budget / pace;
* the same boundaries written back to back (``pace: 0``): the share aiohttp ``iter_any()``
  sees; goal <= 50 %: the reason why the cuts past the budget are not made at all (unpaced,
  most of them would reach an aiohttp reader merged anyway).

Run: ``python -m benchmarks.fragment_delivery [--quick]`` (one JSON line per figure).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import yaml

from benchmarks import figure
from benchmarks.common import median, standalone
from ssemock.bundled import bundled_scenarios
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.scenario import Plan
from ssemock.scenario.chunk_steps import DEFAULT_BUDGET, DEFAULT_PACE

CASSETTE = "alibaba-qwen-chat-emoji-split"
PATH = "/compatible-mode/v1/chat/completions"
PRESET = "split-bytes"
RUNS = 3
SHARE_GOAL = 99.0  # % of the paced boundaries, each reader
MERGED_GOAL = 50.0  # % of the boundaries an aiohttp reader sees at most when they are not paced
SLACK = 1.0  # seconds over the budget: the transfer, and sleeps that wake late on a loaded machine


def paced_boundaries() -> tuple[set[int], int]:
    """The body offsets where the server's chunks end (same seed and preset: same chunks), and the
    number of cuts ``split-bytes`` asks for before the budget."""
    response = collect_cassettes(None)[CASSETTE].interactions[0].response
    plan = collect_scenarios(None)[PRESET].apply(Plan.of(response))
    ends, pos = set(), 0
    for chunk in plan.response.chunks[:-1]:
        pos += len(chunk.data)
        ends.add(pos)
    return ends, len(response.body) - 1


def _ends(sizes: list[int]) -> set[int]:
    out, pos = set(), 0
    for size in sizes:
        pos += size
        out.add(pos)
    return out


async def _aiohttp_reads(url: str, headers: dict[str, str]) -> tuple[list[int], float]:
    """Read sizes, and seconds from sending the request to the last byte."""
    sizes = []
    async with aiohttp.ClientSession() as session:
        sent = time.perf_counter()
        async with session.post(url, data=b"{}", headers=headers) as r:
            async for data in r.content.iter_any():
                sizes.append(len(data))
        return sizes, time.perf_counter() - sent


def _httpx_reads(url: str, headers: dict[str, str]) -> list[int]:
    with httpx.Client(timeout=60) as client, client.stream("POST", url, content=b"{}", headers=headers) as r:
        return [len(data) for data in r.iter_raw()]


def _serve(*scenarios: Path) -> tuple[subprocess.Popen[str], str]:
    dirs = [arg for d in scenarios for arg in ("--scenarios", str(d))]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", *dirs],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("ssemock serving on "):
        proc.kill()
        raise RuntimeError(f"ssemock serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1]


def measure(runs: int = RUNS) -> dict[str, Any]:
    """Shares of the paced boundaries seen per reader (paced and back to back), seconds per stream."""
    expected, asked = paced_boundaries()
    unpaced = {"ssemock_scenario": 1, "name": "unpaced", "preserves": "events",
               "steps": [{"fragment": {"mode": "offsets", "offsets": sorted(expected), "pace": 0}}]}
    shares: dict[str, list[float]] = {"aiohttp": [], "httpx": [], "unpaced": []}
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "unpaced.yaml").write_text(yaml.safe_dump(unpaced))
        proc, base = _serve(bundled_scenarios(), Path(tmp))
        try:
            url = base + PATH
            for _ in range(runs):
                headers = {"X-SSEMock-Cassette": CASSETTE, "X-SSEMock-Scenario": PRESET}
                sizes, took = asyncio.run(_aiohttp_reads(url, headers))
                seconds.append(took)
                shares["aiohttp"].append(len(_ends(sizes) & expected) / len(expected) * 100)
                shares["httpx"].append(len(_ends(_httpx_reads(url, headers)) & expected) / len(expected) * 100)
                sizes, _ = asyncio.run(_aiohttp_reads(url, {**headers, "X-SSEMock-Scenario": "unpaced"}))
                shares["unpaced"].append(len(_ends(sizes) & expected) / len(expected) * 100)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return {"shares": {k: median(v) for k, v in shares.items()}, "seconds": median(seconds),
            "paced": len(expected), "asked": asked}


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The benchmark's figures: ``{"name", "value", "unit", "baseline", "ratio", "goal", "met"}``.

    Medians over 3 streams per reader (``quick``: one).
    """
    r = measure(1 if quick else RUNS)
    shares, paced = r["shares"], r["paced"]
    out = []
    for reader, label in (("aiohttp", "aiohttp iter_any()"), ("httpx", "httpx iter_raw()")):
        out.append(figure(f"paced boundaries seen by {label} ({PRESET}, {CASSETTE})", shares[reader], "%",
                          baseline=100.0, goal=f">= {SHARE_GOAL:g} %", met=shares[reader] >= SHARE_GOAL))
    limit = DEFAULT_BUDGET + SLACK
    out.append(figure(f"{PRESET} on {CASSETTE}, request to last byte", r["seconds"], "s",
                      baseline=paced * DEFAULT_PACE, goal=f"<= {limit:g} s (budget {DEFAULT_BUDGET:g} s + {SLACK:g})",
                      met=r["seconds"] <= limit))
    most = DEFAULT_BUDGET / DEFAULT_PACE
    out.append(figure(f"{PRESET} boundaries paced (baseline: cuts asked for)", paced, "boundaries",
                      baseline=r["asked"], goal=f"<= {most:g} (budget / pace)", met=paced <= most))
    out.append(figure("the same boundaries written back to back, seen by aiohttp iter_any()", shares["unpaced"], "%",
                      baseline=100.0, goal=f"<= {MERGED_GOAL:g} % (so cuts past the budget are not made)",
                      met=shares["unpaced"] <= MERGED_GOAL))
    return out


if __name__ == "__main__":
    standalone(run)
