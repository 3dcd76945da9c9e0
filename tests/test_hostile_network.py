"""Connections cannot starve the server: slow or half-sent requests, floods, HTTP/1.0, garbage.

Real sockets against the real server on 127.0.0.1; the limits are set low through the
options a user has (``header_timeout``, ``body_timeout``, ``backlog``) so that each test
sees the limit act, and asserts only bounds that hold on a loaded machine.
"""

from __future__ import annotations

import contextlib
import json
import logging
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h11
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock import (
    Cassette,
    Chunk,
    ConfigError,
    End,
    Interaction,
    MockServer,
    NetworkOptions,
    Recorder,
    Request,
    Response,
)

from .slowplans import SLOW, write_slow_scenarios
from .upstream import SCRIPTS, Upstream

SSE = [("content-type", "text/event-stream")]
BODY = [b"data: one\n\n", b"data: two\n\n", b"data: [DONE]\n\n"]


def _cassette() -> Cassette:
    def inter(path: str, how: str) -> Interaction:
        chunks = [Chunk(0, c) for c in BODY]
        return Interaction(Request("POST", path), Response(200, None, SSE, chunks, end=End(0, how)))

    return Cassette("three", [inter("/v1/chat/completions", "clean"), inter("/cut", "cut")])


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    sock.settimeout(15)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    out = b""
    while data := sock.recv(65536):
        out += data
    return out


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes ``sock`` (it answers nothing before)."""
    start = time.monotonic()
    assert sock.recv(1024) == b""
    return time.monotonic() - start


def test_a_half_sent_request_line_is_closed_after_the_header_timeout() -> None:
    with MockServer([_cassette()], scenarios=[], header_timeout=0.5) as server:
        sock = _connect(server.port)
        start = time.monotonic()
        sock.sendall(b"POST /v1/chat/comp")
        for _ in range(3):  # a byte now and then does not extend the deadline
            time.sleep(0.1)
            sock.sendall(b"l")
        assert sock.recv(1024) == b""
        waited = time.monotonic() - start
        sock.close()
    assert 0.45 < waited < 10  # the default, 30 s, would fail the read above (timeout 15 s)


def test_an_idle_keep_alive_connection_is_closed_after_the_header_timeout() -> None:
    with MockServer([_cassette()], scenarios=[], header_timeout=0.5) as server, _connect(server.port) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        answer = b""
        while not answer.endswith(b"0\r\n\r\n"):
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 OK") and b"data: [DONE]" in answer
        assert 0.4 < _closed_after(sock) < 10


def test_hundreds_of_slowloris_sockets_are_closed_and_a_normal_client_is_served_meanwhile() -> None:
    # 400 sockets, 800 file descriptors with the server's ends: within the common ulimit -n 1024.
    with MockServer([_cassette()], scenarios=[], header_timeout=1.0, timing_scale=0) as server:
        with contextlib.ExitStack() as stack:
            socks = [stack.enter_context(_connect(server.port)) for _ in range(400)]
            for sock in socks:
                sock.sendall(b"GET /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            r = httpx.post(server.url + "/v1/chat/completions", content=b"{}", timeout=15)
            assert (r.status_code, r.content) == (200, b"".join(BODY))
            for sock in socks:
                assert sock.recv(1024) == b""  # closed by the server, no answer
        assert httpx.get(server.url + "/_ssemock/health").json()["in_flight"] == 0


def test_a_request_body_that_stops_arriving_gets_408_and_the_connection_closes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="ssemock")
    with MockServer([_cassette()], scenarios=[], body_timeout=0.5) as server, _connect(server.port) as sock:
        start = time.monotonic()
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":")
        answer = _read_all(sock)
        waited = time.monotonic() - start
        journal = server.requests
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ") and b"Connection: close" in head
    assert json.loads(body)["error"]["type"] == "ssemock_body_timeout"
    assert 0.45 < waited < 10
    # Journaled as refused, as every refused request is, with nothing of the half body.
    assert [(e["status"], e["outcome"], e["body"], e["error"]["type"]) for e in journal] == [
        (408, "refused", None, "ssemock_body_timeout")
    ]
    lines = [r.getMessage() for r in caplog.records if r.name == "ssemock.access"]
    assert len(lines) == 1 and lines[0].startswith("POST /v1/chat/completions -> 408 refused")


def test_the_recorder_applies_the_same_body_timeout(tmp_path: object) -> None:
    with Upstream() as up, Recorder(up.url, str(tmp_path), body_timeout=0.5) as rec:
        with _connect(int(rec.url.rsplit(":", 1)[1])) as sock:
            # The recorder answers under its own address only (a foreign Host is DNS rebinding: 421).
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n{")
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert up.received == []  # nothing half-read was forwarded


def _accepted_while_blocked(server: MockServer, attempts: int) -> int:
    """Connections the kernel completes while the server's loop cannot accept any (its listen queue)."""
    socks: list[socket.socket] = []
    done = 0
    try:
        for _ in range(attempts):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", server.port))
            socks.append(sock)
        time.sleep(0.5)  # handshakes on loopback complete in microseconds when the queue has room
        for sock in socks:
            done += sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 and _connected(sock)
    finally:
        for sock in socks:
            sock.close()
    return done


