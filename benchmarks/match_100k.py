"""``match_100k``: choosing the interaction that answers a request in a 100,000-interaction cassette.

The cassette holds 100,000 chat requests (``POST /v1/messages``), each recorded with its own
prompt and answering ``data: <its number>``; a second one holds 100,000 recordings of one
same prompt (a load test recorded as is), played in order ("first not yet played").
Baseline: the same server (ssemock's, in its own process) serving a 1-interaction cassette
of the same shape, measured in the same run, requests alternating between the two.
The client sends one request at a time on a kept-alive connection and reads the whole
answer; ``--quick`` uses 5,000 interactions,
100 requests and 20 misses (the unit says so).

* ``match_100k.hit``: median milliseconds per request answered from the large cassette,
  chosen by its body; goal <= 5 ms. Every answer is checked (the right interaction).
* ``match_100k.repeat``: the same for identical requests, each answered by the next
  recording not yet played; goal <= 5 ms.
* ``match_100k.miss``: a request matching no interaction: 404 with the closest recorded
  interactions, which compares at most ``ssemock.matching.REPORT_BUDGET`` of them;
  baseline: the same miss on the 1-interaction cassette. Goal: ratio <= 3 (a bounded cost,
  not one that grows with the cassette).
* ``match_100k.index``: seconds to index the large cassette, once (the server does it when
  it starts, so no request waits for it; measured here in this process with
  :func:`ssemock.matching.prepare_indexes`); baseline: one request matched without an
  index (every interaction compared: the cost of every request before indexes). Goal:
  ratio <= 1, indexing costs less than one request used to.
* ``match_100k.loop_held``: the longest a health check waited (ms) while the first request
  after the large cassette's interactions were replaced (as the pytest plugin hands a test's
  own cassette to a running server) was indexed and answered; baseline: the same while a
  request on the indexed cassette is answered. Goal: <= 100 ms (no request holds the event
  loop longer), met when the cassette is indexed in a thread.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

from ssemock import MockServer
from ssemock.cassette import Cassette, Chunk, End, Interaction, Request, Response
from ssemock.matching import DEFAULT_MATCH_ON, IndexCache, find_interaction, prepare_indexes

from . import figure
from .common import STREAM_PATH, ServerProcess, handed_over, median, standalone, together

GOAL_MS = 5.0
HEADERS = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


def prompt(i: int) -> bytes:
    """The body of request number ``i``: a chat request like an SDK's."""
    return json.dumps({
        "model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True,
        "messages": [{"role": "user", "content": f"Question {i}: how do I cross the street safely?"}],
    }).encode()


def cassette(count: int, *, same_prompt: bool = False) -> Cassette:
    """``count`` interactions; interaction ``i`` answers ``data: i``."""
    interactions = [
        Interaction(
            Request("POST", STREAM_PATH, headers=[("content-type", "application/json")],
                    body=prompt(0 if same_prompt else i)),
            Response(200, None, HEADERS, [Chunk(0.0, f"data: {i}\n\n".encode())], end=End(0.0, "clean"),
                     timed=False),
        )
        for i in range(count)
    ]
    return Cassette(f"chat-{count}{'-same' if same_prompt else ''}", interactions)


