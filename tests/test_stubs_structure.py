"""A synthesized stream has the structure of the bundled real recording of the same provider and kind.

For each provider, a stub replies what the recording's provider answered (the same kind:
text, tool call, thinking) to the recording's own request; the two streams are compared on
the sequence of event types (runs of one type count once: the texts differ in length), the
JSON key paths per event type, and the response header names (framing headers aside:
``connection``, ``transfer-encoding``, ``content-length``; and ``content-encoding``, which
the client asked for in one recording).

Known, documented differences (fields the provider added after a recording was made, or
events a scenario produces rather than a stub) are listed in ``ALLOWED`` and nowhere else.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ssemock.bundled import bundled_cassettes
from ssemock.cassette import Response, load_cassettes
from ssemock.plan import Plan
from ssemock.sse import Comment, Decoder, Event
from ssemock.stubs import Match, Reply, Stub, ToolCall, Usage, read_conversation, synthesize

CASSETTES = load_cassettes(bundled_cassettes())
FRAMING = {"connection", "transfer-encoding", "content-length", "content-encoding"}

ALLOWED: dict[str, set[str]] = {
    # Anthropic added stop_details after this recording (the 2026 tool-use recording has it).
    "anthropic-messages-thinking": {"message_start message.stop_details", "message_delta delta.stop_details"},
    # The recording ends with a mid-stream error chunk: the error-mid-stream scenario writes it.
    "openrouter-chat-keepalive-midstream-error": {"message error", "message error.code", "message error.message"},
}


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every object key path in ``value`` (list items share their list's path)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found.add(path)
            found |= key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            found |= key_paths(item, prefix)
    return found


def structure(response: Response) -> tuple[list[str], dict[str, set[str]], set[str]]:
    """(event types in order, runs collapsed; key paths per type; header names)."""
    plan = Plan.of(response)
    plan.decode_content()
    types: list[str] = []
    keys: dict[str, set[str]] = {}
    for item in Decoder().feed(plan.response.body + b"\n\n"):
        if isinstance(item, Comment):
            kind, paths = ":comment", set()
        elif isinstance(item, Event):
            kind = item.type
            try:
                paths = key_paths(json.loads(item.data))
            except ValueError:
                kind = f"{kind} {item.data}"  # e.g. [DONE]
                paths = set()
        else:
            continue
        if not types or types[-1] != kind:
            types.append(kind)
        keys.setdefault(kind, set()).update(paths)
    headers = {name.lower() for name, _ in response.headers} - FRAMING
    return types, keys, headers


def compare(cassette: str, index: int, reply: Reply, headers_from: tuple[str, int] | None = None) -> None:
    interaction = CASSETTES[cassette].interactions[index]
    conv = read_conversation(interaction.request)
    assert conv is not None
    synthesized = synthesize(Stub(Match(), reply), conv, seed=7)
    want_types, want_keys, want_headers = structure(interaction.response)
    got_types, got_keys, got_headers = structure(synthesized)
    assert got_types == want_types
    allowed = ALLOWED.get(cassette, set())
    for kind in want_keys:
        missing = {f"{kind} {p}" for p in want_keys[kind] - got_keys[kind]} - allowed
        extra = {f"{kind} {p}" for p in got_keys[kind] - want_keys[kind]} - allowed
        assert (missing, extra) == (set(), set()), kind
    if headers_from is not None:
        other = CASSETTES[headers_from[0]].interactions[headers_from[1]].response
        want_headers = structure(other)[2]
    assert got_headers == want_headers


def test_openai_chat_text_and_tool_call_match_the_recording() -> None:
    compare("openai-chat-tool-calls-usage", 0, Reply(tool_calls=(ToolCall("get_capital", {"country": "UK"}),)))
    compare("openai-chat-tool-calls-usage", 1, Reply(text="The capital of the UK is London."))


def test_openai_responses_text_and_function_call_match_the_recording() -> None:
    compare("openai-responses-function-call", 0, Reply(tool_calls=(ToolCall("multiply", {"a": 1231, "b": 2331}),)))
    compare("openai-responses-function-call", 1, Reply(text="1231 × 2331 = **2,869,461**"))


def test_anthropic_thinking_and_tool_use_match_the_recordings() -> None:
    thinking = Reply(reasoning="This is a straightforward question about pedestrian safety.",
                     text="Here are the key safety tips.")
    # The thinking recording's source kept only four of the response headers; the tool-use one kept all.
    compare("anthropic-messages-thinking", 0, thinking, headers_from=("anthropic-messages-tool-use-gzip", 0))
    compare("anthropic-messages-tool-use-gzip", 0, Reply(tool_calls=(ToolCall("pelican_name_generator", {}),)))


def test_gemini_text_and_function_call_match_the_recording() -> None:
    call = Reply(tool_calls=(ToolCall("get_country", {}),), usage=Usage(reasoning_tokens=202))
    compare("gemini-streamgeneratecontent-tool-call-thought-signature", 0, call)
    compare("gemini-streamgeneratecontent-tool-call-thought-signature", 1, Reply(text="The capital of Mexico is "
                                                                                      "Mexico City."))


def test_openrouter_reasoning_matches_the_recording() -> None:
    compare("openrouter-chat-keepalive-midstream-error", 0,
            Reply(reasoning="We need to respond to a greeting.", finish_reason="length"))


@pytest.mark.parametrize("text", ["The capital of the UK is London.", "1231 × 2331 = **2,869,461**"])
def test_openai_deltas_are_the_recorded_tokens(text: str) -> None:
    """The documented splitting rule gives exactly the deltas OpenAI sent for these answers."""
    from ssemock.providers.tokens import split_tokens

    for cassette in ("openai-chat-tool-calls-usage", "openai-responses-function-call"):
        recorded = []
        for item in Decoder().feed(CASSETTES[cassette].interactions[1].response.body):
            if isinstance(item, Event) and item.data.startswith("{"):
                payload = json.loads(item.data)
                choices = payload.get("choices") or [{}]
                delta = choices[0].get("delta", {}).get("content") if "choices" in payload else None
                if payload.get("type") == "response.output_text.delta":
                    delta = payload["delta"]
                if delta:
                    recorded.append(delta)
        if "".join(recorded) == text:
            assert split_tokens(text) == recorded
            break
    else:
        pytest.fail(f"no recording answers {text!r}")