def _connected(sock: socket.socket) -> bool:
    try:
        sock.getpeername()
    except OSError:
        return False
    return True


@pytest.mark.parametrize(("backlog", "attempts", "expected"), [(8, 40, range(8, 10)), (2048, 300, range(300, 301))])
def test_the_listen_backlog_is_the_option(backlog: int, attempts: int, expected: range) -> None:
    with MockServer([_cassette()], scenarios=[], backlog=backlog) as server:
        hold = threading.Thread(target=server.call, args=(lambda: time.sleep(2.5),))  # the loop accepts nothing
        hold.start()
        time.sleep(0.2)
        try:
            assert _accepted_while_blocked(server, attempts) in expected
        finally:
            hold.join()


def test_http_1_0_gets_a_close_delimited_body_and_the_journal_says_so() -> None:
    with MockServer([_cassette()], scenarios=[]) as server:
        answers = {}
        for path in ("/v1/chat/completions", "/cut"):
            with _connect(server.port) as sock:
                sock.sendall(f"POST {path} HTTP/1.0\r\nContent-Length: 2\r\n\r\n{{}}".encode())
                answers[path] = _read_all(sock)
        journal = server.requests
    head, _, body = answers["/v1/chat/completions"].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK") and b"Transfer-Encoding" not in head
    assert body == b"".join(BODY)
    cut_head, _, cut_body = answers["/cut"].partition(b"\r\n\r\n")
    assert cut_head.startswith(b"HTTP/1.0 200 OK") and cut_body == b"".join(BODY)  # a cut looks the same in 1.0
    assert [(e["status"], e["framing"], e["outcome"]) for e in journal] == [(200, "close", "complete"),
                                                                            (200, "close", "cut")]


def test_http_1_0_clients_of_the_recorder_get_the_stream_close_delimited(tmp_path: object) -> None:
    script, _ = SCRIPTS["chat"]
    with Upstream() as up, Recorder(up.url, str(tmp_path)) as rec, _connect(int(rec.url.rsplit(":", 1)[1])) as sock:
        sock.sendall(b"POST /stream/chat HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}")
        head, _, body = _read_all(sock).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK") and b"Transfer-Encoding" not in head
    assert body == b"".join(data for _, data in script)


MALFORMED = {
    "tls client hello": b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(32) + b"\r\n\r\n",
    "line too long": b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n",
    "header too long": b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 9000 + b"\r\n\r\n",
    "bad content length": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n",
    "header without colon": b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
    "bad version": b"GET / HTTP/7\r\nHost: x\r\n\r\n",
    "nul in target": b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
}


@pytest.fixture(scope="module")
def quiet_server() -> Iterator[MockServer]:
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as server:
        yield server


def _malformed_logs(server: MockServer, data: bytes, caplog: pytest.LogCaptureFixture) -> tuple[bytes, list[str]]:
    caplog.clear()
    with _connect(server.port) as sock:
        sock.sendall(data)
        answer = _read_all(sock)
    time.sleep(0.05)  # the access line is written right after the answer, in the server's thread
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    return answer, [r.getMessage() for r in caplog.records if r.name.startswith("ssemock")]


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_http_is_a_400_and_one_log_line_without_traceback(
    quiet_server: MockServer, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    answer, lines = _malformed_logs(quiet_server, MALFORMED[case], caplog)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].endswith(b" 400 Bad Request") and b"application/json" in head
    error = json.loads(body)["error"]
    assert error["type"] == "ssemock_malformed_request" and error["message"].startswith("malformed HTTP request: ")
    assert len(body) < 400 and b"aaaa" not in body and b"\\x" not in body  # the parser's reason, never the bytes
    malformed = [line for line in lines if line.startswith("malformed HTTP request from 127.0.0.1 -> 400: ")]
    assert len(malformed) == 1 and "\n" not in malformed[0] and len(malformed[0]) < 300, lines
    assert len(lines) == 1, lines


