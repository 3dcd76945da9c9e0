"""``insert: {text: …}``: a text delta in the recording's own provider format, read by real clients.

The OpenAI and Anthropic SDKs stream a bundled recording with and without the step: the assembled
text gains exactly the inserted text, at the event where it was inserted. Responses (on a stub's
stream, the bundled Responses recordings have no text) and Gemini are read raw: the new event has
the keys of its neighbours and the text assembles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
import yaml

from ssemock import MockServer, Scenario, ScenarioError
from ssemock.bundled import bundled_cassettes
from ssemock.cassette import load_cassettes
from ssemock.sse import Event, decode
from ssemock.stubs import reply

from .docs_examples import page_blocks
from .rawclient import raw_request

CHAT, CLAUDE = "openai-chat-finish-length-usage", "anthropic-messages-thinking"
GEMINI = "gemini-streamgeneratecontent-crlf"
GEMINI_PATH = "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent"
CASSETTES = load_cassettes(bundled_cassettes())


def recorded_events(name: str) -> list[Event]:
    return [e for e in decode(CASSETTES[name].interactions[0].response.body) if isinstance(e, Event)]


def first_text_delta(name: str) -> int:
    for i, event in enumerate(recorded_events(name)):
        if '"text_delta"' in event.data:
            return i
    raise AssertionError("no text delta")


STEPS = {
    "hello-at-1": [{"insert": {"at": 1, "provider": "auto", "text": "Hello"}}],
    "hello-in-text": [{"insert": {"at": first_text_delta(CLAUDE) + 1, "text": "Hello"}}],
    "hello-at-2": [{"insert": {"at": 2, "text": "Hello \"world\"\n\u2028"}}],
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    scenarios = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in STEPS.items()]
    stub = reply("One two three four five six.", times=None)
    with MockServer(scenarios=scenarios, stubs=[stub], timing_scale=0) as running:
        yield running


def chat_deltas(server: MockServer, scenario: str | None) -> list[str]:
    headers = {"X-SSEMock-Cassette": CHAT, **({"X-SSEMock-Scenario": scenario} if scenario else {})}
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", default_headers=headers, max_retries=0)
    stream = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}],
                                            stream=True, stream_options={"include_usage": True})
    return [(c.choices[0].delta.content or "") if c.choices else "" for c in stream]


def test_openai_sdk_assembles_the_text_with_hello_at_event_1(server: MockServer) -> None:
    before = chat_deltas(server, None)
    after = chat_deltas(server, "hello-at-1")
    assert after == [before[0], "Hello", *before[1:]]
    assert "".join(after) == before[0] + "Hello" + "".join(before[1:])
    injected = server.requests[-1]["injected"]
    assert any("insert: event message at index 1" in note for note in injected)


def test_the_chat_chunk_copies_id_model_and_created_from_its_neighbour(server: MockServer) -> None:
    server.reset()
    raw = raw_request(server.url, "POST", "/v1/chat/completions", b"{}",
                      {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "hello-at-1"})
    events = [json.loads(e.data) for e in decode(raw.body) if isinstance(e, Event) and e.data != "[DONE]"]
    new, neighbour = events[1], events[0]
    for key in ("id", "object", "created", "model", "system_fingerprint"):
        assert new.get(key) == neighbour.get(key)
    assert list(new) == list(neighbour)
    assert new["choices"] == [{**neighbour["choices"][0], "delta": {"content": "Hello"}, "finish_reason": None}]


def claude_text(server: MockServer, scenario: str | None) -> str:
    headers = {"X-SSEMock-Cassette": CLAUDE, **({"X-SSEMock-Scenario": scenario} if scenario else {})}
    client = anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", default_headers=headers, max_retries=0)
    with client.messages.stream(model="claude-haiku-4-5-20251001", max_tokens=1024,
                                messages=[{"role": "user", "content": "Hi"}]) as stream:
        message = stream.get_final_message()
    return "".join(block.text for block in message.content if block.type == "text")


def test_anthropic_sdk_assembles_the_text_with_hello_after_the_first_text_delta(server: MockServer) -> None:
    first = json.loads(recorded_events(CLAUDE)[first_text_delta(CLAUDE)].data)["delta"]["text"]
    before = claude_text(server, None)
    after = claude_text(server, "hello-in-text")
    assert before.startswith(first)
    assert after == first + "Hello" + before[len(first):]


def test_gemini_candidate_copies_its_neighbour(server: MockServer) -> None:
    server.reset()
    raw = raw_request(server.url, "POST", GEMINI_PATH + "?alt=sse", b"{}",
                      {"X-SSEMock-Cassette": GEMINI, "X-SSEMock-Scenario": "hello-at-2"})
    events = [json.loads(e.data) for e in decode(raw.body) if isinstance(e, Event)]
    recorded = [json.loads(e.data) for e in recorded_events(GEMINI)]
    assert len(events) == len(recorded) + 1
    new = events[2]
    assert new["candidates"][0]["content"]["parts"] == [{"text": "Hello \"world\"\n\u2028"}]
    assert new["responseId"] == recorded[1]["responseId"] and new["modelVersion"] == recorded[1]["modelVersion"]
    assert "finishReason" not in new["candidates"][0]
    assert raw.body.split(b"Hello")[1].split(b"\n")[0].endswith(b"\r")  # the recording's CRLF line ends


def responses_text(server: MockServer, scenario: str | None) -> str:
    headers = {"X-SSEMock-Scenario": scenario} if scenario else {}
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", default_headers=headers, max_retries=0)
    parts: list[str] = []
    for event in client.responses.create(model="gpt-4.1", input="Hi", stream=True):
        if event.type == "response.output_text.delta":
            parts.append(event.delta)
    return "".join(parts)


def test_responses_delta_on_a_stub_stream(server: MockServer) -> None:
    before = responses_text(server, None)
    after = responses_text(server, "hello-at-2")
    # events 0-1: created, in_progress; 2: output_item.added: the delta goes before the first text delta
    assert after == "Hello \"world\"\n\u2028" + before


def test_the_docs_example_inserts_hello_as_the_second_chunk(server: MockServer) -> None:
    (steps_block,) = [b for b in page_blocks("docs/how-to/write-a-scenario.md", "yaml") if 'text: "Hello"' in b]
    line = next(li.split("#")[0].rstrip() for li in steps_block.splitlines() if "text: \"Hello\"" in li)
    assert yaml.safe_load(line) == STEPS["hello-at-1"]
    before = chat_deltas(server, None)
    assert chat_deltas(server, "hello-at-1") == [before[0], "Hello", *before[1:]]


def test_text_excludes_data_and_json_and_provider_needs_text() -> None:
    with pytest.raises(ScenarioError, match="one of data, json, text"):
        Scenario.from_dict({"steps": [{"insert": {"text": "a", "data": "b"}}]})
    with pytest.raises(ScenarioError, match="provider"):
        Scenario.from_dict({"steps": [{"insert": {"provider": "anthropic", "data": "b"}}]})
    with pytest.raises(ScenarioError, match="provider"):
        Scenario.from_dict({"steps": [{"insert": {"provider": "nobody", "text": "b"}}]})


def test_a_stream_without_text_events_gets_nothing_and_the_journal_says_why(server: MockServer) -> None:
    server.reset()
    raw = raw_request(server.url, "POST", "/v1/responses", b"{}",
                      {"X-SSEMock-Cassette": "openai-responses-function-call", "X-SSEMock-Scenario": "hello-at-1"})
    recorded: Any = CASSETTES["openai-responses-function-call"].interactions[0].response.body
    assert raw.body == recorded
    assert any("nothing inserted" in note for note in server.requests[-1]["injected"])
