"""An answer that leaves the request body unread (413) ends the connection at once, and still reaches a
client that goes on sending its body."""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import httpx
import pytest

from ssemock import MockServer, Recorder

from .upstream import Upstream

PROMPT = 5.0
"""Seconds within which the connection must end after a 413 (aiohttp reads what the client still sends
for 10 s before it closes: the connection used to end only then; measured now: a few milliseconds)."""


def _ask_huge(url: str) -> tuple[bytes, float]:
    """Announce a 40 MiB body, send none of it; the whole answer and the seconds until the server's EOF."""
    host, port = httpx.URL(url).host, httpx.URL(url).port
    assert port is not None
    with socket.create_connection((host, port), timeout=30) as sock:
        start = time.monotonic()
        sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {40 << 20}\r\n\r\n".encode())
        answer = b""
        while piece := sock.recv(65536):
            answer += piece
        return answer, time.monotonic() - start


def test_a_413_ends_the_connection_at_once(caplog: pytest.LogCaptureFixture) -> None:
    with MockServer() as server:
        answer, seconds = _ask_huge(server.url)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 ") and b"\r\nconnection: close" in head.lower()
        assert b'"ssemock_body_too_large"' in body and b'"limit": 33554432' in body
        assert seconds < PROMPT
        assert httpx.get(server.url + "/_ssemock/health").status_code == 200
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_client_sending_its_whole_oversized_body_still_reads_the_413() -> None:
    """The body is read and dropped after the answer (no TCP reset that could destroy the answer)."""
    with MockServer(max_request_body=1 << 20) as server:
        for _ in range(3):
            answer = httpx.post(server.url + "/v1/chat/completions", content=b"x" * (8 << 20), timeout=30)
            assert answer.status_code == 413 and answer.json()["error"]["limit"] == 1 << 20
            assert answer.headers["connection"] == "close"


def test_the_recorders_413_ends_the_connection_at_once(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="big") as rec:
        answer, seconds = _ask_huge(rec.url)
    assert answer.startswith(b"HTTP/1.1 413 ") and b"ssemock_body_too_large" in answer
    assert seconds < PROMPT
    assert up.received == []


def test_a_client_gone_before_its_413_leaves_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """A client that announces a body over the limit and resets at once: its 413 has nowhere to go; the
    server says nothing of it ("Error handling request" with a traceback was logged every time) and goes on."""
    caplog.set_level(logging.ERROR)
    with MockServer(timing_scale=0) as server:
        port = httpx.URL(server.url).port
        assert port is not None
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 41943040\r\n\r\n" + b"x" * 65536)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, (1).to_bytes(4, "little") + (0).to_bytes(4, "little"))
            sock.close()  # linger 0: a reset, not a FIN
        assert httpx.get(server.url + "/_ssemock/health", timeout=30).status_code == 200
        deadline = time.monotonic() + 10
        while sum(e["outcome"] == "refused" for e in server.requests) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert not [r for r in caplog.records if "Error handling request" in r.getMessage()]
