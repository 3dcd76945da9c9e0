"""Resuming with Last-Event-ID: headless Chromium's EventSource, the mcp SDK's Streamable HTTP client, httpx.

The right answers come from the recordings (the events a WHATWG parser reads from the recorded
body) and from the HTML spec: an EventSource sends the last event ID it saw in ``Last-Event-ID``
when it reconnects, after the ``retry`` time the stream set.
"""

from __future__ import annotations

import gzip
import itertools
import json
import subprocess
from pathlib import Path

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssemock import Cassette, MockServer, Scenario, ScenarioError
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.mockserver import collect_cassettes
from ssemock.resume import event_marks, rest_of
from ssemock.sse import Event, decode, encode

SCRIPT = Path(__file__).parent / "node" / "eventsource-resume.mjs"
OPENAI = "openai-chat-finish-length-usage"
MCP = "mcp-deepwiki-ping-comments-crlf"
SSE = [("content-type", "text/event-stream")]


def _events(body: bytes) -> list[Event]:
    return [e for e in decode(body) if isinstance(e, Event)]


def test_chromium_eventsource_reconnects_after_the_drop_and_gets_exactly_the_recorded_events(
    node: str, chromium: Path
) -> None:
    recorded = _events(collect_cassettes(None)[OPENAI].interactions[0].response.body)
    assert len(recorded) == 5 and recorded[-1].data == "[DONE]"
    with MockServer(timing_scale=0, match_on=("path",)) as server:
        url = f"{server.url}/_ssemock/s/drop-and-resume/_ssemock/c/{OPENAI}/v1/chat/completions"
        done = subprocess.run([node, str(SCRIPT), url], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        first, second = server.requests
    assert [e["data"] for e in result["events"]] == [e.data for e in recorded]
    assert [e["lastEventId"] for e in result["events"]] == ["1", "2", "3", "4", "5"]
    assert result["errors"] == 1 and result["opens"] == 2  # one drop, one reconnect
    assert first["injected"][-1] == "drop-and-resume: clean end after 1 of 5 event(s)"
    assert {k.lower(): v for k, v in second["headers"].items()}["last-event-id"] == "1"
    resumed = second["resumed"]
    assert resumed["after"] == "1" and resumed["events_skipped"] == 1 and resumed["retry_ms"] == 100
    # The browser honoured "retry: 100" (a lower bound: a busy machine only makes it wait longer).
    assert resumed["waited"] >= 0.09
    assert result["events"][1]["t"] - result["events"][0]["t"] >= 90


def test_mcp_streamable_http_client_resumes_a_dropped_tool_call_stream() -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    whole = collect_cassettes(None)[MCP]
    # The recording's second session: initialize, initialized, tools/call (a progress
    # notification, then the result), tools/list. Played in order: the SDK numbers its
    # requests differently from the recorded client, and puts its own ids on the answers.
    session_cassette = Cassette("mcp-session", whole.interactions[4:8])
    call = whole.interactions[6].response.body
    notification, answer = (json.loads(e.data) for e in _events(call))
    logged: list[object] = []

    async def on_log(params: object) -> None:
        logged.append(params)

    async def run(url: str) -> str:
        async with streamable_http_client(url) as (read, write, *_), \
                ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            result = await session.call_tool("ask_question", {"repoName": "pydantic/pydantic-ai", "question": "?"})
            assert not result.is_error
            (content,) = result.content
            return str(content.text)  # type: ignore[union-attr]

    with MockServer([session_cassette], scenarios=None, timing_scale=0, match_on=("method", "path")) as server:
        text = anyio.run(run, f"{server.url}/_ssemock/s/drop-and-resume/_ssemock/c/mcp-session/mcp")
        journal = server.requests
    assert text == answer["result"]["content"][0]["text"]
    assert len(logged) == 1 and logged[0].data == notification["params"]["data"]  # type: ignore[attr-defined]
    methods = [(e["method"], e["interaction"]) for e in journal]
    assert methods == [("POST", 0), ("POST", 1), ("POST", 2), ("GET", 2), ("POST", 3)]
    dropped, reconnect = journal[2], journal[3]
    assert dropped["injected"][-1] == "drop-and-resume: clean end after 1 of 2 event(s)"
    assert {k.lower(): v for k, v in reconnect["headers"].items()}["last-event-id"] == "1"
    assert reconnect["resumed"]["after"] == "1" and reconnect["resumed"]["retry_ms"] == 100
    assert reconnect["resumed"]["waited"] >= 0.09  # the SDK waits the stream's retry before reconnecting


def _recorded_ids() -> Cassette:
    """A GET stream whose events carry their own ids; the third sets none (it keeps "b", §9.2.6)."""
    body = [encode("one", id="a"), encode("two", id="b"), encode("three"), encode("four", id="c")]
    chunks = [Chunk(0.01 * i, data) for i, data in enumerate(body)]
    response = Response(200, headers=SSE, chunks=chunks, end=End(0.05))
    return Cassette("ids", [Interaction(Request("GET", "/events"), response)])


@pytest.mark.parametrize(("last_id", "rest"), [("a", ["two", "three", "four"]), ("b", ["three", "four"]),
                                                ("c", [])])
def test_a_recording_with_ids_resumes_after_the_event_that_set_the_id(last_id: str, rest: list[str]) -> None:
    with MockServer([_recorded_ids()], scenarios=None, timing_scale=0) as server:
        got = httpx.get(f"{server.url}/events", headers={"Last-Event-ID": last_id})
        (entry,) = server.requests
    assert got.status_code == 200 and got.headers["content-type"] == "text/event-stream"
    assert [e.data for e in _events(got.content)] == rest
    assert entry["resumed"] == {"after": last_id, "events_skipped": 4 - len(rest), "retry_ms": None, "waited": None}


def test_an_unknown_last_event_id_is_a_404_naming_it_other_methods_and_empty_ids_get_everything() -> None:
    cassette = _recorded_ids()
    post = Interaction(Request("POST", "/events"), cassette.interactions[0].response)
    cassette.interactions.append(post)
    with MockServer([cassette], scenarios=None, timing_scale=0) as server:
        missing = httpx.get(f"{server.url}/events", headers={"Last-Event-ID": "zz"})
        whole = httpx.post(f"{server.url}/events", headers={"Last-Event-ID": "a"})
        empty = httpx.get(f"{server.url}/events", headers={"Last-Event-ID": ""})
    assert missing.status_code == 404
    error = missing.json()["error"]
    assert error["type"] == "ssemock_unknown_event_id" and "'zz'" in error["message"]
    assert [e.data for e in _events(whole.content)] == ["one", "two", "three", "four"]
    assert [e.data for e in _events(empty.content)] == ["one", "two", "three", "four"]  # empty: no id


def test_a_gzip_recording_with_ids_resumes_in_its_decoded_events() -> None:
    plain = b"".join(c.data for c in _recorded_ids().interactions[0].response.chunks)
    body = gzip.compress(plain)
    headers = [*SSE, ("content-encoding", "gzip")]
    response = Response(200, headers=headers, chunks=[Chunk(0.0, body[:20]), Chunk(0.01, body[20:])])
    cassette = Cassette("gz", [Interaction(Request("GET", "/events"), response)])
    with MockServer([cassette], scenarios=None, timing_scale=0) as server:
        whole = httpx.get(f"{server.url}/events")
        rest = httpx.get(f"{server.url}/events", headers={"Last-Event-ID": "b"})
        again = httpx.get(f"{server.url}/events", headers={"Last-Event-ID": "a"})  # from the stream sent first
    assert whole.content == plain
    assert [e.data for e in _events(rest.content)] == ["three", "four"]
    assert [e.data for e in _events(again.content)] == ["two", "three", "four"]


def test_a_resume_keeps_the_recorded_gaps_after_the_event() -> None:
    response = _recorded_ids().interactions[0].response
    (mark,) = [m for m in event_marks(response.body) if m.index == 1]
    rest = rest_of(response, mark)
    assert [c.t for c in rest.chunks] == pytest.approx([0.01, 0.02])  # recorded at 0.02 and 0.03, after 0.01
    assert rest.end.t == pytest.approx(0.04) and rest.start == 0


@given(
    data=st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=8),
                  min_size=1, max_size=6),
    cuts=st.lists(st.integers(0, 400), max_size=8),
    eol=st.sampled_from(["\n", "\r\n", "\r"]),
    pick=st.integers(0, 5),
)
def test_any_chunking_the_rest_after_event_k_is_exactly_the_events_after_k(
    data: list[str], cuts: list[int], eol: str, pick: int
) -> None:
    body = b"".join(encode(d, id=str(i + 1), eol=eol) for i, d in enumerate(data))
    bounds = sorted({0, len(body), *(c for c in cuts if c < len(body))})
    chunks = [Chunk(float(i), body[a:b]) for i, (a, b) in enumerate(itertools.pairwise(bounds))]
    marks = event_marks(body)
    mark = marks[min(pick, len(marks) - 1)]
    rest = rest_of(Response(headers=SSE, chunks=chunks), mark)
    assert _events(rest.body) == _events(body)[mark.index + 1 :]
    assert b"".join(c.data for c in chunks)[: mark.offset] + rest.body == body


