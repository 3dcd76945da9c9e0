"""Replay over HTTP/2: ``MockServer(http2=True)`` / ``ssemock serve --http2`` answer h2c with prior knowledge and,
over TLS, ALPN ``h2``, on the port that still serves HTTP/1.1; the same cassettes, matching, scenarios, journal
and admin routes. Real servers on 127.0.0.1 read by httpx (``http2=True``, the h2 package), curl (nghttp2) and a
raw ``h2`` client that sees each DATA frame: every bundled recording arrives byte for byte as over HTTP/1.1,
each recorded chunk one DATA frame, and the reference decoder's events are the HTTP/1.1 replay's."""

from __future__ import annotations

import gzip
import os
import shutil
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import httpx_sse
import pytest

from ssemock import MockServer
from ssemock.cassette import Interaction
from ssemock.sse import Event, decode
from ssemock.tls import TLSFiles, local_authority

from .h2client import h2_request
from .rawclient import raw_request
from .sessions import INI

pytest_plugins = ["pytester"]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return local_authority(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def servers(tls_files: TLSFiles) -> Iterator[dict[str, MockServer]]:
    """An h2c server (prior knowledge) and an https one (ALPN h2 and http/1.1), both HTTP/1.1 as well."""
    with (
        MockServer(scenarios=None, timing_scale=0, http2=True) as plain,
        MockServer(scenarios=None, timing_scale=0, http2=True, tls=tls_files) as secure,
    ):
        yield {"h2c": plain, "https": secure}


def interactions(server: MockServer) -> list[tuple[str, int, Interaction]]:
    return [
        (name, index, inter)
        for name, cassette in sorted(server.state.cassettes.items())
        for index, inter in enumerate(cassette.interactions)
    ]


def target(inter: Interaction) -> str:
    return inter.request.path + ("?" + urlencode(inter.request.query) if inter.request.query else "")


def headers(name: str, inter: Interaction) -> dict[str, str]:
    return {"X-SSEMock-Cassette": name, **({"Content-Type": "application/json"} if inter.request.body else {})}


def events(body: bytes, coding: str | None) -> list[tuple[str, str, str]]:
    plain = gzip.decompress(body) if coding == "gzip" else body
    return [(e.type, e.data, e.last_event_id) for e in decode(plain) if isinstance(e, Event)]


def http1_body(server: MockServer, name: str, inter: Interaction) -> bytes:
    """The HTTP/1.1 replay's body (``server`` serves plain http: the https one has the same cassettes)."""
    server.reset()
    answer = raw_request(
        server.url, inter.request.method, target(inter), inter.request.body or b"", headers(name, inter)
    )
    assert answer.status == inter.response.status
    return answer.body


@pytest.mark.parametrize("kind", ["h2c", "https"])
def test_each_recorded_chunk_is_one_data_frame(servers: dict[str, MockServer], tls_files: TLSFiles, kind: str) -> None:
    server = servers[kind]
    checked = 0
    for name, index, inter in interactions(server):
        expected = http1_body(servers["h2c"], name, inter)
        answered = servers["h2c"].requests[-1]["interaction"]  # (identical requests of a cassette: the first answers)
        server.reset()
        answer = h2_request(
            server.url,
            inter.request.method,
            inter.request.path,
            inter.request.body or b"",
            headers(name, inter),
            query=inter.request.query,
            cafile=str(tls_files.ca),
            window=1 << 24,  # as httpx and curl open it: no chunk waits for a WINDOW_UPDATE
        )
        assert answer.status == inter.response.status and answer.ended, (name, index)
        assert answer.frames == [c.data for c in inter.response.chunks], (name, index)
        assert answer.body == expected, (name, index)
        journal = server.requests[-1]
        assert (journal["cassette"], journal["interaction"], journal["framing"], journal["outcome"]) == (
            name,
            answered,
            "h2",
            "complete",
        )
        checked += 1
    assert checked == 27  # every bundled interaction, event streams and JSON answers alike


@pytest.mark.parametrize("kind", ["h2c", "https"])
def test_httpx_http2_reads_every_bundled_recording_as_http1_does(
    servers: dict[str, MockServer],
    tls_files: TLSFiles,
    kind: str,
) -> None:
    server = servers[kind]
    verify = ssl.create_default_context(cafile=str(tls_files.ca))
    streams = 0
    # h2c needs prior knowledge (http1=False); over TLS httpx offers h2 and http/1.1 by ALPN and gets h2
    with httpx.Client(http2=True, http1=kind == "https", verify=verify, base_url=server.url, timeout=30) as client:
        for name, index, inter in interactions(server):
            expected = http1_body(servers["h2c"], name, inter)
            server.reset()
            answer = client.request(
                inter.request.method,
                inter.request.path,
                params=inter.request.query,
                content=inter.request.body or b"",
                headers=headers(name, inter),
            )
            assert answer.http_version == "HTTP/2" and answer.status_code == inter.response.status
            coding = inter.response.header("content-encoding")
            got = gzip.compress(answer.content) if coding == "gzip" else answer.content  # httpx decodes gzip
            assert (gzip.decompress(got) if coding == "gzip" else got) == (
                gzip.decompress(expected) if coding == "gzip" else expected
            ), (name, index)
            if "event-stream" not in (inter.response.header("content-type") or ""):
                continue
            assert events(answer.content, None) == events(expected, coding) != [], (name, index)
            server.reset()
            with httpx_sse.connect_sse(
                client,
                inter.request.method,
                inter.request.path,
                params=inter.request.query,
                content=inter.request.body or b"",
                headers=headers(name, inter),
            ) as source:
                seen = [(e.event, e.data, e.id) for e in source.iter_sse()]
            assert seen == events(expected, coding), (name, index)
            streams += 1
    assert streams == 22


def _curl(args: list[str], out: Path) -> str:
    done = subprocess.run(
        ["curl", "-sS", "--max-time", "60", "-o", str(out), "-w", "%{http_version}", *args],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize("kind", ["h2c", "https"])
def test_curl_reads_every_bundled_recording_over_http2(
    servers: dict[str, MockServer],
    tls_files: TLSFiles,
    tmp_path: Path,
    kind: str,
) -> None:
    server = servers[kind]
    how = ["--http2-prior-knowledge"] if kind == "h2c" else ["--http2", "--cacert", str(tls_files.ca)]
    for name, index, inter in interactions(server):
        expected = http1_body(servers["h2c"], name, inter)
        server.reset()
        body = tmp_path / "body"
        body.write_bytes(inter.request.body or b"")
        sent = ["--data-binary", f"@{body}"] if inter.request.body else []
        fields = [arg for k, v in headers(name, inter).items() for arg in ("-H", f"{k}: {v}")]
        version = _curl(
            [*how, "-X", inter.request.method, *sent, *fields, server.url + target(inter)], tmp_path / "out"
        )
        assert version == "2", (name, index)  # curl's %{http_version} of an HTTP/2 answer
        assert (tmp_path / "out").read_bytes() == expected, (name, index)


def test_scenarios_admin_routes_and_the_journal_are_those_of_http1(servers: dict[str, MockServer]) -> None:
    server = servers["h2c"]
    name = "openai-chat-tool-calls-usage"
    inter = server.state.cassettes[name].interactions[0]
    recorded = events(inter.response.body, None)
    server.reset()
    with httpx.Client(http2=True, http1=False, base_url=server.url, timeout=30) as client:
        # a scenario by header and by path prefix: the events a WHATWG parser dispatches are kept
        split = client.post(
            inter.request.path,
            content=inter.request.body,
            headers={**headers(name, inter), "X-SSEMock-Scenario": "split-crlf"},
        )
        prefixed = client.post(
            "/_ssemock/s/split-bytes" + inter.request.path, content=inter.request.body, headers=headers(name, inter)
        )
        assert events(split.content, None) == events(prefixed.content, None) == recorded
        assert b"\r\n" in split.content and b"\r\n" not in inter.response.body  # the scenario did apply
        journal = client.get("/_ssemock/requests").json()
        assert [(e["scenario"], e["framing"], e["outcome"]) for e in journal] == [
            ("split-crlf", "h2", "complete"),
            ("split-bytes", "h2", "complete"),
        ]
        assert client.get("/_ssemock/health").json()["status"] == "ok"
        assert client.delete("/_ssemock/requests").json() == {"cleared": 2}
        # no match: the same JSON 404 naming the closest interaction
        missing = client.post("/v1/nothing-recorded-here", json={"model": "none"})
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "ssemock_no_match"
        # the admin guard reads the Host that :authority gives
        foreign = client.get("/_ssemock/requests", headers={"Host": "evil.example"})
        assert foreign.status_code == 421 and foreign.json()["error"]["type"] == "ssemock_misdirected_host"


def test_a_small_client_window_is_respected_and_every_byte_arrives(servers: dict[str, MockServer]) -> None:
    server = servers["h2c"]
    name = "anthropic-messages-thinking"
    inter = server.state.cassettes[name].interactions[0]
    answer = h2_request(
        server.url, "POST", inter.request.path, inter.request.body or b"", headers(name, inter), window=280
    )
    assert answer.ended and answer.body == inter.response.body
    assert max(map(len, answer.frames)) <= 280  # never past the stream's window (RFC 9113 section 6.9)
    # a chunk of at most half the window waits for the client's WINDOW_UPDATE (sent once it read half its
    # window) and stays one frame
    small = [c.data for c in inter.response.chunks if len(c.data) <= 140]
    assert len(small) > 50 and all(chunk in answer.frames for chunk in small)


def test_without_http2_the_server_is_http1_only_as_before() -> None:
    with MockServer(scenarios=[]) as server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
        raw.sendall(PREFACE)
        reply = raw.recv(65536)
    assert reply.startswith(b"HTTP/1.0 505 ") and b"ssemock_http_version_not_supported" in reply


def test_serve_http2_answers_curl_with_prior_knowledge(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--http2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        version = _curl(["--http2-prior-knowledge", url + "/_ssemock/health"], tmp_path / "out")
        plain = httpx.get(url + "/_ssemock/health", timeout=10)
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert version == "2" and b'"status": "ok"' in (tmp_path / "out").read_bytes()
    assert plain.http_version == "HTTP/1.1" and plain.status_code == 200


def test_a_body_past_the_bound_is_refused_and_a_protocol_error_ends_the_connection() -> None:
    with MockServer(scenarios=[], http2=True, max_request_body=1024) as server:
        big = h2_request(server.url, "POST", "/v1/chat/completions", b"x" * 5000, {"Content-Type": "application/json"})
        assert big.status == 413 and b"ssemock_body_too_large" in big.body
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw:
            settings = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty SETTINGS frame
            on_stream_0 = b"\x00\x00\x04\x00\x00\x00\x00\x00\x00data"  # DATA on stream 0: RFC 9113 section 6.1
            raw.sendall(PREFACE + settings + on_stream_0)
            reply = b""
            while chunk := raw.recv(65536):
                reply += chunk
        # the server's SETTINGS, then GOAWAY (type 0x7) with PROTOCOL_ERROR (0x1), then the close
        goaway = reply.find(b"\x07\x00\x00\x00\x00\x00")
        assert goaway > 0 and reply[goaway + 10 : goaway + 14] == b"\x00\x00\x00\x01"


def test_serve_refuses_http2_with_workers(capsys: pytest.CaptureFixture[str]) -> None:
    from ssemock.cli import main

    assert main(["serve", "--http2", "--workers", "2"]) == 2
    assert "--http2 goes without --workers" in capsys.readouterr().err


def test_a_stop_lets_streams_finish_for_grace_then_goaway_ends_the_connection() -> None:
    import time
    from concurrent.futures import ThreadPoolExecutor

    server = MockServer(scenarios=None, timing_scale=0, http2=True, grace=0.3)
    name = "openai-chat-finish-length-usage"
    inter = server.state.cassettes[name].interactions[0]
    with ThreadPoolExecutor(1) as pool:
        with server:  # the stall preset: 5 s after the first event
            reading = pool.submit(
                h2_request,
                server.url,
                "POST",
                inter.request.path,
                inter.request.body or b"",
                {**headers(name, inter), "X-SSEMock-Scenario": "stall"},
                timeout=20,
            )
            deadline = time.monotonic() + 10
            while not any(e.get("chunks_sent") for e in server.requests) and time.monotonic() < deadline:
                time.sleep(0.02)
        got = reading.result(timeout=20)
    entry = server.state.journal[-1].to_json()
    assert entry["outcome"] == "stopped" and entry["chunks_sent"] == 1
    assert got.goaway == (0x0, got.stream_id) and not got.ended  # the stream was taken, then cut by the stop
    assert got.body == inter.response.chunks[0].data


def test_the_fixture_answers_http2_with_ssemock_http2(pytester: pytest.Pytester) -> None:
    """``--ssemock-http2``: the session's fake provider answers httpx with prior knowledge in HTTP/2, and a test's
    scenario with an HTTP/2 fault applies."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_h2="""
        import httpx
        import pytest

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        def test_h2(ssemock):
            with httpx.Client(http1=False, http2=True, base_url=ssemock.url) as client:
                answer = client.post("/v1/chat/completions", json={})
                assert answer.http_version == "HTTP/2" and answer.text.endswith("data: [DONE]\\n\\n")
                with pytest.raises(httpx.RemoteProtocolError):
                    client.post("/v1/chat/completions", json={}, headers={"X-SSEMock-Scenario": "h2-reset-mid-event"})
            assert [e["framing"] for e in ssemock.requests] == ["h2", "h2"]
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--ssemock-http2")
    result.assert_outcomes(passed=1)


def test_a_client_resetting_stream_after_stream_is_sent_away() -> None:
    """The "rapid reset" flood (CVE-2023-44487): each stream opened and reset at once costs a request's work;
    past ``MAX_RESETS`` the connection gets ``GOAWAY ENHANCE_YOUR_CALM`` (0xb)."""
    import h2.connection
    import h2.events

    from ssemock.http2.connection import MAX_RESETS

    with (
        MockServer(scenarios=None, timing_scale=1, http2=True) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw,
    ):
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        raw.sendall(conn.data_to_send())
        for _ in range(MAX_RESETS + 50):
            stream_id = conn.get_next_available_stream_id()
            conn.send_headers(
                stream_id,
                [
                    (":method", "GET"),
                    (":path", "/_ssemock/s/stall/v1/chat/completions"),
                    (":scheme", "http"),
                    (":authority", "127.0.0.1"),
                ],
                end_stream=True,
            )
            conn.reset_stream(stream_id, 0x8)
        raw.sendall(conn.data_to_send())
        ended = None
        while ended is None and (data := raw.recv(65536)):
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ConnectionTerminated):
                    ended = event.error_code
    assert ended == 0xB
