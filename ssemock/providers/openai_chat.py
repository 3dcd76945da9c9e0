"""OpenAI Chat Completions — also Azure OpenAI and the OpenAI-compatible endpoints (Alibaba DashScope
``/compatible-mode/v1``, vLLM, …) that answer on ``…/chat/completions``.

Recognised by a path ending in ``/chat/completions`` or a ``chat.completion.chunk`` payload (after the
more specific OpenRouter, Groq and Mistral modules had their turn).

Error shapes (OpenAI API reference, "Error codes"; the ``openai`` SDK raises ``APIError`` for a streamed
payload with an ``error`` key and reads ``message``/``type``/``param``/``code`` from it):

* mid-stream: one ``data:`` event ``{"error": {"message", "type", "param", "code"}}``; with ``choices``,
  a ``chat.completion.chunk`` carrying that ``error`` and a choice with ``finish_reason: "error"``;
* HTTP: ``{"error": {"message", "type", "param", "code"}}``: 401 ``invalid_request_error`` /
  ``invalid_api_key``, 429 ``requests`` / ``rate_limit_exceeded``, other 4xx ``invalid_request_error``,
  5xx ``server_error`` (code null).

Keys: ``sk-``, ``sk-proj-``, ``sk-svcacct-`` (one shape with Anthropic's ``sk-ant-``); headers
``authorization``, Azure's ``api-key``, ``openai-organization``, ``openai-project``.
Environment: ``OPENAI_BASE_URL`` (``{url}/v1``) and ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .base import ErrorSpec, KeyShape, Provider, SentPayloads, chosen
from .chat import by_status, error_lines
from .synthesis import ALNUM, HEX, Piece, Script, Synthesis, Template, dumps, nearest, run, slot

__all__ = ["HTTP_MESSAGES", "PROVIDER", "SK_KEY", "SYNTHESIS", "openai_error", "text_event"]

TYPES = {400: "invalid_request_error", 429: "requests", 500: "server_error"}
CODES: dict[int, str | None] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
MID_STREAM_STATUS = 500
SK_KEY = KeyShape("ssemock-openai-anthropic-key", ("sk-",), "A-Za-z0-9_-", 16)
"""``sk-`` keys: OpenAI (``sk-``, ``sk-proj-``, ``sk-svcacct-``) and Anthropic (``sk-ant-``)."""
_CHUNK = re.compile(r'"object"\s*:\s*"chat\.completion\.chunk"')


def openai_error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    """The OpenAI error object ``{"message", "type", "param", "code"}`` for ``status`` (see module docstring)."""
    return spec.fill({"message": spec.message,
                      "type": chosen(spec.type, by_status(TYPES, status, "invalid_request_error")),
                      "param": None, "code": chosen(spec.code, CODES.get(status))})


def recognise(path: str, head: str) -> bool:
    """A ``…/chat/completions`` path, or a ``chat.completion.chunk`` payload."""
    return path.endswith("/chat/completions") or _CHUNK.search(head) is not None


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``data: {"error": …}`` (or, with ``choices``, a chunk carrying it)."""
    error = openai_error(spec, spec.status_or(MID_STREAM_STATUS))
    return error_lines(error, sent, spec)


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": openai_error(spec, status)}


HTTP_MESSAGES = {
    # OpenAI, "Error codes" (platform.openai.com/docs/guides/error-codes): the message of each status.
    401: "Incorrect API key provided.",
    429: "Rate limit reached for requests.",
    500: "The server had an error while processing your request.",
    503: "The engine is currently overloaded, please try again later.",
}
"""The messages OpenAI's HTTP errors carry, by status (also those of the Responses API)."""


