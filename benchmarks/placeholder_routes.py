"""``placeholder_routes``: requests against 100,000 recorded paths holding the filter's ``REDACTED``.

A recorded path segment holding ``REDACTED`` (a secret the recorder removed) matches any text in its
place, so such routes cannot be found by equality. The cassette, written as YAML in a temporary
directory and served by ``ssemock serve`` (the real server, its own process), holds 100,000
interactions ``POST /v1/files/REDACTED/content/N``, ``POST /botREDACTED/sendMessageN`` and
``POST /v1/projects/N/keys/REDACTED`` (a third each; interaction ``N`` answers ``data: N``); a
second cassette holds one interaction of the first shape. ``--quick`` uses 5,000 interactions and
fewer requests (the unit says so).

The hostile request is a ``POST`` whose path is nearly as long as aiohttp reads (8,188 of 8,190 bytes; a
longer one is refused with 400 before any matching), made of 4,094 one-letter segments, so that it
matches nothing: the worst shape for comparing it with each placeholder route (the path split at
every route), answered 404 with the closest interactions. A health check
(``GET /_ssemock/health``, one kept-alive connection) is sent again and again meanwhile:

* ``placeholder_routes.health_one``: the slowest health check, in ms, while one hostile request is
  answered; baseline: the same while the same request is sent to the one-interaction cassette
  (``X-SSEMock-Cassette``: no placeholder route to find, one interaction to report), in the same
  run: what a long path costs anyway (aiohttp's router, the 404 echoing it). Goal: <= 100 ms
  (11.3 s when the request was compared with each route).
* ``placeholder_routes.health_six``: the same while six hostile requests are sent at once (64 s
  then). Goal: <= 100 ms.
* ``placeholder_routes.hit``: median ms per request ``POST /v1/files/file-<random>/content/N``
  answered by interaction ``N`` of the large cassette (every answer checked); baseline: a request of
  the same shape answered by the one-interaction cassette (``X-SSEMock-Cassette``). Goal: ratio <= 3
  (184 ms when each request was compared with every route).

Run: ``python -m benchmarks.placeholder_routes [--quick]`` (one JSON line per figure).
"""

from __future__ import annotations

import http.client
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from . import figure
from .common import ROOT, median, standalone, stop_processes

