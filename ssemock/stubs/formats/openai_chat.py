"""OpenAI Chat Completions, after ``openai-chat-tool-calls-usage`` (gpt-4o-mini, 2026).

Stream: a first chunk with ``role`` (and ``content: ""``, or ``content: null`` and the
first tool call's id and name, or ``refusal: ""``), one chunk per token of content, refusal
or tool-call arguments, a chunk with an empty delta and the ``finish_reason``; with
``stream_options.include_usage`` every chunk has ``usage: null`` and a last chunk with no
choices carries the usage; then ``data: [DONE]``. Each chunk ends with an ``obfuscation``
padding string, as OpenAI sends it. Reasoning text is not streamed (Chat Completions has
no field for it); it counts in ``completion_tokens_details.reasoning_tokens``.
"""

from __future__ import annotations

from typing import Any

from ..synth import ALNUM, HEX, Piece, Script, dumps
from ..tokens import split_tokens

__all__ = ["answer", "call_id", "error", "events", "headers"]


def call_id(script: Script) -> str:
    return "call_" + script.ident(ALNUM, 24)


def _meta(script: Script) -> dict[str, str]:
    return {"id": script.named("id", ALNUM, 29, "chatcmpl-"), "fingerprint": script.named("fp", HEX, 10, "fp_")}


def usage(script: Script) -> dict[str, Any]:
    return {
        "prompt_tokens": script.input_tokens, "completion_tokens": script.output_tokens,
        "total_tokens": script.input_tokens + script.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": script.reasoning_tokens, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def events(script: Script) -> list[Piece]:
    meta = _meta(script)
    with_usage = script.conv.include_usage

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, tokens: int = 0,
              usage_value: dict[str, Any] | None = None) -> Piece:
        body: dict[str, Any] = {
            "id": meta["id"], "object": "chat.completion.chunk", "created": script.created, "model": script.model,
            "service_tier": "default", "system_fingerprint": meta["fingerprint"],
            "choices": [] if delta is None else [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if with_usage:
            body["usage"] = usage_value
        body["obfuscation"] = script.ident(ALNUM, script.rng.randint(2, 15))
        return Piece(None, dumps(body), tokens)

    reply = script.reply
    out: list[Piece] = []
    calls = script.calls
    if reply.refusal is not None:
        out.append(chunk({"role": "assistant", "content": None, "refusal": ""}))
        out += [chunk({"refusal": p}, tokens=1) for p in split_tokens(reply.refusal)]
    elif reply.text is None and calls:
        pass  # the first tool call's chunk carries the role
    else:
        out.append(chunk({"role": "assistant", "content": "", "refusal": None}))
        out += [chunk({"content": p}, tokens=1) for p in split_tokens(reply.text or "")]
    for index, (ident, call) in enumerate(calls):
        start = {"index": index, "id": ident, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if not out:
            out.append(chunk({"role": "assistant", "content": None, "tool_calls": [start], "refusal": None},
                             tokens=1))
        else:
            out.append(chunk({"tool_calls": [start]}, tokens=1))
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}, tokens=1)
                for p in split_tokens(call.arguments_json)]
    out.append(chunk({}, reply.finish))
    if with_usage:
        out.append(chunk(None, usage_value=usage(script)))
    out.append(Piece(None, "[DONE]"))
    return out


def answer(script: Script) -> dict[str, Any]:
    reply = script.reply
    message: dict[str, Any] = {"role": "assistant", "content": reply.text if reply.refusal is None else None,
                               "refusal": reply.refusal, "annotations": []}
    if script.calls:
        message["tool_calls"] = [
            {"id": ident, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for ident, c in script.calls
        ]
    meta = _meta(script)
    return {
        "id": meta["id"], "object": "chat.completion", "created": script.created, "model": script.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish}],
        "usage": usage(script), "service_tier": "default", "system_fingerprint": meta["fingerprint"],
    }


def headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    kind = "text/event-stream; charset=utf-8" if stream else "application/json"
    return [
        ("access-control-expose-headers", "X-Request-ID"),
        ("alt-svc", 'h3=":443"; ma=86400'),
        ("content-type", kind),
        ("openai-processing-ms", str(script.rng.randint(150, 600))),
        ("openai-version", "2020-10-01"),
        ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
    ]


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "permission_denied",
                404: "invalid_request_error", 429: "rate_limit_exceeded"}


def error(status: int, message: str) -> dict[str, Any]:
    """OpenAI's error object: ``{"error": {"message", "type", "param", "code"}}``."""
    kind = _ERROR_TYPES.get(status, "server_error")
    code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