class Client:
    """One kept-alive connection; :meth:`post` returns (seconds, status, body)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)

    def post(self, body: bytes) -> tuple[float, int, bytes]:
        started = time.perf_counter()
        self.conn.request("POST", STREAM_PATH, body, {"content-type": "application/json"})
        response = self.conn.getresponse()
        data = response.read()
        return time.perf_counter() - started, response.status, data


@contextmanager
def servers(*cassettes: Cassette) -> Iterator[list[Client]]:
    """Each cassette served by ssemock in its own process (started side by side); a client for each."""
    with ExitStack() as stack:
        started = stack.enter_context(together(
            *(ServerProcess("ours", stack.enter_context(handed_over(one)), 0) for one in cassettes)))
        clients = [Client(server.url) for server in started]
        yield clients
        for client in clients:
            client.conn.close()


def expect(kind: str, got: tuple[float, int, bytes], status: int, body: bytes | None) -> float:
    if got[1] != status or (body is not None and got[2] != body):
        raise RuntimeError(f"match_100k {kind}: expected {status} {body!r}, got {got[1]} {got[2][:200]!r}")
    return got[0] * 1000


def index_times(large: Cassette) -> tuple[float, float]:
    """Seconds to index ``large``, and to match one request in it without an index."""
    started = time.perf_counter()
    prepare_indexes(IndexCache(), [large], DEFAULT_MATCH_ON)
    indexing = time.perf_counter() - started
    last = len(large.interactions) - 1
    started = time.perf_counter()
    if find_interaction([large], Request("POST", STREAM_PATH, body=prompt(last))).index != last:
        raise RuntimeError("match_100k: the scan chose the wrong interaction")
    return indexing, time.perf_counter() - started


def longest_wait(url: str, body: bytes, expected: bytes) -> float:
    """Milliseconds of the slowest health check sent while one request for ``body`` is answered."""
    answers: list[bytes] = []

    def ask() -> None:
        conn = http.client.HTTPConnection(urlsplit(url).netloc)
        conn.request("POST", STREAM_PATH, body, {"content-type": "application/json"})
        answers.append(conn.getresponse().read())
        conn.close()

    worker = threading.Thread(target=ask)
    probe = http.client.HTTPConnection(urlsplit(url).netloc)
    waits = []
    worker.start()
    while worker.is_alive():
        started = time.perf_counter()
        probe.request("GET", "/_ssemock/health")
        probe.getresponse().read()
        waits.append(time.perf_counter() - started)
    worker.join()
    probe.close()
    if answers != [expected]:
        raise RuntimeError(f"match_100k loop_held: expected {expected!r}, got {answers!r}")
    return max(waits, default=0.0) * 1000


def loop_held(large: Cassette) -> tuple[float, float]:
    """``(held, baseline)`` ms: see ``match_100k.loop_held`` in the module docstring."""
    last = len(large.interactions) - 1
    given = cassette(1)
    with MockServer([given], scenarios=[], timing_scale=0) as server:
        given.interactions = large.interactions  # not indexed yet: the next request indexes it
        held = longest_wait(server.url, prompt(last), f"data: {last}\n\n".encode())
        baseline = longest_wait(server.url, prompt(last - 1), f"data: {last - 1}\n\n".encode())
    return held, baseline


def run(quick: bool = False) -> list[dict[str, Any]]:
    count = 5_000 if quick else 100_000
    requests = 100 if quick else 1000
    misses = 20 if quick else 100
    rng = random.Random(11)
    large = cassette(count)
    with servers(large, cassette(count, same_prompt=True), cassette(1)) as (big, same, small):
        expect("first", big.post(prompt(count - 1)), 200, f"data: {count - 1}\n\n".encode())
        expect("first", small.post(prompt(0)), 200, b"data: 0\n\n")
        expect("first", same.post(prompt(0)), 200, b"data: 0\n\n")
        hit: list[float] = []
        repeat: list[float] = []
        base: list[float] = []
        for n in range(requests):
            i = rng.randrange(count)
            hit.append(expect("hit", big.post(prompt(i)), 200, f"data: {i}\n\n".encode()))
            repeat.append(expect("repeat", same.post(prompt(0)), 200, f"data: {n + 1}\n\n".encode()))
            base.append(expect("baseline", small.post(prompt(0)), 200, b"data: 0\n\n"))
        miss: list[float] = []
        miss_base: list[float] = []
        for _ in range(misses):
            miss.append(expect("miss", big.post(prompt(-1)), 404, None))
            miss_base.append(expect("miss", small.post(prompt(-1)), 404, None))
    indexing, scan = index_times(large)
    held, held_base = loop_held(large)
    hit_ms, repeat_ms, base_ms = median(hit), median(repeat), median(base)
    miss_ms, miss_base_ms = median(miss), median(miss_base)
    return [
        figure("match_100k.hit", hit_ms, "ms", baseline=base_ms, goal=f"<= {GOAL_MS:g} ms", met=hit_ms <= GOAL_MS),
        figure("match_100k.repeat", repeat_ms, "ms", baseline=base_ms, goal=f"<= {GOAL_MS:g} ms",
               met=repeat_ms <= GOAL_MS),
        figure("match_100k.miss", miss_ms, "ms", baseline=miss_base_ms, goal="ratio <= 3",
               met=miss_ms <= 3 * miss_base_ms),
        figure("match_100k.index", indexing, "s", baseline=scan, goal="ratio <= 1", met=indexing <= scan),
        figure("match_100k.loop_held", held, "ms", baseline=held_base, goal="<= 100 ms", met=held <= 100),
    ]


if __name__ == "__main__":
    standalone(run)
