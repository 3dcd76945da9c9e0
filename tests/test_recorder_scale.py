"""The recorder under production load: 50 concurrent recordings into one cassette, a large fast
stream with bounded memory, and a recorder process killed (SIGKILL) or stopped (SIGTERM) mid-stream
or right after its clients got their answers.

Memory bound: recording a 50 MB stream raises the recorder process's peak RSS by less
than 30 MB (chunks are spooled to an unnamed temporary file past 1 MiB and the
cassette is written chunk by chunk), so a longer or larger stream does not grow it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from ssemock.cassette import load
from ssemock.recorder import Recorder

from .rawclient import raw_json
from .upstream import Upstream, big_block

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024


async def test_50_concurrent_recordings_into_one_cassette_lose_nothing(tmp_path: Path) -> None:
    with Upstream() as up:
        async with Recorder(up.url, tmp_path, cassette="crowd", mode="all") as rec, \
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

            async def one(i: int) -> bytes:
                async with session.post(f"{rec.url}/stream/chat", json={"request": i}) as resp:
                    return await resp.read()

            bodies = await asyncio.gather(*(one(i) for i in range(50)))
        cassette = load(tmp_path / "crowd.yaml")
    assert len(cassette.interactions) == 50
    assert sorted(i.request.json()["request"] for i in cassette.interactions) == list(range(50))
    assert all(i.response.body == bodies[0] for i in cassette.interactions)
    # 5 upstream writes 40 ms apart; with both cores busy two may arrive in one read (never lost).
    assert all(1 <= len(i.response.chunks) <= 5 and i.response.end.how == "clean" for i in cassette.interactions)


class RecorderProcess:
    """``python -m ssemock record`` in a subprocess; ``url`` from its first stdout line."""

    def __init__(self, target: str, cassettes: Path, *extra: str, shown: str | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ssemock", "record", "--target", target, "--cassettes", str(cassettes),
             "--port", "0", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert self.proc.stdout is not None
        self.first_line = self.proc.stdout.readline().strip()
        prefix, _, rest = self.first_line.partition(" -> ")
        assert rest == (shown or target), self.first_line
        assert prefix.startswith("ssemock recording on http://127.0.0.1:"), self.first_line
        self.url = prefix.removeprefix("ssemock recording on ")
        # Read what it says as it says it: a pipe left unread fills (64 KiB) and holds the recorder up.
        self._err: list[str] = []
        self._drain = threading.Thread(target=self._read_err, daemon=True)
        self._drain.start()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self._err.extend(iter(self.proc.stderr.readline, ""))

    def peak_rss(self) -> int:
        """Peak resident set size in bytes (VmHWM)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM")

    def finish(self, sig: int) -> tuple[int, str]:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=30)
        self._drain.join(10)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode, "".join(self._err)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as up:
        yield up


