"""Keep-alive comments in wall time, during stalls and before the first event, and the endless
heartbeat: the bytes on the wire, and real clients against one-bug readers.

The period is scaled down (0.2 s for the 15 s of ``sse-starlette``'s ``: ping``). The truths:
WHATWG "event stream interpretation" — a line starting with a colon is a comment and is
ignored, so the events dispatched stay those of the recording; a comment is still bytes on the
connection, so a transport read timeout (httpx's, the SDKs') is reset by it. Assertions on time
are lower bounds or orders, never tight upper bounds (they hold with both cores busy).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import anthropic
import httpx
import httpx2
import httpx_sse
import openai
import pytest
import yaml

from ssemock import Cassette, MockServer, Scenario, ScenarioError
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .docs_examples import page_blocks
from .rawclient import raw_request

PERIOD = 0.2
PING = b": ping\n\n"
CASSETTES = collect_cassettes(None)
OPENAI = ("openai-chat-finish-length-usage", "/v1/chat/completions")
ANTHROPIC = ("anthropic-messages-thinking", "/v1/messages")
PROVIDERS = [pytest.param(*OPENAI, id="openai"), pytest.param(*ANTHROPIC, id="anthropic")]
KEEPALIVE = {"keep-alive-every": {"seconds": PERIOD, "text": "ping"}}
SCENARIOS = {
    "stall-ping": [{"stall": {"after_events": 1, "seconds": 1.0}}, KEEPALIVE],
    "long-stall-ping": [{"stall": {"after_events": 1, "seconds": 2.5}}, KEEPALIVE],
    "long-stall": [{"stall": {"after_events": 1, "seconds": 2.5}}],
    "first-byte-ping": [{"first-byte": {"seconds": 1.0}}, KEEPALIVE],
    "ping": [KEEPALIVE],
    "heartbeat": [{"heartbeat": {"seconds": PERIOD, "max_seconds": 30}}],
    "short-heartbeat": [{"heartbeat": {"seconds": PERIOD, "max_seconds": 1.0}}],
    "gzip-ping": [{"stall": {"after_events": 1, "seconds": 1.0}}, KEEPALIVE, {"content-encoding": {"coding": "gzip"}}],
}


def recorded(cassette: str) -> bytes:
    return CASSETTES[cassette].interactions[0].response.body


def events(body: bytes) -> list[tuple[str, str]]:
    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def split_event_cassette() -> Cassette:
    """One event split over two chunks 0.6 s apart, then a second event 0.6 s later."""
    chunks = [Chunk(0.0, b'data: {"a"'), Chunk(0.6, b': 1}\n\n'), Chunk(1.2, b"data: [DONE]\n\n")]
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=chunks,
                        start=0.0, end=End(1.2, "clean"), timed=True)
    return Cassette("split-event", [Interaction(Request(method="POST", path="/split"), response)])


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    scenarios = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in SCENARIOS.items()]
    with MockServer(scenarios=scenarios, timing_scale=0) as running:
        yield running


def headers(cassette: str, scenario: str | None) -> dict[str, str]:
    out = {"X-SSEMock-Cassette": cassette, "Content-Type": "application/json"}
    return out | ({"X-SSEMock-Scenario": scenario} if scenario else {})


def journal(server: MockServer) -> dict[str, Any]:
    return server.requests[-1]


def settled(server: MockServer) -> dict[str, Any]:
    """The last journal entry once its response has ended (the server notices a client that
    left a heartbeat stream at its next comment, 0.2 s at most, or when the connection closes)."""
    for _ in range(200):
        if journal(server)["outcome"] is not None:
            break
        time.sleep(0.05)
    return journal(server)


# ---- one-bug readers (each ≤ 20 lines) ----------------------------------------------------------
def comment_as_data_reader(url: str, hdrs: dict[str, str]) -> list[Any]:
    """Takes the value after the first colon of every line but ``event:`` lines as a JSON payload."""
    payloads = []
    with httpx.stream("POST", url, headers=hdrs, content=b"{}", timeout=10) as response:
        for line in response.iter_lines():
            if not line or line.startswith("event:"):
                continue
            value = line.split(":", 1)[1].strip()
            if value == "[DONE]":
                break
            payloads.append(json.loads(value))  # ": ping" -> json.loads("ping")
    return payloads


async def event_deadline_reader(url: str, hdrs: dict[str, str], budget: float = 1.0) -> list[str]:
    """Waits at most ``budget`` seconds for each *event*: a comment does not count as progress."""
    async with aiohttp.ClientSession() as session, session.post(url, headers=hdrs, data=b"{}") as response:
        lines = aiter(response.content)

        async def next_event() -> str | None:
            data: list[str] = []
            async for raw in lines:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].lstrip())
                elif not line and data:
                    return "\n".join(data)
            return None

        found = []
        while (event := await asyncio.wait_for(next_event(), budget)) is not None:
            found.append(event)
        return found


def until_eof_reader(url: str, hdrs: dict[str, str], budget: float = 2.0) -> bytes:
    """Reads the body to its end (ignores ``[DONE]`` / ``message_stop``) within an overall ``budget``."""
    deadline = time.monotonic() + budget
    body = b""
    with httpx.stream("POST", url, headers=hdrs, content=b"{}", timeout=budget) as response:
        for part in response.iter_bytes():
            body += part
            if time.monotonic() > deadline:
                raise TimeoutError(f"no end of stream after {budget} s ({len(body)} bytes)")
    return body


def httpx_sse_events(url: str, hdrs: dict[str, str], read_timeout: float = 10.0) -> list[tuple[str, str]]:
    timeout = httpx.Timeout(10.0, read=read_timeout)
    with httpx.Client(timeout=timeout) as client, \
            httpx_sse.connect_sse(client, "POST", url, headers=hdrs, content=b"{}") as source:
        return [(sse.event, sse.data) for sse in source.iter_sse()]


def openai_text(server: MockServer, scenario: str, read_timeout: float = 10.0) -> str:
    timeout = openai.Timeout(10.0, read=read_timeout)  # the SDK's own (its HTTP library's) type
    with openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, timeout=timeout) as client:
        stream = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hi"}], stream=True,
            extra_headers=headers(OPENAI[0], scenario),
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


def recorded_text() -> str:
    chunks = [json.loads(data) for _, data in events(recorded(OPENAI[0])) if data != "[DONE]"]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


# ---- the wire -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_comments_fill_a_stall_at_an_event_boundary(server: MockServer, cassette: str, path: str) -> None:
    r = raw_request(server.url, "POST", path, b"{}", headers(cassette, "stall-ping"))
    body, original = r.body, recorded(cassette)
    first_end = original.index(b"\n\n") + 2  # both recordings are LF-framed
    assert body.startswith(original[:first_end] + PING + PING)  # at least 2 comments in a 1 s stall
    assert body.replace(PING, b"") == original
    assert body[first_end:].startswith(PING * body.count(PING))  # all of them inside the stall
    assert events(body) == events(original)
    notes = journal(server)["injected"]
    assert f"keep-alive: {body.count(PING)} comment(s) sent, 8 bytes each" in notes


@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_slow_first_byte_sends_headers_then_comments_until_the_first_event(
    server: MockServer, cassette: str, path: str,
) -> None:
    r = raw_request(server.url, "POST", path, b"{}", headers(cassette, "first-byte-ping"))
    original = recorded(cassette)
    assert r.status == 200 and r.ending == "complete"
    assert r.body.startswith(PING * 2)  # headers went first: comments came before any event
    assert r.body == PING * r.body.count(PING) + original
    assert r.chunks[0] == PING  # each comment is its own write, ahead of the recorded chunks


def test_no_comment_is_written_inside_an_event() -> None:
    """Recorded timing leaves 0.6 s of silence in the middle of an event: no comment goes there,
    but one goes in the 0.6 s between the two events."""
    cassette = split_event_cassette()
    every = Scenario.from_dict({"name": "ping", "steps": [{"keep-alive-every": {"seconds": 0.1}}]})
    with MockServer([cassette], scenarios=[every], timing_scale=1) as running:
        r = raw_request(running.url, "POST", "/split", b"{}", {"X-SSEMock-Scenario": "ping"})
    original = cassette.interactions[0].response.body
    first = b'data: {"a": 1}\n\n'
    assert r.body.startswith(first + PING)  # the first comment only after the whole event
    assert r.body == first + PING * r.body.count(PING) + b"data: [DONE]\n\n"
    assert events(r.body) == events(original)


def test_a_compressed_body_gets_no_comment_and_the_journal_says_why(server: MockServer) -> None:
    cassette, path = OPENAI
    r = raw_request(server.url, "POST", path, b"{}", headers(cassette, "gzip-ping"))
    assert r.status == 200 and r.header("content-encoding") == "gzip"
    assert "keep-alive: no comment sent, the body is compressed on the wire" in journal(server)["injected"]


def test_without_waits_no_comment_is_sent(server: MockServer) -> None:
    """Timing scale 0, no stall: the server never waits, so the body is the recording."""
    cassette, path = OPENAI
    r = raw_request(server.url, "POST", path, b"{}", headers(cassette, "ping"))
    assert r.body == recorded(cassette)


# ---- clients ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_a_reader_that_takes_a_comment_for_data_fails_where_httpx_sse_passes(
    server: MockServer, cassette: str, path: str,
) -> None:
    url = server.url + path
    truth = events(recorded(cassette))
    assert comment_as_data_reader(url, headers(cassette, None))  # the recording alone is fine
    with pytest.raises(json.JSONDecodeError):
        comment_as_data_reader(url, headers(cassette, "stall-ping"))
    assert httpx_sse_events(url, headers(cassette, "stall-ping")) == truth


@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_a_reader_timing_out_between_events_fails_where_read_timeouts_pass(
    server: MockServer, cassette: str, path: str,
) -> None:
    """A 2.5 s stall with a comment every 0.2 s: a 1 s transport read timeout is never reached;
    a 1 s deadline per event is."""
    url = server.url + path
    truth = events(recorded(cassette))
    with pytest.raises(httpx.ReadTimeout):  # the control: without comments the read timeout trips
        httpx_sse_events(url, headers(cassette, "long-stall"), read_timeout=1.0)
    assert httpx_sse_events(url, headers(cassette, "long-stall-ping"), read_timeout=1.0) == truth
    with pytest.raises(TimeoutError):
        asyncio.run(event_deadline_reader(url, headers(cassette, "long-stall-ping")))


def test_the_openai_sdk_reads_through_a_stall_kept_alive(server: MockServer) -> None:
    with pytest.raises(openai.APITimeoutError):
        openai_text(server, "long-stall", read_timeout=1.0)
    assert openai_text(server, "long-stall-ping", read_timeout=1.0) == recorded_text()
    assert openai_text(server, "first-byte-ping", read_timeout=0.8) == recorded_text()


def anthropic_types(server: MockServer, scenario: str, read_timeout: float = 10.0) -> list[str]:
    timeout = anthropic.Timeout(10.0, read=read_timeout)
    with anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0, timeout=timeout) as client:
        stream = client.messages.create(
            model="claude-haiku-4-5-20251001", max_tokens=1024, stream=True,
            messages=[{"role": "user", "content": "Hi"}],
            extra_headers=headers(ANTHROPIC[0], scenario),
        )
        return [event.type for event in stream]


def recorded_types() -> list[str]:
    return [kind for kind, _ in events(recorded(ANTHROPIC[0])) if kind != "ping"]  # the SDK skips ping events


def test_the_anthropic_sdk_reads_through_a_stall_kept_alive(server: MockServer) -> None:
    # mid-stream, the SDK lets its HTTP client's error through, or (2.17 on) raises its own timeout error
    with pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)):
        anthropic_types(server, "long-stall", read_timeout=1.0)
    assert anthropic_types(server, "long-stall-ping", read_timeout=1.0) == recorded_types()
    assert anthropic_types(server, "first-byte-ping", read_timeout=0.8) == recorded_types()


def test_the_anthropic_sdk_reads_a_heartbeat_stream_to_its_end(server: MockServer) -> None:
    """The SDK does not stop at ``message_stop``: it reads until the server closes (the API
    closes right after it), so a heartbeat keeps it waiting until ``max_seconds``."""
    started = time.monotonic()
    assert anthropic_types(server, "short-heartbeat", read_timeout=1.0) == recorded_types()
    assert time.monotonic() - started >= 1.0
    assert "heartbeat: ended after its max_seconds (1 s)" in journal(server)["injected"]


# ---- heartbeat ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_a_reader_waiting_for_the_end_of_a_heartbeat_stream_fails(
    server: MockServer, cassette: str, path: str,
) -> None:
    """After its last event the stream stays open (30 s at most), a comment every 0.2 s."""
    with pytest.raises(TimeoutError):
        until_eof_reader(server.url + path, headers(cassette, "heartbeat"))
    assert settled(server)["outcome"] == "client_gone"
    assert "heartbeat: stopped early: the client left or the server stopped" in journal(server)["injected"]


def test_the_openai_sdk_stops_at_done_on_a_heartbeat_stream(server: MockServer) -> None:
    assert openai_text(server, "heartbeat") == recorded_text()
    entry = settled(server)
    assert entry["outcome"] == "client_gone"  # it left long before the 30 s max_seconds
    assert any(note.startswith("heartbeat: stopped early") for note in entry["injected"])


@pytest.mark.parametrize(("cassette", "path"), PROVIDERS)
def test_a_heartbeat_ends_after_its_max_seconds(server: MockServer, cassette: str, path: str) -> None:
    started = time.monotonic()
    r = raw_request(server.url, "POST", path, b"{}", headers(cassette, "short-heartbeat"))
    assert time.monotonic() - started >= 1.0
    original = recorded(cassette)
    assert r.ending == "complete"
    assert r.body.startswith(original + PING * 2)  # a comment every 0.2 s for 1 s
    assert r.body == original + PING * r.body.count(PING)
    assert "heartbeat: ended after its max_seconds (1 s)" in journal(server)["injected"]


@pytest.mark.parametrize(("steps", "field", "expected"), [
    ([{"heartbeat": {"max_seconds": 86_401}}], "steps[0].heartbeat.max_seconds", "86400"),
    ([{"keep-alive-every": {"seconds": 0.001}}], "steps[0].keep-alive-every.seconds", "0.01"),
    ([{"keep-alive-every": {"text": "a\nb"}}], "steps[0].keep-alive-every.text", "without CR, LF"),
])
def test_bounds_are_refused_with_the_field_named(steps: list[Any], field: str, expected: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(field)) as caught:
        Scenario.from_dict({"name": "x", "steps": steps})
    assert expected in str(caught.value)


def test_the_readme_examples_run() -> None:
    """docs/how-to/write-a-scenario.md's ``stall``, ``keep-alive-every`` and ``heartbeat`` lines, their periods divided
    by 75 (15 s -> 0.2 s) and the heartbeat bounded to 1 s: comments in the stall, then a
    heartbeat after [DONE] that ends at its max_seconds; the stall, shorter than the period, gets none."""
    (steps_block,) = [b for b in page_blocks("docs/how-to/write-a-scenario.md", "yaml") if "name: every-step" in b]
    wanted = ("- stall:", "- keep-alive-every:", "- heartbeat:")
    lines = [line for line in steps_block.splitlines() if line.startswith(wanted)]
    scaled = re.sub(r"(?<!_)seconds: (\d+)", lambda m: f"seconds: {int(m.group(1)) / 75:g}", "\n".join(lines))
    steps = yaml.safe_load(scaled.replace("max_seconds: 600", "max_seconds: 1"))
    assert [next(iter(step)) for step in steps] == ["stall", "keep-alive-every", "heartbeat"]
    scenario = Scenario.from_dict({"name": "readme", "steps": steps})
    with MockServer(scenarios=[scenario], timing_scale=0) as running:
        r = raw_request(running.url, "POST", OPENAI[1], b"{}", headers(OPENAI[0], "readme"))
        notes = running.requests[-1]["injected"]
    original = recorded(OPENAI[0])
    first_end = original.index(b"\n\n") + 2
    assert r.body.startswith(original[:first_end] + original[first_end : first_end + 6])  # 0.067 s: no comment
    assert original.endswith(b"data: [DONE]\n\n")
    tail = r.body[r.body.rindex(b"data: [DONE]\n\n") + 14 :]
    assert tail == PING * tail.count(PING) and tail.count(PING) >= 2  # 1 s of heartbeat after [DONE]
    assert events(r.body) == events(original)
    assert "heartbeat: ended after its max_seconds (1 s)" in notes
