"""What an operator of ``ssemock serve`` / ``ssemock record`` sees and does: log lines, stop, exposure.

Every test runs the real command in a subprocess (stderr to a file) and uses real
clients and real signals. Time bounds are loose (a loaded machine); the stop's own
duration is measured by the ``abort_storm`` benchmark.
"""

from __future__ import annotations

import base64
import contextlib
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ssemock.cassette import load

from .upstream import Upstream

REALWORLD = Path(__file__).parent / "data" / "realworld"
CHAT = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
LONG_STALL = """ssemock_scenario: 1
name: long-stall
description: "ten minutes of silence after the first event"
preserves: nothing
steps:
- stall: {after_events: 1, seconds: 600}
"""


@dataclass
class Command:
    proc: subprocess.Popen[str]
    url: str
    err: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stderr(self) -> str:
        return self.err.read_text()

    def lines(self, pattern: str) -> list[str]:
        return [line for line in self.stderr().splitlines() if re.search(pattern, line)]

    def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 30) -> tuple[int, float]:
        """Send ``sig``; the exit status and the seconds it took to exit."""
        start = time.monotonic()
        self.proc.send_signal(sig)
        status = self.proc.wait(timeout)
        return status, time.monotonic() - start


@contextlib.contextmanager
def command(tmp_path: Path, *argv: str) -> Iterator[Command]:
    """``ssemock ARGV --port 0``; its URL from the first stdout line."""
    err = tmp_path / f"stderr-{time.monotonic_ns()}"
    with err.open("w") as err_file, subprocess.Popen(
        [sys.executable, "-m", "ssemock", *argv, "--port", "0"], stdout=subprocess.PIPE, stderr=err_file, text=True,
        cwd=tmp_path,
    ) as proc:
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert first.startswith(("ssemock serving on ", "ssemock recording on ")), err.read_text()
            yield Command(proc, first.split()[3], err)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)


