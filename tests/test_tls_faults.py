"""Faults of the TLS layer: ``tls-records`` (records cut inside the response's writes) and ``tls-close`` (a TCP
FIN with no ``close_notify``), each seen on the wire by a client that reads TLS record by record
(tests/tlsclient.py), the HTTP response parsed by h11. A request without TLS under such a step is refused,
naming it.

Expected values: the body is the recording's (``openai-chat-finish-length-usage``: five LF-framed events in
five chunks, SOURCES.md #3; ``alibaba-qwen-chat-emoji-split``: multi-byte characters); a record's plaintext
is at most 16,384 bytes and a receiver reads each record alone (RFC 8446 section 5.1); a closure without
``close_notify`` is an EOF that is not a clean end (RFC 8446 section 6.1: Python's ``ssl.SSLEOFError``).
"""

from __future__ import annotations

import re
import socket
import ssl
import time
import tracemalloc
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import h11
import httpx
import pytest

import ssemock
from ssemock import Cassette, Chunk, Interaction, MockServer, Request, Response, Scenario
from ssemock.mockserver import collect_cassettes
from ssemock.sse import decode
from ssemock.tls import TLSFiles, local_authority
from ssemock.tlsfaults import MAX_CUTS, RecordCutter, TLSFaults

from .h2client import h2_request
from .tlsclient import Records, tls_records

CHAT = "openai-chat-finish-length-usage"
QWEN = "alibaba-qwen-chat-emoji-split"
CASSETTES = collect_cassettes(None)
SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "size-7": [{"tls-records": {"mode": "size", "size": 7}}],
    "offsets": [{"tls-records": {"mode": "offsets", "offsets": [130, 400]}}],
    "utf8": [{"tls-records": {"mode": "utf8"}}],
    "random": [{"tls-records": {"mode": "random", "min": 2, "max": 9}}],
    "close-no-notify": [{"framing": {"mode": "close"}}, {"tls-close": {"from_end": 0}}],
    "close-notify": [{"framing": {"mode": "close"}}, {"disconnect": {"from_end": 0, "how": "cut"}}],
    "mid-event": [{"tls-close": {"inside_event": 1}}],
}


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return local_authority(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(tls_files: TLSFiles) -> Iterator[MockServer]:
    custom = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in SCENARIOS.items()]
    with MockServer(scenarios=[ssemock.bundled.bundled_scenarios(), *custom], timing_scale=0, tls=tls_files,
                    http2=True) as running:
        yield running


def recorded(cassette: str) -> bytes:
    return b"".join(c.data for c in CASSETTES[cassette].interactions[0].response.chunks)


def ask(server: MockServer, tls_files: TLSFiles, scenario: str | None, cassette: str = CHAT) -> Records:
    request = CASSETTES[cassette].interactions[0].request
    body = request.body or b"{}"
    head = [f"POST {request.path} HTTP/1.1", "Host: localhost", "Content-Type: application/json",
            f"Content-Length: {len(body)}", f"X-SSEMock-Cassette: {cassette}", "Connection: close"]
    if scenario:
        head.append(f"X-SSEMock-Scenario: {scenario}")
    port = int(server.url.rsplit(":", 1)[1])
    return tls_records("127.0.0.1", port, "\r\n".join(head).encode() + b"\r\n\r\n" + body, str(tls_files.ca))


