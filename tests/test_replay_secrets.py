"""Secrets on the replay side: a key a client puts in a path, a query or a header value never reaches the
404 message, the journal or the access log (they all go through the recorder's secret scanner).

The real replay server (``MockServer``, and the ``ssemock serve`` process), read by httpx."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, Interaction, MockServer, Request, Response

from .keyshapes import prefixed_shapes

# Telegram's Bot API puts the token in the path: https://core.telegram.org/bots/api#making-requests
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
OPENAI = "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cQ1wE3rT5y"


def _cassette() -> Cassette:
    return Cassette("recorded", [Interaction(Request("POST", "/v1/chat/completions"), Response())])


def _everything(server: MockServer, answer: httpx.Response, caplog: pytest.LogCaptureFixture) -> str:
    """The 404 answer, the journal (but the request bodies, which it keeps as sent) and the access lines, as
    one text."""
    time.sleep(0.05)  # the access line is written right after the answer, in the server's thread
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("ssemock")]
    journal = [{k: v for k, v in entry.items() if k != "body"} for entry in server.requests]
    return "\n".join([answer.text, json.dumps(journal), *lines])


@pytest.mark.parametrize(("path", "params", "headers", "shown"), [
    (f"/bot{TELEGRAM}/getMe", {}, {}, "/botREDACTED/getMe"),
    (f"/v1/files/{OPENAI}/content", {}, {}, "/v1/files/REDACTED/content"),
    ("/v1/models", {"q": OPENAI}, {}, {"q": "REDACTED"}),
    ("/v1/models", {}, {"X-Debug": f"sent {OPENAI}"}, "sent REDACTED"),
], ids=["telegram-path", "key-in-path", "key-in-query", "key-in-header"])
def test_a_key_in_a_request_is_in_no_answer_journal_or_log(
    path: str, params: dict[str, str], headers: dict[str, str], shown: object, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as server:
        answer = httpx.post(server.url + path, params=params, headers=headers, json={}, timeout=10)
        text = _everything(server, answer, caplog)
        entry = server.requests[0]
    assert answer.status_code == 404 and answer.json()["error"]["type"] == "ssemock_no_match"
    assert TELEGRAM not in text and OPENAI not in text and TELEGRAM.split(":")[1] not in text
    if params:
        assert entry["query"] == shown
    elif headers:
        assert entry["headers"]["X-Debug"] == shown
    else:
        assert entry["path"] == shown
        assert f"matches POST {shown} " in answer.json()["error"]["message"]
        assert [m for m in caplog.messages if m.startswith(f"POST {shown} -> 404 refused")], caplog.messages


def test_every_prefixed_catalogue_key_in_a_path_is_in_no_answer_journal_or_log(
    caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    keys = [shape.key(0) for shape in prefixed_shapes()]
    assert len(keys) > 40
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as server, httpx.Client(timeout=10) as client:
        answers = [client.post(f"{server.url}/v1/files/{httpx.URL(path='/' + key).raw_path.decode()[1:]}/content")
                   for key in keys if "/" not in key and "?" not in key and "#" not in key]
        text = "\n".join(_everything(server, answer, caplog) for answer in answers)
    assert {a.status_code for a in answers} == {404}
    leaked = [key for key in keys if key in text]
    assert leaked == []


def test_the_serve_process_logs_no_key_of_a_path(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        answer = httpx.post(f"{url}/bot{TELEGRAM}/getMe", timeout=10)
        assert answer.status_code == 404 and TELEGRAM not in answer.text
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert "POST /botREDACTED/getMe -> 404 refused" in err and TELEGRAM not in err


def test_keys_in_scenario_names_encoded_paths_names_and_bytes_reach_no_journal_log_or_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by trying: the scenario name was journaled and logged as sent, the log showed the path still
    percent-encoded, key-shaped query and header names were journaled, and a body that is not UTF-8 put the
    key in the 404's "differs in body" (its repr glued ``\\xfe`` to the key)."""
    caplog.set_level(logging.INFO)
    cassette = Cassette("recorded", [Interaction(Request("POST", "/v1/chat/completions", body=b"{}"), Response())])
    with MockServer([cassette], scenarios=[], timing_scale=0) as server, httpx.Client(timeout=10) as client:
        answers = [
            client.post(server.url + "/v1/chat/completions", json={}, headers={"X-SSEMock-Scenario": OPENAI}),
            client.post(server.url + "/_ssemock/s/" + OPENAI + "/v1/chat/completions", json={}),
            client.post(server.url + "/bot" + TELEGRAM.replace(":", "%3A") + "/getMe", json={}),
            client.post(server.url + "/v1/models", params={OPENAI: "1"}, headers={"X-" + OPENAI: "1"}, json={}),
            client.post(server.url + "/v1/chat/completions", content=b"\xff\xfe" + OPENAI.encode()),
        ]
        text = "\n".join(_everything(server, answer, caplog) for answer in answers)
    assert [a.status_code for a in answers] == [400, 400, 404, 404, 404]
    assert OPENAI not in text and TELEGRAM.split(":")[1] not in text
    assert "REDACTED" in text


def test_a_key_in_a_malformed_request_line_is_in_no_answer_or_log(caplog: pytest.LogCaptureFixture) -> None:
    import socket

    caplog.set_level(logging.INFO)
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as server:
        key = OPENAI.encode()
        for line in (b"GET http://h:99" + key + b"/ HTTP/1.1", b"GET http://[" + key + b"/ HTTP/1.1"):
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
                sock.sendall(line + b"\r\nHost: 127.0.0.1\r\n\r\n")
                answer = b""
                while data := sock.recv(65536):
                    answer += data
            assert b" 400 " in answer.split(b"\r\n")[0] and OPENAI.encode() not in answer
        time.sleep(0.05)
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("ssemock")]
    assert len(logged) == 2 and not [m for m in logged if OPENAI in m]


def test_a_key_in_a_body_not_recorded_reason_is_in_no_header_and_check_finds_it(tmp_path: Path) -> None:
    from ssemock.cassette import save

    save(Cassette("odd", [Interaction(Request("GET", "/x"), Response(body_not_recorded=f"br from {OPENAI}"))]),
         tmp_path / "odd.yaml")
    with MockServer(cassettes=[tmp_path / "odd.yaml"], scenarios=[]) as server:
        answer = httpx.get(server.url + "/x", timeout=10)
    assert answer.status_code == 500 and answer.headers["X-SSEMock-Body-Not-Recorded"] == "br from REDACTED"
    checked = subprocess.run([sys.executable, "-m", "ssemock", "check", str(tmp_path / "odd.yaml")],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 1 and OPENAI not in checked.stdout
    assert f"{tmp_path / 'odd.yaml'}: interaction 0: body_not_recorded: " in checked.stdout
