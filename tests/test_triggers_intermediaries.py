"""What intermediaries do to a stream, on real recordings: a re-chunking proxy, a buffering
proxy, a buffering compressor, HTTP/1.0 framing; and fragmentation within a pacing budget.

Each trigger is shown on bundled recordings of two providers: a short client with the matching
bug fails, while httpx-sse and the provider's SDK get what the recording holds (the events a
WHATWG parser dispatches from the recorded bytes, and the JSON they carry).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import MockServer, Scenario, ScenarioError
from ssemock.cassette import Cassette, Chunk, End, Interaction, Request, Response
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.plan import Plan
from ssemock.scenario.boundaries import instances, keep_within
from ssemock.scenario.chunk_steps import DEFAULT_BUDGET, DEFAULT_PACE

from .rawclient import RawResponse, raw_request
from .sseclients import Stream, read_with_httpx_sse, sse_streams

STREAMS = {s.id: s for s in sse_streams(collect_cassettes(None))}
CHAT = STREAMS["openai-chat-finish-length-usage#0"]          # OpenAI chat completions, 5 events
THINKING = STREAMS["anthropic-messages-thinking#0"]          # Anthropic messages, 118 events, 16.6 KB
RESPONSES = STREAMS["openai-responses-function-call#1"]      # OpenAI Responses, 22 events, 8.9 KB
GEMINI = STREAMS["gemini-streamgeneratecontent-crlf#0"]      # Gemini, CRLF framed
QWEN = STREAMS["alibaba-qwen-chat-emoji-split#0"]            # Alibaba Qwen, 82 KB, emoji: the largest
GZIP_PER_EVENT = Scenario.from_dict({"name": "gzip-per-event", "steps": [{"content-encoding": {"coding": "gzip"}}]})


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    # timing scale 1: the fragments are paced, so that the buggy readers see them as reads
    with MockServer(scenarios=[*collect_scenarios(None).values(), GZIP_PER_EVENT]) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: MockServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def payloads(stream: Stream) -> list[Any]:
    """The JSON of every event of the recording, ``[DONE]`` left as it is."""
    return [data if data == "[DONE]" else json.loads(data) for _, data in stream.truth()]


def outcome(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        return f"raised {type(exc).__name__}"


def wire(server: MockServer, stream: Stream, scenario: str) -> RawResponse:
    server.reset()
    return raw_request(server.url, stream.method, stream.path, stream.body or b"", stream.headers(scenario))


# ---- the buggy clients (each the whole client) -----------------------------------------------
def json_per_read(client: httpx.Client, stream: Stream, scenario: str) -> list[Any]:
    """Bug: parses the data: lines of each network read on its own, keeping nothing across reads."""
    out: list[Any] = []
    with client.stream(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario)) as r:
        for read in r.iter_bytes():
            for line in read.decode().splitlines():
                if line.startswith("data:"):
                    value = line[5:].strip()
                    out.append(value if value == "[DONE]" else json.loads(value))
    return out


def events_per_read(client: httpx.Client, stream: Stream, scenario: str) -> list[Any]:
    """Bug: takes each (decompressed) read to hold whole events, as a per-event flush gives."""
    out: list[Any] = []
    with client.stream(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario)) as r:
        for read in r.iter_bytes():
            for block in read.decode().replace("\r\n", "\n").split("\n\n"):
                data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
                if data:
                    out.append(data if data == "[DONE]" else json.loads(data))
    return out


# ---- the provider SDKs -----------------------------------------------------------------------
def sdk_events(server: MockServer, stream: Stream, scenario: str) -> list[Any]:
    """The provider SDK's events for ``stream``, as JSON; the request body is the recorded one."""
    body = json.loads(stream.body) if stream.body else {}
    body.pop("stream", None)
    headers = {k: v for k, v in stream.headers(scenario).items() if k.startswith("X-")}
    server.reset()
    if stream.path.endswith("/messages"):
        with anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0) as a:
            made = a.messages.create(model=body.pop("model"), max_tokens=body.pop("max_tokens"),
                                     messages=body.pop("messages"), stream=True, extra_body=body,
                                     extra_headers=headers)
            return [e.model_dump(exclude_unset=True) for e in made]
    with openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0) as o:
        if stream.path.endswith("/responses"):
            events: list[Any] = list(o.responses.create(model=body.pop("model"), input=body.pop("input"), stream=True,
                                                        extra_body=body, extra_headers=headers))
        else:
            events = list(o.chat.completions.create(model="gpt-4o", messages=[], stream=True, extra_headers=headers))
    return [e.model_dump(exclude_unset=True) for e in events]


def sdk_view(events: list[Any]) -> list[Any]:
    """What the recording says the SDK must yield: each event's type (or chunk id) and text."""
    out = []
    for e in events:
        delta = e.get("delta")
        text = delta if isinstance(delta, str) else (delta or {}).get("text") or (delta or {}).get("thinking")
        if "choices" in e:
            text = "".join(c.get("delta", {}).get("content") or "" for c in e["choices"])
        out.append((e.get("type", e.get("id")), text))
    return out


