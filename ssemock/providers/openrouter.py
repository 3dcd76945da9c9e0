"""OpenRouter chat completions (``POST /api/v1/chat/completions``).

Recognised by an ``/api/v1/…`` path (``chat/completions``, ``models``, …), or a ``chat.completion.chunk``
payload naming its upstream ``provider``. (OpenRouter's ``/api/v1/responses`` copies the OpenAI Responses API and is
answered by :mod:`.openai_responses`.)

Error shapes (OpenRouter docs, "Errors" and "Handling errors during streaming"):

* mid-stream: a ``chat.completion.chunk`` carrying ``error: {"code", "message"}`` with one choice
  ``finish_reason: "error"``, then ``data: [DONE]`` (the docs' example, code ``"server_error"``). The
  bundled recording ``openrouter-chat-keepalive-midstream-error`` shows the other real form: a numeric
  ``code`` (``400``) — set ``code``, or ``status`` (which becomes the numeric code), and ``choices: false``
  to drop the choices.
* HTTP: ``{"error": {"code", "message"}}`` with ``code`` the HTTP status as a number.

OpenRouter errors have no ``type``: one is added to ``error`` only when a step sets it.
Keys: ``sk-or-v1-…`` (the ``sk-`` shape of :mod:`.openai_chat`). Environment: none of its own (clients use
the OpenAI SDK with an explicit base URL).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from . import openai_chat as _openai_chat
from .base import Default, ErrorSpec, Provider, SentPayloads, chosen
from .chat import chunk_lines, error_chunk
from .openai_chat import SK_KEY, text_event
from .synthesis import ALNUM, Piece, Script, Synthesis, dumps
from .tokens import split_tokens

__all__ = ["PROVIDER", "SYNTHESIS"]

MID_STREAM_CODE = "server_error"
_UPSTREAM = re.compile(r'"provider"\s*:\s*"')
_CHUNK = re.compile(r'"object"\s*:\s*"chat\.completion\.chunk"')


def _error(spec: ErrorSpec, code: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": chosen(spec.code, code), "message": spec.message}
    if not isinstance(spec.type, Default):
        error["type"] = spec.type
    return spec.fill(error)


def recognise(path: str, head: str) -> bool:
    """An ``/api/v1/…`` path but ``…/responses``, or a chunk naming its upstream ``provider``."""
    if path.startswith("/api/v1/") and not path.endswith("/responses"):
        return True
    return _CHUNK.search(head) is not None and _UPSTREAM.search(head) is not None


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """An error chunk then ``data: [DONE]`` (form ``json``: the chunk bare, no ``[DONE]``)."""
    code = MID_STREAM_CODE if isinstance(spec.status, Default) else spec.status
    return chunk_lines(error_chunk(_error(spec, code), sent, spec, choices=True), spec, done=True)


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"error": {"code": status, "message"}}``."""
    return {"error": _error(spec, status)}


PROVIDER = Provider(
    name="openrouter",
    title="OpenRouter chat completions",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(SK_KEY,),
)


# ---- synthesis -------------------------------------------------------------------------------------
# Synthesis (answers without a recording, see ssemock.stubs):
# OpenRouter chat completions, after ``openrouter-chat-keepalive-midstream-error``.
#
# Stream: ``: OPENROUTER PROCESSING`` comments while the model starts, then
# ``chat.completion.chunk`` payloads with ``provider``, every delta holding ``role``,
# ``content``, ``reasoning`` and ``reasoning_details``, choices with ``native_finish_reason``;
# the last chunk carries ``usage`` (with ``cost``); then ``data: [DONE]``. Ids are
# ``gen-<unix time>-<20 characters>``. Tool calls are sent as OpenAI sends them.


PROCESSING = 3
"""Keep-alive comments sent before the first chunk."""


def _synth_call_id(script: Script) -> str:
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


def _synth_events(script: Script) -> list[Piece]:
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


def _synth_answer(script: Script) -> dict[str, Any]:
    body: dict[str, Any] = _openai_chat.SYNTHESIS.answer(script)
    body["id"] = _id(script)
    body["provider"] = "OpenAI"
    body["usage"] = _usage(script)
    return body


def _synth_headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    return [
        ("access-control-allow-origin", "*"), ("cache-control", "no-cache"),
        ("content-type", "text/event-stream" if stream else "application/json"),
        ("permissions-policy", 'payment=(self "https://checkout.stripe.com" "https://connect-js.stripe.com" '
                               '"https://js.stripe.com" "https://*.js.stripe.com" "https://hooks.stripe.com")'),
        ("referrer-policy", "no-referrer, strict-origin-when-cross-origin"), ("vary", "Accept-Encoding"),
    ]


SYNTHESIS = Synthesis(_synth_events, _synth_answer, _synth_headers, _synth_call_id, text_event=text_event)
PROVIDER = replace(PROVIDER, synthesize=SYNTHESIS)
