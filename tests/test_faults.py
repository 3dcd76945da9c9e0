"""Fault presets: their exact effect on the wire (raw HTTP client on a socket), and what the
real openai and anthropic SDKs then do.

Expected bytes come from the recording: ``openai-chat-finish-length-usage`` is five LF-framed
events (SOURCES.md #3: role, ``{"`` content, ``finish_reason: "length"``, usage, ``[DONE]``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx_sse
import openai
import pytest
import yaml

from ssemock import MockServer
from ssemock.bundled import bundled_scenarios
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .rawclient import RawResponse, raw_request

CHAT = "openai-chat-finish-length-usage"
RECORDED = collect_cassettes(None)[CHAT].interactions[0].response.body
BLOCKS = [b + b"\n\n" for b in RECORDED.split(b"\n\n")[:-1]]
ERROR_TEXT = "The server had an error while processing your request."


def preset(name: str) -> dict[str, Any]:
    """The first step's fields of a bundled preset file."""
    doc = yaml.safe_load((bundled_scenarios() / f"{name}.yaml").read_text())
    return dict(next(iter(doc["steps"][0].values())))


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(timing_scale=0) as running:
        yield running


def wire(server: MockServer, scenario: str, cassette: str = CHAT, path: str = "/v1/chat/completions") -> RawResponse:
    server.reset()
    return raw_request(server.url, "POST", path, b"{}", {"X-SSEMock-Cassette": cassette,
                                                         "X-SSEMock-Scenario": scenario})


def openai_chat(server: MockServer, scenario: str, **options: Any) -> list[Any]:
    with openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, **options) as client:
        return list(client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hi"}], stream=True,
            extra_headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": scenario},
        ))


def anthropic_events(server: MockServer, scenario: str, cassette: str = "anthropic-messages-thinking") -> list[str]:
    with anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0) as client:
        stream = client.messages.create(
            model="claude-sonnet-4-0", max_tokens=1024, messages=[{"role": "user", "content": "Hi"}], stream=True,
            extra_headers={"X-SSEMock-Cassette": cassette, "X-SSEMock-Scenario": scenario},
        )
        return [e.type for e in stream]


def test_the_recording_is_five_lf_events() -> None:
    assert len(BLOCKS) == 5 and b"".join(BLOCKS) == RECORDED and BLOCKS[-1] == b"data: [DONE]\n\n"


# ---- mid-stream error, provider-styled --------------------------------------------------------
def test_error_mid_stream_openai_chat_on_the_wire_and_in_the_sdk(server: MockServer) -> None:
    r = wire(server, "error-mid-stream")
    # OpenAI error object (API reference, "Error codes"): message, type, param, code.
    error = (b'data: {"error":{"message":"' + ERROR_TEXT.encode()
             + b'","type":"server_error","param":null,"code":null}}\n\n')
    assert r.status == 200 and r.ending == "complete"
    assert r.body == BLOCKS[0] + BLOCKS[1] + error
    assert server.requests[0]["injected"] == ["error-mid-stream: openai-chat error after 2 event(s)"]
    with pytest.raises(openai.APIError, match=ERROR_TEXT) as caught:
        openai_chat(server, "error-mid-stream")
    assert caught.value.body == {"message": ERROR_TEXT, "type": "server_error", "param": None, "code": None}


def test_error_mid_stream_anthropic(server: MockServer) -> None:
    r = wire(server, "error-mid-stream", "anthropic-messages-thinking", "/v1/messages")
    events = [e for e in decode(r.body) if isinstance(e, Event)]
    assert [e.type for e in events] == ["message_start", "content_block_start", "error"]
    # Anthropic streaming docs, "Error events": event: error, {"type": "error", "error": {"type", "message"}}
    expected = {"type": "error", "error": {"type": "overloaded_error", "message": ERROR_TEXT}}
    assert json.loads(events[-1].data) == expected
    with pytest.raises(anthropic.APIStatusError) as caught:
        anthropic_events(server, "error-mid-stream")
    assert caught.value.body == expected