SDK_CASES = {"openai-chat": CHAT, "anthropic": THINKING, "openai-responses": RESPONSES}


# ---- proxy-rechunk: every data: line cut once inside it ---------------------------------------
@pytest.mark.parametrize("stream", [CHAT, THINKING, GEMINI, QWEN], ids=lambda s: s.cassette)
def test_proxy_rechunk_cuts_every_line_once_inside_it(server: MockServer, stream: Stream) -> None:
    r = wire(server, stream, "proxy-rechunk")
    assert r.body == stream.recorded
    ends, pos = set(), 0
    for chunk in r.chunks[:-1]:
        pos += len(chunk)
        ends.add(pos)
    lines = [m for m in re.finditer(rb"[^\r\n]+", stream.recorded) if m.end() - m.start() >= 2]
    assert sum(m.group().startswith(b"data:") for m in lines) >= 3
    assert server.requests[0]["injected"] == [f"fragment: {len(lines)} lines cut once each (seeded)"]
    for m in lines:
        assert len([e for e in ends if m.start() < e < m.end()]) == 1, m.group()[:40]


@pytest.mark.parametrize("stream", [CHAT, THINKING, GEMINI], ids=lambda s: s.cassette)
def test_proxy_rechunk_breaks_json_per_read_but_not_httpx_sse(client: httpx.Client, stream: Stream) -> None:
    assert outcome(lambda: json_per_read(client, stream, "")) == payloads(stream), "the bug needs the trigger"
    assert outcome(lambda: json_per_read(client, stream, "proxy-rechunk")) != payloads(stream)
    assert read_with_httpx_sse(client, stream, "proxy-rechunk") == stream.truth()


# ---- gzip-buffered: gzip flushed every 4 KiB, not per event ------------------------------------
@pytest.mark.parametrize("stream", [THINKING, RESPONSES, QWEN], ids=lambda s: s.cassette)
def test_gzip_buffered_flushes_every_4_kib_of_the_body(server: MockServer, stream: Stream) -> None:
    r = wire(server, stream, "gzip-buffered")
    assert r.header("content-encoding") == "gzip" and gzip.decompress(r.body) == stream.recorded
    inflater = zlib.decompressobj(wbits=31)
    sizes = [len(inflater.decompress(chunk)) for chunk in r.chunks]  # each HTTP chunk decompresses on arrival
    sizes[-1] += len(inflater.flush())
    sizes = [s for s in sizes if s]
    assert sizes[:-1] == [4096] * (len(sizes) - 1) and 0 < sizes[-1] <= 4096


@pytest.mark.parametrize("stream", [THINKING, RESPONSES], ids=lambda s: s.cassette)
def test_gzip_buffered_breaks_events_per_read_but_not_httpx_sse(client: httpx.Client, stream: Stream) -> None:
    assert outcome(lambda: events_per_read(client, stream, "gzip-per-event")) == payloads(stream), \
        "flushed per event, every read holds whole events"
    assert outcome(lambda: events_per_read(client, stream, "gzip-buffered")) != payloads(stream)
    assert read_with_httpx_sse(client, stream, "gzip-buffered") == stream.truth()


@pytest.mark.parametrize(("scenario", "case"), [
    ("proxy-rechunk", "openai-chat"), ("proxy-rechunk", "anthropic"),
    ("gzip-buffered", "anthropic"), ("gzip-buffered", "openai-responses"),
])
def test_intermediaries_leave_the_sdks_their_events(server: MockServer, scenario: str, case: str) -> None:
    stream = SDK_CASES[case]
    expected = sdk_view([e for e in payloads(stream) if e != "[DONE]" and e.get("type") != "ping"])
    assert len(expected) >= 4
    assert sdk_view(sdk_events(server, stream, scenario)) == expected


# ---- buffer-4k / buffer-16k, http10 ------------------------------------------------------------
@pytest.mark.parametrize(("preset", "size"), [("buffer-4k", 4096), ("buffer-16k", 16384)])
def test_buffer_presets_send_fixed_size_chunks(server: MockServer, preset: str, size: int) -> None:
    for stream in (THINKING, QWEN):
        r = wire(server, stream, preset)
        assert r.body == stream.recorded and r.ending == "complete"
        assert [len(c) for c in r.chunks[:-1]] == [size] * (len(r.chunks) - 1) and 0 < len(r.chunks[-1]) <= size
        assert server.requests[0]["injected"] == [
            f"fragment: {len(r.chunks)} buffers of at most {size} bytes, each sent when its last byte was recorded"]