def test_the_steps_refuse_bad_fields_naming_them() -> None:
    for step, where in (({"drop-and-resume": {"after_events": 0}}, "steps[0].drop-and-resume.after_events"),
                        ({"event-ids": {"retry_ms": -1}}, "steps[0].event-ids.retry_ms")):
        with pytest.raises(ScenarioError) as caught:
            Scenario.from_dict({"ssemock_scenario": 1, "steps": [step]})
        assert where in str(caught.value)


def test_the_book_of_streams_is_bounded_in_count_and_bytes_and_skips_streams_without_ids() -> None:
    from ssemock.plan import Plan
    from ssemock.resume import ResumeBook

    with_ids = _recorded_ids().interactions[0].response
    size = len(with_ids.body)
    book = ResumeBook(capacity=3, max_bytes=size * 2)
    without = Response(headers=SSE, chunks=[Chunk(0.0, encode("no ids here"))])
    assert book.register(Plan.of(without), "/events", "x", 0) is None
    # an "id:" split across two chunks still counts
    split = Response(headers=SSE, chunks=[Chunk(0.0, b"data: x\ni"), Chunk(0.0, b"d: 9\n\n")])
    assert book.register(Plan.of(split), "/split", "x", 0) is not None
    assert book.find("9", "/split") is not None and book.find("9", "/events") is None
    for n in range(3):
        assert book.register(Plan.of(with_ids), f"/p{n}", "x", n) is not None
    assert [s.path for s in book.streams] == ["/p1", "/p2"] and book.held <= size * 2  # bytes bound first
    assert book.find("b", "/p0") is None and book.find("b", "/p2") is not None
    assert book.find("x" * 1025, "/p2") is None


