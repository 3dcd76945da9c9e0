"""The timeline (``ssemock.timeline``): one loop timer for every deadline of a server's timed writes.

What it promises: sleepers are called in deadline order (equal deadlines in the order they were
set), never before asyncio would wake an ``asyncio.sleep`` to the same deadline; one firing calls each
sleeper waiting at most once, so that the loop serves its I/O between; sleepers that give up leave
nothing behind. Then, through the replay server: timed chunks to a client that reads slowly all
arrive, in order, one HTTP chunk each; clients that leave during long recorded gaps leave the
server's timeline empty.
"""

from __future__ import annotations

import asyncio
import gc
import random
import socket
import time

import pytest

from ssemock import Cassette, MockServer
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.timeline import Timeline

from .rawclient import raw_request

RESOLUTION = time.get_clock_info("monotonic").resolution
MANY = 300


class Noting:
    """A sleeper that notes when it was called."""

    def __init__(self, name: object, calls: list[tuple[object, float]], loop: asyncio.AbstractEventLoop) -> None:
        self.name, self.calls, self.loop = name, calls, loop
        self.gone = False

    def due(self) -> None:
        self.calls.append((self.name, self.loop.time()))


def test_sleepers_are_called_in_deadline_order_ties_in_setting_order_and_never_early() -> None:
    async def run() -> tuple[list[tuple[object, float]], dict[object, float]]:
        loop = asyncio.get_running_loop()
        timeline, calls, deadlines = Timeline(), [], {}
        rng = random.Random(5)
        start = loop.time()
        for i in range(300):
            deadline = start + rng.choice([0.01, 0.02, 0.02, 0.035, rng.uniform(0, 0.06)])
            deadlines[i] = deadline
            timeline.at(loop, deadline, Noting(i, calls, loop))
        while len(calls) < 300:
            await asyncio.sleep(0.01)
        assert len(timeline) == 0
        return calls, deadlines

    calls, deadlines = asyncio.run(run())
    expected = sorted(deadlines, key=lambda i: (deadlines[i], i))
    assert [name for name, _ in calls] == expected
    assert all(t > deadlines[name] - RESOLUTION for name, t in calls)


def test_one_firing_calls_every_sleeper_due_once_then_the_loop_runs_its_callbacks() -> None:
    async def run() -> tuple[list[int], int, int]:
        loop = asyncio.get_running_loop()
        timeline: Timeline = Timeline()
        calls: list[tuple[object, float]] = []
        seen_by_callback: list[int] = []
        past = loop.time() - 1
        chain = _Chain(timeline, loop, past, 50)  # a stream behind schedule: its next deadline has passed too
        # the first sleeper schedules a callback: it runs once the first firing is over
        timeline.at(loop, past, _Call(lambda: loop.call_soon(
            lambda: seen_by_callback.append(len(calls) + chain.calls))))
        timeline.at(loop, past, chain)
        for i in range(MANY):
            timeline.at(loop, past, Noting(i, calls, loop))
        while len(calls) < MANY or chain.calls < 50:
            await asyncio.sleep(0.001)
        return seen_by_callback, len(calls), chain.calls

    seen, waiting, chained = asyncio.run(run())
    assert (waiting, chained) == (MANY, 50)
    # the first firing called every sleeper waiting when it fired, the chain once (not the one counting)
    assert seen[0] == MANY + 1


class _Chain:
    """A sleeper that sets its next deadline (passed already) until it has been called ``times`` times."""

    def __init__(self, timeline: Timeline, loop: asyncio.AbstractEventLoop, deadline: float, times: int) -> None:
        self.timeline, self.loop, self.deadline, self.times = timeline, loop, deadline, times
        self.calls = 0
        self.gone = False

    def due(self) -> None:
        self.calls += 1
        if self.calls < self.times:
            self.timeline.at(self.loop, self.deadline, self)


class _Call:
    def __init__(self, fn: object) -> None:
        self.fn = fn
        self.gone = False

    def due(self) -> None:
        self.fn()  # type: ignore[operator]


