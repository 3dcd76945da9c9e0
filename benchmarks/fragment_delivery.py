"""Fragment delivery: do the boundaries that matter reach a client as reads of their own, at
timing scale 0 and 1, and how long does ``split-bytes`` take on the largest bundled recording?

A replay server runs in another process (``ssemock serve --timing-scale S``, seed 0), once at
scale 0 and once at scale 1. It sends the largest bundled recording
(``alibaba-qwen-chat-emoji-split``: 82,487 bytes, 276 events in 276 recorded chunks, emoji) with
the ``split-bytes`` preset. Every byte is asked for; within the default pacing budget (2 s at
2 ms a boundary) the step keeps the boundaries that break readers
(:mod:`ssemock.scenario.boundaries`: inside UTF-8 characters, between CR and LF, around the
blank line ending each event, inside each ``data:`` value) and the recorded ones; the server
paces them (:mod:`ssemock.pacing`: each write waits until the client has read the one before).
Three readers record where their reads end:

* aiohttp ``StreamReader.iter_any()`` (whatever is buffered: reads coalesce unless the
  fragments arrive apart);
* a plain socket, ``recv(65536)`` in a loop, the HTTP chunk framing taken off afterwards (what
  ``requests``, Go and hand-written readers see);
* httpx ``Response.iter_raw()`` (one item per h11 ``Data`` event: h11 ends one at every HTTP
  chunk, so this reader sees each chunk even when they arrive together).

Figures:

* the share of the paced boundaries each reader sees as the end of a read, at scale 0 and 1;
  baseline 100 %, the physical bound (each boundary a read of its own); goal >= 99 %;
* the same for the recorded boundaries alone at scale 0 (no scenario: the 275 boundaries of the
  recording, which timing scale 0 must keep too), aiohttp and the plain socket;
* seconds from the request to the last byte at scale 0 and 1; baseline: the pacing the plan asks
  for where the client's reads cannot be seen (paced boundaries x pace); goal: within the budget
  plus 1 s (the transfer, and sleeps that wake late on a loaded machine);
* how many boundaries are paced; baseline: the cuts ``split-bytes`` asks for (every byte,
  which would take ``cuts x pace`` = about 165 s); goal <= budget / pace;
* the same boundaries written back to back (``pace: 0``, scale 1): the share aiohttp
  ``iter_any()`` sees; goal <= 50 %: the reason why boundaries are paced at all and why the
  cuts past the budget are not made (unpaced, most of them reach an aiohttp reader merged).

Run: ``python -m benchmarks.fragment_delivery [--quick]`` (one JSON line per figure).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx
import yaml

from benchmarks import figure
from benchmarks.common import median, standalone
from ssemock.bundled import bundled_scenarios
from ssemock.limits import DEFAULT_BUDGET, DEFAULT_PACE
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.scenario import Plan

CASSETTE = "alibaba-qwen-chat-emoji-split"
PATH = "/compatible-mode/v1/chat/completions"
PRESET = "split-bytes"
RUNS = 3
SCALES = (0.0, 1.0)
SHARE_GOAL = 99.0  # % of the paced boundaries, each reader
MERGED_GOAL = 50.0  # % of the boundaries an aiohttp reader sees at most when they are not paced
SLACK = 1.0  # seconds over the budget: the transfer, and sleeps that wake late on a loaded machine


def _chunk_ends(chunks: list[Any]) -> set[int]:
    ends, pos = set(), 0
    for chunk in chunks[:-1]:
        pos += len(chunk.data)
        ends.add(pos)
    return ends


def paced_boundaries() -> tuple[set[int], set[int], int]:
    """The body offsets where the server's chunks end under the preset (same seed: same chunks),
    where the recorded chunks end, and the number of cuts ``split-bytes`` asks for before the budget."""
    response = collect_cassettes(None)[CASSETTE].interactions[0].response
    plan = collect_scenarios(None)[PRESET].apply(Plan.of(response))
    return _chunk_ends(plan.response.chunks), _chunk_ends(response.chunks), len(response.body) - 1


def _ends(sizes: list[int]) -> set[int]:
    out, pos = set(), 0
    for size in sizes:
        pos += size
        out.add(pos)
    return out


async def _aiohttp_reads(url: str, headers: dict[str, str]) -> tuple[set[int], float]:
    """Body offsets where a read ended, and seconds from sending the request to the last byte."""
    sizes = []
    async with aiohttp.ClientSession() as session:
        sent = time.perf_counter()
        async with session.post(url, data=b"{}", headers=headers) as r:
            async for data in r.content.iter_any():
                sizes.append(len(data))
        return _ends(sizes), time.perf_counter() - sent


def _httpx_reads(url: str, headers: dict[str, str]) -> set[int]:
    with httpx.Client(timeout=60) as client, client.stream("POST", url, content=b"{}", headers=headers) as r:
        return _ends([len(data) for data in r.iter_raw()])


def socket_reads(url: str, headers: dict[str, str]) -> tuple[set[int], bytes]:
    """Read a chunked answer from a plain socket, ``recv(65536)`` in a loop until the server closes.

    Returns the body offsets where a ``recv`` ended (a read that ends in the framing between two
    HTTP chunks ends at the boundary of their bodies) and the body.
    """
    parts = urlsplit(url)
    lines = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}", "Content-Length: 2", "Connection: close",
             *(f"{k}: {v}" for k, v in headers.items())]
    wire, ends = bytearray(), []
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n{}").encode())
        while data := sock.recv(65536):
            wire += data
            ends.append(len(wire))
    return _unframe(bytes(wire), ends)


def _unframe(wire: bytes, ends: list[int]) -> tuple[set[int], bytes]:
    """The body of a chunked HTTP answer, and the wire offsets ``ends`` as body offsets."""
    pos = wire.index(b"\r\n\r\n") + 4
    spans = []  # (wire start of the data, its end, body offset of its start)
    body = bytearray()
    while True:
        line_end = wire.index(b"\r\n", pos)
        size = int(wire[pos:line_end].split(b";")[0], 16)
        if size == 0:
            break
        start = line_end + 2
        spans.append((start, start + size, len(body)))
        body += wire[start:start + size]
        pos = start + size + 2
    seen = set()
    for end in ends:
        for start, stop, offset in spans:
            if end <= stop:
                seen.add(offset + max(end - start, 0))
                break
        else:
            seen.add(len(body))
    return seen, bytes(body)


def _serve(scale: float, *scenarios: Path) -> tuple[subprocess.Popen[str], str]:
    dirs = [arg for d in scenarios for arg in ("--scenarios", str(d))]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--timing-scale", f"{scale:g}", *dirs],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("ssemock serving on "):
        proc.kill()
        raise RuntimeError(f"ssemock serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1]


def _share(seen: set[int], expected: set[int]) -> float:
    return len(seen & expected) / len(expected) * 100


def _measure_scale(scale: float, runs: int, scenarios: Path, expected: set[int], recorded: set[int]) -> dict[str, Any]:
    shares: dict[str, list[float]] = {k: [] for k in ("aiohttp", "socket", "httpx", "recorded-aiohttp",
                                                       "recorded-socket", "unpaced")}
    seconds: list[float] = []
    proc, base = _serve(scale, bundled_scenarios(), scenarios)
    try:
        url = base + PATH
        headers = {"X-SSEMock-Cassette": CASSETTE, "X-SSEMock-Scenario": PRESET}
        plain = {"X-SSEMock-Cassette": CASSETTE}
        for _ in range(runs):
            seen, took = asyncio.run(_aiohttp_reads(url, headers))
            seconds.append(took)
            shares["aiohttp"].append(_share(seen, expected))
            shares["socket"].append(_share(socket_reads(url, headers)[0], expected))
            shares["httpx"].append(_share(_httpx_reads(url, headers), expected))
            if scale == 0:
                shares["recorded-aiohttp"].append(_share(asyncio.run(_aiohttp_reads(url, plain))[0], recorded))
                shares["recorded-socket"].append(_share(socket_reads(url, plain)[0], recorded))
            else:
                unpaced = {**headers, "X-SSEMock-Scenario": "unpaced"}
                shares["unpaced"].append(_share(asyncio.run(_aiohttp_reads(url, unpaced))[0], expected))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {"shares": {k: median(v) for k, v in shares.items() if v}, "seconds": median(seconds)}


def measure(runs: int = RUNS) -> dict[str, Any]:
    """Per timing scale: shares of the paced boundaries seen per reader, seconds per stream."""
    expected, recorded, asked = paced_boundaries()
    unpaced = {"ssemock_scenario": 1, "name": "unpaced", "preserves": "events",
               "steps": [{"fragment": {"mode": "offsets", "offsets": sorted(expected), "pace": 0}}]}
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "unpaced.yaml").write_text(yaml.safe_dump(unpaced))
        scales = {scale: _measure_scale(scale, runs, Path(tmp), expected, recorded) for scale in SCALES}
    return {"scales": scales, "paced": len(expected), "recorded": len(recorded), "asked": asked}


READERS = (("aiohttp", "aiohttp iter_any()"), ("socket", "a plain socket's recv()"), ("httpx", "httpx iter_raw()"))


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The benchmark's figures: ``{"name", "value", "unit", "baseline", "ratio", "goal", "met"}``.

    Medians over 3 streams per reader and scale (``quick``: one).
    """
    r = measure(1 if quick else RUNS)
    paced, out = r["paced"], []
    limit = DEFAULT_BUDGET + SLACK
    for scale, m in r["scales"].items():
        shares = m["shares"]
        for reader, label in READERS:
            out.append(figure(f"paced boundaries seen by {label} at timing scale {scale:g} ({PRESET}, {CASSETTE})",
                              shares[reader], "%", baseline=100.0, goal=f">= {SHARE_GOAL:g} %",
                              met=shares[reader] >= SHARE_GOAL))
        for reader, label in READERS[:2]:
            if f"recorded-{reader}" in shares:
                value = shares[f"recorded-{reader}"]
                out.append(figure(f"recorded boundaries ({r['recorded']}, no scenario) seen by {label} at timing "
                                  f"scale {scale:g}", value, "%", baseline=100.0, goal=f">= {SHARE_GOAL:g} %",
                                  met=value >= SHARE_GOAL))
        out.append(figure(f"{PRESET} on {CASSETTE} at timing scale {scale:g}, request to last byte", m["seconds"],
                          "s", baseline=paced * DEFAULT_PACE,
                          goal=f"<= {limit:g} s (budget {DEFAULT_BUDGET:g} s + {SLACK:g})", met=m["seconds"] <= limit))
        if "unpaced" in shares:
            out.append(figure(f"the same boundaries written back to back, seen by aiohttp iter_any() at timing scale "
                              f"{scale:g}", shares["unpaced"], "%", baseline=100.0,
                              goal=f"<= {MERGED_GOAL:g} % (why boundaries are paced)",
                              met=shares["unpaced"] <= MERGED_GOAL))
    most = DEFAULT_BUDGET / DEFAULT_PACE
    out.append(figure(f"{PRESET} boundaries paced (baseline: cuts asked for)", paced, "boundaries",
                      baseline=r["asked"], goal=f"<= {most:g} (budget / pace)", met=paced <= most))
    return out


if __name__ == "__main__":
    standalone(run)