def test_error_mid_stream_openai_responses(server: MockServer) -> None:
    r = wire(server, "error-mid-stream", "openai-responses-function-call", "/v1/responses")
    events = [e for e in decode(r.body) if isinstance(e, Event)]
    assert [e.type for e in events] == ["response.created", "response.in_progress", "error", "response.failed"]
    error = json.loads(events[2].data)  # the shape of the recording openai-responses-error-insufficient-quota
    assert error["type"] == "error" and error["sequence_number"] == 2 and error["error"]["message"] == ERROR_TEXT
    with openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0) as client, \
            pytest.raises(openai.APIError, match=ERROR_TEXT):
        list(client.responses.create(model="gpt-5", input="Hi", stream=True,
                                     extra_headers={"X-SSEMock-Scenario": "error-mid-stream",
                                                    "X-SSEMock-Cassette": "openai-responses-function-call"}))


def test_error_mid_stream_openrouter_and_gemini(server: MockServer) -> None:
    r = wire(server, "error-mid-stream", "openrouter-chat-keepalive-midstream-error", "/api/v1/chat/completions")
    events = [e for e in decode(r.body) if isinstance(e, Event)]
    error = json.loads(events[2].data)  # OpenRouter docs: error + finish_reason "error", then [DONE]
    assert error["error"] == {"code": "server_error", "message": ERROR_TEXT}
    assert error["choices"][0]["finish_reason"] == "error" and events[-1].data == "[DONE]" and len(events) == 4
    path = "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent"
    r = wire(server, "error-mid-stream", "gemini-streamgeneratecontent-crlf", path)
    assert len([e for e in decode(r.body) if isinstance(e, Event)]) == 2
    # the recording gemini-vertex-error-mid-stream: a JSON error body without any "data:" prefix
    tail = r.body.split(b"\r\n\r\n", 2)[2]
    assert json.loads(tail) == {"error": {"code": 503, "message": ERROR_TEXT, "status": "UNAVAILABLE"}}


# ---- HTTP errors ------------------------------------------------------------------------------
# OpenAI's error bodies (API reference, "Error codes"): {"error": {"message", "type", "param", "code"}}
OPENAI_ERRORS = {
    401: {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": None,
                    "code": "invalid_api_key"}},
    429: {"error": {"message": "Rate limit reached for requests.", "type": "requests", "param": None,
                    "code": "rate_limit_exceeded"}},
    500: {"error": {"message": "The server had an error while processing your request.", "type": "server_error",
                    "param": None, "code": None}},
}


@pytest.mark.parametrize(("name", "status", "sdk_error"), [
    ("http-401", 401, openai.AuthenticationError),
    ("http-429", 429, openai.RateLimitError),
    ("http-500", 500, openai.InternalServerError),
])
def test_http_json_errors(server: MockServer, name: str, status: int, sdk_error: type[Exception]) -> None:
    r = wire(server, name)
    fields = preset(name)
    assert r.status == status == fields["status"] and r.header("content-type") == "application/json"
    assert r.header("content-length") == str(len(r.body)) and json.loads(r.body) == OPENAI_ERRORS[status]
    if name == "http-429":
        assert r.header("retry-after") == "2"
    with pytest.raises(sdk_error) as caught:
        openai_chat(server, name)
    assert caught.value.body == OPENAI_ERRORS[status]["error"]  # type: ignore[attr-defined]


def test_http_429_the_openai_sdk_waits_retry_after_then_retries(server: MockServer) -> None:
    server.reset()
    started = time.monotonic()
    with pytest.raises(openai.RateLimitError):
        _retrying_chat(server)
    elapsed = time.monotonic() - started
    assert len(server.requests) == 2
    assert 1.9 <= elapsed < 10.0, elapsed  # Retry-After: 2 (seconds), not the SDK's own back-off; a loaded machine


def _retrying_chat(server: MockServer) -> None:
    with openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=1) as client:
        list(client.chat.completions.create(
            model="gpt-4o", messages=[], stream=True,
            extra_headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "http-429"},
        ))


def test_http_502_html(server: MockServer) -> None:
    r = wire(server, "http-502-html")
    assert r.status == 502 and r.header("content-type") == "text/html"
    assert r.body == preset("http-502-html")["text"].encode() and r.body.startswith(b"<html>\r\n")
    with pytest.raises(openai.InternalServerError) as caught:
        openai_chat(server, "http-502-html")
    assert caught.value.status_code == 502