def test_64_kb_of_garbage_gets_a_short_answer(quiet_server: MockServer, caplog: pytest.LogCaptureFixture) -> None:
    """aiohttp echoed the bytes it refused: 64 KB of garbage got a 64-188 KB answer."""
    caplog.set_level(logging.DEBUG)
    answer, lines = _malformed_logs(quiet_server, b"X" * 65536 + b"\r\n\r\n", caplog)
    _, _, body = answer.partition(b"\r\n\r\n")
    assert len(answer) < 1024 and json.loads(body)["error"]["type"] == "ssemock_malformed_request"
    assert lines == ["malformed HTTP request from 127.0.0.1 -> 400: Invalid method encountered"]


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


VERSIONS = {  # RFC 9110 section 15.6.6: 505, answered in HTTP/1.1 (RFC 9112 section 2.3)
    "HTTP/2.0 request line": (b"GET /v1/chat/completions HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", "HTTP/2.0"),
    "HTTP/2 preface": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "the HTTP/2 connection preface (PRI * HTTP/2.0)"),
    "HTTP/3.0 request line": (b"GET /v1/chat/completions HTTP/3.0\r\nHost: 127.0.0.1\r\n\r\n", "HTTP/3.0"),
}


@pytest.mark.parametrize("case", sorted(VERSIONS))
def test_an_http_version_other_than_1_is_a_505_in_json(
    quiet_server: MockServer, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``HTTP/2.0`` gave a 500 and a 30-line traceback, then a 200 with the status line ``HTTP/2.0 200 OK``."""
    caplog.set_level(logging.DEBUG)
    quiet_server.reset()
    data, shown = VERSIONS[case]
    answer, lines = _malformed_logs(quiet_server, data, caplog)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] in (b"HTTP/1.1 505 HTTP Version Not Supported",
                                       b"HTTP/1.0 505 HTTP Version Not Supported")
    assert json.loads(body) == {"error": {"type": "ssemock_http_version_not_supported",
                                          "message": f"{shown} is not served: ssemock speaks HTTP/1.1 (and 1.0)"}}
    assert len(lines) == 1 and " -> 505" in lines[0], lines
    assert quiet_server.requests == []  # never reached the replay


def test_a_request_body_in_an_encoding_that_cannot_be_decoded_is_a_415_in_json(
    quiet_server: MockServer, caplog: pytest.LogCaptureFixture
) -> None:
    """``br`` (without the Brotli package) or ``zstd`` (without zstandard) was aiohttp's text/plain 400."""
    caplog.set_level(logging.DEBUG)
    missing = [coding for coding, modules in [("br", ("brotli", "brotlicffi")), ("zstd", ("backports.zstd",))]
               if not any(_importable(m) for m in modules)]
    assert missing, "both br and zstd decode here: nothing to refuse"
    for coding in missing:
        data = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Encoding: " + coding.encode() + b"\r\nContent-Length: 4\r\n\r\nabcd")
        answer, lines = _malformed_logs(quiet_server, data, caplog)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b" 415 Unsupported Media Type" in head.split(b"\r\n")[0] and b"application/json" in head
        error = json.loads(body)["error"]
        assert error["type"] == "ssemock_unsupported_encoding", error
        assert error["message"].startswith("the request body cannot be decoded: ") and coding in error["message"]
        assert len(lines) == 1 and lines[0].startswith("malformed HTTP request from 127.0.0.1 -> 415: "), lines


def test_garbage_after_a_request_on_a_keep_alive_connection_is_one_more_line(
    quiet_server: MockServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with _connect(quiet_server.port) as sock:
        sock.sendall(b"GET /_ssemock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 OK")
        sock.sendall(b"\x00\x01\x02 garbage\r\n\r\n")
        assert b" 400 " in _read_all(sock)
    time.sleep(0.05)
    assert not [r for r in caplog.records if r.exc_info]
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("ssemock")]
    assert len(lines) == 2 and lines[0].startswith("GET /_ssemock/health -> 200 complete"), lines
    assert lines[1].startswith("malformed HTTP request from 127.0.0.1 -> 400: "), lines


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.integers(0, 31).filter(lambda b: b not in b"\t\n\r") | st.integers(127, 255),
       rest=st.binary(max_size=300))