GOAL_MS = 100.0
LONGEST_PATH = 8190
"""The longest request path aiohttp reads (its ``max_line_size``): a longer one is answered 400."""
HOSTILE_PATH = "/a" * (LONGEST_PATH // 2 - 1)
SHAPES = ("/v1/files/REDACTED/content/{n}", "/botREDACTED/sendMessage{n}", "/v1/projects/{n}/keys/REDACTED")


def recorded_path(n: int) -> str:
    """The recorded path of interaction ``n``: the shapes in turn."""
    return SHAPES[n % len(SHAPES)].format(n=n)


def write_cassette(directory: Path, name: str, count: int) -> Path:
    """A cassette of ``count`` interactions in ``directory`` (written as text: :func:`ssemock.cassette.save`
    takes longer than what is measured here); interaction ``n`` answers ``data: n``."""
    parts = [f"ssemock_cassette: 1\nname: {name}\ninteractions:\n"]
    for n in range(count):
        parts.append(
            f"- request:\n    method: POST\n    path: {recorded_path(n)}\n"
            "  response:\n    status: 200\n    headers:\n      content-type: text/event-stream\n"
            f'    timing: none\n    chunks:\n    - text: "data: {n}\\n\\n"\n'
        )
    path = directory / f"{name}.yaml"
    path.write_text("".join(parts))
    return path


class Serve:
    """``ssemock serve --cassettes DIRECTORY --port 0`` in its own process, until closed."""

    def __init__(self, directory: Path) -> None:
        command = [sys.executable, "-m", "ssemock", "serve", "--cassettes", str(directory), "--port", "0"]
        self.proc = subprocess.Popen(
            [*command, "--timing-scale", "0", "--quiet"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("ssemock serving on http://"):
            self.close()
            raise RuntimeError(f"placeholder_routes: ssemock serve did not start: {line!r}")
        self.netloc = line.split()[3].split("//", 1)[1]

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.netloc, timeout=300)

    def close(self) -> None:
        stop_processes([self.proc], timeout=30)


def post(conn: http.client.HTTPConnection, path: str, cassette: str | None = None) -> tuple[int, bytes]:
    headers = {"content-type": "application/json"}
    if cassette is not None:
        headers["x-ssemock-cassette"] = cassette
    conn.request("POST", path, b"{}", headers)
    response = conn.getresponse()
    return response.status, response.read()


def health_waits(server: Serve, hostile: int, cassette: str | None = None) -> list[float]:
    """Seconds each health check took while ``hostile`` hostile requests were answered (sent at once), by
    every cassette or by the one named (``X-SSEMock-Cassette``)."""
    statuses: list[int] = []

    def attack() -> None:
        conn = server.connect()
        statuses.append(post(conn, HOSTILE_PATH, cassette)[0])
        conn.close()

    workers = [threading.Thread(target=attack) for _ in range(hostile)]
    probe = server.connect()
    waits: list[float] = []
    for worker in workers:
        worker.start()
    while any(worker.is_alive() for worker in workers):
        started = time.perf_counter()
        probe.request("GET", "/_ssemock/health")
        answer = probe.getresponse()
        answer.read()
        waits.append(time.perf_counter() - started)
        if answer.status != 200:
            raise RuntimeError(f"placeholder_routes: health answered {answer.status}")
    for worker in workers:
        worker.join()
    probe.close()
    if statuses != [404] * hostile:
        raise RuntimeError(f"placeholder_routes: the hostile requests were answered {statuses}, expected 404")
    return waits


def hits(server: Serve, count: int, requests: int) -> tuple[list[float], list[float]]:
    """Seconds per request answered from the large cassette, and from the one-interaction one (interleaved)."""
    rng = random.Random(22)
    conn = server.connect()
    large: list[float] = []
    small: list[float] = []
    for _ in range(requests):
        n = rng.randrange(0, count, len(SHAPES))  # the first shape
        path = f"/v1/files/file-{rng.getrandbits(64):016x}/content/{n}"
        for cassette, times, expected in (("placeholders", large, n), ("one", small, 0)):
            started = time.perf_counter()
            got = post(conn, path if cassette == "placeholders" else "/v1/files/file-x/content/0", cassette)
            times.append(time.perf_counter() - started)
            if got != (200, f"data: {expected}\n\n".encode()):
                raise RuntimeError(f"placeholder_routes: {path} answered {got[0]} {got[1][:200]!r}")
    conn.close()
    return large, small


def warm_up(server: Serve) -> None:
    """A hit and a miss, not measured: the first request a server answers costs 60 ms more (what it
    prepares on first use), whatever it asks."""
    conn = server.connect()
    for path, status in (("/v1/files/file-x/content/0", 200), ("/v1/no/such/path", 404)):
        got = post(conn, path)[0]
        if got != status:
            raise RuntimeError(f"placeholder_routes: {path} answered {got}, expected {status}")
    conn.close()


def run(quick: bool = False) -> list[dict[str, Any]]:
    count = 5_000 if quick else 100_000
    requests = 50 if quick else 300
    rounds = 2 if quick else 3
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as tmp:
        write_cassette(Path(tmp), "placeholders", count)
        write_cassette(Path(tmp), "one", 1)
        server = Serve(Path(tmp))
        try:
            warm_up(server)
            one: list[float] = []
            six: list[float] = []
            one_base: list[float] = []
            six_base: list[float] = []
            for _ in range(rounds):  # interleaved: a busy machine slows each kind alike
                one += health_waits(server, 1)
                one_base += health_waits(server, 1, "one")
                six += health_waits(server, 6)
                six_base += health_waits(server, 6, "one")
            large, small = hits(server, count, requests)
        finally:
            server.close()
    one_ms, six_ms = max(one) * 1000, max(six) * 1000
    one_base_ms, six_base_ms = max(one_base) * 1000, max(six_base) * 1000
    hit_ms, hit_base_ms = median(large) * 1000, median(small) * 1000
    health = f"<= {GOAL_MS:g} ms"
    return [
        figure("placeholder_routes.health_one", one_ms, "ms", baseline=one_base_ms, goal=health, met=one_ms <= GOAL_MS),
        figure("placeholder_routes.health_six", six_ms, "ms", baseline=six_base_ms, goal=health, met=six_ms <= GOAL_MS),
        figure(
            "placeholder_routes.hit",
            hit_ms,
            "ms",
            baseline=hit_base_ms,
            goal="ratio <= 3",
            met=hit_ms <= 3 * hit_base_ms,
        ),
    ]


if __name__ == "__main__":
    standalone(run)
