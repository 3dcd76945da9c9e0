"""Fragment delivery: does each fragment of a split stream reach a client as its own read?

A replay server runs in another process (``ssemock serve``). It sends a real recording
(``openai-chat-finish-length-usage``, 1,124 bytes) split at every byte (``fragment: {mode:
bytes, size: 1}``), each byte one HTTP chunk, once paced at ``PACE`` seconds (5,000
fragments per second) and once unpaced (``pace: 0``, the baseline). Two readers record
where their reads end:

* aiohttp ``StreamReader.iter_any()`` (returns whatever is buffered: reads coalesce unless
  the fragments arrive apart);
* httpx ``Response.iter_raw()`` (one item per h11 ``Data`` event).

A fragment boundary is "observed" when a read ends exactly there. Figures: the share of
boundaries each reader observes, and the boundaries delivered per second (over the stream,
from the aiohttp reader's first read to its last). Goals (issue "Benchmarks"): httpx 100 %,
aiohttp >= 99 %, at >= 5,000 boundaries per second.

Run: ``python -m benchmarks.fragment_delivery [--quick]`` (one JSON line per figure).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from benchmarks import figure
from ssemock.mockserver import collect_cassettes
from ssemock.scenario import Plan, Scenario

CASSETTE = "openai-chat-finish-length-usage"
PATH = "/v1/chat/completions"
RUNS = 3
PACE = 0.0002  # seconds between fragments: 5,000 per second
STEPS = {"paced": PACE, "unpaced": 0.0}
SHARE_GOALS = {"aiohttp": 0.99, "httpx": 1.0}
RATE_GOAL = 5000.0  # boundaries per second


def _scenario(pace: float) -> dict[str, Any]:
    return {"ssemock_scenario": 1, "steps": [{"fragment": {"mode": "bytes", "size": 1, "pace": pace}}]}


def expected_boundaries(pace: float) -> set[int]:
    """Body offsets where the server's fragments end (same seed, same scenario: same fragments)."""
    response = collect_cassettes(None)[CASSETTE].interactions[0].response
    plan = Scenario.from_dict(_scenario(pace)).apply(Plan.of(response))
    ends, pos = set(), 0
    for chunk in plan.response.chunks[:-1]:
        pos += len(chunk.data)
        ends.add(pos)
    return ends


def _ends(sizes: list[int]) -> set[int]:
    out, pos = set(), 0
    for size in sizes:
        pos += size
        out.add(pos)
    return out


async def _aiohttp_reads(url: str, headers: dict[str, str]) -> tuple[list[int], float]:
    """Read sizes, and seconds from the first read to the last."""
    sizes, first, last = [], 0.0, 0.0
    async with aiohttp.ClientSession() as session, session.post(url, data=b"{}", headers=headers) as r:
        async for data in r.content.iter_any():
            last = time.perf_counter()
            first = first or last
            sizes.append(len(data))
    return sizes, last - first


def _httpx_reads(url: str, headers: dict[str, str]) -> list[int]:
    with httpx.Client(timeout=30) as client, client.stream("POST", url, content=b"{}", headers=headers) as r:
        return [len(data) for data in r.iter_raw()]


def _serve(scenarios: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--scenarios", str(scenarios)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("ssemock serving on "):
        proc.kill()
        raise RuntimeError(f"ssemock serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1]


def measure(runs: int = RUNS) -> dict[str, dict[str, float]]:
    """Shares of observed boundaries per reader and boundaries per second, paced and unpaced."""
    import yaml

    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, pace in STEPS.items():
            Path(tmp, f"{name}.yaml").write_text(yaml.safe_dump({**_scenario(pace), "name": name}))
        proc, base = _serve(Path(tmp))
        try:
            for name, pace in STEPS.items():
                expected = expected_boundaries(pace)
                headers = {"X-SSEMock-Cassette": CASSETTE, "X-SSEMock-Scenario": name}
                seen = {"aiohttp": 0.0, "httpx": 0.0}
                elapsed = 0.0
                for _ in range(runs):
                    sizes, streamed = asyncio.run(_aiohttp_reads(base + PATH, headers))
                    elapsed += streamed
                    seen["aiohttp"] += len(_ends(sizes) & expected) / len(expected) / runs
                    seen["httpx"] += len(_ends(_httpx_reads(base + PATH, headers)) & expected) / len(expected) / runs
                results[name] = {**seen, "rate": len(expected) * runs / max(elapsed, 1e-9),
                                 "boundaries": len(expected)}
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    return results


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The benchmark's figures: ``{"name", "value", "unit", "baseline", "ratio", "goal", "met"}``.

    ``baseline`` is the same figure without pacing (``pace: 0``); ``quick`` reads each stream once.
    """
    r = measure(1 if quick else RUNS)
    paced, unpaced = r["paced"], r["unpaced"]
    out = []
    for reader, label in (("aiohttp", "aiohttp iter_any()"), ("httpx", "httpx iter_raw()")):
        share, goal = paced[reader] * 100, SHARE_GOALS[reader] * 100
        out.append(figure(f"fragment boundaries seen by {label}", share, "%", baseline=unpaced[reader] * 100,
                          goal=f">= {goal:g} %", met=share >= goal - 1e-9))
    out.append(figure("fragment boundaries delivered per second (aiohttp reader)", paced["rate"], "boundaries/s",
                      baseline=unpaced["rate"], goal=f">= {RATE_GOAL:g} boundaries/s", met=paced["rate"] >= RATE_GOAL))
    return out


if __name__ == "__main__":
    for fig in run("--quick" in sys.argv[1:]):
        print(json.dumps(fig))
