"""A chunk longer than 64 KiB (``ssemock.edge.body.PIECE``) goes out in pieces, each once the client's
socket has room: still one HTTP chunk per recorded chunk on the wire, the same bytes, and no copy of
the whole chunk waiting in the server for a client that reads slowly or not at all."""

from __future__ import annotations

import logging
import socket
import struct
import time
from pathlib import Path

import pytest

from ssemock import Cassette, MockServer, Scenario
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.edge.body import PIECE

from .rawclient import raw_request

LONG = b"data: {" + b" " * (3 * 1024 * 1024) + b'"n": 1}\n\n'
CHUNKS = [b'data: {"n": 0}\n\n', LONG, b'data: {"n": 2}\n\n', LONG, b"data: [DONE]\n\n"]


def cassette(chunks: list[bytes], timed: bool) -> Cassette:
    recorded = [Chunk(0.01 * i if timed else 0.0, data) for i, data in enumerate(chunks)]
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=recorded,
                        start=0.0, end=End(recorded[-1].t, "clean"), timed=timed)
    return Cassette("long", [Interaction(Request(method="POST", path="/long"), response)])


KEEPALIVE = Scenario.from_dict({"steps": [{"keep-alive-every": {"seconds": 0.01}}]}, name="ka")
LENGTH = Scenario.from_dict({"steps": [{"framing": {"mode": "length"}}]}, name="length")
PACED = Scenario.from_dict({"steps": [{"fragment": {"mode": "offsets", "offsets": [5]}}]}, name="paced")


@pytest.mark.parametrize(("scale", "timed", "scenario"), [
    (0, False, None), (1, False, None), (1, True, None), (1, True, "ka"), (0, True, "paced"), (1, False, "length"),
], ids=["burst", "untimed", "timeline", "keep-alive", "paced-burst", "content-length"])
def test_a_long_chunk_is_still_one_http_chunk_with_the_same_bytes(scale: float, timed: bool,
                                                                   scenario: str | None) -> None:
    headers = {"X-SSEMock-Scenario": scenario} if scenario else {}
    with MockServer([cassette(CHUNKS, timed)], scenarios=[KEEPALIVE, LENGTH, PACED], timing_scale=scale) as server:
        r = raw_request(server.url, "POST", "/long", b"{}", headers, slow=0.001)
        entry = server.requests[-1]
    assert r.ending == "complete" and r.status == 200
    assert b"".join(c for c in r.chunks if not c.startswith(b":")) == b"".join(CHUNKS)
    sent = [c for c in r.chunks if not c.startswith(b":")]
    expected = [CHUNKS[0][:5], CHUNKS[0][5:], *CHUNKS[1:]] if scenario == "paced" else CHUNKS  # cut at byte 5
    if scenario == "length":
        assert r.header("content-length") == str(sum(map(len, CHUNKS)))
    else:  # one HTTP chunk per chunk of the plan
        assert sent == expected
    assert entry["outcome"] == "complete"
    assert (entry["chunks_sent"], entry["bytes_sent"]) == (len(expected), sum(map(len, CHUNKS)))


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize(("scale", "timed"), [(0, False), (1, True)], ids=["burst", "timeline"])
def test_a_client_that_reads_nothing_leaves_about_a_piece_of_a_long_chunk_queued(scale: float, timed: bool) -> None:
    """Before, the whole 48 MiB chunk was framed (a copy) and what the socket did not take was copied
    into the connection's buffer: about 48 MiB more resident while the client did not read."""
    huge = b"data: {" + b" " * (48 * 1024 * 1024) + b"}\n\n"
    with MockServer([cassette([huge], timed)], scenarios=[], timing_scale=scale) as server:
        host, port = server.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port.rstrip("/"))), timeout=10) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            before = _rss_kib()
            sock.sendall(b"POST /long HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            deadline = time.monotonic() + 1.0
            grown = 0
            while time.monotonic() < deadline:  # the server writes what it can, then waits
                grown = max(grown, _rss_kib() - before)
                time.sleep(0.05)
            got = 0
            while got < len(huge):  # then the client reads it all
                data = sock.recv(1 << 20)
                if not data:
                    break
                got += len(data)
    assert got >= len(huge)
    assert grown < 16 * PIECE // 1024 + 4096, f"{grown} KiB more resident while the client read nothing"


def test_a_client_that_resets_inside_a_long_chunk_on_the_timeline_is_client_gone_with_whole_chunks_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    """A long chunk due on the timeline is not all written when the client leaves (RST) inside it: the
    journal counts the chunk before it only (it counted the long chunk too once it was queued whole,
    though the client had read a fraction of it), and the server answers the next request."""
    chunks = [b'data: {"n": 0}\n\n', b"data: {" + b" " * (8 * 1024 * 1024) + b"}\n\n", b"data: [DONE]\n\n"]
    with MockServer([cassette(chunks, True)], scenarios=[], timing_scale=1) as server:
        host, port = server.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port.rstrip("/"))), timeout=10) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            sock.sendall(b"POST /long HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            assert sock.recv(65536)
            time.sleep(0.2)  # the server has filled the socket's buffers and waits for the client
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() sends RST
        deadline = time.monotonic() + 5.0
        while server.requests[-1].get("outcome") is None and time.monotonic() < deadline:
            time.sleep(0.02)
        entry = server.requests[-1]
        again = raw_request(server.url, "POST", "/long", b"{}")
    assert entry["outcome"] == "client_gone"
    assert (entry["chunks_sent"], entry["bytes_sent"]) == (1, len(chunks[0]))
    assert again.ending == "complete" and again.body == b"".join(chunks)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