def test_sleeps_given_up_leave_nothing_in_the_heap() -> None:
    async def run() -> list[int]:
        loop = asyncio.get_running_loop()
        timeline = Timeline()
        sizes = []
        tasks = [loop.create_task(timeline.sleep_until(loop, loop.time() + 3600 + i)) for i in range(500)]
        await asyncio.sleep(0.01)
        sizes.append(len(timeline))
        for task in tasks[:300]:
            task.cancel()
        await asyncio.sleep(0.01)
        sizes.append(len(timeline))
        for task in tasks[300:]:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        sizes.append(len(timeline))
        return sizes

    pending, after_300, after_all = asyncio.run(run())
    assert pending == 500
    assert after_300 - 200 <= max(64, 200)  # the given-up ones never outnumber the live ones (beyond 64)
    assert after_all == 0


def _timed(chunks: list[bytes], times: list[float], path: str = "/timed") -> Cassette:
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")],
                        chunks=[Chunk(t, data) for t, data in zip(times, chunks, strict=True)],
                        start=0.0, end=End(times[-1], "clean"), timed=True)
    return Cassette("timed", [Interaction(Request(method="POST", path=path), response)])


def test_a_slow_reader_gets_every_timed_chunk_whole_and_in_order() -> None:
    # 200 chunks of 64 KiB due within 0.2 s: the client's socket fills up, aiohttp pauses writing,
    # and the stream waits for the client, then goes on.
    chunks = [b"data: %d %s\n\n" % (i, b"x" * 65_536) for i in range(200)]
    with MockServer([_timed(chunks, [i * 0.001 for i in range(200)])], scenarios=[], timing_scale=1) as server:
        r = raw_request(server.url, "POST", "/timed", b"{}", slow=0.002)
        entry = server.requests[-1]
    assert r.ending == "complete"
    assert r.chunks == chunks
    assert (entry["chunks_sent"], entry["bytes_sent"], entry["outcome"]) == (200, sum(map(len, chunks)), "complete")


def _live_timelines() -> list[Timeline]:
    return [o for o in gc.get_objects() if isinstance(o, Timeline)]


def _waiting_clients(server: MockServer, count: int, until: bytes) -> list[socket.socket]:
    """``count`` clients of ``POST /timed``, each once it has read ``until`` of the answer."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection((server.host, server.port))
        sock.sendall(b"POST /timed HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        socks.append(sock)
    for sock in socks:
        sock.settimeout(10)
        got = b""
        while until not in got:
            got += sock.recv(4096)
    return socks


@pytest.mark.parametrize("leave_after", [0, 1], ids=["before-the-first-chunk", "after-the-first-chunk"])
def test_clients_leaving_during_long_recorded_gaps_leave_the_timeline_empty(leave_after: int) -> None:
    cassette = _timed([b"data: 1\n\n", b"data: 2\n\n"], [0.05 if leave_after else 3600.0, 3600.0])
    with MockServer([cassette], scenarios=[], timing_scale=1) as server:
        for sock in _waiting_clients(server, 50, b"data: 1" if leave_after else b"\r\n\r\n"):
            sock.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(e["outcome"] is None for e in server.requests):
            time.sleep(0.02)
        outcomes = [e["outcome"] for e in server.requests]
        gc.collect()
        sizes = [len(t) for t in _live_timelines()]
    assert outcomes == ["client_gone"] * 50
    assert sizes and not any(sizes)


def test_the_streams_of_a_server_wait_on_its_one_timeline() -> None:
    cassette = _timed([b"data: 1\n\n", b"data: 2\n\n"], [0.0, 3600.0])
    with MockServer([cassette], scenarios=[], timing_scale=1) as server:
        socks = _waiting_clients(server, 30, b"data: 1")  # each has its first chunk: its second goes in the timeline
        # (right after the first is written, in the server's thread, which this one may hold up for a moment)
        deadline = time.monotonic() + 10
        while True:
            gc.collect()
            sizes = sorted(len(t) for t in _live_timelines())
            if sizes[-1] >= 30 or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        for sock in socks:
            sock.close()
    assert sizes[-1] == 30