def _wait_for(predicate: object, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _stream_until_first_event(port: int, path: str, headers: str = "") -> socket.socket:
    """A raw client that sent a whole request and read the answer up to its first event."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    body = b'{"model": "gpt-4o", "stream": true}'
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n{headers}\r\n".encode()
                 + body)
    got = b""
    while b"\n\n" not in got.partition(b"\r\n\r\n")[2]:
        got += sock.recv(65536)
    return sock


def _half_sent_body(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"model\"")
    return sock


def _rest(sock: socket.socket) -> bytes:
    """What the server still sends until it closes the connection; then closes ``sock``."""
    out = b""
    with sock, contextlib.suppress(ConnectionResetError):
        while data := sock.recv(65536):
            out += data
    return out


def test_serve_logs_one_line_per_request_when_its_answer_has_ended(tmp_path: Path) -> None:
    real = (REALWORLD / "openai-chat-finish-length-usage.sse.bin").read_bytes()
    with command(tmp_path, "serve") as serve:
        r = httpx.post(serve.url + "/v1/chat/completions", json=CHAT)
        assert r.content == real
        httpx.post(serve.url + "/v2/nothing", json={})
        httpx.get(serve.url + "/_ssemock/health")
        # A stream stalled for 5 s by the bundled "stall" scenario: no line until it ends; the
        # client leaving ends it.
        sock = _stream_until_first_event(serve.port, "/_ssemock/s/stall/v1/chat/completions")
        time.sleep(0.3)
        assert serve.lines("stall") == []
        sock.close()
        _wait_for(lambda: serve.lines("scenario stall"))
        serve.stop()
    lines = [line.split(" ", 1)[1] for line in serve.lines(r" -> ")]  # without the time of day
    assert lines[:3] == [
        f"POST /v1/chat/completions -> 200 complete, {len(real)} bytes, {_ms(lines[0])} ms; "
        "cassette openai-chat-finish-length-usage #0; from 127.0.0.1",
        f"POST /v2/nothing -> 404 refused, {_ms(lines[1])} ms".replace(", ", ", " + _bytes(lines[1]) + " bytes, ", 1)
        + "; from 127.0.0.1",
        f"GET /_ssemock/health -> 200 complete, {_bytes(lines[2])} bytes, {_ms(lines[2])} ms; from 127.0.0.1",
    ]
    assert re.fullmatch(r"POST /_ssemock/s/stall/v1/chat/completions -> 200 client_gone, \d+ bytes, \d+ ms; "
                        r"cassette openai-chat-finish-length-usage #\d; scenario stall; from 127\.0\.0\.1", lines[3])
    assert len(lines) == 4 and "Traceback" not in serve.stderr()


def _ms(line: str) -> str:
    return re.search(r"(\d+) ms", line).group(1)  # type: ignore[union-attr]


def _bytes(line: str) -> str:
    return re.search(r"(\d+) bytes", line).group(1)  # type: ignore[union-attr]


def test_quiet_silences_the_request_lines(tmp_path: Path) -> None:
    with command(tmp_path, "serve", "--quiet") as serve:
        httpx.post(serve.url + "/v1/chat/completions", json=CHAT)
        sock = socket.create_connection(("127.0.0.1", serve.port))
        sock.sendall(b"\x16\x03\x01 not http\r\n\r\n")
        _rest(sock)
        assert serve.stop()[0] == 0
    assert serve.lines(" -> ") == [] and serve.lines("malformed") == []


def test_a_non_loopback_host_prints_a_warning_that_the_journal_holds_prompts(tmp_path: Path) -> None:
    with command(tmp_path, "serve", "--host", "0.0.0.0") as serve:
        assert serve.url.startswith("http://0.0.0.0:")
        serve.stop()
    [warning] = serve.lines("warning")
    assert "listening on '0.0.0.0', not a loopback address" in warning and "journal" in warning
    assert "prompt" in warning
    with command(tmp_path, "serve", "--host", "127.0.0.1") as serve:
        serve.stop()
    assert serve.lines("warning") == []


def test_serve_stops_on_sigterm_with_stalled_streams_and_half_sent_bodies(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "long-stall.yaml").write_text(LONG_STALL)
    with command(tmp_path, "serve", "--scenarios", "scenarios") as serve:
        stalled = [_stream_until_first_event(serve.port, "/_ssemock/s/long-stall/v1/chat/completions")
                   for _ in range(3)]
        half = [_half_sent_body(serve.port) for _ in range(3)]
        idle = socket.create_connection(("127.0.0.1", serve.port))
        time.sleep(0.3)
        status, seconds = serve.stop()
    assert status == 0
    assert seconds < 10  # 121 s before: aiohttp's shutdown timeout, twice; measured in benchmarks/abort_storm
    for sock in stalled:
        assert not _rest(sock).endswith(b"0\r\n\r\n")  # cut: no terminating chunk
    for sock in [*half, idle]:
        assert _rest(sock) == b""
    assert len(serve.lines(r"scenario long-stall; from")) == 3
    assert all(" -> 200 stopped, " in line for line in serve.lines("long-stall"))
    assert len(serve.lines(r"POST /v1/chat/completions -> - stopped, - bytes")) == 3
    assert "Traceback" not in serve.stderr()


def test_a_second_signal_exits_at_once(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "long-stall.yaml").write_text(LONG_STALL)
    with command(tmp_path, "serve", "--scenarios", "scenarios", "--grace", "600") as serve:
        sock = _stream_until_first_event(serve.port, "/_ssemock/s/long-stall/v1/chat/completions")
        serve.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert serve.proc.poll() is None  # the stream has 600 s of grace
        status, seconds = serve.stop(signal.SIGINT)
        _rest(sock)
    assert status == -signal.SIGINT and seconds < 10
    assert serve.lines("ssemock: SIGINT again: exiting now")


def test_record_stops_on_sigterm_and_writes_the_cut_recording(tmp_path: Path) -> None:
    with Upstream() as up, command(tmp_path, "record", "--target", up.url, "--cassettes", "out",
                                    "--cassette", "slow") as rec:
        stalled = _stream_until_first_event(rec.port, "/slow?interval=600&count=2")
        half = _half_sent_body(rec.port)
        time.sleep(0.3)
        status, seconds = rec.stop()
    assert status == 0 and seconds < 10  # 61 s before
    assert not _rest(stalled).endswith(b"0\r\n\r\n") and _rest(half) == b""
    [interaction] = load(tmp_path / "out" / "slow.yaml").interactions
    assert interaction.request.path == "/slow"
    assert interaction.response.end.how == "timeout"
    assert interaction.response.body == b'data: {"n":0}\n\n'
    assert rec.lines(r"recorded POST /slow -> 200") and rec.lines("1 recorded")
    assert "Traceback" not in rec.stderr()


def test_record_writes_one_line_per_request_and_quiet_silences_them(tmp_path: Path) -> None:
    for quiet in (False, True):
        with Upstream() as up, command(tmp_path, "record", "--target", up.url, "--cassettes", "out",
                                        *(["--quiet"] if quiet else [])) as rec:
            httpx.post(rec.url + "/json", json={})
            httpx.get(rec.url + "/_ssemock/health")
            garbage = socket.create_connection(("127.0.0.1", rec.port))
            garbage.sendall(b"\x16\x03\x01 not http\r\n\r\n")
            assert b" 400 " in _rest(garbage)
            rec.stop()
        progress, health = rec.lines(r"\] recorded POST /json -> 200"), rec.lines(r"GET /_ssemock/health -> 200")
        malformed = rec.lines(r"malformed HTTP request from 127\.0\.0\.1 -> 400")
        assert (len(progress), len(health), len(malformed)) == ((0, 0, 0) if quiet else (1, 1, 1)), rec.stderr()
        assert "Traceback" not in rec.stderr()


@pytest.mark.parametrize(("argv", "needle"), [
    (["serve", "--header-timeout", "0"], "header_timeout: expected a finite number of seconds > 0, got 0"),
    (["serve", "--body-timeout", "nan"], "argument --body-timeout: expected a number of seconds (30, 30s or 500ms), "
                                         "got 'nan'"),
    (["serve", "--backlog", "0"], "backlog: expected an integer from 1 to 65535, got 0"),
    (["serve", "--limit", "backlog=0"], "backlog: expected an integer from 1 to 65535, got 0"),
    (["serve", "--grace", "-1"], "grace"),
    (["serve", "--allow-host", "a:80"], "allowed host"),
    (["record", "--target", "http://127.0.0.1:1", "--backlog", "70000"], "backlog"),
    (["record", "--target", "http://127.0.0.1:1", "--allow-host", "x/y"], "allowed host"),
])
def test_bad_network_options_are_one_line_and_exit_2(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ssemock.cli import main

    try:
        status = main([*argv, "--port", "0"])
    except SystemExit as exc:  # argparse's own errors: text that is not a number
        status = int(exc.code or 0)
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


PASSWORD = "pw-Zq8mW3pL0x"  # made up


def _record_through(rec: Command, up: Upstream, tmp_path: Path) -> None:
    """One request through the recorder; upstream gets the target's user info as basic auth, and neither the
    process list nor the cassette holds the password."""
    answer = httpx.post(rec.url + "/json", json={"q": 1})
    assert answer.json()["choices"][0]["message"]["content"] == "Hi"
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert up.received[0]["headers"]["Authorization"] == f"Basic {token}"
    assert rec.stop()[0] == 0
    assert PASSWORD not in "".join(p.read_text() for p in (tmp_path / "cassettes").glob("*.yaml"))


def test_record_takes_its_target_from_ssemock_target_keeping_the_password_out_of_the_process_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Upstream() as up:
        target = up.url.replace("http://", f"http://alice:{PASSWORD}@")
        monkeypatch.setenv("SSEMOCK_TARGET", target)
        with command(tmp_path, "record", "--cassettes", "cassettes", "--cassette", "c") as rec:
            assert PASSWORD not in Path(f"/proc/{rec.proc.pid}/cmdline").read_text()
            _record_through(rec, up, tmp_path)
            assert PASSWORD not in rec.stderr() and "warning" not in rec.stderr()


def test_a_password_given_in_target_is_warned_about_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSEMOCK_TARGET", raising=False)
    with Upstream() as up:
        target = up.url.replace("http://", f"http://alice:{PASSWORD}@")
        with command(tmp_path, "record", "--target", target, "--cassettes", "cassettes", "--cassette", "c") as rec:
            _record_through(rec, up, tmp_path)
            assert rec.lines("warning") == [
                "ssemock record: warning: the password in --target is visible to other local users (ps, "
                "/proc/PID/cmdline); give the URL in the SSEMOCK_TARGET environment variable instead"]
            assert PASSWORD not in rec.stderr()
        with command(tmp_path, "record", "--target", up.url.replace("http://", "http://alice@"), "--cassettes",
                     "cassettes") as rec:
            assert rec.stop()[0] == 0
            assert rec.lines("warning") == []


def test_record_without_a_target_says_where_to_give_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ssemock.cli import main

    monkeypatch.delenv("SSEMOCK_TARGET", raising=False)
    assert main(["record", "--port", "0", "--cassettes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == ("ssemock: error: record needs --target URL, --stubs PATH or the SSEMOCK_TARGET environment "
                   "variable (e.g. https://api.openai.com)\n")
    monkeypatch.setenv("SSEMOCK_TARGET", "ftp://example.com")
    assert main(["record", "--port", "0", "--cassettes", str(tmp_path)]) == 2
    assert "must be an http(s) URL" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("http://[::1", "target 'http://[::1': Invalid IPv6 URL"),
        ("http://alice:pw-0123@[::1", "target 'http://***@[::1': Invalid IPv6 URL"),  # the password never shown
        ("http://127.0.0.1:99999", "target 'http://127.0.0.1:99999': Port out of range 0-65535"),
        ("http://127.0.0.1:abc", "target 'http://127.0.0.1:abc': Port could not be cast to integer value"),
        ("http://127.0.0.1:0", "target port 0: expected a port from 1 to 65535"),
    ],
)
def test_a_target_that_is_no_url_is_one_line_and_exit_2(tmp_path: Path, target: str, error: str) -> None:
    """A port out of range was accepted (then every request failed); a broken IPv6 address was a traceback."""
    done = subprocess.run(
        [sys.executable, "-m", "ssemock", "record", "--port", "0", "--cassettes", str(tmp_path), "--target", target],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith(f"ssemock: error: {error}"), done.stderr
    assert len(done.stderr.splitlines()) == 1 and "pw-0123" not in done.stderr
    assert list(tmp_path.iterdir()) == []
