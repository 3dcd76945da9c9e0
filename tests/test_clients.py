"""Real client libraries on the real recordings, through the replay server.

The expected values are derived from the cassette with our decoder (what the provider
sent) and, where SOURCES.md states them, checked against the literal recorded values.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx_sse
import openai
import pytest

from ssemock import Cassette, MockServer
from ssemock.sse import Event, decode


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(scenarios=[], timing_scale=0) as running:
        yield running


@pytest.fixture
def closing() -> Iterator[Any]:
    """Closes the SDK clients a test opens (their connection pools) at the end of the test."""
    opened: list[Any] = []

    def register(client: Any) -> Any:
        opened.append(client)
        return client

    yield register
    for client in opened:
        client.close()


def payloads(cassette: Cassette, index: int) -> list[Any]:
    """JSON payloads of the recorded events (``[DONE]`` and non-JSON skipped)."""
    body = cassette.interactions[index].response.body
    if cassette.interactions[index].response.header("content-encoding") == "gzip":
        body = gzip.decompress(body)
    out = []
    for event in decode(body):
        assert isinstance(event, Event)
        try:
            out.append(json.loads(event.data))
        except ValueError:
            continue
    return out


def chat_deltas(items: list[Any]) -> tuple[str, dict[int, str]]:
    """Text and tool-call arguments from OpenAI chat completion chunks (documented delta format)."""
    text, args = "", {}
    for chunk in items:
        for choice in chunk.get("choices", []):
            delta = choice["delta"]
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                args[call["index"]] = args.get(call["index"], "") + (call["function"].get("arguments") or "")
    return text, args


def test_openai_sdk_chat_completions_tool_call_then_text(
    server: MockServer, bundled: dict[str, Cassette], closing: Any
) -> None:
    cassette = bundled["openai-chat-tool-calls-usage"]
    client = closing(openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0))
    for index, inter in enumerate(cassette.interactions):
        body = inter.request.json()
        stream = client.chat.completions.create(**body)  # the recorded request, sent by the SDK
        text, args, usage = "", {}, None
        for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    args[call.index] = args.get(call.index, "") + (call.function.arguments or "")
        assert (text, args) == chat_deltas(payloads(cassette, index))
        assert usage is not None and usage.total_tokens == payloads(cassette, index)[-1]["usage"]["total_tokens"]
        if index == 0:
            assert args == {0: '{"country":"UK"}'}  # SOURCES.md: pieces {" country ":" UK "}
        else:
            assert "London" in text
    # Both requests matched by JSON body, in order.
    assert [(e["cassette"], e["interaction"]) for e in server.requests[-2:]] == [
        ("openai-chat-tool-calls-usage", 0), ("openai-chat-tool-calls-usage", 1)]


async def test_openai_async_sdk_qwen_emoji_split_across_events(
    server: MockServer, bundled: dict[str, Cassette]
) -> None:
    text, reasoning = "", ""
    async with openai.AsyncOpenAI(base_url=server.url + "/compatible-mode/v1", api_key="sk-test",
                                  max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="qwen3-max", messages=[{"role": "user", "content": "?"}], stream=True)
        async for chunk in stream:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
    items = payloads(bundled["alibaba-qwen-chat-emoji-split"], 0)
    assert text == chat_deltas(items)[0]
    assert reasoning == "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in items if c["choices"])
    assert "\u26a0\ufe0f" in text  # the emoji split across two events is whole once assembled


def test_openai_sdk_raises_the_error_sent_inside_an_http_200_stream(server: MockServer, closing: Any) -> None:
    client = closing(openai.OpenAI(base_url=server.url + "/api/v1", api_key="sk-test", max_retries=0))
    cassette = server.state.cassettes["openrouter-chat-keepalive-midstream-error"]
    body = cassette.interactions[0].request.json()
    seen = []
    with pytest.raises(openai.APIError, match="Token limit reached"), client.chat.completions.create(**body) as stream:
        for chunk in stream:
            seen.append(chunk)
    assert len(seen) == 3  # the 3 reasoning chunks before the error chunk (SOURCES.md)


def test_openai_sdk_responses_streaming_function_call_and_text(
    server: MockServer, bundled: dict[str, Cassette], closing: Any
) -> None:
    cassette = bundled["openai-responses-function-call"]
    client = closing(openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0))
    for index, inter in enumerate(cassette.interactions):
        events = list(client.responses.create(**inter.request.json()))
        recorded = payloads(cassette, index)
        assert [e.type for e in events] == [p["type"] for p in recorded]
        assert [e.sequence_number for e in events] == [p["sequence_number"] for p in recorded]
        args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        assert args == "".join(p["delta"] for p in recorded if p["type"] == "response.function_call_arguments.delta")
        assert text == "".join(p["delta"] for p in recorded if p["type"] == "response.output_text.delta")
        assert events[-1].type == "response.completed"
    assert sum(1 for p in payloads(cassette, 0) if p["type"] == "response.function_call_arguments.delta") == 11


def test_openai_sdk_responses_on_openrouter_data_only_events(
    server: MockServer, bundled: dict[str, Cassette], closing: Any
) -> None:
    cassette = bundled["openrouter-responses-empty-comment-tool-calls"]
    client = closing(openai.OpenAI(base_url=server.url + "/api/v1", api_key="sk-test", max_retries=0))
    inter = cassette.interactions[1]
    events = list(client.responses.create(**inter.request.json()))
    assert [e.type for e in events] == [p["type"] for p in payloads(cassette, 1)]


def test_anthropic_sdk_thinking_stream(
    server: MockServer, bundled: dict[str, Cassette], closing: Any
) -> None:
    cassette = bundled["anthropic-messages-thinking"]
    body = cassette.interactions[0].request.json()
    body.pop("stream")
    client = closing(anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0))
    with client.messages.stream(**body) as stream:
        message = stream.get_final_message()
    recorded = payloads(cassette, 0)
    deltas = [p["delta"] for p in recorded if p["type"] == "content_block_delta"]
    assert len(deltas) == 110  # SOURCES.md: 110 content_block_delta events
    thinking = "".join(d.get("thinking", "") for d in deltas if d["type"] == "thinking_delta")
    text = "".join(d.get("text", "") for d in deltas if d["type"] == "text_delta")
    signature = "".join(d.get("signature", "") for d in deltas if d["type"] == "signature_delta")
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == thinking and message.content[0].signature == signature
    assert message.content[1].text == text


def test_anthropic_sdk_gzip_tool_use(server: MockServer, closing: Any) -> None:
    client = closing(anthropic.Anthropic(base_url=server.url + "/_ssemock/c/anthropic-messages-tool-use-gzip",
                                         api_key="sk-ant-test", max_retries=0))
    with client.messages.stream(model="claude-haiku-4-5-20251001", max_tokens=8192,
                                messages=[{"role": "user", "content": "Generate one name for a pet pelican"}]) as s:
        message = s.get_final_message()
    assert message.stop_reason == "tool_use"  # SOURCES.md: message_delta stop_reason tool_use
    assert [(b.type, b.name, b.input) for b in message.content] == [("tool_use", "pelican_name_generator", {})]


def test_httpx_sse_sees_the_recorded_events_of_every_stream(
    server: MockServer, bundled: dict[str, Cassette]
) -> None:
    checked = 0
    with httpx.Client(base_url=server.url) as client:
        for cassette in bundled.values():
            for index, inter in enumerate(cassette.interactions):
                if "event-stream" not in (inter.response.header("content-type") or ""):
                    continue
                req = inter.request
                body = inter.response.body
                if inter.response.header("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                want = [(e.type, e.data, e.last_event_id) for e in decode(body)]  # type: ignore[union-attr]
                with httpx_sse.connect_sse(
                    client, req.method, req.path, params=req.query, content=req.body or b"",
                    headers={"X-SSEMock-Cassette": cassette.name},
                ) as source:
                    got = [(e.event, e.data, e.id) for e in source.iter_sse()]
                assert server.requests[-1]["interaction"] == index
                assert got == want, (cassette.name, index)
                checked += 1
            server.reset()
    assert checked == 22  # 27 real interactions, 5 of them not event streams (JSON, 202)