def test_any_garbage_is_one_log_line(
    quiet_server: MockServer, first: int, rest: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    answer, lines = _malformed_logs(quiet_server, bytes([first]) + rest + b"\r\n\r\n", caplog)
    assert answer.startswith(b"HTTP/1.") and b" 400 " in answer.split(b"\r\n", 1)[0]
    assert len(lines) == 1 and lines[0].startswith("malformed HTTP request from "), lines


def test_a_well_formed_request_after_garbage_on_other_connections_is_served(quiet_server: MockServer) -> None:
    conn = h11.Connection(h11.CLIENT)
    with _connect(quiet_server.port) as sock:
        sock.sendall(conn.send(h11.Request(method="POST", target="/v1/chat/completions",
                                           headers=[("Host", "x"), ("Content-Length", "0"),
                                                    ("Connection", "close")])) + conn.send(h11.EndOfMessage()))
        conn.receive_data(_read_all(sock))
        conn.receive_data(b"")
        events = []
        while (event := conn.next_event()) not in (h11.NEED_DATA, h11.PAUSED) and not isinstance(
                event, h11.ConnectionClosed):
            events.append(event)
    assert events[0].status_code == 200  # type: ignore[union-attr]
    assert b"".join(e.data for e in events if isinstance(e, h11.Data)) == b"".join(BODY)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"header_timeout": 0}, "header_timeout: expected a finite number of seconds > 0, got 0"),
    ({"header_timeout": float("inf")}, "header_timeout: expected a finite number of seconds > 0, got inf"),
    ({"body_timeout": -1}, "body_timeout: expected a finite number of seconds > 0, got -1"),
    ({"grace": float("nan")}, "grace: expected a finite number of seconds >= 0, got nan"),
    ({"backlog": 0}, "backlog: expected an integer from 1 to 65535, got 0"),
    ({"backlog": 1.5}, "backlog: expected an integer from 1 to 65535, got 1.5"),
])
def test_bad_network_options_are_config_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}$"):
        NetworkOptions(**kwargs)
    with pytest.raises(ConfigError, match=f"^{message}$"):  # the keywords that predate the record
        MockServer([_cassette()], scenarios=[], **kwargs)


def test_running_out_of_file_descriptors_is_logged_once_and_the_server_recovers(tmp_path: Path) -> None:
    """``ssemock serve`` limited to 48 open files, 80 connections: asyncio reports every failed accept."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48))

    err_path = tmp_path / "stderr"
    with err_path.open("w") as err, subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=err, text=True,
        preexec_fn=limit,  # only setrlimit, before exec
    ) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            port = int(url.rsplit(":", 1)[1])
            with contextlib.ExitStack() as stack:
                for _ in range(80):
                    stack.enter_context(_connect(port))
                time.sleep(2.5)  # asyncio retries accepting every second
            assert httpx.get(url + "/_ssemock/health", timeout=15).json()["status"] == "ok"
        finally:
            proc.terminate()
            proc.wait(15)
    lines = err_path.read_text().splitlines()
    exhausted = [line for line in lines if "cannot accept connections" in line]
    assert len(exhausted) == 1 and "Too many open files" in exhausted[0] and "open files limit 48" in exhausted[0]
    assert not [line for line in lines if "Traceback" in line or "out of system resource" in line]


# ---- scenarios composed per request -----------------------------------------------------------
CHAT_CASSETTE = {"X-SSEMock-Cassette": "openai-chat-finish-length-usage"}


def test_more_than_eight_scenarios_for_one_request_get_400_naming_the_bound() -> None:
    with MockServer() as server:
        for names in ([",".join(["keepalive"] * 9)], [",".join(["keepalive"] * 760)]):
            by_header = httpx.post(server.url + "/v1/chat/completions", json={},
                                   headers={**CHAT_CASSETTE, "X-SSEMock-Scenario": names[0]}, timeout=30)
            by_path = httpx.get(f"{server.url}/_ssemock/s/{names[0]}/v1/chat/completions",
                                headers={**CHAT_CASSETTE, "Origin": "http://page.example"}, timeout=30)
            for answer in (by_header, by_path):
                assert answer.status_code == 400
                error = answer.json()["error"]
                assert error["type"] == "ssemock_too_many_scenarios" and error["limit"] == 8
                assert "at most 8" in error["message"]
        eight = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=30,
                           headers={**CHAT_CASSETTE, "X-SSEMock-Scenario": ",".join(["keepalive"] * 8)})
        assert eight.status_code == 200
        # 3 leading comments per keepalive scenario (each a comment line and a blank line) before the first event.
        assert eight.text.startswith(": OPENROUTER PROCESSING\n\n" * 24 + "data: ")


def _plan_threads() -> list[threading.Thread]:
    """The server's plan threads running work (an idle one waits for the next in ``OffLoop._serve``)."""
    frames = sys._current_frames()
    return [t for t in threading.enumerate() if t.name.startswith("ssemock-plan")
            and (frame := frames.get(t.ident or 0)) is not None and frame.f_code.co_name != "_serve"]