PROVIDER = Provider(
    name="openai-chat",
    http_messages=HTTP_MESSAGES,
    title="OpenAI Chat Completions (and compatible APIs)",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(SK_KEY,),
    secret_request_headers=frozenset({"api-key", "openai-organization", "openai-project"}),
    secret_response_headers=frozenset({"openai-organization", "openai-project"}),
    env={"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "ssemock-placeholder-key"},
)


# ---- synthesis -------------------------------------------------------------------------------------
# Synthesis (answers without a recording, see ssemock.stubs):
# OpenAI Chat Completions, after ``openai-chat-tool-calls-usage`` (gpt-4o-mini, 2026).
#
# Stream: a first chunk with ``role`` (and ``content: ""``, or ``content: null`` and the
# first tool call's id and name, or ``refusal: ""``), one chunk per token of content, refusal
# or tool-call arguments, a chunk with an empty delta and the ``finish_reason``; with
# ``stream_options.include_usage`` every chunk has ``usage: null`` and a last chunk with no
# choices carries the usage; then ``data: [DONE]``. Each chunk ends with an ``obfuscation``
# padding string, as OpenAI sends it. Reasoning text is not streamed (Chat Completions has
# no field for it) unless the reply's ``reasoning_field`` names one: ``reasoning_content`` (DeepSeek,
# Qwen) or ``reasoning`` (OpenRouter), streamed before the answer with ``content: null``; it counts in
# ``completion_tokens_details.reasoning_tokens``.


def _synth_call_id(script: Script) -> str:
    return "call_" + script.ident(ALNUM, 24)


def _meta(script: Script) -> dict[str, str]:
    return {"id": script.named("id", ALNUM, 29, "chatcmpl-"), "fingerprint": script.named("fp", HEX, 10, "fp_")}


def _synth_usage(script: Script) -> dict[str, Any]:
    return {
        "prompt_tokens": script.input_tokens, "completion_tokens": script.output_tokens,
        "total_tokens": script.input_tokens + script.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": script.reasoning_tokens, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def _synth_events(script: Script) -> list[Piece]:
    meta = _meta(script)
    with_usage = script.conv.include_usage

    def body(delta: dict[str, Any] | None, finish: str | None, usage_value: dict[str, Any] | None,
             obfuscation: str) -> dict[str, Any]:
        value: dict[str, Any] = {
            "id": meta["id"], "object": "chat.completion.chunk", "created": script.created, "model": script.model,
            "service_tier": "default", "system_fingerprint": meta["fingerprint"],
            "choices": [] if delta is None else [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if with_usage:
            value["usage"] = usage_value
        value["obfuscation"] = obfuscation
        return value

    def padding() -> str:
        return script.padding(2, 15)

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, tokens: int = 0,
              usage_value: dict[str, Any] | None = None) -> Piece:
        return Piece(None, dumps(body(delta, finish, usage_value, padding())), tokens)

    def per_token(delta: dict[str, Any], pieces: list[str]) -> list[Piece]:
        """One chunk per piece: ``delta`` holds ``slot("t")`` where the piece goes."""
        template = Template(body(delta, None, None, slot("o")))
        count = len(pieces)
        return run(None, template, count, t=pieces, o=script.paddings(count, 2, 15))

    reply = script.reply
    out: list[Piece] = []
    calls = script.calls
    if (field := getattr(reply, "reasoning_field", None)) and reply.reasoning:  # DeepSeek, OpenRouter: first
        out.append(chunk({"role": "assistant", "content": None, field: ""}))
        out += per_token({"content": None, field: slot("t")}, script.tokens(reply.reasoning))
    if reply.refusal is not None:
        out.append(chunk({"role": "assistant", "content": None, "refusal": ""}))
        out += per_token({"refusal": slot("t")}, script.tokens(reply.refusal))
    elif reply.text is None and calls:
        pass  # the first tool call's chunk carries the role
    else:
        first: dict[str, Any] = ({"content": "", str(field): None} if out
                                 else {"role": "assistant", "content": "", "refusal": None})
        out.append(chunk(first))
        out += per_token({"content": slot("t")}, script.tokens(reply.text or ""))
    for index, (ident, call) in enumerate(calls):
        start = {"index": index, "id": ident, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if not out:
            out.append(chunk({"role": "assistant", "content": None, "tool_calls": [start], "refusal": None},
                             tokens=1))
        else:
            out.append(chunk({"tool_calls": [start]}, tokens=1))
        out += per_token({"tool_calls": [{"index": index, "function": {"arguments": slot("t")}}]},
                         script.tokens(call.arguments_json))
    out.append(chunk({}, reply.finish))
    if with_usage:
        out.append(chunk(None, usage_value=_synth_usage(script)))
    out.append(Piece(None, "[DONE]"))
    return out


def _synth_answer(script: Script) -> dict[str, Any]:
    reply = script.reply
    message: dict[str, Any] = {"role": "assistant", "content": reply.text if reply.refusal is None else None,
                               "refusal": reply.refusal, "annotations": []}
    if (field := getattr(reply, "reasoning_field", None)) and reply.reasoning:
        message[field] = reply.reasoning
    if script.calls:
        message["tool_calls"] = [
            {"id": ident, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for ident, c in script.calls
        ]
    meta = _meta(script)
    return {
        "id": meta["id"], "object": "chat.completion", "created": script.created, "model": script.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish}],
        "usage": _synth_usage(script), "service_tier": "default", "system_fingerprint": meta["fingerprint"],
    }


def _synth_headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    kind = "text/event-stream; charset=utf-8" if stream else "application/json"
    return [
        ("access-control-expose-headers", "X-Request-ID"),
        ("alt-svc", 'h3=":443"; ma=86400'),
        ("content-type", kind),
        ("openai-processing-ms", str(script.rng.randint(150, 600))),
        ("openai-version", "2020-10-01"),
        ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
    ]


def text_event(events: list[tuple[str, Any]], spot: int, text: str) -> tuple[str | None, str]:
    """A ``chat.completion.chunk`` whose delta carries ``text``, the nearest chunk with choices copied
    (``id``, ``created``, ``model``, fingerprint, ``usage: null``, its ``obfuscation``) as synthesis writes it."""
    value = dict(nearest(events, spot, lambda kind, v: v.get("object") == "chat.completion.chunk"
                         and bool(v.get("choices"))))
    first = value["choices"][0] if isinstance(value["choices"][0], dict) else {}
    choice = {**first, "index": 0, "delta": {"content": text}, "finish_reason": None}
    if "native_finish_reason" in choice:  # OpenRouter
        choice["native_finish_reason"] = None
    value["choices"] = [choice]
    if "usage" in value:
        value["usage"] = None
    return None, dumps(value)


SYNTHESIS = Synthesis(_synth_events, _synth_answer, _synth_headers, _synth_call_id, text_event=text_event)
PROVIDER = replace(PROVIDER, synthesize=SYNTHESIS)
