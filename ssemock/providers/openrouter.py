"""OpenRouter chat completions (``POST /api/v1/chat/completions``).

Recognised by a ``/api/v1/…/chat/completions`` path, or a ``chat.completion.chunk`` payload naming its
upstream ``provider``. (OpenRouter's ``/api/v1/responses`` copies the OpenAI Responses API and is
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
from typing import Any

from .base import Default, ErrorSpec, Provider, SentPayloads, chosen
from .chat import chunk_lines, error_chunk
from .openai_chat import SK_KEY

__all__ = ["PROVIDER"]

MID_STREAM_CODE = "server_error"
_UPSTREAM = re.compile(r'"provider"\s*:\s*"')
_CHUNK = re.compile(r'"object"\s*:\s*"chat\.completion\.chunk"')


def _error(spec: ErrorSpec, code: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": chosen(spec.code, code), "message": spec.message}
    if not isinstance(spec.type, Default):
        error["type"] = spec.type
    return error


def recognise(path: str, head: str) -> bool:
    """An ``/api/v1/…/chat/completions`` path, or a chunk naming its upstream ``provider``."""
    if path.startswith("/api/v1/") and path.endswith("/chat/completions"):
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
