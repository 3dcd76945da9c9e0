"""Triggers of real client bugs said in at most 3 YAML lines with the editing steps and endings.

Each is served by the real server on two bundled recordings of different providers. For each, a
client of at most 20 lines with the bug fails, while httpx-sse and the provider's SDK get what a
WHATWG parser dispatches; the expected events are worked out from the recorded bytes.
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
import yaml

from ssemock import MockServer, Scenario
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.sse import Event, decode

from .rawclient import raw_request

CASSETTES = collect_cassettes(None)
CHAT, QWEN = "openai-chat-finish-length-usage", "alibaba-qwen-chat-emoji-split"
TOOLS, TOOL_USE = "openai-chat-tool-calls-usage", "anthropic-messages-tool-use-gzip"
THINKING = "anthropic-messages-thinking"
PATHS = {CHAT: "/v1/chat/completions", QWEN: "/compatible-mode/v1/chat/completions", TOOLS: "/v1/chat/completions",
         TOOL_USE: "/v1/messages", THINKING: "/v1/messages"}
SAFE = {"filtered": False, "severity": "safe"}
AZURE = {"choices": [], "created": 0, "id": "", "model": "", "object": "",  # Azure OpenAI's first chunk
         "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {
             "hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": SAFE}}]}
PRESETS = {"yaml-azure-first-chunk": "azure-first-chunk", "yaml-tool-call-without-id": "tool-call-without-id",
           "yaml-tool-use-without-id": "tool-call-without-id", "yaml-ends-without-line-end": "no-final-line-end"}
YAML = {  # each trigger as a user writes it
    "yaml-azure-first-chunk": "- insert:\n    at: 0\n    json: " + json.dumps(AZURE),
    "yaml-tool-call-without-id": '- edit: {delete: ["choices[0].delta.tool_calls[0].id"]}',
    "yaml-tool-use-without-id": "- edit: {where: {type: content_block_start}, delete: [content_block.id]}",
    "yaml-ends-without-line-end": "- no-done: {}\n- drop-final-blank-line: {line_end: false}",
    "yaml-ends-without-blank-line": "- no-done: {}\n- drop-final-blank-line: {}",
    "yaml-ends-inside-last-event": "- disconnect: {from_end: 5, how: clean}",
}
Seen = list[tuple[str, str]]


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    scenarios = [Scenario.from_dict({"name": name, "steps": yaml.safe_load(text)}) for name, text in YAML.items()]
    with MockServer(scenarios=[*collect_scenarios(None).values(), *scenarios], timing_scale=0) as running:
        yield running


def test_each_trigger_is_at_most_three_yaml_lines() -> None:
    assert all(len(text.splitlines()) <= 3 for text in YAML.values())


@pytest.mark.parametrize(("inline", "cassette"), [
    ("yaml-azure-first-chunk", CHAT), ("yaml-azure-first-chunk", QWEN), ("yaml-tool-call-without-id", TOOLS),
    ("yaml-tool-use-without-id", TOOL_USE), ("yaml-ends-without-line-end", THINKING)])
def test_the_presets_send_what_the_yaml_lines_say(server: MockServer, inline: str, cassette: str) -> None:
    assert on_wire(server, cassette, PRESETS[inline]) == on_wire(server, cassette, inline)


def recorded(cassette: str, index: int = 0) -> bytes:
    response = CASSETTES[cassette].interactions[index].response
    body = response.body
    return gzip.decompress(body) if response.header("content-encoding") == "gzip" else body


def sent(cassette: str) -> bytes:
    """The recorded request body (so that the request matches the first interaction)."""
    return CASSETTES[cassette].interactions[0].request.body or b"{}"


def request(cassette: str) -> dict[str, Any]:
    """The recorded request's JSON without ``stream`` (the SDK's streaming call sets it); any for a body not kept."""
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **json.loads(sent(cassette))}
    body.pop("stream", None)
    return body


def anthropic_request(cassette: str) -> dict[str, Any]:
    """What ``messages.stream`` needs of the recorded request (a single interaction answers any body)."""
    return {key: request(cassette)[key] for key in ("model", "max_tokens", "messages")}


def whatwg(body: bytes) -> Seen:
    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def headers(cassette: str, scenario: str | None) -> dict[str, str]:
    return {"X-SSEMock-Cassette": cassette, **({"X-SSEMock-Scenario": scenario} if scenario else {})}


def on_wire(server: MockServer, cassette: str, scenario: str) -> bytes:
    got = raw_request(server.url, "POST", PATHS[cassette], sent(cassette), headers(cassette, scenario))
    body = got.body
    return gzip.decompress(body) if got.header("content-encoding") == "gzip" else body


def httpx_sse_events(server: MockServer, cassette: str, scenario: str | None) -> Seen:
    with httpx.Client(base_url=server.url) as client, httpx_sse.connect_sse(
            client, "POST", PATHS[cassette], content=sent(cassette), headers=headers(cassette, scenario)) as source:
        return [(sse.event, sse.data) for sse in source.iter_sse()]


def payload_list(seen: Seen) -> list[Any]:
    return [json.loads(data) if data != "[DONE]" else data for _, data in seen]


def openai_chunks(server: MockServer, cassette: str, scenario: str | None) -> list[Any]:
    base = server.url + PATHS[cassette].removesuffix("/chat/completions")
    with openai.OpenAI(base_url=base, api_key="sk-test", max_retries=0) as client:
        return list(client.chat.completions.create(**request(cassette), stream=True,
                                                   extra_headers=headers(cassette, scenario)))


def recorded_text(cassette: str) -> str:
    return "".join(c["delta"].get("content") or "" for p in payload_list(whatwg(recorded(cassette)))
                   if p != "[DONE]" for c in p["choices"])


# ---- an Azure-style first chunk: no choices, prompt filter results -------------------------------------
def role_from_first_chunk(server: MockServer, cassette: str, scenario: str | None) -> tuple[str, str]:
    """The bug: the first chunk is taken to open the message, so its choices[0] is read unguarded."""
    role, text = None, ""
    with httpx.Client(base_url=server.url) as client, client.stream(
            "POST", PATHS[cassette], content=sent(cassette), headers=headers(cassette, scenario)) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if role is None:
                role = chunk["choices"][0]["delta"]["role"]
            text += "".join(c["delta"].get("content") or "" for c in chunk["choices"])
    return role or "", text


@pytest.mark.parametrize("cassette", [CHAT, QWEN])
def test_an_azure_first_chunk_breaks_a_client_reading_choices_0(server: MockServer, cassette: str) -> None:
    truth = whatwg(recorded(cassette))
    inserted = ("message", json.dumps(AZURE, separators=(",", ":")))
    assert whatwg(on_wire(server, cassette, "yaml-azure-first-chunk")) == [inserted, *truth]
    assert role_from_first_chunk(server, cassette, None) == ("assistant", recorded_text(cassette))
    with pytest.raises(IndexError):
        role_from_first_chunk(server, cassette, "yaml-azure-first-chunk")
    seen = httpx_sse_events(server, cassette, "yaml-azure-first-chunk")
    assert payload_list(seen) == [AZURE, *payload_list(truth)]
    chunks = openai_chunks(server, cassette, "yaml-azure-first-chunk")
    assert chunks[0].choices == [] and chunks[0].model_extra["prompt_filter_results"] == AZURE["prompt_filter_results"]
    assert "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices) == recorded_text(cassette)
    assert len(chunks) == len(truth)  # the inserted chunk, and every recorded one but [DONE]


# ---- a tool call whose first delta has its index but no id ---------------------------------------------
def tool_calls_by_id(server: MockServer, cassette: str, scenario: str | None) -> dict[str, str]:
    """The bug: a tool call starts at the delta carrying its id, and calls are kept by id."""
    calls: dict[str, str] = {}
    current = None
    with httpx.Client(base_url=server.url) as client, client.stream(
            "POST", PATHS[cassette], content=sent(cassette), headers=headers(cassette, scenario)) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:])["choices"]:
                for call in choice["delta"].get("tool_calls") or []:
                    if call.get("id"):
                        current = call["id"]
                        calls[current] = ""
                    calls[current] += call["function"].get("arguments") or ""
    return calls


def test_a_tool_call_without_id_breaks_a_client_keying_calls_by_id(server: MockServer) -> None:
    truth = payload_list(whatwg(recorded(TOOLS)))
    calls = [c for p in truth if p != "[DONE]" for ch in p["choices"] for c in ch["delta"].get("tool_calls") or []]
    (first,) = [c for c in calls if "id" in c]  # the recording: one call, its id in its first delta only
    arguments = "".join(c["function"].get("arguments") or "" for c in calls)
    assert arguments == '{"country":"UK"}'
    expected = json.loads(json.dumps(truth).replace(f'"id": "{first["id"]}", ', ""))
    assert expected != truth
    assert payload_list(httpx_sse_events(server, TOOLS, "yaml-tool-call-without-id")) == expected
    assert tool_calls_by_id(server, TOOLS, None) == {first["id"]: arguments}
    with pytest.raises(KeyError):
        tool_calls_by_id(server, TOOLS, "yaml-tool-call-without-id")
    by_index: dict[int, str] = {}
    for chunk in openai_chunks(server, TOOLS, "yaml-tool-call-without-id"):  # the SDK's chunks, keyed by index
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                assert call.id is None
                by_index[call.index] = by_index.get(call.index, "") + (call.function.arguments or "")
    assert by_index == {0: arguments}


def tool_uses_by_id(server: MockServer, scenario: str | None) -> dict[str, str]:
    """The bug: tool-use blocks are kept by their id instead of their index."""
    blocks: dict[str, str] = {}
    with httpx.Client(base_url=server.url) as client, httpx_sse.connect_sse(
            client, "POST", PATHS[TOOL_USE], content=sent(TOOL_USE), headers=headers(TOOL_USE, scenario)) as source:
        for sse in source.iter_sse():
            event = sse.json()
            if event["type"] == "content_block_start" and event["content_block"]["type"] == "tool_use":
                blocks[event["content_block"]["id"]] = event["content_block"]["name"]
    return blocks


def test_a_tool_use_block_without_id_breaks_a_client_keying_blocks_by_id(server: MockServer) -> None:
    truth = whatwg(recorded(TOOL_USE))
    starts = [json.loads(d) for t, d in truth if t == "content_block_start"]
    assert [s["content_block"]["name"] for s in starts] == ["pelican_name_generator"]
    seen = httpx_sse_events(server, TOOL_USE, "yaml-tool-use-without-id")
    assert [t for t, _ in seen] == [t for t, _ in truth]
    for (kind, data), (_, was) in zip(seen, truth):
        want = json.loads(was)
        if kind == "content_block_start":
            del want["content_block"]["id"]
        assert json.loads(data) == want
    assert tool_uses_by_id(server, None) == {starts[0]["content_block"]["id"]: "pelican_name_generator"}
    with pytest.raises(KeyError):
        tool_uses_by_id(server, "yaml-tool-use-without-id")
    with anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0) as client, \
            client.messages.stream(**anthropic_request(TOOL_USE),
                                   extra_headers=headers(TOOL_USE, "yaml-tool-use-without-id")) as stream:
        message = stream.get_final_message()
    assert [(b.type, b.name, b.input) for b in message.content] == [("tool_use", "pelican_name_generator", {})]
    assert message.stop_reason == "tool_use"


# ---- a body ending "…}" or "…}\n": the last event is unfinished ----------------------------------------
def tail_keeping_reader(server: MockServer, cassette: str, scenario: str | None) -> list[Any]:
    """The bug: events split on a blank line, and the unfinished tail is used as an event at the end."""
    buffer, payloads = "", []
    with httpx.Client(base_url=server.url) as client, client.stream(
            "POST", PATHS[cassette], content=sent(cassette), headers=headers(cassette, scenario)) as response:
        for text in response.iter_text():
            buffer += text
            *done, buffer = buffer.split("\n\n")
            payloads += [block for block in done if "data:" in block and "[DONE]" not in block]
        if buffer.strip():
            payloads.append(buffer)
    return [json.loads("".join(ln[5:] for ln in p.splitlines() if ln.startswith("data:"))) for p in payloads]


@pytest.mark.parametrize("cassette", [CHAT, THINKING])
@pytest.mark.parametrize(("scenario", "cut"), [("yaml-ends-without-line-end", 2), ("yaml-ends-without-blank-line", 1)])
def test_a_final_line_end_dropped_and_a_client_using_the_unfinished_tail(
        server: MockServer, cassette: str, scenario: str, cut: int) -> None:
    body = recorded(cassette)
    if cassette == CHAT:
        body = body.removesuffix(b"data: [DONE]\n\n")
    assert on_wire(server, cassette, scenario) == body[:-cut]
    assert body[:-cut].endswith({2: b"}", 1: b"}\n"}[cut])
    truth = [e for e in whatwg(body) if e[1] != "[DONE]"]
    assert whatwg(body[:-cut]) == truth[:-1]  # WHATWG: an unfinished event at the end is discarded
    assert httpx_sse_events(server, cassette, scenario) == truth[:-1]
    assert tail_keeping_reader(server, cassette, None) == payload_list(truth)
    assert tail_keeping_reader(server, cassette, scenario) == payload_list(truth)  # one event too many
    if cassette == CHAT:
        chunks = openai_chunks(server, cassette, scenario)
        assert [c.model_dump(exclude_unset=True) for c in chunks] == payload_list(truth[:-1])
    else:
        assert anthropic_text(server, scenario) == anthropic_text(server, None)


def anthropic_text(server: MockServer, scenario: str | None) -> tuple[str, str | None]:
    with anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0) as client, \
            client.messages.stream(**anthropic_request(THINKING), extra_headers=headers(THINKING, scenario)) as stream:
        message = stream.get_final_message()
    return "".join(getattr(b, "text", "") for b in message.content), message.stop_reason


@pytest.mark.parametrize("cassette", [CHAT, THINKING])
def test_a_body_cut_inside_its_last_event_crashes_the_tail_reader_only(server: MockServer, cassette: str) -> None:
    body = recorded(cassette)
    assert on_wire(server, cassette, "yaml-ends-inside-last-event") == body[:-5]
    truth = whatwg(body)
    assert httpx_sse_events(server, cassette, "yaml-ends-inside-last-event") == truth[:-1]
    with pytest.raises(json.JSONDecodeError):
        tail_keeping_reader(server, cassette, "yaml-ends-inside-last-event")
    if cassette == CHAT:
        assert len(openai_chunks(server, cassette, "yaml-ends-inside-last-event")) == len(truth) - 1
    else:
        assert anthropic_text(server, "yaml-ends-inside-last-event") == anthropic_text(server, None)