def test_the_book_scans_a_recorded_response_once_and_again_when_its_lists_change() -> None:
    from ssemock.plan import Plan
    from ssemock.resume import ResumeBook

    book = ResumeBook()
    without = Response(headers=SSE, chunks=[Chunk(0.0, b"data: a\n\n"), Chunk(0.0, b"data: b\n\n")])
    for _ in range(2):  # found once, remembered: the same answer
        assert book.register(Plan.of(without, shared=True), "/e", "x", 0, recorded=True) is None
    without.chunks.append(Chunk(0.0, b"id: 7\ndata: c\n\n"))  # one more chunk: scanned again
    assert book.register(Plan.of(without, shared=True), "/e", "x", 0, recorded=True) is not None
    assert book.find("7", "/e") is not None
    without.chunks = [Chunk(0.0, b"data: a\n\n")]  # a new list: scanned again
    assert book.register(Plan.of(without, shared=True), "/e", "x", 0, recorded=True) is None
    without.headers = [("content-type", "application/json")]  # a new header list: not a stream
    without.chunks = [Chunk(0.0, b"id: 8\n\n")]
    assert book.register(Plan.of(without, shared=True), "/e", "x", 0, recorded=True) is None
    # a recorded response whose plan was cut (a step's resume_body): the body sent is scanned, not remembered
    cut = Plan.of(Response(headers=SSE, chunks=[Chunk(0.0, b"data: a\n\n")]))
    cut.resume_body = Response(headers=SSE, chunks=[Chunk(0.0, b"id: 9\ndata: a\n\n")])
    assert book.register(cut, "/c", "x", 0, recorded=True) is not None
    book.clear()
    assert not book.streams and book.find("9", "/c") is None
    # at most `capacity` responses are remembered, the oldest forgotten first
    small = ResumeBook(capacity=2)
    responses = [Response(headers=SSE, chunks=[Chunk(0.0, b"data: %d\n\n" % n)]) for n in range(3)]
    for response in responses:
        assert small.register(Plan.of(response, shared=True), "/s", "x", 0, recorded=True) is None
    responses[0].chunks.append(Chunk(0.0, b"id: 1\n\n"))  # forgotten, so scanned again (its list is the same)
    assert small.register(Plan.of(responses[0], shared=True), "/s", "x", 0, recorded=True) is not None
