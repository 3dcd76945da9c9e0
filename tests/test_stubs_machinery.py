"""Synthesized streams go through the same machinery as recordings: scenarios (fault presets too),
the journal and its helpers; the Gemini JSON-array form and OpenRouter through real clients; and the
properties of the splitting rule and of the synthesized events."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import MockServer
from ssemock.cassette import Request
from ssemock.journal import describe_journal
from ssemock.providers.tokens import count_tokens, split_tokens
from ssemock.sse import Event, decode
from ssemock.stubs import Match, Reply, Stub, ToolCall, read_conversation, reply, synthesize

CHAT = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def test_fault_presets_apply_to_a_stubbed_stream() -> None:
    with MockServer(cassettes=[], stubs=reply("one two three four five six", times=None), timing_scale=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0)
        stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                stream=True, extra_headers={"X-SSEMock-Scenario": "error-mid-stream"})
        seen = ""
        with pytest.raises(openai.APIError):
            for chunk in stream:
                seen += chunk.choices[0].delta.content or "" if chunk.choices else ""
        client.close()
        cut = httpx.post(server.url + "/_ssemock/s/no-done/v1/chat/completions", json=CHAT)
        journal = server.requests
    assert "one two three four five six".startswith(seen)
    assert b"[DONE]" not in cut.content and b" six" in cut.content
    assert [e["stub"] for e in journal] == ["reply('one two three four five six')"] * 2
    assert [e["scenario"] for e in journal] == ["error-mid-stream", "no-done"]
    assert "(stub reply('one two three four five six'), scenario no-done)" in describe_journal(journal)


def test_gemini_without_alt_sse_is_one_json_array() -> None:
    path = "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with MockServer(cassettes=[], stubs=reply("The capital of France is Paris.", times=None), timing_scale=0) as s:
        array = httpx.post(s.url + path, json=body)
        sse = httpx.post(s.url + path, params={"alt": "sse"}, json=body)
    assert array.headers["content-type"] == "application/json; charset=UTF-8"
    payloads = json.loads(array.content)
    from_sse = [json.loads(e.data) for e in decode(sse.content) if isinstance(e, Event)]
    assert [p["candidates"][0]["content"]["parts"] for p in payloads] == \
        [p["candidates"][0]["content"]["parts"] for p in from_sse]
    assert "".join(p["candidates"][0]["content"]["parts"][0]["text"] for p in payloads) == \
        "The capital of France is Paris."
    assert sse.content.count(b"\r\n\r\n") == len(from_sse)  # CRLF, as Google sends it


def test_openrouter_comments_and_done_through_the_openai_sdk() -> None:
    with MockServer(cassettes=[], stubs=reply("Hi from OpenRouter", reasoning="Greeting."), timing_scale=0) as s:
        with openai.OpenAI(base_url=s.url + "/api/v1", api_key="k", max_retries=0) as client:
            stream = client.chat.completions.create(model="openai/gpt-4o", stream=True,
                                                    messages=[{"role": "user", "content": "hi"}])
            chunks = list(stream)
        raw = s.requests[0]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hi from OpenRouter"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == count_tokens(
        "Hi from OpenRouter") + count_tokens("Greeting.")
    assert raw["stub"] and raw["outcome"] == "complete"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_splitting_gives_the_text_back(text: str) -> None:
    pieces = split_tokens(text)
    assert "".join(pieces) == text and all(pieces)
    assert count_tokens(text) == len(pieces)


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=200), args=st.dictionaries(st.text(max_size=8), st.text(max_size=20),
                                                                  max_size=3))
def test_every_format_carries_the_text_and_arguments(text: str, args: dict[str, str]) -> None:
    """Decoding any synthesized stream and joining its deltas gives the stub's text and arguments back."""
    stub = Stub(Match(), Reply(text=text, tool_calls=(ToolCall("f", args),)))
    arguments = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    for path, body in [("/v1/chat/completions", CHAT), ("/v1/responses", {"input": "hi", "stream": True}),
                       ("/v1/messages", {**CHAT})]:
        conv = read_conversation(Request("POST", path, [], [], json.dumps(body).encode()))
        assert conv is not None
        events = [e for e in decode(synthesize(stub, conv).body) if isinstance(e, Event) and e.data != "[DONE]"]
        payloads = [json.loads(e.data) for e in events]
        got_text = got_args = ""
        for p in payloads:
            for choice in p.get("choices", []):
                got_text += choice["delta"].get("content") or ""
                got_args += "".join(c["function"]["arguments"] for c in choice["delta"].get("tool_calls", []))
            if p.get("type") == "response.output_text.delta":
                got_text += p["delta"]
            if p.get("type") == "response.function_call_arguments.delta":
                got_args += p["delta"]
            delta = p.get("delta", {}) if p.get("type") == "content_block_delta" else {}
            got_text += delta.get("text", "")
            got_args += delta.get("partial_json", "")
        assert (got_text, got_args) == (text, arguments), path


def test_short_answers_to_small_requests_are_quick_and_answered_alike() -> None:
    from ssemock.stubs import StubBook, on
    from ssemock.stubs.book import QUICK_BODY, QUICK_REPLY, QUICK_STUBS

    small = Request("POST", "/v1/chat/completions", [], [], json.dumps(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode())
    large = Request("POST", "/v1/chat/completions", [], [], json.dumps(
        {"model": "m", "messages": [{"role": "user", "content": "x" * QUICK_BODY}]}).encode())
    book = StubBook([reply("a" * QUICK_REPLY)])
    assert book.quick(small) and not book.quick(large)
    book.add(*on(contains="weather").call_tool("get_weather", {"city": "P" * QUICK_REPLY}))
    assert not book.quick(small)  # a tool call's name and arguments count
    book.replace([reply("b") for _ in range(QUICK_STUBS)])
    assert book.quick(small)
    book.add(reply("c"))
    assert not book.quick(small)

    # both ways answer alike: the short answer on the server's loop, the long one in a thread
    for text in ("short", "long " * QUICK_REPLY):
        with MockServer(cassettes=[], stubs=reply(text, times=None)) as server:
            body = httpx.post(server.url + "/v1/chat/completions", json={
                "model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).json()
            assert body["choices"][0]["message"]["content"] == text
            assert [e["stub"] for e in server.requests] == [f"reply({text[:30]!r})"]