def test_a_buffer_leaves_when_its_last_byte_was_recorded() -> None:
    events = [b'data: {"n": %d, "pad": "%s"}\n\n' % (i, b"x" * 2950) for i in range(3)]
    assert [len(e) for e in events] == [2977] * 3
    response = Response(status=200, headers=[("content-type", "text/event-stream")],
                        chunks=[Chunk(0.3 * i, e) for i, e in enumerate(events)], start=0.0,
                        end=End(0.6, "clean"), timed=True)
    cassette = Cassette("timed", [Interaction(Request(method="POST", path="/v1/chat/completions"), response)])
    with MockServer(cassettes=[cassette]) as server:
        r = raw_request(server.url, "POST", "/v1/chat/completions", b"{}",
                        {"X-SSEMock-Cassette": "timed", "X-SSEMock-Scenario": "buffer-4k"})
    assert [len(c) for c in r.chunks] == [4096, 4096, 3 * 2977 - 8192]
    # bytes 0..4095 end in the second recorded chunk (0.3 s), the rest in the third (0.6 s): never earlier
    assert r.times[0] >= 0.3 and r.times[1] >= 0.6 and r.times[2] >= 0.6


@pytest.mark.parametrize("stream", [CHAT, THINKING], ids=lambda s: s.cassette)
def test_http10_is_close_delimited(server: MockServer, client: httpx.Client, stream: Stream) -> None:
    r = wire(server, stream, "http10")
    assert r.status == 200 and r.body == stream.recorded and r.ending == "complete"
    assert r.header("transfer-encoding") is None and r.header("content-length") is None
    assert r.header("connection") == "close" and server.requests[0]["framing"] == "close"
    assert read_with_httpx_sse(client, stream, "http10") == stream.truth()


# ---- fragmentation within a pacing budget ------------------------------------------------------
def test_split_bytes_on_the_largest_recording_keeps_to_its_budget(server: MockServer, client: httpx.Client) -> None:
    body = QWEN.recorded
    r = wire(server, QWEN, "split-bytes")
    assert r.body == body
    note = server.requests[0]["injected"]
    assert any(f"of {len(body) - 276} cuts made within the pacing budget of 2 s" in line for line in note), note
    # 276 recorded chunks, all at one time, so every boundary is paced: at most budget / pace of them
    assert len(r.chunks) - 1 <= DEFAULT_BUDGET / DEFAULT_PACE
    ends, pos = {0}, 0
    for chunk in r.chunks:
        pos += len(chunk)
        ends.add(pos)
    kinds = instances(body)
    assert len(kinds["utf8"]) == 13 and len(kinds["data"]) == 276 and not kinds["crlf"]
    for kind in ("utf8", "crlf", "blank", "event", "data"):  # one boundary inside each instance of each kind
        assert all(any(first <= e <= last for e in ends) for first, last in kinds[kind]), kind
    assert read_with_httpx_sse(client, QWEN, "split-bytes") == QWEN.truth()


def test_a_larger_budget_splits_every_byte_again() -> None:
    every = Scenario.from_dict({"name": "every", "steps": [{"fragment": {"mode": "bytes", "budget": 600}}]})
    with MockServer(scenarios=[every], timing_scale=0) as server:
        r = wire(server, CHAT, "every")
        assert r.chunks == [bytes([b]) for b in CHAT.recorded] and server.requests[0]["injected"] == [
            f"fragment: bytes, {len(CHAT.recorded)} chunks"]


@pytest.mark.parametrize(("value", "expected"), [
    (601, "a number from 0 to 600"), (-1, "a number from 0 to 600"), ("2s", "a number from 0 to 600"),
])
def test_budget_is_bounded(value: object, expected: str) -> None:
    with pytest.raises(ScenarioError, match=rf"steps\[0\]\.fragment\.budget: expected {expected}"):
        Scenario.from_dict({"steps": [{"fragment": {"budget": value}}]}, source="x.yaml")


@settings(max_examples=80, deadline=None)
@given(body=st.binary(max_size=300) | st.sampled_from([CHAT.recorded, GEMINI.recorded]),
       seed=st.integers(0, 1000), room=st.integers(0, 400))
def test_keep_within_keeps_at_most_room_of_the_cuts(body: bytes, seed: int, room: int) -> None:
    cuts = list(range(1, len(body)))
    kept = keep_within(body, cuts, room, random.Random(seed))
    assert kept.cuts == sorted(set(kept.cuts)) and set(kept.cuts) <= set(cuts)
    assert len(kept.cuts) == len(cuts) if len(cuts) <= room else len(kept.cuts) <= room
    spans = [span for kind in instances(body).values() for span in kind]
    if len(spans) <= room:  # room for one boundary in each character, CRLF, blank line, event and data value
        assert all(any(first <= c <= last for c in kept.cuts) for first, last in spans)


def test_buffers_keep_their_size_past_the_budget() -> None:
    body = b"".join(b'data: {"n": %d}\n\n' % i for i in range(400_000))  # 7.4 MB, 1,800 buffers
    plan = Scenario.from_dict({"steps": [{"fragment": {"mode": "buffer", "size": 4096}}]}).apply(
        Plan.of(Response(status=200, headers=[("content-type", "text/event-stream")], chunks=[Chunk(0.0, body)])))
    assert [len(c.data) for c in plan.response.chunks[:-1]] == [4096] * (len(body) // 4096)
    assert b"".join(c.data for c in plan.response.chunks) == body
