"""Faults of the HTTP/2 layer: each one's effect on the wire, seen by a raw ``h2`` client on a socket (DATA frame
boundaries, the ``RST_STREAM`` error code, ``GOAWAY``'s last stream id, the stalled window), and what httpx
(``http2=True``) then reports. An HTTP/1.1 request under such a step is refused, naming it.

Expected bytes come from the recording: ``openai-chat-finish-length-usage`` is five LF-framed events in five
chunks (SOURCES.md #3); error codes are RFC 9113 section 7's (CANCEL 0x8, INTERNAL_ERROR 0x2, NO_ERROR 0x0).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

import httpx
import httpx_sse
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssemock
from ssemock import MockServer, Scenario
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .h2client import H2Response, h2_request
from .rawclient import raw_request

CHAT = "openai-chat-finish-length-usage"
QWEN = "alibaba-qwen-chat-emoji-split"
CASSETTES = collect_cassettes(None)
CHUNKS = [c.data for c in CASSETTES[CHAT].interactions[0].response.chunks]
RECORDED = b"".join(CHUNKS)
BLOCKS = [b + b"\n\n" for b in RECORDED.split(b"\n\n")[:-1]]
SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "offsets": [{"h2-frames": {"mode": "offsets", "offsets": [5, 17, 300]}}],
    "utf8": [{"h2-frames": {"mode": "utf8"}}],
    "random": [{"h2-frames": {"mode": "random", "min": 3, "max": 40}}],
    "reset-cancel": [{"h2-reset": {"after_events": 2, "code": "CANCEL"}}],
    "goaway-this": [{"h2-goaway": {"inside_event": 2, "code": "INTERNAL_ERROR", "last_stream": "this"}}],
    "starve-window": [{"h2-starve": {"seconds": 1.0}}],
    "starve-bytes": [{"h2-starve": {"seconds": 0.5, "after_bytes": 300}}],
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    custom = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in SCENARIOS.items()]
    with MockServer(scenarios=[ssemock.bundled.bundled_scenarios(), *custom], timing_scale=0, http2=True) as running:
        yield running


def ask(server: MockServer, scenario: str, cassette: str = CHAT, **client: Any) -> H2Response:
    server.reset()
    request = CASSETTES[cassette].interactions[0].request
    return h2_request(
        server.url,
        "POST",
        request.path,
        request.body or b"{}",
        {"X-SSEMock-Cassette": cassette, "X-SSEMock-Scenario": scenario},
        **client,
    )


def ends(frames: list[bytes]) -> list[int]:
    """The body offsets where the DATA frames end."""
    return list(accumulate(map(len, frames)))


def test_frames_end_at_the_chosen_offsets_and_at_every_write(server: MockServer) -> None:
    got = ask(server, "offsets")
    assert got.ended and got.body == RECORDED
    assert ends(got.frames) == sorted({5, 17, 300, *ends(CHUNKS)})  # 300: inside the second chunk (292 + 261)
    assert "h2-frames: offsets, 3 frame ends inside writes" in server.requests[-1]["injected"]


def test_split_crlf_preset_ends_a_frame_between_every_cr_and_lf_and_keeps_the_events(server: MockServer) -> None:
    got = ask(server, "h2-split-crlf")
    crlfs = [m.start() + 1 for m in re.finditer(rb"\r\n", got.body)]
    assert got.ended and len(crlfs) == RECORDED.count(b"\n")  # every LF became a CRLF
    assert set(crlfs) <= set(ends(got.frames))  # a frame ends after each CR, before its LF
    assert [(e.type, e.data) for e in decode(got.body) if isinstance(e, Event)] == [
        (e.type, e.data) for e in decode(RECORDED) if isinstance(e, Event)
    ]
    assert "h2-split-crlf" in ssemock.conformance_matrix(http2=True)
    assert "h2-split-crlf" not in ssemock.conformance_matrix()  # the default matrix runs over HTTP/1.1


def test_httpx_sse_over_http2_reads_the_same_events_from_frames_split_inside_utf8(server: MockServer) -> None:
    inter = CASSETTES[QWEN].interactions[0]
    body = inter.response.body
    got = ask(server, "utf8", QWEN)
    assert got.body == body
    continuation = {m.start() for m in re.finditer(rb"[\x80-\xbf]", body)}
    assert len(continuation) >= 20 and continuation <= set(ends(got.frames))  # inside every multi-byte character
    with (
        httpx.Client(http2=True, http1=False, base_url=server.url, timeout=30) as client,
        httpx_sse.connect_sse(
            client,
            "POST",
            inter.request.path,
            content=inter.request.body,
            headers={"X-SSEMock-Cassette": QWEN, "X-SSEMock-Scenario": "utf8", "Content-Type": "application/json"},
        ) as source,
    ):
        assert source.response.http_version == "HTTP/2"
        seen = [(e.event, e.data) for e in source.iter_sse()]
    assert seen == [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def test_random_frames_are_seeded(server: MockServer) -> None:
    first, again = ask(server, "random"), ask(server, "random")
    assert first.frames == again.frames and first.body == RECORDED
    inside = [len(f) for f in first.frames]
    assert len(inside) > 20 and max(inside) <= 40


def test_rst_stream_with_the_chosen_code_after_n_events(server: MockServer) -> None:
    got = ask(server, "reset-cancel")
    assert got.reset_code == 0x8 and not got.ended and not got.closed  # CANCEL; the connection stays
    assert got.body == b"".join(BLOCKS[:2])
    entry = server.requests[-1]
    assert entry["outcome"] == "reset" and entry["status"] == 200
    assert "h2: RST_STREAM error code 8 after 553 bytes" in entry["injected"]


def test_the_reset_mid_event_preset_and_httpx_reports_the_error(server: MockServer) -> None:
    got = ask(server, "h2-reset-mid-event")
    start, stop = len(BLOCKS[0]), len(BLOCKS[0]) + len(BLOCKS[1])
    assert got.reset_code == 0x2 and got.body == RECORDED[: start + (stop - start) // 2]  # INTERNAL_ERROR
    with (
        httpx.Client(http2=True, http1=False, base_url=server.url, timeout=30) as client,
        pytest.raises(httpx.RemoteProtocolError),
        client.stream(
            "POST",
            "/v1/chat/completions",
            content=b"{}",
            headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "h2-reset-mid-event"},
        ) as answer,
    ):
        answer.read()


def test_recorded_cut_and_reset_ends_reset_the_stream(server: MockServer) -> None:
    assert ask(server, "cut-mid-event").reset_code == 0x8  # FIN without the terminating chunk: CANCEL
    assert ask(server, "reset-mid-event").reset_code == 0x2  # TCP RST: INTERNAL_ERROR


def test_goaway_mid_stream_names_the_last_stream_and_closes(server: MockServer) -> None:
    got = ask(server, "h2-goaway-mid-stream", streams_before=1)  # this request is stream 3
    assert got.stream_id == 3 and got.goaway == (0x0, 1)  # NO_ERROR, last stream id: the one before
    assert got.body == BLOCKS[0] and not got.ended
    this = ask(server, "goaway-this", streams_before=2)  # stream 5, cut inside its third event
    start, stop = sum(map(len, BLOCKS[:2])), sum(map(len, BLOCKS[:3]))
    assert this.goaway == (0x2, 5) and this.body == RECORDED[: start + (stop - start) // 2]
    assert server.requests[-1]["outcome"] == "reset"


def _gap(got: H2Response) -> tuple[int, float]:
    """The longest pause between two DATA frames: (bytes received before it, its seconds)."""
    pauses = [(later - earlier, index) for index, (earlier, later) in enumerate(zip(got.times, got.times[1:]))]
    seconds, index = max(pauses)
    return sum(map(len, got.frames[: index + 1])), seconds


def test_starvation_when_the_window_is_spent_ignores_window_updates_for_its_seconds(server: MockServer) -> None:
    got = ask(server, "starve-window", window=1000)  # the client acknowledges every frame at once
    assert got.ended and got.body == RECORDED
    before, seconds = _gap(got)
    assert before == 292 + 261 + 250  # the fourth chunk (307 bytes) does not fit the 197 bytes left of 1000
    assert seconds >= 0.95  # the timer's precision
    # the client had opened its window again when it read the third frame (h2 sends WINDOW_UPDATE once half
    # the window is read): the server could have sent the fourth chunk at once, and did not
    assert got.windows[2] >= 307
    assert f"h2-starve: stopped after {before} bytes" in " ".join(server.requests[-1]["injected"])


def test_starvation_after_n_bytes_whatever_the_window(server: MockServer) -> None:
    got = ask(server, "starve-bytes")  # a 65,535-byte window: never spent by this stream
    before, seconds = _gap(got)
    assert got.ended and got.body == RECORDED
    assert before == 300 and seconds >= 0.45  # a frame ends at byte 300, inside the second chunk


def test_an_http1_request_under_an_h2_step_is_refused_naming_it(server: MockServer) -> None:
    server.reset()
    answer = raw_request(
        server.url,
        "POST",
        "/v1/chat/completions",
        b"{}",
        {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "crlf,h2-starve"},
    )
    assert answer.status == 400
    error = httpx.Response(400, content=answer.body).json()["error"]
    assert error["type"] == "ssemock_needs_http2" and error["steps"] == ["h2-starve"]
    assert "came over HTTP/1.1" in error["message"] and "--http2" in error["message"]
    assert server.requests[-1]["status"] == 400


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(offsets=st.lists(st.integers(1, len(RECORDED) - 1), min_size=1, max_size=30), window=st.integers(64, 70_000))
def test_any_frame_offsets_and_any_client_window_keep_every_byte(
    server: MockServer,
    offsets: list[int],
    window: int,
) -> None:
    """Frames end at the chosen offsets and at every write, never past the client's window, and the body is the
    recording's byte for byte."""
    scenario = Scenario.from_dict(
        {"name": "property", "steps": [{"h2-frames": {"mode": "offsets", "offsets": offsets}}]}
    )
    server.call(lambda: server.state.scenarios.__setitem__("property", scenario))
    got = ask(server, "property", window=window)
    assert got.ended and got.body == RECORDED
    assert max(map(len, got.frames)) <= window
    assert set(offsets) | set(ends(CHUNKS)) <= set(ends(got.frames))
    if window >= 2 * max(map(len, CHUNKS)):  # every piece fits half the window: no boundary of the window's making
        assert ends(got.frames) == sorted(set(offsets) | set(ends(CHUNKS)))