def http_body(data: bytes) -> tuple[int, bytes, bool]:
    """``(status, body, whole)`` of the HTTP/1.1 response ``data`` as h11 reads it (``whole``: its end came)."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("Host", "localhost"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(data)
    conn.receive_data(b"")  # the connection's end: a close-delimited body ends here
    status, body, whole = 0, b"", False
    while (event := _next(conn)) not in (h11.NEED_DATA, h11.PAUSED):
        if isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            whole = True
        elif isinstance(event, h11.ConnectionClosed):
            break
    return status, body, whole


def _next(conn: h11.Connection) -> Any:
    try:
        return conn.next_event()
    except h11.RemoteProtocolError:  # the connection ended before the body's end
        return h11.PAUSED


def cut_count(server: MockServer) -> int:
    """The records the last answer cut inside its writes, as its journal entry says."""
    [count] = [int(m[1]) for note in server.requests[-1]["injected"]
               if (m := re.fullmatch(r"tls-records: (\d+) record\(s\) cut inside writes", note))]
    return count


def ends(records: Records) -> set[int]:
    """The offsets (bytes of the response) where records end."""
    return set(accumulate(map(len, records.plaintext)))


def test_without_the_step_each_write_is_one_record(server: MockServer, tls_files: TLSFiles) -> None:
    got = ask(server, tls_files, None)
    assert http_body(got.data) == (200, recorded(CHAT), True)
    for chunk in CASSETTES[CHAT].interactions[0].response.chunks:  # each recorded chunk arrives in one record
        assert any(chunk.data in record for record in got.plaintext)


def test_no_record_holds_more_than_the_size_and_the_bytes_are_the_same(server: MockServer, tls_files: TLSFiles) -> None:
    clean, got = ask(server, tls_files, None), ask(server, tls_files, "size-7")
    assert got.end == "close_notify"
    assert max(map(len, got.plaintext)) == 7 and len(got.plaintext) >= len(got.data) // 7
    assert http_body(got.data) == (200, recorded(CHAT), True)
    assert re.sub(rb"Date: [^\r]*", b"", got.data) == re.sub(rb"Date: [^\r]*", b"", clean.data)
    assert cut_count(server) == len(got.plaintext) - len(clean.plaintext)


def test_records_end_at_the_chosen_offsets_and_at_each_write(server: MockServer, tls_files: TLSFiles) -> None:
    clean, got = ask(server, tls_files, None), ask(server, tls_files, "offsets")
    assert {130, 400} <= ends(got)
    assert len(got.plaintext) >= len(clean.plaintext) + 2  # clean: one record per write
    assert http_body(got.data) == (200, recorded(CHAT), True)


def test_split_crlf_preset_ends_a_record_between_every_cr_and_lf(server: MockServer, tls_files: TLSFiles) -> None:
    got = ask(server, tls_files, "tls-split-crlf")
    status, body, whole = http_body(got.data)
    assert (status, whole) == (200, True)
    assert body.count(b"\r\n") == recorded(CHAT).count(b"\n")  # every LF of the recording became CRLF
    assert not any(b"\r\n" in record for record in got.plaintext)  # each CRLF of the wire split across records
    assert decode(body) == decode(recorded(CHAT))  # and the events are the recording's (WHATWG 9.2.6)


def test_utf8_mode_ends_a_record_inside_every_multibyte_character(server: MockServer, tls_files: TLSFiles) -> None:
    got = ask(server, tls_files, "utf8", QWEN)
    data = got.data
    continuation = [m.start() for m in re.finditer(rb"[\x80-\xbf]", data)]
    assert continuation and set(continuation) <= ends(got)
    assert http_body(data)[1] == recorded(QWEN)


def test_random_records_are_seeded_and_within_the_bounds(server: MockServer, tls_files: TLSFiles) -> None:
    first, again = ask(server, tls_files, "random"), ask(server, tls_files, "random")
    assert [len(r) for r in first.plaintext] == [len(r) for r in again.plaintext]  # server.reset: same seed
    assert max(map(len, first.plaintext)) <= 9
    assert http_body(first.data)[1] == recorded(CHAT)


def test_a_close_without_close_notify_is_an_eof_to_tls_where_a_cut_sends_the_alert(
    server: MockServer, tls_files: TLSFiles,
) -> None:
    bare, alert = ask(server, tls_files, "close-no-notify"), ask(server, tls_files, "close-notify")
    assert (bare.end, alert.end) == ("eof", "close_notify")
    # the same bytes: a close-delimited body a client can tell from a whole one by TLS alone
    assert http_body(bare.data) == http_body(alert.data) == (200, recorded(CHAT), True)
    assert server.requests[-2]["outcome"] == "cut"


def test_a_close_without_close_notify_inside_an_event_is_reported_by_httpx(
    server: MockServer, tls_files: TLSFiles,
) -> None:
    request = CASSETTES[CHAT].interactions[0].request
    got = ask(server, tls_files, "mid-event")
    assert got.end == "eof" and not http_body(got.data)[2]  # no chunked terminator
    verify = ssl.create_default_context(cafile=str(tls_files.ca))
    with httpx.Client(verify=verify, timeout=10) as client, pytest.raises(httpx.RemoteProtocolError):
        client.post(server.url + request.path, content=request.body,
                    headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "mid-event"})


def test_over_http2_the_records_of_the_connection_are_cut_and_the_frames_still_carry_the_body(
    server: MockServer, tls_files: TLSFiles,
) -> None:
    request = CASSETTES[CHAT].interactions[0].request
    got = h2_request(server.url, "POST", request.path, request.body or b"{}",
                     {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "size-7"}, cafile=str(tls_files.ca))
    assert got.ended and got.body == recorded(CHAT)
    assert cut_count(server) >= len(recorded(CHAT)) // 7  # the DATA frames' bytes, cut in records of 7


def test_a_request_without_tls_under_a_tls_step_is_refused_naming_it(tmp_path: Path) -> None:
    custom = [Scenario.from_dict({"name": n, "steps": SCENARIOS[n]}) for n in ("size-7", "close-no-notify")]
    with MockServer(scenarios=custom, timing_scale=0) as plain:
        request = CASSETTES[CHAT].interactions[0].request
        for name, steps in (("size-7", ["tls-records"]), ("close-no-notify", ["tls-close"])):
            answer = httpx.post(plain.url + request.path, content=request.body,
                                headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": name})
            error = answer.json()["error"]
            assert (answer.status_code, error["type"], error["steps"]) == (400, "ssemock_needs_tls", steps)
            assert "--tls" in error["message"]


def test_the_tls_presets_join_the_matrix_only_when_asked() -> None:
    assert "tls-split-crlf" in ssemock.conformance_matrix(tls=True)
    assert "tls-split-crlf" not in ssemock.conformance_matrix()
    assert "tls-cut-without-close-notify" not in ssemock.conformance_matrix(tls=True)  # it preserves nothing


def test_a_cutter_computes_no_more_ends_than_the_cuts_it_may_make() -> None:
    big = b"x" * 4_000_000  # one write of 4 MB, records of 1 byte: the first MAX_CUTS cuts, then whole
    tracemalloc.start()
    pieces = RecordCutter(TLSFaults(records="size", size=1)).cut(big)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(pieces) == MAX_CUTS + 1 and b"".join(pieces) == big
    assert peak < 16 * 1024 * 1024  # the pieces (~4 MB), not a list of every offset of the write


def test_a_cutter_finds_the_offsets_of_a_write_without_scanning_them_all() -> None:
    cutter = RecordCutter(TLSFaults(records="offsets", offsets=tuple(range(60_000_000, 60_000_000 + MAX_CUTS))))
    started = time.monotonic()
    for _ in range(2_000):  # 2,000 writes before the first offset: none is cut, each found by bisection
        assert len(cutter.cut(b"y" * 1_000)) == 1
    assert time.monotonic() - started < 2.0  # a scan of the 100,000 offsets in each write takes ~30 s


def test_over_http2_streams_that_cut_records_at_once_each_keep_their_bound(tls_files: TLSFiles) -> None:
    steps = {"slow-7": [{"timing": {"mode": "fixed", "interval": 0.06}}, {"tls-records": {"mode": "size", "size": 7}}],
             "fast-5": [{"timing": {"mode": "fixed", "interval": 0.01}}, {"tls-records": {"mode": "size", "size": 5}}]}
    custom = [Scenario.from_dict({"name": name, "steps": s}) for name, s in steps.items()]
    with MockServer(scenarios=custom, tls=tls_files, http2=True) as running:
        bodies = h2_streams(running, tls_files, ["slow-7", "fast-5"])
        assert bodies == [recorded(CHAT)] * 2
        slow = next(e for e in running.requests if e["outcome"] and "slow-7" in str(e))
        # the fast stream ends first: the slow one's frames written after that are still cut in records of 7
        [count] = [int(m[1]) for note in slow["injected"]
                   if (m := re.fullmatch(r"tls-records: (\d+) record\(s\) cut inside writes", note))]
        assert count >= len(recorded(CHAT)) // 7


def test_over_http2_many_streams_cutting_records_cost_their_cuts_not_their_product(tls_files: TLSFiles) -> None:
    event = b'data: {"choices":[{"delta":{"content":"' + b"x" * 1_000 + b'"}}]}\n\n'
    inter = Interaction(Request("POST", "/v1/chat/completions"),
                        Response(200, None, [("content-type", "text/event-stream")], [Chunk(0, event)] * 5))
    size_1 = Scenario.from_dict({"name": "size-1", "steps": [{"timing": {"mode": "fixed", "interval": 0.01}},
                                                          {"tls-records": {"mode": "size", "size": 1}}]})
    with MockServer([Cassette("kb", [inter])], scenarios=[size_1], tls=tls_files, http2=True) as running:
        started = time.monotonic()  # 50 answers at once on one connection, each in records of 1 byte
        bodies = h2_streams(running, tls_files, ["size-1"] * 50, cassette="kb")
        took = time.monotonic() - started
    assert bodies == [event * 5] * 50
    assert took < 5.0  # each write cut once at the union of the ends; each cutter in turn on the pieces: ~11 s


def h2_streams(server: MockServer, tls_files: TLSFiles, scenarios: list[str], cassette: str = CHAT) -> list[bytes]:
    """The bodies of one HTTP/2 stream per scenario, all sent at once on one connection."""
    request = CASSETTES[CHAT].interactions[0].request
    context = ssl.create_default_context(cafile=str(tls_files.ca))
    context.set_alpn_protocols(["h2"])
    port = int(server.url.rsplit(":", 1)[1])
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    with context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                             server_hostname="localhost") as sock:
        conn.initiate_connection()
        bodies: dict[int, bytes] = {}
        for name in scenarios:
            sid = conn.get_next_available_stream_id()
            bodies[sid] = b""
            conn.send_headers(sid, [(":method", "POST"), (":path", request.path), (":scheme", "https"),
                                    (":authority", "localhost"), ("x-ssemock-cassette", cassette),
                                    ("x-ssemock-scenario", name)])
            conn.send_data(sid, request.body or b"{}", end_stream=True)
        sock.sendall(conn.data_to_send())
        ended: set[int] = set()
        while len(ended) < len(bodies) and (data := sock.recv(65_536)):
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.DataReceived):
                    bodies[event.stream_id] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    ended.add(event.stream_id)
            sock.sendall(conn.data_to_send())
    return list(bodies.values())


def test_a_close_without_close_notify_sends_every_byte_before_it_to_a_client_slow_to_read(tls_files: TLSFiles) -> None:
    body = b'data: {"choices":[{"delta":{"content":"' + b"x" * 8_000_000 + b'"}}]}\n\n'  # one write past the buffers
    inter = Interaction(Request("POST", "/v1/chat/completions"),
                        Response(200, None, [("content-type", "text/event-stream")], [Chunk(0, body)]))
    whole = Scenario.from_dict({"name": "whole", "steps": SCENARIOS["close-no-notify"]})
    with MockServer([Cassette("big", [inter])], scenarios=[whole], timing_scale=0, tls=tls_files) as running:
        context = ssl.create_default_context(cafile=str(tls_files.ca))
        port = int(running.url.rsplit(":", 1)[1])
        with socket.socket() as raw:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65_536)
            raw.settimeout(20)
            raw.connect(("127.0.0.1", port))
            with context.wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False) as sock:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n"
                             b"X-SSEMock-Cassette: big\r\nX-SSEMock-Scenario: whole\r\n\r\n{}")
                time.sleep(1.0)  # within DRAIN_WAIT: the server still holds what the kernel could not take
                data, end = b"", "open"
                try:
                    while chunk := sock.recv(1 << 20):
                        data += chunk
                except ssl.SSLEOFError:  # a FIN with no close_notify (RFC 8446 section 6.1)
                    end = "eof"
    assert end == "eof"
    assert data.endswith(body) and data.startswith(b"HTTP/1.1 200")
