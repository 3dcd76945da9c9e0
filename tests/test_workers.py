"""``ssemock serve --workers N``: N processes on one port, one journal, one stop.

Every test runs the real command in a subprocess and talks to it with real HTTP clients,
one connection per request so that the kernel spreads them over the workers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ssemock.cli import main
from ssemock.edge.options import DEFAULT_GRACE
from ssemock.mockserver import collect_cassettes
from ssemock.workers import PEER_TIMEOUT, STOP_TIMEOUT, UNANSWERED_HEADER

STOP_BOUND = 1.0  # seconds, from SIGTERM to the master and every worker gone (holds with both cores busy)


@dataclass
class Served:
    proc: subprocess.Popen[str]
    url: str

    def workers(self) -> list[int]:
        """The worker processes' ids (the master's children), once both are up."""
        deadline = time.monotonic() + 30
        while True:
            found = [int(p) for p in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]
            if len(found) >= 2 or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


@contextlib.contextmanager
def serve(tmp_path: Path, *argv: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    err = (tmp_path / "stderr").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", *argv],
                            stdout=subprocess.PIPE, stderr=err, text=True, cwd=tmp_path,
                            env=None if env is None else {**os.environ, **env})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("ssemock serving on http://127.0.0.1:"), (tmp_path / "stderr").read_text()
        yield Served(proc, first.rsplit(" ", 1)[1])
    finally:
        if proc.poll() is None:  # SIGTERM: the master stops its workers and removes its directory
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait(30)
        err.close()
        if proc.stdout:
            proc.stdout.close()


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_two_workers_serve_every_bundled_cassette_and_one_journal_gathers_both(tmp_path: Path) -> None:
    cassettes = collect_cassettes(None)
    with serve(tmp_path, "--workers", "2") as served:
        sent: dict[str, bytes] = {}  # query n -> body received
        for _ in range(20):  # rounds, until both workers have answered (nearly always the first)
            for name, cassette in cassettes.items():
                for inter in cassette.interactions:
                    n = str(len(sent))
                    with httpx.Client(headers={"Connection": "close"}) as client, client.stream(
                        inter.request.method, f"{served.url}{inter.request.path}", params={"n": n},
                        content=inter.request.body, headers={"X-SSEMock-Cassette": name},
                    ) as resp:
                        assert resp.status_code == inter.response.status
                        sent[n] = b"".join(resp.iter_raw())  # as sent: a gzip body stays gzip
            journal = httpx.get(f"{served.url}/_ssemock/requests").json()
            if len({e["worker"] for e in journal}) == 2:
                break
        workers = served.workers()
        assert sorted({e["worker"] for e in journal}) == sorted(workers)
        assert len(workers) == 2
        assert sorted(e["query"]["n"] for e in journal) == sorted(sent)  # admin requests are not journaled
        for entry in journal:  # each answer is the recorded response the journal names
            recorded = cassettes[entry["cassette"]].interactions[entry["interaction"]].response
            assert sent[entry["query"]["n"]] == recorded.body
            assert entry["outcome"] == "complete"
        for worker, count in Counter(e["worker"] for e in journal).items():  # seq counts per worker
            assert sorted(e["seq"] for e in journal if e["worker"] == worker) == list(range(1, count + 1))
        assert [e["time"] for e in journal] == sorted(e["time"] for e in journal)

        cleared = httpx.delete(f"{served.url}/_ssemock/requests").json()
        per_worker = {str(w): n for w, n in Counter(e["worker"] for e in journal).items()}
        assert cleared == {"cleared": len(journal), "workers": per_worker, "unanswered": []}
        assert httpx.get(f"{served.url}/_ssemock/requests").json() == []
        health = httpx.get(f"{served.url}/_ssemock/health").json()
        assert health["status"] == "ok" and health["cassettes"] == len(cassettes)


def test_sigterm_stops_the_master_and_every_worker_within_a_second(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2") as served:
        workers = served.workers()
        assert len(workers) == 2
        assert httpx.get(f"{served.url}/_ssemock/health").status_code == 200
        started = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        while (served.proc.poll() is None or any(alive(w) for w in workers)) and time.monotonic() - started < 10:
            time.sleep(0.005)
        elapsed = time.monotonic() - started
        assert served.proc.returncode == 0
        assert not any(alive(w) for w in workers)
        assert elapsed <= STOP_BOUND, f"stopped in {elapsed:.3f} s"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{served.url}/_ssemock/health")


@pytest.mark.parametrize("value", ["0", "-1", "lots", "257"])
def test_a_bad_worker_count_is_one_line_and_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--workers", value])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and "1-256 or 'auto'" in err and "Traceback" not in err


def test_a_taken_port_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--workers", "2", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err


def fill_journal(served: Served, workers: list[int]) -> dict[int, int]:
    """Replay one bundled interaction (a new connection each time) until every worker has
    journaled some; returns the entries per worker."""
    cassette = collect_cassettes(None)["openai-chat-finish-length-usage"]
    inter = cassette.interactions[0]
    for _ in range(200):
        with httpx.Client(headers={"Connection": "close"}) as client:
            resp = client.request(inter.request.method, f"{served.url}{inter.request.path}",
                                  content=inter.request.body, headers={"X-SSEMock-Cassette": cassette.name})
            assert resp.status_code == inter.response.status
        counts = Counter(e["worker"] for e in httpx.get(f"{served.url}/_ssemock/requests").json())
        if set(counts) == set(workers):
            return dict(counts)
    raise AssertionError(f"not every worker answered: {counts}")


def test_a_stuck_worker_is_named_not_silently_left_out_and_stop_still_bounded(tmp_path: Path) -> None:
    """A worker whose event loop does not run (stopped with SIGSTOP, as a loop held by a long
    computation would be): GET and DELETE answer within the peer timeout and name it; its
    journal is neither reported as read nor as cleared; SIGTERM still stops everything."""
    with serve(tmp_path, "--workers", "2") as served:
        workers = served.workers()
        counts = fill_journal(served, workers)
        stuck, live = workers
        os.kill(stuck, signal.SIGSTOP)
        try:
            started = time.monotonic()
            resp = httpx.get(f"{served.url}/_ssemock/requests", timeout=30)  # answered by the live worker
            elapsed = time.monotonic() - started
            assert elapsed <= PEER_TIMEOUT + 2.0, f"answered in {elapsed:.2f} s"
            assert resp.headers[UNANSWERED_HEADER] == str(stuck)
            assert Counter(e["worker"] for e in resp.json()) == {live: counts[live]}

            cleared = httpx.delete(f"{served.url}/_ssemock/requests", timeout=30).json()
            assert cleared == {"cleared": counts[live], "workers": {str(live): counts[live]}, "unanswered": [stuck]}
            assert f"worker(s) {stuck} did not answer" in (tmp_path / "stderr").read_text()
        finally:
            os.kill(stuck, signal.SIGCONT)
        resp = httpx.get(f"{served.url}/_ssemock/requests", timeout=30)
        assert resp.headers[UNANSWERED_HEADER] == ""
        assert Counter(e["worker"] for e in resp.json()) == {stuck: counts[stuck]}  # not cleared: it did not answer

        os.kill(stuck, signal.SIGSTOP)  # stuck again, now for the stop
        started = time.monotonic()
        served.proc.send_signal(signal.SIGTERM)
        while (served.proc.poll() is None or any(alive(w) for w in workers)) and time.monotonic() - started < 30:
            time.sleep(0.005)
        elapsed = time.monotonic() - started
        assert not any(alive(w) for w in workers)
        assert elapsed <= DEFAULT_GRACE + STOP_TIMEOUT + STOP_BOUND, f"stopped in {elapsed:.3f} s"


def test_killing_the_master_leaves_no_directory_behind(tmp_path: Path) -> None:
    # a short TMPDIR: a Unix socket's path holds at most 107 bytes, and pytest's tmp_path can be longer
    temporary = Path(tempfile.mkdtemp(prefix="smk-"))
    with serve(tmp_path, "--workers", "2", env={"TMPDIR": str(temporary)}) as served:
        workers = served.workers()
        assert len(workers) == 2
        [directory] = temporary.glob("ssemock-workers-*")
        deadline = time.monotonic() + 30
        sockets = sorted(f"{w}.sock" for w in workers)
        while sorted(p.name for p in directory.iterdir()) != sockets and time.monotonic() < deadline:
            time.sleep(0.01)  # each worker makes its socket once its app has started
        assert sorted(p.name for p in directory.iterdir()) == sockets, (tmp_path / "stderr").read_text()
        served.proc.kill()
        started = time.monotonic()
        while any(alive(w) for w in workers) and time.monotonic() - started < 30:
            time.sleep(0.01)
        assert not any(alive(w) for w in workers)  # they notice their parent is gone
        try:
            assert list(temporary.iterdir()) == []
        finally:
            shutil.rmtree(temporary, ignore_errors=True)


def test_a_temporary_directory_too_long_for_socket_paths_still_gathers_the_journal(tmp_path: Path) -> None:
    """A Unix socket path holds at most 107 bytes (Linux ``sun_path``): with a longer ``TMPDIR`` the
    workers' sockets go to a private directory in /tmp, and the journal still gathers both workers."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    with serve(tmp_path, "--workers", "2", env={"TMPDIR": str(deep)}) as served:
        for n in range(40):  # until both workers have answered (nearly always at once)
            with httpx.Client(headers={"Connection": "close"}) as client:
                assert client.get(f"{served.url}/v1/models", params={"n": n}).status_code in (200, 404)
            journal = httpx.get(f"{served.url}/_ssemock/requests").json()
            if len({e["worker"] for e in journal}) == 2:
                break
        assert sorted({e["worker"] for e in journal}) == sorted(served.workers())
        assert not httpx.get(f"{served.url}/_ssemock/requests").headers.get(UNANSWERED_HEADER)
    assert list(deep.iterdir()) == []  # nothing was made in the long directory


def test_killing_the_master_after_a_worker_was_killed_leaves_no_directory_behind(tmp_path: Path) -> None:
    temporary = Path(tempfile.mkdtemp(prefix="smk-"))  # short: a Unix socket's path holds at most 107 bytes
    try:
        with serve(tmp_path, "--workers", "2", env={"TMPDIR": str(temporary)}) as served:
            first = served.workers()
            [directory] = temporary.glob("ssemock-workers-*")
            deadline = time.monotonic() + 30
            while len(list(directory.glob("*.sock"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)  # each worker makes its socket once its app has started
            os.kill(first[0], signal.SIGKILL)  # it cannot remove its socket; gunicorn starts another
            deadline = time.monotonic() + 30
            while len(set(served.workers()) - set(first)) < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            workers = served.workers()
            assert f"{first[0]}.sock" in {p.name for p in directory.iterdir()}
            served.proc.kill()
            started = time.monotonic()
            while any(alive(w) for w in workers) and time.monotonic() - started < 30:
                time.sleep(0.01)
            assert not any(alive(w) for w in workers)
            assert list(temporary.iterdir()) == []  # the last worker out removed the killed one's socket too
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