def test_a_plan_being_built_for_a_client_that_left_is_dropped(tmp_path: Path) -> None:
    """800 steps take seconds to apply; the client gives up after 1 s."""
    write_slow_scenarios(tmp_path)
    with MockServer(scenarios=[tmp_path]) as server:
        seen: list[bool] = []

        def watch() -> None:  # the plan is being built while the client waits (seen from another thread:
            deadline = time.monotonic() + 10  # once the client gives up, the server drops it at once)
            while not (seen or time.monotonic() > deadline):
                if _plan_threads():
                    seen.append(True)
                time.sleep(0.01)

        watcher = threading.Thread(target=watch)
        watcher.start()
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.url + "/v1/chat/completions", json={}, timeout=1.0,
                       headers={**CHAT_CASSETTE, "X-SSEMock-Scenario": SLOW})
        watcher.join()
        assert seen
        deadline = time.monotonic() + 10  # each step takes milliseconds; the thread stops before the next
        while _plan_threads() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _plan_threads()
        assert server.requests[-1]["outcome"] == "client_gone"


def test_serve_stops_on_sigint_while_a_plan_is_being_built(tmp_path: Path) -> None:
    write_slow_scenarios(tmp_path)
    err = tmp_path / "stderr"
    with err.open("w") as err_file, subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--grace", "0.5", "--scenarios", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=err_file, text=True,
    ) as proc:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[-1]
        client = threading.Thread(target=_ask_slow, args=(url,))
        client.start()
        time.sleep(1.5)  # the plan is being built
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        status = proc.wait(30)
        seconds = time.monotonic() - start
        client.join(30)
    assert status == 0
    assert seconds < 10  # grace 0.5 s + 1 s for cancelled handlers; before: until the plan was built (minutes)
    assert "Traceback" not in err.read_text()


def _ask_slow(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(url + "/v1/chat/completions", json={}, timeout=60,
                   headers={**CHAT_CASSETTE, "X-SSEMock-Scenario": SLOW})


def test_a_client_leaving_in_the_middle_of_the_journal_gets_one_client_gone_line(
        caplog: pytest.LogCaptureFixture) -> None:
    """``GET /_ssemock/requests`` read 100 bytes of about 18 MB, then reset: one access line saying
    ``client_gone``, no traceback. (A journal of 1 MB could fit whole in the sockets' buffers before the
    reset arrived, on a loaded machine, and its answer then ended ``complete``: it is made larger than
    they are, and the client's receive buffer small.)"""
    caplog.set_level(logging.INFO)
    with MockServer(cassettes=[]) as server, httpx.Client(timeout=30) as client:
        for n in range(300):
            client.post(f"{server.url}/v1/nothing", json={"n": n, "pad": "x" * 60_000})
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
        sock.settimeout(15)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(b"GET /_ssemock/requests HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert sock.recv(100)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with RST
        sock.close()
        deadline = time.monotonic() + 15
        while not [r for r in caplog.records if "/_ssemock/requests" in r.getMessage()]:
            assert time.monotonic() < deadline, "no access line for the journal request"
            time.sleep(0.05)
    [line] = [r.getMessage() for r in caplog.records if "/_ssemock/requests" in r.getMessage()]
    assert "client_gone" in line
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(("coding", "status", "kind"), [
    ("gzip, br", 415, "ssemock_unsupported_encoding"), ("foo", 415, "ssemock_unsupported_encoding"),
    ("x-gzip", 400, "ssemock_bad_request"),
])
def test_a_body_labelled_with_codings_the_parser_leaves_is_decoded_or_refused(
    quiet_server: MockServer, coding: str, status: int, kind: str
) -> None:
    """``gzip, br`` or ``foo`` was taken as the raw body and answered 200."""
    answer = httpx.post(quiet_server.url + "/v1/chat/completions", content=b"abcde", timeout=10,
                        headers={"Content-Encoding": coding})
    assert (answer.status_code, answer.json()["error"]["type"]) == (status, kind)


def test_a_body_gzipped_twice_is_matched_decoded(quiet_server: MockServer) -> None:
    import gzip

    quiet_server.reset()
    body = gzip.compress(gzip.compress(b'{"x": 1}', mtime=0), mtime=0)
    httpx.post(quiet_server.url + "/v1/chat/completions", content=body, timeout=10,
               headers={"Content-Encoding": "gzip, gzip", "Content-Type": "application/json"})
    assert quiet_server.requests[0]["body"] == {"x": 1}
