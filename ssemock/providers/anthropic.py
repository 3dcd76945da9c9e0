"""Anthropic Messages API (``POST /v1/messages``; also Claude on Vertex AI, ``…/publishers/anthropic/…``).

Recognised by a path ending in ``/messages``, a Vertex ``publishers/anthropic`` path, or a
``message_start`` payload.

Error shapes (Anthropic docs, "Errors" and "Streaming messages — Error events"; the ``anthropic`` SDK
raises ``APIStatusError`` on ``event: error``):

* mid-stream: ``event: error`` with ``{"type": "error", "error": {"type", "message"}}``; default type
  ``overloaded_error`` (status 529);
* HTTP: ``{"type": "error", "error": {"type", "message"}, "request_id"}``; types by status: 400
  ``invalid_request_error``, 401 ``authentication_error``, 402 ``billing_error``, 403 ``permission_error``,
  404 ``not_found_error``, 413 ``request_too_large``, 429 ``rate_limit_error``, 500 ``api_error``,
  504 ``timeout_error``, 529 ``overloaded_error``.

Anthropic errors have no ``code``: one is added to ``error`` only when a step sets it.
Keys: ``sk-ant-`` (the ``sk-`` shape of :mod:`.openai_chat`); header ``x-api-key``; response header
``anthropic-organization-id``. Environment: ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import base64
import email.utils
import time
from dataclasses import replace
from typing import Any

from .base import Default, ErrorSpec, Provider, SentPayloads, chosen, dump
from .chat import by_status
from .openai_chat import SK_KEY
from .synthesis import ALNUM, HEX, Piece, Script, Synthesis, Template, dumps, nearest, pieces, slot
from .tokens import group

__all__ = ["PROVIDER", "SYNTHESIS"]

TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
         404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
         504: "timeout_error", 529: "overloaded_error"}
MID_STREAM_STATUS = 529
REQUEST_ID = "req_011CSHoEeqs5C35K2UUqR7Fy"
"""The ``request_id`` of HTTP error bodies: a fixed id of the ``req_…`` form Anthropic sends."""


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    error: dict[str, Any] = {"type": chosen(spec.type, by_status(TYPES, status, "api_error")),
                             "message": spec.message}
    if not isinstance(spec.code, Default):
        error["code"] = spec.code
    return {"type": "error", "error": spec.fill(error)}


def recognise(path: str, head: str) -> bool:
    """A ``…/messages`` or Vertex ``publishers/anthropic`` path, or a ``message_start`` payload."""
    return path.endswith("/messages") or "/publishers/anthropic/" in path or '"message_start"' in head


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``event: error`` + ``{"type": "error", "error": {…}}`` (form ``json``: the payload bare)."""
    body = _error(spec, spec.status_or(MID_STREAM_STATUS))
    if chosen(spec.form, "sse") == "json":
        return [dump(body), ""]
    return ["event: error", f"data: {dump(body)}", ""]


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"type": "error", "error": {"type", "message"}, "request_id"}``."""
    return {**_error(spec, status), "request_id": REQUEST_ID}


HTTP_MESSAGES = {
    401: "invalid x-api-key",  # the API's answer to a wrong key (docs, "Errors": an issue with your API key)
    429: "Your account has hit a rate limit.",  # Anthropic docs, "Errors"
    500: "An unexpected error has occurred internal to Anthropic's systems.",
    529: "Anthropic's API is temporarily overloaded.",
}
"""The messages Anthropic's HTTP errors carry, by status."""


PROVIDER = Provider(
    name="anthropic",
    title="Anthropic Messages API",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    http_messages=HTTP_MESSAGES,
    key_shapes=(SK_KEY,),
    secret_request_headers=frozenset({"x-api-key"}),
    secret_response_headers=frozenset({"anthropic-organization-id"}),
    env={"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "ssemock-placeholder-key"},
)


# ---- synthesis -------------------------------------------------------------------------------------
# Synthesis (answers without a recording, see ssemock.stubs):
# Anthropic Messages, after ``anthropic-messages-thinking`` and ``anthropic-messages-tool-use-gzip``.
#
# Stream: ``message_start``; per content block ``content_block_start``, its deltas and
# ``content_block_stop`` — a ``thinking`` block (``thinking_delta`` events, then one
# ``signature_delta``), a ``text`` block (``text_delta``), one ``tool_use`` block per tool
# call (``input_json_delta``, the first one empty, as recorded); a ``ping`` after the first
# ``content_block_start``; ``message_delta`` with the stop reason and usage;
# ``message_stop``. Deltas carry three token-like pieces each (the first alone), arguments
# four; each ``data`` line is padded with up to 15 spaces, as Anthropic pads it.
# The response is sent uncompressed (the recording's ``Content-Encoding: gzip`` is the
# client's choice; the ``gzip-buffered`` scenario compresses).


STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "content_filter": "refusal"}


def _synth_call_id(script: Script) -> str:
    return "toolu_01" + script.ident(ALNUM, 22)


def _signature(script: Script) -> str:
    return base64.b64encode(bytes(script.rng.getrandbits(8) for _ in range(240))).decode()


