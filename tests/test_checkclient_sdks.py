"""``ssemock check-client`` with the SDK-level adapters of examples/check-client/ for Anthropic and Gemini,
over the bundled recordings of each provider.

The answer an adapter prints on a recording as recorded is compared with the answer assembled here from
the recording's own events (decoded by ``ssemock.sse``), by the provider's documented stream format.
The grades asserted are those the SDK's own stream reading explains:

* anthropic-sdk-python (``anthropic``): its SSE decoder keeps a leading U+FEFF, so the first field name
  is ``\\ufeffevent``, the ``message_start`` event has no type and is skipped, and ``get_final_message``
  fails (``bom``). Its ``Stream`` ends at the end of the body whether ``message_stop`` came or not, and
  ``MessageStream.get_final_message`` returns the snapshot built so far (``stop_reason`` None when
  ``message_delta`` was cut): a stream cut before ``message_stop`` is accepted (``truncate``,
  ``no-final-blank-line``, and the recording ``anthropic-messages-max-tokens-partial-json``, taken from
  the SDK's own test fixtures, which has none). The TypeScript SDK has the same gap
  (anthropics/anthropic-sdk-typescript#893).
* google-genai: its stream reader (``_api_client.py``, ``_iter_response_stream``) takes as data only lines
  that start with ``data: `` (with the space); any other non-empty line (a comment, ``id:``, ``retry:``,
  ``data:`` without the space, a leading U+FEFF) is read as a line of a JSON error body and fails as
  ``UnknownApiResponseError`` (``keepalive``, ``meta-blocks``, ``no-space``, ``bom``). Gemini streams have no
  terminal event: a clean end after any chunk is accepted (``truncate``).
* openai-node (``openai`` on npm): its ``Stream`` ends at the end of the body whether ``data: [DONE]`` came
  or not (``core/streaming.js``, ``iterator``), so a cut stream is accepted (``truncate``); its ``timeout``
  is cleared once the response headers arrive (``client.js``, ``fetchWithTimeout``), so the body has no
  read timeout and a stall is waited through (``stall``), while late headers are timed out and retried.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from ssemock.mockserver import collect_cassettes

from .checkclients import (
    EXAMPLES,
    case_verdicts,
    check_client,
    clean_answer,
    recorded_events,
    release_node,
    run_once,
)

ANTHROPIC = [sys.executable, str(EXAMPLES / "anthropic_messages_answer.py"), "--timeout", "1.5"]
GENAI = [sys.executable, str(EXAMPLES / "google_genai_answer.py"), "--timeout", "1.5"]
ANTHROPIC_CASSETTES = (
    "anthropic-messages-thinking",
    "anthropic-messages-tool-use-gzip",
    "anthropic-messages-max-tokens-partial-json",
)
GEMINI_CASSETTES = ("gemini-streamgeneratecontent-crlf", "gemini-streamgeneratecontent-tool-call-thought-signature")
ANTHROPIC_PRESETS = "bom meta-blocks split-utf8 keepalive cut-mid-event error-mid-stream truncate no-final-blank-line"
GENAI_PRESETS = "bom keepalive meta-blocks no-space split-utf8 crlf cut-mid-event error-mid-stream truncate"
"""Telling presets only (each case starts the SDK anew); ``http-429`` is left out for google-genai, whose
first retry comes after 1 s plus a random jitter of up to 1 s (tenacity's ``wait_exponential_jitter``),
against a ``Retry-After: 2``: mostly, not always, too early."""


def anthropic_answer(cassette: str) -> dict[str, Any]:
    """The answer the recording holds (Anthropic docs, "Streaming Messages"): the text deltas of the text
    blocks joined; per ``tool_use`` block its id, name and input (the ``input_json_delta`` pieces joined and
    parsed, or the start's ``input`` when none; None when they do not parse); the ``message_delta`` stop
    reason; the ``message_start`` usage updated by the ``message_delta`` one."""
    blocks: dict[int, dict[str, Any]] = {}
    answer: dict[str, Any] = {"finish_reason": None, "usage": {}}
    for event in recorded_events(cassette):
        value = json.loads(event.data)
        if value["type"] == "message_start":
            answer["usage"] = dict(value["message"]["usage"])
        elif value["type"] == "content_block_start":
            blocks[value["index"]] = {**value["content_block"], "text": "", "json": ""}
        elif value["type"] == "content_block_delta":
            delta = value["delta"]
            if delta["type"] == "text_delta":
                blocks[value["index"]]["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                blocks[value["index"]]["json"] += delta["partial_json"]
        elif value["type"] == "message_delta":
            answer["finish_reason"] = value["delta"]["stop_reason"]
            answer["usage"].update(value.get("usage", {}))
    answer["text"] = "".join(b["text"] for _, b in sorted(blocks.items()) if b["type"] == "text")
    answer["tool_calls"] = [
        {"id": b["id"], "name": b["name"], "arguments": _parsed(b["json"]) if b["json"] else b["input"]}
        for _, b in sorted(blocks.items())
        if b["type"] == "tool_use"
    ]
    answer["tool_json"] = [b["json"] for _, b in sorted(blocks.items()) if b["type"] == "tool_use"]
    return answer


def gemini_answer(cassette: str) -> dict[str, Any]:
    """The answer the recording holds (Gemini API, ``GenerateContentResponse`` per event): the text parts
    of the first candidate joined (``thought`` parts left out), its ``functionCall`` parts (name, args), the
    last ``finishReason``, the last ``usageMetadata`` (keys in snake_case, as google-genai names them)."""
    answer: dict[str, Any] = {"text": "", "tool_calls": [], "finish_reason": None, "usage": None}
    for event in recorded_events(cassette):
        value = json.loads(event.data)
        if "usageMetadata" in value:
            answer["usage"] = _snake(value["usageMetadata"])
        for candidate in value.get("candidates", ()):
            answer["finish_reason"] = candidate.get("finishReason", answer["finish_reason"])
            for part in candidate.get("content", {}).get("parts", ()):
                if "text" in part and not part.get("thought"):
                    answer["text"] += part["text"]
                if "functionCall" in part:
                    call = part["functionCall"]
                    answer["tool_calls"].append({"id": call.get("id"), "name": call["name"], "arguments": call["args"]})
    return answer


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _snake(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): _snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake(v) for v in value]
    return value


def test_anthropic_adapter_prints_the_recorded_answer() -> None:
    for cassette in ANTHROPIC_CASSETTES:
        printed, recorded = clean_answer(cassette, ANTHROPIC), anthropic_answer(cassette)
        assert printed["text"] == recorded["text"], cassette
        assert printed["finish_reason"] == recorded["finish_reason"], cassette
        assert {k: printed["usage"][k] for k in recorded["usage"]} == recorded["usage"], cassette
        assert [(c["id"], c["name"]) for c in printed["tool_calls"]] == [
            (c["id"], c["name"]) for c in recorded["tool_calls"]
        ], cassette
        for call, wanted, pieces in zip(printed["tool_calls"], recorded["tool_calls"], recorded["tool_json"]):
            if wanted["arguments"] is not None:
                assert call["arguments"] == wanted["arguments"], cassette
            else:  # cut by max_tokens inside the JSON: the SDK parses what came; each complete value is the recording's
                assert call["arguments"]["filename"] == "taxes.txt"
                assert call["arguments"]["lines_of_text"] and all(
                    json.dumps(line) in pieces for line in call["arguments"]["lines_of_text"]
                )
    assert anthropic_answer("anthropic-messages-thinking")["text"].startswith("Here are the basic steps")
    assert anthropic_answer("anthropic-messages-max-tokens-partial-json")["finish_reason"] == "max_tokens"


def test_anthropic_sdk_loses_a_bom_and_accepts_a_stream_cut_before_message_stop(tmp_path) -> None:
    presets = ANTHROPIC_PRESETS.split()
    options = [arg for name in ANTHROPIC_CASSETTES for arg in ("--cassette", name)]
    done, report = check_client(
        tmp_path, *options, "--scenario", ",".join([*presets, "no-done"]), "--client-timeout", "1.5",
        command=ANTHROPIC,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    failed = {"bom", "truncate", "no-final-blank-line"}
    assert case_verdicts(report) == {
        (cassette, name): "n/a" if name == "no-done" else "fail" if name in failed else "pass"
        for cassette in ANTHROPIC_CASSETTES
        for name in ("clean", *presets, "no-done")
    }
    # an Anthropic stream has no [DONE] (Messages streaming docs): no-done sends the recording unchanged
    assert {c["reason"] for c in report["cases"] if c["scenario"] == "no-done"} == {
        "the scenario changes nothing in this recording (no-done: no effect, no line of this stream is one it changes)"}
    cuts = [c for c in report["cases"] if c["scenario"] == "truncate"]
    assert {c["exit_status"] for c in cuts} == {0} and {c["output"] for c in cuts} == {"answer"}


def test_google_genai_adapter_prints_the_recorded_answer() -> None:
    for cassette in GEMINI_CASSETTES:
        printed, recorded = clean_answer(cassette, GENAI), gemini_answer(cassette)
        assert printed == recorded, cassette
    assert gemini_answer("gemini-streamgeneratecontent-crlf")["text"] == "The capital of France is Paris.\n"


def test_google_genai_on_vertex_raises_the_json_error_sent_after_the_events() -> None:
    # The recording: two data: events, then a bare pretty-printed google.rpc.Status object (no data: prefix)
    recorded = collect_cassettes(None)["gemini-vertex-error-mid-stream"].interactions[0].response.chunks[-1]
    error = json.loads(recorded.data)["error"]
    done = run_once("gemini-vertex-error-mid-stream", GENAI)
    assert done.returncode == 1 and done.stdout == ""
    assert f"ClientError: {error['code']} {error['status']}" in done.stderr and error["message"] in done.stderr


def test_google_genai_reads_only_data_lines_and_accepts_a_cut(tmp_path) -> None:
    presets = GENAI_PRESETS.split()
    options = [arg for name in GEMINI_CASSETTES for arg in ("--cassette", name)]
    done, report = check_client(
        tmp_path, *options, "--scenario", ",".join(presets), "--client-timeout", "1.5", command=GENAI
    )
    assert done.returncode == 1, done.stdout + done.stderr
    failed = {"bom", "keepalive", "meta-blocks", "no-space", "truncate"}
    assert case_verdicts(report) == {
        (cassette, name): "fail" if name in failed else "pass"
        for cassette in GEMINI_CASSETTES
        for name in ("clean", *presets)
    }
    reasons = {c["scenario"]: c["reason"] for c in report["cases"] if c["cassette"] == GEMINI_CASSETTES[0]}
    assert "UnknownApiResponseError" in reasons["keepalive"] and "retry: 3000" in reasons["meta-blocks"]


OPENAI_NODE = "6.49.0"  # the newest release whose package.json asks no Node.js above 20 (7.x: >= 22)
OPENAI_CASSETTES = ("openai-chat-finish-length-usage", "openai-chat-tool-calls-usage")
OPENAI_NODE_PRESETS = "bom meta-blocks no-space multiline-data cut-mid-event error-mid-stream truncate stall"


def openai_answer(cassette: str) -> dict[str, Any]:
    """The answer the recording holds (OpenAI API reference, "The chat completion chunk object"): the
    ``delta.content`` pieces joined, per tool call index its id, name and arguments joined, the last
    ``finish_reason``, the usage chunk's ``usage``; ``data: [DONE]`` ends the stream."""
    answer: dict[str, Any] = {"text": "", "tool_calls": {}, "finish_reason": None, "usage": None}
    for event in recorded_events(cassette):
        if event.data == "[DONE]":
            break
        value = json.loads(event.data)
        answer["usage"] = value.get("usage") or answer["usage"]
        for choice in value["choices"]:
            answer["text"] += choice["delta"].get("content") or ""
            answer["finish_reason"] = choice.get("finish_reason") or answer["finish_reason"]
            for call in choice["delta"].get("tool_calls") or ():
                entry = answer["tool_calls"].setdefault(call["index"], {"id": None, "name": "", "arguments": ""})
                entry["id"] = call.get("id") or entry["id"]
                entry["name"] += call.get("function", {}).get("name") or ""
                entry["arguments"] += call.get("function", {}).get("arguments") or ""
    answer["tool_calls"] = [answer["tool_calls"][i] for i in sorted(answer["tool_calls"])]
    return answer


def openai_node_adapter(tmp_path: Path) -> Path:
    """The adapter copied into ``tmp_path`` beside a ``node_modules`` holding openai-node (ESM resolves there)."""
    adapter = tmp_path / "openai_node_chat_answer.mjs"
    adapter.write_bytes((EXAMPLES / adapter.name).read_bytes())
    (tmp_path / "node_modules").symlink_to(release_node("openai", OPENAI_NODE))
    return adapter


def test_openai_node_adapter_prints_the_recorded_answer(tmp_path, node) -> None:
    command = [node, str(openai_node_adapter(tmp_path)), "1.5"]
    for cassette in OPENAI_CASSETTES:
        assert clean_answer(cassette, command) == openai_answer(cassette), cassette
    calls = openai_answer("openai-chat-tool-calls-usage")["tool_calls"]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_capital", {"country": "UK"})]
    assert openai_answer("openai-chat-finish-length-usage")["finish_reason"] == "length"


def test_openai_node_accepts_a_cut_stream_and_waits_through_a_stall(tmp_path, node) -> None:
    presets = OPENAI_NODE_PRESETS.split()
    options = [arg for name in OPENAI_CASSETTES for arg in ("--cassette", name)]
    done, report = check_client(
        tmp_path, *options, "--scenario", ",".join(presets), "--client-timeout", "1.5",
        command=[node, str(openai_node_adapter(tmp_path)), "1.5"],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    cases = ["clean", *(name.replace("stall", "stall-4s") for name in presets)]  # the stall outlasts 1.5 s
    assert case_verdicts(report) == {
        (cassette, name): "fail" if name in {"truncate", "stall-4s"} else "pass"
        for cassette in OPENAI_CASSETTES
        for name in cases
    }
    reasons = {(c["cassette"], c["scenario"]): c["reason"] for c in report["cases"]}
    assert all(reasons[c, "stall-4s"].startswith("waited through the 4 s stall") for c in OPENAI_CASSETTES)
