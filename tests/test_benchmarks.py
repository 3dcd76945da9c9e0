"""Smoke check of ``python -m benchmarks``: every figure module loads, and one runs end to end.

No timing assertion: whether goals are met depends on the machine. The whole quick run takes
minutes on a loaded 2-core machine, so only the cheapest module (``fragment_delivery``) is run;
the others are only loaded (their figure function found).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import FIGURE_KEYS
from benchmarks.__main__ import MODULES, entry_point
from benchmarks.common import stream_job

ROOT = Path(__file__).resolve().parent.parent
RUN = "fragment_delivery"


@pytest.mark.parametrize("module", MODULES)
def test_every_benchmark_module_has_a_figure_function(module: str) -> None:
    assert (ROOT / "benchmarks" / f"{module}.py").exists()
    assert callable(entry_point(module))


def test_one_benchmark_runs_and_writes_well_formed_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", str(out), "--only", RUN],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures and all(f["name"].startswith(RUN) for f in figures), figures
    for fig in figures:
        assert set(fig) == set(FIGURE_KEYS), fig
        assert isinstance(fig["value"], (int, float)) and not isinstance(fig["value"], bool), fig
        for key in ("baseline", "ratio"):
            assert fig[key] is None or isinstance(fig[key], (int, float)), fig
        assert fig["met"] in (True, False, None), fig
    assert f"{RUN}: {len(figures)} figure(s)" in proc.stderr


def test_the_table_is_written_between_the_docs_page_markers_only(tmp_path: Path) -> None:
    from benchmarks import figure
    from benchmarks.page import BEGIN, END, PAGE, write_page

    assert PAGE == ROOT / "docs" / "explanation" / "benchmarks.md"
    committed = PAGE.read_text(encoding="utf-8")
    assert committed.startswith("# Benchmarks\n") and committed.index(BEGIN) < committed.index(END)
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# title\n\nbefore\n{BEGIN}\n| old | table |\n{END}\nafter\n")
    fig = figure("cold_start.first_request", 0.42, "s", baseline=0.4, goal="ratio <= 1.1", met=True,
                 spread="ours 0.4/0.42/0.5, baseline 0.38/0.4/0.45 (3 runs)")
    write_page([fig], page, quick=True)
    text = page.read_text()
    assert text.startswith(f"# title\n\nbefore\n{BEGIN}\n") and text.endswith(f"{END}\nafter\n")
    assert "| old | table |" not in text
    assert "| cold_start.first_request | 0.42 | s | 0.4 | 1.05 | ratio <= 1.1 | yes | ours 0.4/0.42/0.5" in text
    assert "`python -m benchmarks --quick`" in text
    page.write_text("no markers\n")
    with pytest.raises(ValueError, match="expected the lines"):
        write_page([fig], page, quick=False)


def test_python_m_benchmarks_page_writes_the_docs_page_of_an_earlier_run(tmp_path: Path) -> None:
    from benchmarks import figure
    from benchmarks.page import BEGIN, END

    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps([figure("match_100k.lookup", 12.5, "µs", baseline=None, goal="<= 50 µs", met=True)]))
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Benchmarks\n{BEGIN}\n{END}\n")
    proc = subprocess.run([sys.executable, "-m", "benchmarks.page", str(figures), str(page)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "| match_100k.lookup | 12.5 | µs | – | – | <= 50 µs | yes | – |" in page.read_text()


def test_a_peer_that_is_not_installed_gives_figures_without_values(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    from benchmarks import aimock_peer
    from benchmarks.__main__ import named, table

    monkeypatch.setattr(aimock_peer, "PACKAGE", tmp_path / "node_modules" / "@copilotkit" / "aimock")
    figures = [named("aimock_peer", f, quick=True) for f in aimock_peer.run(quick=True)]
    assert [f["name"] for f in figures] == [
        "aimock_peer.cold_start", "aimock_peer.cold_start_cpu", "aimock_peer.throughput",
        "aimock_peer.throughput_events", "aimock_peer.throughput_cpu", "aimock_peer.stub_answer",
        "aimock_peer.stub_answer_scale0", "aimock_peer.stub_answer_cpu", "aimock_peer.stub_answer_floor",
        "aimock_peer.stub_answer_floor_cpu", "aimock_peer.stub_answer_over_floor", "aimock_peer.stub_answer_reads"]
    for fig in figures:
        assert set(fig) == set(FIGURE_KEYS), fig
        assert fig["value"] is None and fig["baseline"] is None and fig["ratio"] is None, fig
        assert fig["goal"] == "not installed: npm ci --prefix benchmarks/node", fig
    assert "aimock_peer.cold_start " in table(figures)


def test_the_burst_floor_sends_each_event_of_its_body_as_one_http_chunk(tmp_path: Path) -> None:
    body = b'data: {"a":1}\n\n: comment\n\nevent: x\ndata: two\n\ndata: [DONE]\n\n'
    (tmp_path / "answer.txt").write_bytes(body)
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.servers", "floor-burst", str(tmp_path / "answer.txt"),
                             "0"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()
    head, _, framed = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Transfer-Encoding: chunked" in head
    chunks = []
    while True:
        size, _, framed = framed.partition(b"\r\n")
        chunks.append(framed[:int(size, 16)])
        framed = framed[int(size, 16) + 2:]
        if size == b"0":
            break
    assert chunks == [b'data: {"a":1}\n\n', b": comment\n\n", b"event: x\ndata: two\n\n", b"data: [DONE]\n\n", b""]
    assert framed == b""


def _two_chunks_apart(listener: socket.socket, first: float, second: float) -> None:
    """Answer one request on ``listener`` with two HTTP chunks, ``first`` and ``second`` seconds after it."""
    connection, _ = listener.accept()
    with connection:
        request = b""
        while b"\r\n\r\n" not in request:
            request += connection.recv(4096)
        asked = time.monotonic()
        connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        time.sleep(first)
        connection.sendall(b"5\r\nfirst\r\n")
        time.sleep(max(0.0, asked + second - time.monotonic()))
        connection.sendall(b"6\r\nsecond\r\n0\r\n\r\n")


def test_the_benchmark_client_times_chunks_when_they_arrive_not_when_its_busy_loop_reads_them() -> None:
    """The first chunk arrives while the client's loop is blocked for 0.55 s; the gap measured is the
    one between the arrivals (about 0.6 s), not between the reads (about 0.1 s)."""
    from benchmarks import clients

    listener = socket.create_server(("127.0.0.1", 0))
    server = threading.Thread(target=_two_chunks_apart, args=(listener, 0.05, 0.65), daemon=True)
    server.start()

    async def busy_client() -> dict[str, Any]:
        async def block() -> None:
            await asyncio.sleep(0.02)
            time.sleep(0.55)  # the loop is held: the first chunk arrives meanwhile

        blocker = asyncio.ensure_future(block())
        result = await clients.run_job(stream_job(f"http://127.0.0.1:{listener.getsockname()[1]}/s"))
        await blocker
        return result

    try:
        result = asyncio.run(busy_client())
    finally:
        server.join(5)
        listener.close()
    [stream] = result["streams"]
    assert stream["ok"] and stream["sizes"] == [5, 6]
    first, second = stream["times"]
    assert first < 0.3  # arrived at about 0.05 s, read at about 0.57 s
    assert second - first > 0.4  # about 0.6 s between the arrivals; the reads were about 0.1 s apart
    assert max(result["read_late"]) > 0.3  # the first read came about 0.5 s after its arrival
