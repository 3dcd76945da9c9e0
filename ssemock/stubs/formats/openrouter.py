"""OpenRouter chat completions, after ``openrouter-chat-keepalive-midstream-error``.

Stream: ``: OPENROUTER PROCESSING`` comments while the model starts, then
``chat.completion.chunk`` payloads with ``provider``, every delta holding ``role``,
``content``, ``reasoning`` and ``reasoning_details``, choices with ``native_finish_reason``;
the last chunk carries ``usage`` (with ``cost``); then ``data: [DONE]``. Ids are
``gen-<unix time>-<20 characters>``. Tool calls are sent as OpenAI sends them.
"""

from __future__ import annotations

from typing import Any

from ..synth import ALNUM, Piece, Script, dumps
from ..tokens import split_tokens
from . import openai_chat

__all__ = ["answer", "call_id", "error", "events", "headers"]

PROCESSING = 3
"""Keep-alive comments sent before the first chunk."""


def call_id(script: Script) -> str:
    return "call_" + script.ident(ALNUM, 24)


def _id(script: Script) -> str:
    return script.named("id", ALNUM, 20, f"gen-{script.created}-")


def _usage(script: Script) -> dict[str, Any]:
    return {
        "prompt_tokens": script.input_tokens, "completion_tokens": script.output_tokens,
        "total_tokens": script.input_tokens + script.output_tokens, "cost": 0, "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "cost_details": {"upstream_inference_cost": None, "upstream_inference_prompt_cost": 0,
                         "upstream_inference_completions_cost": 0},
        "completion_tokens_details": {"reasoning_tokens": script.reasoning_tokens, "image_tokens": 0},
    }


def events(script: Script) -> list[Piece]:
    def chunk(delta: dict[str, Any], finish: str | None = None, tokens: int = 0, usage: bool = False) -> Piece:
        body: dict[str, Any] = {
            "id": _id(script), "provider": "OpenAI", "model": script.model, "object": "chat.completion.chunk",
            "created": script.created,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "native_finish_reason": finish,
                         "logprobs": None}],
        }
        if usage:
            body["usage"] = _usage(script)
        return Piece(None, dumps(body), tokens)

    def delta(content: str = "", reasoning: str | None = None) -> dict[str, Any]:
        details = [{"type": "reasoning.text", "text": reasoning, "index": 0, "format": None}] if reasoning else []
        return {"role": "assistant", "content": content, "reasoning": reasoning, "reasoning_details": details}

    reply = script.reply
    out = [Piece(None, "OPENROUTER PROCESSING", comment=True) for _ in range(PROCESSING)]
    out += [chunk(delta(reasoning=p), tokens=1) for p in split_tokens(reply.reasoning or "")]
    text = reply.refusal if reply.refusal is not None else reply.text
    out += [chunk(delta(p), tokens=1) for p in split_tokens(text or "")]
    for index, (ident, call) in enumerate(script.calls):
        start = {"index": index, "id": ident, "type": "function", "function": {"name": call.name, "arguments": ""}}
        out.append(chunk({**delta(), "tool_calls": [start]}, tokens=1))
        out += [chunk({**delta(), "tool_calls": [{"index": index, "function": {"arguments": p}}]}, tokens=1)
                for p in split_tokens(call.arguments_json)]
    out.append(chunk(delta(), reply.finish))
    out.append(chunk(delta(), None, usage=True))
    out.append(Piece(None, "[DONE]"))
    return out


def answer(script: Script) -> dict[str, Any]:
    body = openai_chat.answer(script)
    body["id"] = _id(script)
    body["provider"] = "OpenAI"
    body["usage"] = _usage(script)
    return body


def headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    return [
        ("access-control-allow-origin", "*"), ("cache-control", "no-cache"),
        ("content-type", "text/event-stream" if stream else "application/json"),
        ("permissions-policy", 'payment=(self "https://checkout.stripe.com" "https://connect-js.stripe.com" '
                               '"https://js.stripe.com" "https://*.js.stripe.com" "https://hooks.stripe.com")'),
        ("referrer-policy", "no-referrer, strict-origin-when-cross-origin"), ("vary", "Accept-Encoding"),
    ]


def error(status: int, message: str) -> dict[str, Any]:
    """OpenRouter's error shape: ``{"error": {"code", "message"}}``."""
    return {"error": {"code": status, "message": message}}