def stream_in_background(url: str, got: list[bytes]) -> threading.Thread:
    """Read a slow stream (one event per 0.1 s, 10 s long) in a thread, appending each piece to ``got``."""

    def run() -> None:
        async def read() -> None:
            async with aiohttp.ClientSession() as session, session.post(
                f"{url}/slow?interval=0.1&count=100", json={"slow": True}
            ) as resp:
                async for piece in resp.content.iter_any():
                    got.append(piece)

        with contextlib.suppress(aiohttp.ClientError):  # the recorder went away mid-stream, as intended
            asyncio.run(read())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_for(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_sigkill_mid_stream_leaves_the_previous_complete_cassette(upstream: Upstream, tmp_path: Path) -> None:
    rec = RecorderProcess(upstream.url, tmp_path, "--cassette", "k")
    try:
        done = raw_json(rec.url, "POST", "/stream/chat", {"n": 1})
        assert done.ending == "complete"
        wait_for(lambda: (tmp_path / "k.yaml").exists())
        got: list[bytes] = []
        thread = stream_in_background(rec.url, got)
        wait_for(lambda: len(got) >= 3)
    finally:
        rec.proc.kill()
        rec.proc.communicate(timeout=10)
    thread.join(10)
    cassette = load(tmp_path / "k.yaml")
    assert len(cassette.interactions) == 1 and cassette.interactions[0].response.body == done.body
    assert [p.name for p in tmp_path.iterdir()] == ["k.yaml"]  # no temporary file left behind


def test_sigkill_right_after_the_clients_got_their_answers_loses_none_of_them(
    upstream: Upstream, tmp_path: Path
) -> None:
    rec = RecorderProcess(upstream.url, tmp_path, "--record-mode", "all")
    try:
        async def crowd() -> list[bytes]:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

                async def one(i: int) -> bytes:
                    route = "/stream/chat" if i % 2 else "/json"
                    headers = {"X-SSEMock-Cassette": f"c{i % 3}"}
                    async with session.post(f"{rec.url}{route}", json={"i": i}, headers=headers) as resp:
                        return await resp.read()

                return await asyncio.gather(*(one(i) for i in range(30)))

        bodies = asyncio.run(crowd())
    finally:
        rec.proc.kill()  # at once: no time for anything the clients did not wait for
        rec.proc.communicate(timeout=10)
    got = {i.request.json()["i"]: i.response.body
           for n in range(3) for i in load(tmp_path / f"c{n}.yaml").interactions}
    assert got == dict(enumerate(bodies))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c0.yaml", "c1.yaml", "c2.yaml"]


def test_sigterm_mid_stream_writes_everything_then_exits(upstream: Upstream, tmp_path: Path) -> None:
    rec = RecorderProcess(upstream.url, tmp_path, "--cassette", "t", "--grace", "0.3")
    raw_json(rec.url, "POST", "/json", {"n": 1})
    got: list[bytes] = []
    thread = stream_in_background(rec.url, got)
    wait_for(lambda: len(got) >= 3)
    status, err = rec.finish(signal.SIGTERM)
    thread.join(10)
    assert status == 0, err
    cassette = load(tmp_path / "t.yaml")
    assert len(cassette.interactions) == 2
    partial = cassette.interactions[1].response
    assert partial.end.how == "timeout"  # the recorder gave up on it when stopping
    assert partial.body.startswith(b"".join(got)[:30]) and len(partial.chunks) >= 3
    lines = err.strip().splitlines()
    assert "2 recorded" in lines[-1] and "cassette(s): t" in lines[-1]
    assert sum(" recorded POST " in line for line in lines) == 2


def test_sigint_is_a_clean_stop_too(upstream: Upstream, tmp_path: Path) -> None:
    rec = RecorderProcess(upstream.url, tmp_path, "--cassette", "i")
    raw_json(rec.url, "POST", "/json", {"n": 1})
    status, err = rec.finish(signal.SIGINT)
    assert status == 0, err
    assert len(load(tmp_path / "i.yaml").interactions) == 1


def test_a_50_mb_stream_is_recorded_with_bounded_memory(upstream: Upstream, tmp_path: Path) -> None:
    size = 50 * MB
    rec = RecorderProcess(upstream.url, tmp_path, "--cassette", "big")
    try:
        raw_json(rec.url, "POST", "/json", {"warm": "up"})  # imports and first connection done
        wait_for(lambda: (tmp_path / "big.yaml").exists())
        before = rec.peak_rss()
        digest = hashlib.sha256()

        async def read() -> int:
            total = 0
            async with aiohttp.ClientSession() as session, session.post(
                f"{rec.url}/big?size={size}", json={"big": True}
            ) as resp:
                async for piece in resp.content.iter_chunked(1 << 20):
                    digest.update(piece)
                    total += len(piece)
            return total

        assert asyncio.run(read()) == size
        # The file is replaced atomically: once it is this large, the 50 MB interaction is written.
        wait_for(lambda: (tmp_path / "big.yaml").stat().st_size > size, timeout=60)
        growth = rec.peak_rss() - before
        status, err = rec.finish(signal.SIGTERM)
        assert status == 0, err
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
            rec.proc.communicate(timeout=10)
    assert growth < 30 * MB, f"peak RSS grew by {growth / MB:.1f} MB"
    cassette = load(tmp_path / "big.yaml")
    body = cassette.interactions[1].response.body
    assert len(body) == size and hashlib.sha256(body).hexdigest() == digest.hexdigest()
    assert body[:200] == big_block(200)


async def test_a_large_answer_is_listed_when_its_client_has_it_and_flush_waits_for_its_file(tmp_path: Path) -> None:
    size = 24 * MB  # over 1 MiB: scrubbed and written right after the client's last byte
    with Upstream() as up:
        async with Recorder(up.url, tmp_path, cassette="large", mode="all") as rec, aiohttp.ClientSession() as session:
            digest = hashlib.sha256()
            async with session.post(f"{rec.url}/big?size={size}", json={"big": True}) as resp:
                async for piece in resp.content.iter_chunked(1 << 20):
                    digest.update(piece)
            [listed] = rec.interactions  # listed by the time the client has its whole answer
            assert listed["action"] == "recorded" and listed["end"] == "clean"
            await rec.flush()
            assert listed["bytes"] == size
            [interaction] = load(tmp_path / "large.yaml").interactions
    body = interaction.response.body
    assert len(body) == size and hashlib.sha256(body).digest() == digest.digest()
    assert body[:200] == big_block(200)


def test_sigterm_while_a_large_answer_is_scrubbed_after_its_last_byte_still_writes_it(
    upstream: Upstream, tmp_path: Path,
) -> None:
    size = 24 * MB
    rec = RecorderProcess(upstream.url, tmp_path, "--cassette", "t", "--grace", "0")
    answer = raw_json(rec.url, "POST", f"/big?size={size}", {"big": True})
    status, err = rec.finish(signal.SIGTERM)  # the scrub of what the scan could not keep up with may still run
    assert status == 0, err
    assert len(answer.body) == size
    [interaction] = load(tmp_path / "t.yaml").interactions
    assert interaction.response.body == answer.body and interaction.response.end.how == "clean"
    assert f"{size} bytes" in err
