"""Pacing (``ssemock.pacing``, ``ssemock.edge.reads``): every chunk boundary reaches a socket-level
reader as the end of a read, at timing scale 0 as at 1 — recorded boundaries and the ones a
fragmentation step made. Timing scale 0 takes out waiting, never boundaries.

The boundaries expected come from the recording's bytes (its recorded chunks; the continuation
bytes of its multi-byte UTF-8 characters, before each of which ``split-utf8`` cuts), never from
the server's plan. Readers: aiohttp ``iter_any()`` in this process and a plain socket's
``recv()`` loop, the server ``ssemock serve`` in another process or ``MockServer`` in a thread.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from benchmarks.fragment_delivery import socket_reads
from ssemock import Cassette, MockServer
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.edge.reads import client_reads
from ssemock.stubs import reply

from .processes import reap

QWEN = "alibaba-qwen-chat-emoji-split"
QWEN_PATH = "/compatible-mode/v1/chat/completions"


def recorded_boundaries(cassette: Cassette) -> set[int]:
    ends, pos = set(), 0
    for chunk in cassette.interactions[0].response.chunks[:-1]:
        pos += len(chunk.data)
        ends.add(pos)
    return ends


def utf8_cuts(body: bytes) -> set[int]:
    """Offsets before every continuation byte (0b10xxxxxx): inside every multi-byte character."""
    return {i for i, byte in enumerate(body) if byte & 0xC0 == 0x80}


async def _aiohttp_ends(url: str, headers: dict[str, str]) -> tuple[set[int], bytes]:
    ends, body = set(), bytearray()
    async with aiohttp.ClientSession() as session, session.post(url, data=b"{}", headers=headers) as r:
        async for data in r.content.iter_any():
            body += data
            ends.add(len(body))
    return ends, bytes(body)


def aiohttp_ends(url: str, headers: dict[str, str]) -> tuple[set[int], bytes]:
    return asyncio.run(_aiohttp_ends(url, headers))


@pytest.fixture(scope="module")
def serve_scale_0() -> Iterator[str]:
    """``ssemock serve --timing-scale 0`` with the bundled cassettes and presets, in its own process."""
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--timing-scale", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    try:
        assert line.startswith("ssemock serving on "), line
        yield line.rsplit(" ", 1)[1]
    finally:
        reap(proc)


@pytest.mark.parametrize("reader", ["aiohttp", "socket"])
def test_split_utf8_at_timing_scale_0_splits_every_character_for_a_socket_level_reader(
    serve_scale_0: str, bundled: dict[str, Cassette], reader: str
) -> None:
    body = bundled[QWEN].interactions[0].response.body
    cuts = utf8_cuts(body)
    assert len(cuts) == 26  # 13 emoji and other multi-byte characters in the recording
    headers = {"X-SSEMock-Cassette": QWEN, "X-SSEMock-Scenario": "split-utf8"}
    read = aiohttp_ends if reader == "aiohttp" else socket_reads
    ends, got = read(serve_scale_0 + QWEN_PATH, headers)
    assert got == body
    assert cuts <= ends, f"{len(cuts - ends)} of {len(cuts)} characters reached the reader whole"
    assert recorded_boundaries(bundled[QWEN]) <= ends


@pytest.mark.parametrize("reader", ["aiohttp", "socket"])
def test_timing_scale_0_keeps_every_recorded_chunk_a_read_of_its_own(
    serve_scale_0: str, bundled: dict[str, Cassette], reader: str
) -> None:
    expected = recorded_boundaries(bundled[QWEN])
    assert len(expected) == 275
    read = aiohttp_ends if reader == "aiohttp" else socket_reads
    ends, got = read(serve_scale_0 + QWEN_PATH, {"X-SSEMock-Cassette": QWEN})
    assert got == bundled[QWEN].interactions[0].response.body
    assert expected <= ends


def test_the_readme_mockserver_at_timing_scale_0_keeps_the_boundaries(bundled: dict[str, Cassette]) -> None:
    """``MockServer(timing_scale=0)`` (the README's first example), the reader in the test's thread."""
    body = bundled[QWEN].interactions[0].response.body
    with MockServer(timing_scale=0) as server:
        headers = {"X-SSEMock-Cassette": QWEN, "X-SSEMock-Scenario": "split-utf8"}
        ends, got = aiohttp_ends(server.url + QWEN_PATH, headers)
        entry = finished(server)
    assert got == body
    assert utf8_cuts(body) | recorded_boundaries(bundled[QWEN]) <= ends
    assert not [note for note in entry["injected"] if note.startswith("pacing")]  # nothing to report: all kept


def finished(server: MockServer) -> dict[str, Any]:
    """The last journal entry once its outcome is written (the client may see the end first)."""
    for _ in range(400):
        entry = server.requests[-1]
        if entry.get("outcome") is not None:
            return dict(entry)
        time.sleep(0.025)
    raise AssertionError(f"the answer did not finish: {server.requests[-1]}")


def _slow_reader(url: str, path: str, wait: float) -> bytes:
    """Send the request, wait ``wait`` seconds before reading, then read to the end."""
    host, port = url.rsplit("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{{}}".encode())
        time.sleep(wait)
        data = bytearray()
        while piece := sock.recv(1 << 16):
            data += piece
    return bytes(data)


def test_a_client_that_does_not_read_spends_the_budget_and_the_journal_says_where(tmp_path: Path) -> None:
    chunks = [Chunk(0.0, b"data: %d\n\n" % i) for i in range(200)]
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=chunks,
                        start=0.0, end=End(0.0, "clean"))
    cassette = Cassette("many", [Interaction(Request(method="POST", path="/many"), response)])
    scenario = tmp_path / "thin.yaml"
    scenario.write_text("ssemock_scenario: 1\nname: thin\npreserves: events\n"
                        "steps:\n- fragment: {mode: offsets, offsets: [3], budget: 0.3}\n")
    with MockServer([cassette], scenarios=[scenario], scenario="thin", timing_scale=0) as server:
        wire = _slow_reader(server.url, "/many", 1.0)
        entry = finished(server)
    assert wire.count(b"data: ") == 200 and b"data: 199\n\n" in wire
    [note] = [n for n in entry["injected"] if n.startswith("pacing")]
    # 0.1 s a boundary for a client that does not read: the 0.3 s budget is gone after three (chunks 1 to 3)
    assert "the client had not read after 0.1 s" in note
    assert "the pacing budget of 0.3 s was spent: the last 196 of 200 chunks went back to back" in note
    assert entry["outcome"] == "complete"


def test_the_client_s_unread_bytes_are_seen_on_this_machine() -> None:
    """``client_reads``: what a local client has not read, from the server's socket (Linux sock_diag)."""
    if not sys.platform.startswith("linux"):
        pytest.fail("ssemock's pacing reads the client's queue through Linux sock_diag")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
        with client, server:
            reads = client_reads(server)
            assert reads is not None
            assert reads.unread() == 0
            server.sendall(b"x" * 1000)
            deadline = time.monotonic() + 5
            while reads.unread() != 1000 and time.monotonic() < deadline:
                time.sleep(0.001)
            assert reads.unread() == 1000
            assert len(client.recv(600)) == 600
            assert reads.unread() == 400
            client.recv(600)
            assert reads.unread() == 0
        assert reads.unread() is None  # the connection is gone


def test_a_stub_answer_is_paced_under_a_fragmentation_step() -> None:
    """A stub's synthesized events are paced only under a fragmentation step; then every character splits."""
    with MockServer(cassettes=[], stubs=[reply("héllo wörld 😀 ça va ? " * 4, times=None)], timing_scale=0) as server:
        headers = {"X-SSEMock-Scenario": "split-utf8"}
        url = server.url + "/v1/chat/completions"
        ends, body = asyncio.run(_post_json(url, headers))
        entry = finished(server)
    cuts = utf8_cuts(body)
    assert len(cuts) >= 4 * 6  # é ö 😀(3) ç: 6 continuation bytes a repeat, in the answer's JSON text
    assert cuts <= ends
    assert entry["stub"] is not None and not [n for n in entry["injected"] if n.startswith("pacing")]


async def _post_json(url: str, headers: dict[str, str]) -> tuple[set[int], bytes]:
    request = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ends, body = set(), bytearray()
    async with aiohttp.ClientSession() as session, session.post(url, json=request, headers=headers) as r:
        assert r.status == 200
        async for data in r.content.iter_any():
            body += data
            ends.add(len(body))
    return ends, bytes(body)


def test_a_recording_without_timing_keeps_its_boundaries_at_timing_scale_1() -> None:
    """Chunks recorded with no timing (VCR.py imports) have no gap to keep them apart: paced at scale 1 too."""
    chunks = [Chunk(0.0, b'data: {"n": %d}\n\n' % i) for i in range(30)]
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=chunks,
                        start=0.0, end=End(0.0, "clean"), timed=False)
    cassette = Cassette("untimed", [Interaction(Request(method="POST", path="/untimed"), response)])
    with MockServer([cassette], scenarios=[], timing_scale=1) as server:
        ends, body = aiohttp_ends(server.url + "/untimed", {})
    assert body == b"".join(c.data for c in chunks)
    assert recorded_boundaries(cassette) <= ends