def _usage(script: Script, output_tokens: int, full: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": script.input_tokens, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 0}
    if full:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    usage["output_tokens"] = output_tokens
    if full:
        usage.update(service_tier="standard", inference_geo="not_available")
    return usage


def _message(script: Script, content: list[Any], stop: str | None, output_tokens: int) -> dict[str, Any]:
    return {"model": script.model, "id": script.named("id", ALNUM, 22, "msg_01"), "type": "message",
            "role": "assistant", "content": content, "stop_reason": stop, "stop_sequence": None,
            "stop_details": None, "usage": _usage(script, output_tokens, True)}


Run = tuple[str, str, list[str], int]
"""Delta events of one kind in a row: (delta type, its text field, the texts, tokens per event)."""


def _blocks(script: Script) -> list[tuple[dict[str, Any], list[Run]]]:
    """(content block as started, its delta runs) per block."""
    reply = script.reply
    blocks: list[tuple[dict[str, Any], list[Run]]] = []
    if reply.reasoning:
        thinking = ("thinking_delta", "thinking", group(script.tokens(reply.reasoning), 3), 1)
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""},
                       [thinking, ("signature_delta", "signature", [_signature(script)], 0)]))
    text = reply.refusal if reply.refusal is not None else reply.text
    if text is not None or not script.calls:
        blocks.append(({"type": "text", "text": ""}, [("text_delta", "text", group(script.tokens(text or ""), 3), 1)]))
    for ident, call in script.calls:
        args = group(script.tokens(call.arguments_json), 4, first=0)
        runs: list[Run] = [("input_json_delta", "partial_json", [""], 0), ("input_json_delta", "partial_json", args, 1)]
        blocks.append(({"type": "tool_use", "id": ident, "name": call.name, "input": {},
                        "caller": {"type": "direct"}}, runs))
    return blocks


def _synth_events(script: Script) -> list[Piece]:
    randint = script.rng.randint

    def ev(kind: str, body: dict[str, Any], tokens: int = 0) -> Piece:
        return Piece(kind, dumps({"type": kind, **body}) + " " * randint(0, 15), tokens)

    def run(index: int, kind: str, name: str, texts: list[str], tokens: int) -> list[Piece]:
        """One ``content_block_delta`` per text: one JSON template, trailing spaces drawn per event."""
        template = Template({"type": "content_block_delta", "index": index, "delta": {"type": kind, name: slot("t")}})
        datas = template.fill_many(len(texts), t=texts)
        return pieces("content_block_delta", [d + " " * randint(0, 15) for d in datas], tokens)

    stop = STOP_REASONS.get(script.reply.finish, script.reply.finish)
    out = [ev("message_start", {"message": _message(script, [], None, 1)})]
    for index, (start, runs) in enumerate(_blocks(script)):
        out.append(ev("content_block_start", {"index": index, "content_block": start}))
        if index == 0:
            out.append(Piece("ping", '{"type": "ping"}'))
        for kind, name, texts, tokens in runs:
            out += run(index, kind, name, texts, tokens)
        out.append(ev("content_block_stop", {"index": index}))
    out.append(ev("message_delta", {
        "delta": {"stop_reason": stop, "stop_sequence": None, "stop_details": None},
        "usage": _usage(script, script.output_tokens, False)}))
    out.append(ev("message_stop", {}))
    return out


def _synth_answer(script: Script) -> dict[str, Any]:
    content: list[Any] = []
    for start, runs in _blocks(script):
        block = dict(start)
        joined = {name: "".join(texts) for _, name, texts, _ in runs}
        if block["type"] == "thinking":
            block["thinking"], block["signature"] = joined["thinking"], joined["signature"]
        elif block["type"] == "text":
            block["text"] = joined["text"]
        else:
            block["input"] = dict(next(c for i, c in script.calls if i == block["id"]).arguments)
        content.append(block)
    stop = STOP_REASONS.get(script.reply.finish, script.reply.finish)
    return _message(script, content, stop, script.output_tokens)


def _synth_headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    reset = email.utils.formatdate(script.created, usegmt=True)
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(script.created))
    limits = [("input-tokens", "4000000"), ("output-tokens", "800000"), ("requests", "20000"),
              ("tokens", "4800000")]
    rate = []
    for name, value in limits:
        rate += [(f"anthropic-ratelimit-{name}-limit", value), (f"anthropic-ratelimit-{name}-remaining", value),
                 (f"anthropic-ratelimit-{name}-reset", iso)]
    took = str(script.rng.randint(300, 900))
    return [
        ("CF-RAY", script.ident(HEX, 16) + "-SJC"), ("Cache-Control", "no-cache"),
        ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
        ("Content-Type", "text/event-stream; charset=utf-8" if stream else "application/json"),
        ("Date", reset), ("Server", "cloudflare"), ("X-Robots-Tag", "none"), *rate,
        ("cf-cache-status", "DYNAMIC"), ("request-id", "req_011C" + script.ident(ALNUM, 20)),
        ("server-timing", f"x-originResponse;dur={took}"),
        ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
        ("vary", "Accept-Encoding"), ("x-envoy-upstream-service-time", took),
    ]


def _text_event(events: list[tuple[str, Any]], spot: int, text: str) -> tuple[str | None, str]:
    """A ``content_block_delta`` with a ``text_delta``, in the text block nearest to ``spot``."""
    def fits(kind: str, v: Any) -> bool:
        if v.get("type") == "content_block_delta":
            return bool(v.get("delta", {}).get("type") == "text_delta")
        return bool(v.get("type") == "content_block_start" and v.get("content_block", {}).get("type") == "text")

    index = nearest(events, spot, fits).get("index", 0)
    value = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}
    return "content_block_delta", dumps(value)


SYNTHESIS = Synthesis(_synth_events, _synth_answer, _synth_headers, _synth_call_id, text_event=_text_event)
PROVIDER = replace(PROVIDER, synthesize=SYNTHESIS)
