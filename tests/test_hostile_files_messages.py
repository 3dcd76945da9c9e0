"""What an error about a broken file may say: never a secret the file holds, never more than one
bounded line, never a traceback. Real files, the real CLI (in-process and as the ``ssemock``
process), a real server and real clients.

The rule (docs reference, *Limits* and *Cassette format*): a broken cassette, scenario, stub or imported
recording is refused with one line on stderr naming the file, the field and what was expected,
exit status 2 (``ssemock check``: a finding, exit 1), nothing written; at most 80 characters of
an offending value. Key-shaped text quoted from a file reads ``REDACTED`` (the recorder's own
scanner, ``ssemock.redact``).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, CassetteError, Interaction, MockServer, Request, Response
from ssemock.cassette import load, loads
from ssemock.cli import main

pytest_plugins = ["pytester"]

KEY = "sk-proj-" + "LEAKEDLEAKEDLEAKED1234567890abcdefghij"  # an OpenAI project key's shape
DOTENV = f"OPENAI_API_KEY={KEY}\n"
NETRC = "machine api.example.com login me password SUPERSECRETPASS\n"
HUGE = "1" * 5000  # over Python's 4,300-digit bound for turning text into an integer
CASSETTE_HEAD = "ssemock_cassette: 1\ninteractions:\n- request: {method: POST, path: /v1/x}\n  response:\n"


def _run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ssemock", *argv], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def _leaked(text: str) -> bool:
    return "LEAKEDLEAKED" in text or "SUPERSECRETPASS" in text


def _linked_secrets(tmp_path: Path) -> Path:
    """A project whose ``cassettes/`` holds links to its .env and .netrc files (a wrong symlink)."""
    (tmp_path / ".env").write_text(DOTENV)
    (tmp_path / ".netrc").write_text(NETRC)
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "a.yaml").symlink_to("../.env")
    (folder / "b.yaml").symlink_to("../.netrc")
    return folder


# ---- 1. secrets -----------------------------------------------------------------------------------

def test_check_never_prints_the_secret_of_a_linked_env_file(tmp_path: Path) -> None:
    """``ssemock check`` runs as a pre-commit hook meant to catch secrets: its CI log must not hold one."""
    folder = _linked_secrets(tmp_path)
    done = _run("check", str(folder))
    assert done.returncode == 1
    assert not _leaked(done.stdout + done.stderr)
    assert done.stdout.splitlines() == [  # each file's one line, read as a YAML string (its line end dropped)
        f"{folder / 'a.yaml'}: not a loadable cassette: (top level): expected a mapping, got a string of "
        f"{len(DOTENV.strip())} characters",
        f"{folder / 'b.yaml'}: not a loadable cassette: (top level): expected a mapping, got a string of "
        f"{len(NETRC.strip())} characters",
    ]


@pytest.mark.parametrize("command", [["serve", "--port", "0", "--cassettes", "DIR"], ["inspect", "DIR/a.yaml"]])
def test_serve_and_inspect_refuse_a_linked_env_file_without_quoting_it(tmp_path: Path, command: list[str]) -> None:
    folder = _linked_secrets(tmp_path)
    done = _run(*[a.replace("DIR", str(folder)) for a in command])
    assert done.returncode == 2 and done.stdout == ""
    assert not _leaked(done.stderr)
    assert done.stderr.count("\n") == 1 and str(folder / "a.yaml") in done.stderr
    assert "(top level): expected a mapping" in done.stderr


def test_the_report_of_unused_cassettes_never_prints_a_linked_secret(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nssemock_cassettes = cassettes\n")
    (pytester.path / ".env").write_text(DOTENV)
    pytester.mkdir("cassettes")
    (pytester.path / "cassettes" / "a.yaml").symlink_to("../.env")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--ssemock-report-unused")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert not _leaked(out)
    assert "cassettes/a.yaml: not read, so not checked: (top level): expected a mapping, got a string of " \
           f"{len(DOTENV.strip())} characters" in out


@pytest.mark.parametrize(("body", "field"), [
    (f"    status: {KEY}\n", "interactions[0].response.status"),
    (f'    headers: {{x-trace: "text/event-stream\\r\\nAuthorization: Bearer {KEY}"}}\n',
     "interactions[0].response.headers.x-trace"),
    (f'    chunks: [{{t: 0.5, base64: "token={KEY}"}}]\n', "interactions[0].response.chunks[0].base64"),
])
def test_a_key_shaped_value_quoted_in_an_error_reads_redacted(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               body: str, field: str) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(CASSETTE_HEAD + body)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert not _leaked(err) and err.count("\n") == 1
    assert err.startswith(f"ssemock: error: {path}: {field}: expected ")


def test_a_key_shaped_mapping_key_named_as_the_field_reads_redacted(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(CASSETTE_HEAD + f"    {KEY}: 1\n")
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"ssemock: error: {path}: interactions[0].response.REDACTED: expected one of the keys " \
                  "body_not_recorded, chunks, end, eol, events, headers, interval, reason, start, status, timing\n"


def test_scenario_and_stub_files_linked_to_secrets_are_refused_without_quoting_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".env").write_text(DOTENV)
    (tmp_path / "scenario.yaml").symlink_to(".env")
    assert main(["scenarios", "check", str(tmp_path / "scenario.yaml")]) == 2
    stubs = tmp_path / "stubs.yaml"
    stubs.write_text(f"ssemock_stubs: 1\nstubs:\n- reply: {{text: hi}}\n  match: {{regex: '({KEY}'}}\n")
    assert main(["inspect", str(stubs)]) == 2
    err = capsys.readouterr().err
    assert not _leaked(err)
    first, second = err.splitlines()
    assert first.startswith(f"ssemock: error: {tmp_path / 'scenario.yaml'}: expected a mapping with 'steps', got a ")
    assert second.startswith(f"ssemock: error: inspect: {stubs}: stubs[0].match.regex: expected a regular expression")


# ---- 2. integers past 4,300 digits ------------------------------------------------------------------

HUGE_CASSETTE = CASSETTE_HEAD + f"    chunks: [{{t: {HUGE}, text: hi}}]\n"
HUGE_LINE = 5  # the line of the chunk list above


@pytest.mark.parametrize("command", [["inspect", "FILE"], ["serve", "--port", "0", "--cassettes", "FILE"]])
def test_a_cassette_integer_of_5000_digits_is_one_line_naming_file_and_line(tmp_path: Path,
                                                                             command: list[str]) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(HUGE_CASSETTE)
    done = _run(*[str(path) if a == "FILE" else a for a in command])
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"ssemock: error: {path}: line {HUGE_LINE}: expected a number of at most 4300 digits, " \
                          "got a number of about 5000 digits\n"


def test_check_goes_on_past_a_huge_integer_and_reports_the_next_file_secret(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(HUGE_CASSETTE)
    (tmp_path / "z.yaml").write_text(CASSETTE_HEAD.replace("path: /v1/x}", "path: /v1/x, headers: "
                                                           "{authorization: Bearer x}}") + "    status: 200\n")
    done = _run("check", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.splitlines() == [
        f"{tmp_path / 'a.yaml'}: not a loadable cassette: line {HUGE_LINE}: expected a number of at most 4300 "
        "digits, got a number of about 5000 digits",
        f"{tmp_path / 'z.yaml'}: interaction 0: request header 'authorization': a secret name (the recorder drops it)",
    ]


def test_huge_integers_in_scenario_stub_and_vcr_files_name_the_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"ssemock_scenario: 1\nname: x\nsteps:\n- stall: {{after_events: 1, seconds: {HUGE}}}\n")
    stubs = tmp_path / "stubs.yaml"
    stubs.write_text(f"ssemock_stubs: 1\nstubs:\n- reply: {{text: hi, usage: {{input_tokens: 0x{'f' * 4000}}}}}\n")
    vcr = tmp_path / "v.yaml"
    vcr.write_text(f"interactions:\n- request: {{method: GET, uri: 'http://x/'}}\n  response:\n"
                   f"    status: {{code: {HUGE}}}\n")
    assert main(["scenarios", "check", str(scenario)]) == 2
    assert main(["inspect", str(stubs)]) == 2
    assert main(["import", "vcr", str(vcr), "-o", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    assert capsys.readouterr().err.splitlines() == [
        f"ssemock: error: {scenario}: line 4: expected a number of at most 4300 digits, got a number of about "
        "5000 digits",
        f"ssemock: error: inspect: {stubs}: line 3: expected a number of at most 4300 digits, got a number of about "
        "4817 digits",  # 0xfff…: 16,000 bits
        f"ssemock: error: {vcr}: line 4: expected a number of at most 4300 digits, got a number of about 5000 digits",
    ]


def test_an_integer_of_4300_digits_still_loads() -> None:
    cassette = loads(CASSETTE_HEAD + f"    status: 200\n  \nprovenance: {{n: {'9' * 4300}}}\n")
    assert cassette.provenance["n"] == 10**4300 - 1


# ---- 3. statuses that have no content ---------------------------------------------------------------

@pytest.mark.parametrize(("response", "field", "expected"), [
    ('{status: 204, headers: {content-type: text/event-stream}, chunks: [{t: 0.0, text: "data: x\\n\\n"}]}',
     "interactions[0].response.chunks", "no body after status 204"),
    ("{status: 304, events: [{data: x}]}", "interactions[0].response.events", "no body after status 304"),
    ("{status: 101}", "interactions[0].response.status", "an HTTP status code 200-599"),
    ("{status: 100, chunks: []}", "interactions[0].response.status", "an HTTP status code 200-599"),
])
def test_a_response_that_cannot_have_content_is_refused_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], response: str, field: str, expected: str) -> None:
    """RFC 9110 section 15, RFC 9112 section 6.3: 1xx, 204 and 304 responses have no content."""
    path = tmp_path / "x.yaml"
    path.write_text(f"ssemock_cassette: 1\ninteractions:\n- request: {{method: POST, path: /v1/x}}\n"
                    f"  response: {response}\n")
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ssemock: error: {path}: {field}: expected {expected}") and err.count("\n") == 1
    if expected.startswith("no body"):  # the message names what to remove: the field holding the body
        assert f"remove the {field.rsplit('.', 1)[1]} or change the status" in err


@pytest.mark.parametrize("response", [Response(204, chunks=[]), Response(101)])
def test_a_cassette_built_in_code_cannot_answer_1xx_or_204_with_a_body(response: Response) -> None:
    from ssemock import Chunk

    if response.status == 204:
        response.chunks = [Chunk(0.0, b"data: x\n\n")]
    cassette = Cassette("built", [Interaction(Request("GET", "/x"), response)])
    with pytest.raises(CassetteError) as caught:
        MockServer(cassettes=[cassette])
    assert caught.value.file == "<cassette built>"
    assert caught.value.field in ("interactions[0].response.chunks", "interactions[0].response.status")


def _two_on_one_connection(url: str, headers: dict[str, str]) -> list[bytes]:
    """Two requests on one TCP connection; the head of each answer, as read."""
    host, port = url.removeprefix("http://").split(":")
    heads = []
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for _ in range(2):
            extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            sock.sendall(f"POST /v1/x HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n{extra}\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                part = sock.recv(65536)
                assert part, "connection closed"
                data += part
            heads.append(data)
    return heads


def test_a_legit_204_keeps_the_connection_usable_for_the_next_request() -> None:
    cassette = Cassette("nc", [Interaction(Request("POST", "/v1/x"),
                                           Response(204, headers=[("content-type", "text/event-stream")]))])
    with MockServer(cassettes=[cassette]) as server:
        with httpx.Client(base_url=server.url, limits=httpx.Limits(max_connections=1)) as client:
            first = client.post("/v1/x")
            stream = first.extensions["network_stream"]
            second = client.post("/v1/x")
            assert second.extensions["network_stream"] is stream  # the same connection, kept alive
        assert (first.status_code, first.content, second.status_code, second.content) == (204, b"", 204, b"")
        # A scenario that adds bytes (a BOM) to the empty body must not put them after the 204's head either.
        heads = _two_on_one_connection(server.url, {"X-SSEMock-Scenario": "bom"})
        assert [h.split(b"\r\n", 1)[0] for h in heads] == [b"HTTP/1.1 204 No Content"] * 2
        assert all(h.endswith(b"\r\n\r\n") for h in heads)  # nothing after the head
        notes = server.requests[-1]["injected"]
    assert "no content: a POST answered 204 has no body (RFC 9110 section 15); 3 bytes not sent" in notes


def _har(tmp_path: Path, *entries: dict[str, object]) -> Path:
    path = tmp_path / "x.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": list(entries)}}))
    return path


def _entry(status: int, text: str = "data: x\n\n", url: str = "http://x/v1/x") -> dict[str, object]:
    return {"request": {"method": "GET", "url": url, "headers": []},
            "response": {"status": status, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                         "content": {"mimeType": "text/event-stream", "text": text}}}


def test_har_import_drops_a_304_body_and_skips_an_interim_101(tmp_path: Path) -> None:
    har = _har(tmp_path, _entry(200), _entry(304), _entry(101))
    assert main(["import", "har", str(har), "-o", str(tmp_path / "out")]) == 0
    cassette = load(tmp_path / "out" / "x.yaml")
    assert [i.response.status for i in cassette.interactions] == [200, 304]
    assert cassette.interactions[0].response.body == b"data: x\n\n"
    assert cassette.interactions[1].response.chunks == []
    assert cassette.provenance["bodies_dropped"].startswith("1 entries answered 204 or 304 with a body: the body "
                                                            "was dropped")
    assert cassette.provenance["entries_skipped"].startswith("1 (no answer or only an interim 1xx one")


def test_vcr_import_drops_a_204_body_and_refuses_a_1xx_writing_nothing(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def vcr(status: int) -> str:
        return ("interactions:\n- request: {method: GET, uri: 'http://x/v1/x', headers: {}}\n  response:\n"
                f"    status: {{code: {status}, message: x}}\n    headers: {{}}\n    body: {{string: 'data: x\n\n'}}\n")

    (tmp_path / "a.yaml").write_text(vcr(204))
    assert main(["import", "vcr", str(tmp_path / "a.yaml"), "-o", str(tmp_path / "out")]) == 0
    cassette = load(tmp_path / "out" / "a.yaml")
    assert cassette.interactions[0].response.chunks == []
    assert cassette.provenance["bodies_dropped"].startswith("1 interactions answered 204 or 304")
    (tmp_path / "b.yaml").write_text(vcr(101))
    assert main(["import", "vcr", str(tmp_path / "b.yaml"), "-o", str(tmp_path / "out2")]) == 2
    assert not (tmp_path / "out2").exists()
    assert capsys.readouterr().err.splitlines()[-1].startswith(
        f"ssemock: error: {tmp_path / 'b.yaml'}: interactions[0].response.status: expected an HTTP status code 200-599")


# ---- 4. lone surrogates in a HAR file ---------------------------------------------------------------

@pytest.mark.parametrize(("entry", "field"), [
    (_entry(200, url="http://x/\ud800"), "log.entries[0].request.url"),
    ({**_entry(200), "response": {"status": 200, "headers": [{"name": "x", "value": "\udc00"}],
                                  "content": {"text": "data: x\n\n"}}}, "log.entries[0].response.headers[0].value"),
])
def test_a_lone_surrogate_in_a_har_url_or_header_is_refused_naming_entry_and_field(
        tmp_path: Path, entry: dict[str, object], field: str) -> None:
    har = _har(tmp_path, entry)
    done = _run("import", "har", str(har), "-o", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"ssemock: error: {har}: {field}: expected text without a lone surrogate")
    assert done.stderr.count("\n") == 1 and not (tmp_path / "out").exists()


def test_a_json_request_body_with_a_lone_surrogate_escape_is_kept_as_its_text(tmp_path: Path) -> None:
    """``{"a": "\\ud800"}`` is valid JSON text (RFC 8259 allows the escape): kept byte for byte."""
    body = '{"a": "\\ud800"}'
    entry = {**_entry(200), "request": {"method": "POST", "url": "http://x/v1/x", "headers": [],
                                        "postData": {"mimeType": "application/json", "text": body}}}
    assert main(["import", "har", str(_har(tmp_path, entry)), "-o", str(tmp_path / "out")]) == 0
    assert load(tmp_path / "out" / "x.yaml").interactions[0].request.body == body.encode()


# ---- 5. bounded messages ----------------------------------------------------------------------------

def test_a_two_million_character_key_gives_a_short_one_line_message(tmp_path: Path) -> None:
    path = tmp_path / "long.yaml"
    path.write_text(f"ssemock_cassette: 1\n? {'a' * 2_000_000}\n: 1\n")  # an explicit key: any length
    done = _run("inspect", str(path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    field = done.stderr.removeprefix(f"ssemock: error: {path}: ").split(": expected ")[0]
    assert len(field) <= 120 and field.startswith("a" * 20) and "..." in field  # FIELD_LIMIT characters
    assert len(done.stderr) < 400


def test_a_header_name_holding_a_line_break_is_shown_on_one_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(CASSETTE_HEAD + '    headers: {"X-A\\r\\nSet-Cookie": a}\n')
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\r" not in err
    assert err.startswith(f"ssemock: error: {path}: interactions[0].response.headers.X-A\\r\\nSet-Cookie: expected a "
                          "header name")


def test_the_recorder_forwards_and_records_no_interim_1xx_answer(tmp_path: Path) -> None:
    """An upstream answering 101 (an interim status) to a plain request: 502 to the client, no cassette."""
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def upstream() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n"
                         b"data: x\n\n")
            conn.recv(1)  # until the recorder closes

    thread = threading.Thread(target=upstream, daemon=True)
    thread.start()
    from ssemock.recorder import Recorder

    port = listener.getsockname()[1]
    with Recorder(f"http://127.0.0.1:{port}", tmp_path / "rec") as rec:
        answer = httpx.post(rec.url + "/v1/x", json={"a": 1}, timeout=30)
    listener.close()
    thread.join(10)
    assert answer.status_code == 502
    assert answer.json()["error"]["type"] == "ssemock_upstream_error"
    assert "interim status 101" in answer.json()["error"]["message"]
    assert not list((tmp_path / "rec").rglob("*.yaml"))


def test_a_har_number_of_5000_digits_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    har = tmp_path / "x.har"
    har.write_text('{"log": {"version": "1.2", "entries": [], "n": ' + HUGE + "}}")
    done = _run("import", "har", str(har), "-o", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"ssemock: error: {har}: expected a HAR file (JSON), got 'a number of 5000 digits: at most " \
                          "4300'\n"
    assert not (tmp_path / "out").exists()
