"""Scenario plans are built on a few threads per server: the event loop goes on answering, and
a plan queued for a client that left is never built."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import httpx

from ssemock import MockServer, Scenario
from ssemock.offloop import PLAN_THREADS
from ssemock.scenario.base import Step

from .slowplans import SLOW, write_slow_scenarios

CHAT = "/_ssemock/c/openai-chat-finish-length-usage/v1/chat/completions"
HEALTH_BOUND = 5.0
"""Seconds a health check may take while 40 such requests arrive and are answered. Measured on a
2-core machine with both cores kept busy by two other processes (../shared/tools/under-load) and
other test runs (load average 6-11): worst of each run's probes 0.13-1.5 s, median of all 60 ms.
With a thread per request, the first health check took 22-24 s there."""
HEAVY = PLAN_THREADS * 20


def _send(url: str, scenario: str) -> socket.socket:
    """A client that sent its request and waits for the answer (closing the socket leaves)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(f"POST /_ssemock/s/{scenario}{CHAT} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                 "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".encode())
    return sock


def _wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def _busy_plan_threads() -> list[threading.Thread]:
    """The plan threads running work (an idle one waits for the next in ``OffLoop._serve``)."""
    frames = sys._current_frames()
    return [t for t in threading.enumerate() if t.name.startswith("ssemock-plan")
            and (frame := frames.get(t.ident or 0)) is not None and frame.f_code.co_name != "_serve"]


def _plan_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ssemock-plan")]


def test_health_is_answered_while_many_more_plans_than_threads_are_built(tmp_path: Path) -> None:
    write_slow_scenarios(tmp_path)
    waits: list[float] = []
    with MockServer(scenarios=[tmp_path], timing_scale=0) as server, httpx.Client(timeout=120) as client:
        client.get(server.url + "/_ssemock/health")  # the probes' connection is open before the others arrive
        heavy = [_send(server.url, SLOW) for _ in range(HEAVY)]
        try:
            started = time.monotonic()
            while time.monotonic() - started < 3:  # while the requests arrive, and after
                start = time.perf_counter()
                assert client.get(server.url + "/_ssemock/health").json()["status"] == "ok"
                waits.append(time.perf_counter() - start)
                time.sleep(0.05)
            assert len(server.requests) == HEAVY
            assert len(_busy_plan_threads()) == PLAN_THREADS  # the probes overlapped the builds throughout
            assert len(_plan_threads()) == PLAN_THREADS  # not one thread per request
        finally:
            for sock in heavy:
                sock.close()
        _wait_for(lambda: not _busy_plan_threads())  # each running build stops at its next step
        _wait_for(lambda: {entry["outcome"] for entry in server.requests} == {"client_gone"})
    assert max(waits) < HEALTH_BOUND, waits
    _wait_for(lambda: not _plan_threads(), 10)  # the threads end with the server


@dataclass
class _Gate(Step):
    """Notes that it runs, then waits for ``opened``."""

    name: ClassVar[str] = "gate"
    stage: ClassVar[str] = "chunk"
    edits_body: ClassVar[bool] = False
    label: str = ""
    ran: list[str] = field(default_factory=list)
    opened: threading.Event = field(default_factory=threading.Event)

    def apply(self, plan: object) -> None:
        self.ran.append(self.label)
        self.opened.wait(60)


def test_a_plan_queued_for_a_client_that_left_is_never_built() -> None:
    ran: list[str] = []
    opened = threading.Event()
    held = Scenario("held", [_Gate(label="held", ran=ran, opened=opened)])
    queued = Scenario("queued", [_Gate(label="queued", ran=ran, opened=opened)])
    with MockServer(scenarios=[held, queued], timing_scale=0) as server:
        busy = [_send(server.url, "held") for _ in range(PLAN_THREADS)]
        try:
            _wait_for(lambda: len(ran) == PLAN_THREADS)  # every thread is held
            waiting = _send(server.url, "queued")
            _wait_for(lambda: len(server.requests) == PLAN_THREADS + 1)  # its plan is queued
            waiting.close()
            _wait_for(lambda: server.requests[-1]["outcome"] == "client_gone")
            opened.set()
            for sock in busy:  # the held plans are built and sent
                answer = b""
                while not answer.endswith(b"0\r\n\r\n"):
                    answer += sock.recv(65536)
                assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        finally:
            opened.set()
            for sock in busy:
                sock.close()
        assert ran == ["held"] * PLAN_THREADS
        again = httpx.post(server.url + f"/_ssemock/s/queued{CHAT}", json={}, timeout=30)
        assert again.status_code == 200 and ran == ["held"] * PLAN_THREADS + ["queued"]
