"""Which provider a stream comes from, and how that provider reports an error mid-stream.

Shapes of the error sent after an HTTP 200 has gone out:

* ``openai-chat``: one ``data:`` event ``{"error": {"message", "type", "param",
  "code"}}`` (OpenAI error object; the ``openai`` SDK raises ``APIError`` for a
  payload with an ``error`` key).
* ``openai-responses``: ``event: error`` with ``{"type": "error",
  "sequence_number", "error": {"type", "code", "message", "param"}}``, then
  ``event: response.failed`` — as in the bundled recording
  ``openai-responses-error-insufficient-quota``.
* ``anthropic``: ``event: error`` with ``{"type": "error", "error": {"type":
  "overloaded_error", "message"}}`` (Anthropic streaming docs, "Error events").
* ``gemini``: a pretty-printed JSON body ``{"error": {"code", "message",
  "status"}}`` written without any ``data:`` prefix — as in the bundled
  recording ``gemini-vertex-error-mid-stream``.
* ``openrouter``: a ``chat.completion.chunk`` carrying ``error: {"code",
  "message"}`` and ``finish_reason: "error"`` (OpenRouter docs, "Handling errors
  during streaming"; recording ``openrouter-chat-keepalive-midstream-error``),
  then ``data: [DONE]``.
* ``generic``: ``event: error`` with ``{"error": {"type", "message"}}``.
"""

from __future__ import annotations

import json
from typing import Any

from .plan import Plan
from .text import Block

__all__ = ["PROVIDERS", "error_blocks", "provider_of"]

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "openrouter", "generic")


def provider_of(plan: Plan) -> str:
    """The provider of the plan's stream, from the request path, else from the first payload."""
    path = plan.request.path if plan.request is not None else ""
    body = plan.response.body[:4096].decode("utf-8", "replace")
    if path.startswith("/api/v1/") and path.endswith("/chat/completions"):
        return "openrouter"
    if path.endswith("/responses") or '"type":"response.' in body.replace(" ", ""):
        return "openai-responses"
    if path.endswith("/chat/completions") or "chat.completion.chunk" in body:
        return "openrouter" if '"provider"' in body else "openai-chat"
    if path.endswith("/messages") or '"message_start"' in body:
        return "anthropic"
    if "generatecontent" in path.lower() or '"candidates"' in body:
        return "gemini"
    return "generic"


def _payload(block: Block) -> dict[str, Any]:
    try:
        value = json.loads(block.data or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def error_blocks(provider: str, message: str, sent: list[Block]) -> list[str]:
    """The lines (each block ending with a blank line) that report an error for ``provider``.

    Args:
        provider: one of :data:`PROVIDERS`.
        message: the error message.
        sent: the event blocks already sent (ids, model and sequence numbers are taken from them).
    """
    last = _payload(sent[-1]) if sent else {}
    body: dict[str, Any]
    if provider == "openai-chat":
        body = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
        return [f"data: {_dump(body)}", ""]
    if provider == "openai-responses":
        seq = int(last.get("sequence_number", len(sent) - 1)) + 1
        error: dict[str, Any] = {"type": "server_error", "code": "server_error", "message": message, "param": None}
        failed: dict[str, Any] = {"type": "response.failed", "sequence_number": seq + 1,
                  "response": {"status": "failed", "error": {"code": "server_error", "message": message}}}
        return ["event: error", f"data: {_dump({'type': 'error', 'sequence_number': seq, 'error': error})}", "",
                "event: response.failed", f"data: {_dump(failed)}", ""]
    if provider == "anthropic":
        body = {"type": "error", "error": {"type": "overloaded_error", "message": message}}
        return ["event: error", f"data: {_dump(body)}", ""]
    if provider == "gemini":
        body = {"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}}
        return [*json.dumps(body, indent=2).split("\n"), ""]
    if provider == "openrouter":
        keys = ("id", "provider", "model", "object", "created")
        chunk: dict[str, Any] = {key: last[key] for key in keys if key in last}
        chunk["error"] = {"code": "server_error", "message": message}
        chunk["choices"] = [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
        return [f"data: {_dump(chunk)}", "", "data: [DONE]", ""]
    return ["event: error", f"data: {_dump({'error': {'type': 'server_error', 'message': message}})}", ""]


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
