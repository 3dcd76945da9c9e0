"""Files that are not regular files (a FIFO, a character device, a directory) where a cassette,
scenario or recording is expected: refused with the file named, never read, never a hang.
The real CLI, in-process and as the ``ssemock`` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, CassetteError, Interaction, MockServer, Request, Response, ScenarioError
from ssemock.cli import main

DEVICE = "/dev/zero"  # stat size 0, endless


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv", [["inspect", DEVICE],
                                  ["import", "raw", DEVICE, "--path", "/v1/x", "-o", "OUT"],
                                  ["import", "vcr", DEVICE, "-o", "OUT"]])
def test_a_character_device_is_refused_naming_it(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"ssemock: error: {DEVICE}: expected a regular file, got 'a character device'\n"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_fifo_given_as_a_cassette_or_recording_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = _fifo(tmp_path / "a.yaml")
    assert main(["inspect", str(fifo)]) == 2
    assert main(["import", "raw", str(fifo), "--path", "/v1/x", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"ssemock: error: {fifo}: expected a regular file, got 'a FIFO (named pipe)'"] * 2


def test_serve_with_a_fifo_in_its_cassette_directory_exits_2_naming_it(tmp_path: Path) -> None:
    """It hung at start-up, waiting for a writer to open the FIFO."""
    (tmp_path / "cassettes").mkdir()
    fifo = _fifo(tmp_path / "cassettes" / "a.yaml")
    done = subprocess.run([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--cassettes",
                           str(tmp_path / "cassettes")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"ssemock: error: {fifo}: expected a regular file, got 'a FIFO (named pipe)'\n"


def test_fifos_and_directories_named_like_files_are_refused_by_the_python_api(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    _fifo(tmp_path / "c" / "x.yaml")
    with pytest.raises(CassetteError, match=r"x\.yaml: expected a regular file, got 'a FIFO \(named pipe\)'"):
        MockServer(tmp_path / "c")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "dir.yaml").mkdir()
    with pytest.raises(ScenarioError, match=r"dir\.yaml: expected a regular file, got 'a directory'"):
        MockServer(scenarios=[tmp_path / "s"])


@pytest.mark.parametrize(("text", "message"), [
    ("ssemock_cassette: 1\nname: x\ninteractions: " + "[" * 1000 + "]" * 1000 + "\n",
     "line 3, column 1014: expected YAML nested at most 144 deep"),
    ("ssemock_cassette: 1\nname: !!python/object:os.system {}\n",
     "line 2, column 7: expected plain YAML data (no application-specific tag such as !!python/...), "
     "got '!!python/object:os.system'"),
])
def test_yaml_errors_name_the_file_line_and_problem_in_one_line(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Were 'while increasing flow level exceeded…' and a cut-off constructor message."""
    (tmp_path / "c.yaml").write_text(text)
    assert main(["inspect", str(tmp_path / "c.yaml")]) == 2
    assert capsys.readouterr().err == f"ssemock: error: {tmp_path / 'c.yaml'}: {message}\n"


def test_serve_with_a_missing_cassette_directory_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--cassettes", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err == f"ssemock: error: {tmp_path / 'none'}: no such cassette file or directory\n"


REASON_CASSETTE = """ssemock_cassette: 1
interactions:
- request: {{method: GET, path: /x}}
  response:
    status: 429
    reason: {reason}
    headers: [[content-type, text/plain]]
    chunks: [{{t: 0, text: slow down}}]
"""


