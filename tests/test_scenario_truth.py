"""Scenarios do what they say: timing moves the end, errors in the provider's own shape, order by phase,
near-miss refusals, ping events, {now}, copy, faults on a reconnect, reasoning fields of stubs.

Every check runs the real server (MockServer) and reads it with real clients (httpx, httpx-sse).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import httpx_sse
import pytest

from ssemock import Cassette, MockServer
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.errors import ScenarioError
from ssemock.scenario import Scenario
from ssemock.sse import Comment, Event, decode
from ssemock.stubs import reply

# A recording whose chunks come at once and whose end came 1.372 s later (the case seen).
EVENTS = [b'data: {"n": %d, "delta": {"content": "x%d"}}\n\n' % (i, i) for i in range(3)]


def _timed(path: str = "/v1/chat/completions") -> Cassette:
    chunks = [Chunk(0.01 + 0.001 * i, data) for i, data in enumerate(EVENTS)]
    response = Response(
        status=200, headers=[("Content-Type", "text/event-stream")], chunks=chunks, start=0.0, end=End(1.372, "clean")
    )
    return Cassette("timed", [Interaction(Request(method="POST", path=path), response)])


def _scenario(tmp_path: Path, name: str, steps: str) -> Path:
    file = tmp_path / f"{name}.yaml"
    file.write_text(f"ssemock_scenario: 1\nname: {name}\nsteps:\n{steps}", encoding="utf-8")
    return file


def test_timing_none_ends_the_stream_with_its_last_chunk(tmp_path: Path) -> None:
    file = _scenario(tmp_path, "none", "- timing: {mode: none}\n")
    with MockServer([_timed()], scenarios=[file], scenario="none") as server:
        began = time.monotonic()
        r = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10)
        took = time.monotonic() - began
    assert r.content == b"".join(EVENTS)
    assert took < 0.5, f"the stream ended after {took:.3f} s, as recorded (1.372 s): the end did not move"


def test_timing_runs_before_buffering_in_either_order(tmp_path: Path) -> None:
    a = Scenario.from_dict(
        {"steps": [{"fragment": {"mode": "buffer", "size": 4096}}, {"timing": {"mode": "fixed", "interval": 1}}]}
    )
    b = Scenario.from_dict(
        {"steps": [{"timing": {"mode": "fixed", "interval": 1}}, {"fragment": {"mode": "buffer", "size": 4096}}]}
    )
    from ssemock.plan import Plan

    plans = [s.apply(Plan.of(_timed().interactions[0].response)) for s in (a, b)]
    # timed first, then buffered: the one buffer is due when its last byte is (3 s), in either order
    assert [[c.t for c in p.response.chunks] for p in plans] == [[3.0], [3.0]]


def test_a_buffer_without_timing_is_noted_in_the_journal(tmp_path: Path) -> None:
    file = _scenario(tmp_path, "buf", "- fragment: {mode: buffer, size: 4096}\n")
    untimed = _timed()
    untimed.interactions[0].response.chunks = [Chunk(0.0, d) for d in EVENTS]
    untimed.interactions[0].response.end = End(0.0, "clean")
    with MockServer([untimed], scenarios=[file], scenario="buf", timing_scale=0) as server:
        httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10)
        [entry] = server.requests
    assert any("buffer changes nothing a client can time" in n for n in entry["notes"])


GEMINI = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"


@pytest.mark.parametrize(
    ("path", "status", "expected"),
    [
        # Anthropic docs, "Errors": {"type": "error", "error": {"type", "message"}, "request_id"}; the 401
        # message is the API's own answer to a wrong key
        ("/v1/messages", 401, {"type": "error", "error": {"type": "authentication_error",
                                                           "message": "invalid x-api-key"}}),
        ("/v1/messages", 429, {"type": "error", "error": {"type": "rate_limit_error",
                                                           "message": "Your account has hit a rate limit."}}),
        ("/v1/messages", 500, {"type": "error", "error": {
            "type": "api_error", "message": "An unexpected error has occurred internal to Anthropic's systems."}}),
        # Google API errors (AIP-193): {"error": {"code", "message", "status"}}, Google's own messages
        (GEMINI, 401, {"error": {"code": 401, "status": "UNAUTHENTICATED", "message": (
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
            "valid authentication credential.")}}),
        (GEMINI, 429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                                 "message": "Resource has been exhausted (e.g. check quota)."}}),
        (GEMINI, 500, {"error": {"code": 500, "status": "INTERNAL", "message": (
            "An internal error has occurred. Please retry or report in "
            "https://developers.generativeai.google/guide/troubleshooting")}}),
        # OpenAI, "Error codes": the message of each status
        ("/v1/chat/completions", 401, {"error": {"message": "Incorrect API key provided."}}),
        ("/v1/responses", 429, {"error": {"message": "Rate limit reached for requests."}}),
        ("/v1/chat/completions", 500, {"error": {"message": "The server had an error while processing your request."}}),
    ],
)
def test_http_error_presets_answer_in_the_recorded_provider_s_shape(path: str, status: int, expected: dict) -> None:
    with MockServer([_timed(path)], timing_scale=0) as server:
        r = httpx.post(server.url + path, json={}, headers={"X-SSEMock-Scenario": f"http-{status}"}, timeout=10)
    body = r.json()
    assert r.status_code == status
    assert set(body) == set(expected) | ({"request_id"} if "type" in expected else set())
    assert {k: v for k, v in body["error"].items() if k in expected["error"]} == expected["error"]
    assert ("param" in body["error"]) == (path in ("/v1/chat/completions", "/v1/responses"))  # OpenAI's member


@pytest.mark.parametrize(
    ("steps", "named"),
    [
        ({"keepalive": {"every_seconds": 5}}, "keep-alive-every"),
        ({"stall": {"keepalive_every": 5}}, "keep-alive-every"),
        ({"inject-event": {}}, "insert"),
    ],
)
def test_near_miss_spellings_name_the_step_that_does_it(steps: dict, named: str) -> None:
    with pytest.raises(ScenarioError, match=f"done by the step {re.escape(named)}"):
        Scenario.from_dict({"steps": [steps]})


def test_ping_events_during_a_stall_reach_both_decoders(tmp_path: Path) -> None:
    file = _scenario(tmp_path, "pings", "- stall: {after_events: 1, seconds: 0.5}\n- ping-event: {seconds: 0.1}\n")
    with MockServer([_timed("/v1/messages")], scenarios=[file], scenario="pings") as server:
        r = httpx.post(server.url + "/v1/messages", json={}, timeout=10)
        with (
            httpx.Client(timeout=10) as client,
            httpx_sse.connect_sse(client, "POST", server.url + "/v1/messages", json={}) as source,
        ):
            seen = [(e.event, e.data) for e in source.iter_sse()]
    ours = [(e.type, e.data) for e in decode(r.content) if isinstance(e, Event)]
    for events in (ours, seen):
        pings = [e for e in events if e[0] == "ping"]
        assert len(pings) >= 2 and all(json.loads(d) == {"type": "ping"} for _, d in pings)  # Anthropic docs
        assert [json.loads(d)["n"] for t, d in events if t != "ping"] == [0, 1, 2]


def test_ping_events_are_counted_as_events_and_replacing_comments_is_said(tmp_path: Path) -> None:
    """The journal counted ping events as "comment(s)", and a ping-event after keep-alive-every silently
    replaced its comments."""
    file = _scenario(tmp_path, "both", "- stall: {after_events: 1, seconds: 0.35}\n- keep-alive-every: {seconds: 0.1}\n"
                                       "- ping-event: {seconds: 0.1}\n")
    with MockServer([_timed("/v1/messages")], scenarios=[file], scenario="both") as server:
        r = httpx.post(server.url + "/v1/messages", json={}, timeout=10)
        [entry] = server.requests
    items = decode(r.content, comments=True)
    pings = [e for e in items if isinstance(e, Event) and e.type == "ping"]
    assert not [c for c in items if isinstance(c, Comment)] and len(pings) >= 2
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'  # Anthropic docs, "Streaming Messages": ping events
    assert f"keep-alive: {len(pings)} ping event(s) sent, {len(ping)} bytes each" in entry["injected"]
    assert ("keep-alive-every: no effect, replaced by ping-event: a stream has one keep-alive filler (comments or "
            "ping events), the last step written wins") in entry["notes"]


def test_keep_alive_text_with_the_current_time(tmp_path: Path) -> None:
    file = _scenario(
        tmp_path,
        "now",
        '- stall: {after_events: 1, seconds: 0.4}\n- keep-alive-every: {seconds: 0.1, text: "ping - {now}"}\n',
    )
    with MockServer([_timed()], scenarios=[file], scenario="now") as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10)
    stamps = re.findall(rb": ping - (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})\n\n", r.content)
    assert len(stamps) >= 2 and len(set(stamps)) == len(stamps)


def test_copy_renames_a_recorded_field(tmp_path: Path) -> None:
    file = _scenario(tmp_path, "rename", '- copy: {path: "delta.content", to: "delta.reasoning", move: true}\n')
    with MockServer([_timed()], scenarios=[file], scenario="rename", timing_scale=0) as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10)
    payloads = [json.loads(e.data) for e in decode(r.content) if isinstance(e, Event)]
    assert [p["delta"] for p in payloads] == [{"reasoning": f"x{i}"} for i in range(3)]


def test_a_stall_applies_to_the_stream_that_answers_a_reconnect(tmp_path: Path) -> None:
    cassette = _timed()
    cassette.interactions[0].request = Request(method="GET", path="/events")
    file = _scenario(tmp_path, "slow", "- event-ids: {}\n- stall: {after_events: 0, seconds: 0.6}\n")
    with MockServer([cassette], scenarios=[file], scenario="slow", timing_scale=0) as server:
        began = time.monotonic()
        r = httpx.get(server.url + "/events", headers={"Last-Event-ID": "1"}, timeout=10)
        took = time.monotonic() - began
    assert [json.loads(e.data)["n"] for e in decode(r.content) if isinstance(e, Event)] == [1, 2]
    assert took >= 0.5, f"the reconnect's stream came in {took:.3f} s: the stall was dropped"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_stubs_stream_reasoning_in_the_field_asked_for(field: str) -> None:
    stub = reply("Hello", reasoning="Thinking it over", reasoning_field=field)
    body = {"model": "deepseek-reasoner", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    with (
        MockServer(stubs=[stub], timing_scale=0) as server,
        httpx.Client(timeout=10) as client,
        httpx_sse.connect_sse(client, "POST", server.url + "/v1/chat/completions", json=body) as source,
    ):
        deltas = [
            json.loads(e.data)["choices"][0]["delta"]
            for e in source.iter_sse()
            if e.data != "[DONE]" and json.loads(e.data)["choices"]
        ]
    assert "".join(d.get(field) or "" for d in deltas) == "Thinking it over"
    assert "".join(d.get("content") or "" for d in deltas) == "Hello"
    assert next(i for i, d in enumerate(deltas) if d.get(field)) < next(
        i for i, d in enumerate(deltas) if d.get("content")
    )


def test_every_step_that_changed_nothing_is_named_in_the_notes(tmp_path: Path) -> None:
    """Steps whose target is not in the response (no tool call to strip of its id, a Content-Type already
    what the step sets) said nothing; the steps that did change it are not named."""
    file = _scenario(tmp_path, "idle", '- edit: {delete: ["choices[0].delta.tool_calls[0].id"]}\n'
                                       "- content-type: {value: text/event-stream}\n- bom: {}\n")
    with MockServer([_timed()], scenarios=[file], scenario="idle", timing_scale=0) as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10)
        [entry] = server.requests
    assert r.content.startswith(b"\xef\xbb\xbf")  # the bom step did change it
    assert entry["notes"] == ["edit: no effect, no line of this stream is one it changes",
                              "content-type: no effect, this response holds nothing it changes"]