def test_wrong_content_type(server: MockServer) -> None:
    r = wire(server, "wrong-content-type")
    assert r.header("content-type") == "text/plain" and r.body == RECORDED and r.ending == "complete"
    with httpx.Client(base_url=server.url) as client, httpx_sse.connect_sse(
        client, "POST", "/v1/chat/completions", json={},
        headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "wrong-content-type"},
    ) as source, pytest.raises(httpx_sse.SSEError, match="text/plain"):
        list(source.iter_sse())
    # The openai SDK does not look at the content type: it reads the events all the same.
    assert [c.choices[0].finish_reason if c.choices else "usage" for c in openai_chat(server, "wrong-content-type")] \
        == [None, None, "length", "usage"]


# ---- stalls and delays ------------------------------------------------------------------------
def test_stall_on_the_wire_and_an_sdk_read_timeout(server: MockServer) -> None:
    seconds = preset("stall")["seconds"]
    r = wire(server, "stall")
    assert r.body == RECORDED and r.ending == "complete"
    first = next(i for i, t in enumerate(r.times) if b"".join(r.chunks[: i + 1]) == BLOCKS[0])
    gap = r.times[first + 1] - r.times[first]
    assert seconds - 0.05 <= gap <= seconds + 1.0, gap  # asyncio.sleep precision; a loaded 2-core machine
    assert server.requests[0]["injected"] == ["stall: 5 s after 1 event(s)"]
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        openai_chat(server, "stall", timeout=1.0)
    assert time.monotonic() - started < seconds


def test_slow_first_byte(server: MockServer) -> None:
    seconds = preset("slow-first-byte")["seconds"]
    r = wire(server, "slow-first-byte")
    assert r.body == RECORDED and seconds - 0.05 <= r.times[0] <= seconds + 1.0, r.times[0]
    with pytest.raises(openai.APITimeoutError):
        openai_chat(server, "slow-first-byte", timeout=1.0)


# ---- disconnects and truncation ---------------------------------------------------------------
def test_truncate_is_a_clean_end_two_events_short(server: MockServer) -> None:
    r = wire(server, "truncate")
    assert r.ending == "complete" and r.body == b"".join(BLOCKS[:3])
    # The openai SDK ends quietly without [DONE] or the usage chunk.
    assert [c.choices[0].finish_reason for c in openai_chat(server, "truncate")] == [None, None, "length"]
    events = anthropic_events(server, "truncate")  # message_delta and message_stop are the two cut off
    assert events[-1] == "content_block_stop" and "message_delta" not in events


def test_cut_mid_event_is_a_fin_inside_the_second_event(server: MockServer) -> None:
    r = wire(server, "cut-mid-event")
    assert r.ending == "cut" and r.body == RECORDED[: len(BLOCKS[0]) + len(BLOCKS[1]) // 2]
    assert server.requests[0]["outcome"] == "cut"
    with httpx.Client(base_url=server.url) as client, pytest.raises(httpx.RemoteProtocolError, match="incomplete"):
        client.post("/v1/chat/completions", headers={"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "cut-mid-event"})
    with pytest.raises(openai.APIConnectionError):
        openai_chat(server, "cut-mid-event")


def test_reset_mid_event_is_a_tcp_rst(server: MockServer) -> None:
    r = wire(server, "reset-mid-event")
    assert r.ending == "reset"
    assert RECORDED[: len(BLOCKS[0]) + len(BLOCKS[1]) // 2].startswith(r.body)  # data in flight may be dropped
    assert server.requests[0]["outcome"] == "reset"
    with pytest.raises(openai.APIConnectionError) as caught:
        openai_chat(server, "reset-mid-event")
    assert isinstance(caught.value.__cause__, httpx.ReadError) or "reset" in repr(caught.value.__cause__).lower()


def test_no_done(server: MockServer) -> None:
    r = wire(server, "no-done")
    assert r.ending == "complete" and r.body == b"".join(BLOCKS[:4])
    assert len(openai_chat(server, "no-done")) == 4  # the SDK ends at the end of the body


def test_no_final_blank_line(server: MockServer) -> None:
    r = wire(server, "no-final-blank-line")
    assert r.body == RECORDED[:-1] and r.body.endswith(b"data: [DONE]\n")
    assert [e.data for e in decode(r.body) if isinstance(e, Event)][-1] != "[DONE]"  # WHATWG: discarded at EOF
    events = anthropic_events(server, "no-final-blank-line")
    assert events[-1] == "message_delta" and "message_stop" not in events  # its last event is discarded too