@pytest.mark.parametrize("reason", ['"OK\\r\\nX-Injected: 1"', '"Trop de requêtes"', "x" * 513])
def test_a_reason_phrase_that_cannot_be_sent_is_refused_naming_the_field(tmp_path: Path, reason: str) -> None:
    """RFC 9112 section 4: a reason phrase is tabs, spaces and visible ASCII (no line break to inject a
    header); ssemock keeps it under 512 characters."""
    path = tmp_path / "reason.yaml"
    path.write_text(REASON_CASSETTE.format(reason=reason), encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        MockServer(cassettes=[path]).start()
    assert str(path) in str(caught.value) and "interactions[0].response.reason" in str(caught.value)
    assert "reason phrase" in str(caught.value)


def test_a_custom_reason_phrase_is_sent_on_the_status_line(tmp_path: Path) -> None:
    path = tmp_path / "reason.yaml"
    path.write_text(REASON_CASSETTE.format(reason="Too Many Requests, Slow Down"), encoding="utf-8")
    with MockServer(cassettes=[path]) as server:
        answer = httpx.get(server.url + "/x")
    assert (answer.status_code, answer.reason_phrase, answer.text) == (429, "Too Many Requests, Slow Down", "slow down")


@pytest.mark.parametrize("reason", ["OK\r\nX-Injected: 1", "Okay \u2013 \u2713", "x" * 513])
def test_a_cassette_built_in_code_has_its_reason_phrase_checked_too(reason: str) -> None:
    cassette = Cassette("built", [Interaction(Request("GET", "/x"), Response(status=200, reason=reason))])
    with pytest.raises(CassetteError) as caught:
        MockServer(cassettes=[cassette])
    assert "<cassette built>" in str(caught.value) and "interactions[0].response.reason" in str(caught.value)


HEADERS_CASSETTE = """ssemock_cassette: 1
interactions:
- request: {{method: GET, path: /x}}
  response:
    status: 200
    headers: {headers}
    chunks: [{{t: 0, text: hi}}]
"""

# http.client (Lib/http/client.py) refuses an answer with more than _MAXHEADERS = 100 header lines;
# aiohttp's client refuses a header line over max_line_size / max_field_size = 8190 bytes.
TOO_MANY = "{" + ", ".join(f"x-h{i}: v" for i in range(100_027)) + "}"
TOO_LONG = "{x-big: " + "a" * 5_000_000 + "}"
TOO_MUCH = "{" + ", ".join(f"x-h{i}: {'a' * 8000}" for i in range(9)) + "}"


@pytest.mark.parametrize(("headers", "field", "expected"), [
    (TOO_MANY, "interactions[0].response.headers", "expected at most 90 response headers"),
    (TOO_LONG, "interactions[0].response.headers.x-big", "expected a header line of at most 8190 bytes"),
    (TOO_MUCH, "interactions[0].response.headers", "expected response headers of at most 65536 bytes in all"),
], ids=["100027-headers", "5MB-value", "72KB-in-all"])
def test_response_headers_no_client_accepts_are_refused_at_load(
    tmp_path: Path, headers: str, field: str, expected: str
) -> None:
    """It loaded, `inspect` passed it and `serve` sent an answer that http.client and aiohttp refuse."""
    path = tmp_path / "headers.yaml"
    path.write_text(HEADERS_CASSETTE.format(headers=headers), encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        MockServer(cassettes=[path]).start()
    assert str(caught.value).startswith(f"{path}: {field}: {expected}"), str(caught.value)[:300]
    done = subprocess.run([sys.executable, "-m", "ssemock", "inspect", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stderr.startswith(f"ssemock: error: {path}: {field}: {expected}")


def test_ninety_headers_of_8190_byte_lines_within_64_kib_are_served_and_read_by_http_client(tmp_path: Path) -> None:
    import http.client

    headers = {f"x-h{i}": "v" for i in range(89)} | {"x-long": "b" * (8190 - len("x-long: "))}
    path = tmp_path / "headers.yaml"
    path.write_text(HEADERS_CASSETTE.format(headers="{" + ", ".join(f"{k}: {v}" for k, v in headers.items()) + "}"),
                    encoding="utf-8")
    with MockServer(cassettes=[path]) as server:
        conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=10)
        conn.request("GET", "/x")
        answer = conn.getresponse()
        assert (answer.status, answer.read()) == (200, b"hi")
        assert answer.getheader("x-long") == headers["x-long"] and answer.getheader("x-h88") == "v"
        conn.close()
