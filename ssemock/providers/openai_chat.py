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
from typing import Any

from .base import ErrorSpec, KeyShape, Provider, SentPayloads, chosen
from .chat import by_status, error_lines

__all__ = ["PROVIDER", "SK_KEY", "openai_error"]

TYPES = {400: "invalid_request_error", 429: "requests", 500: "server_error"}
CODES: dict[int, str | None] = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
MID_STREAM_STATUS = 500
SK_KEY = KeyShape("ssemock-openai-anthropic-key", ("sk-",), "A-Za-z0-9_-", 16)
"""``sk-`` keys: OpenAI (``sk-``, ``sk-proj-``, ``sk-svcacct-``) and Anthropic (``sk-ant-``)."""
_CHUNK = re.compile(r'"object"\s*:\s*"chat\.completion\.chunk"')


def openai_error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    """The OpenAI error object ``{"message", "type", "param", "code"}`` for ``status`` (see module docstring)."""
    return {"message": spec.message, "type": chosen(spec.type, by_status(TYPES, status, "invalid_request_error")),
            "param": None, "code": chosen(spec.code, CODES.get(status))}


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


PROVIDER = Provider(
    name="openai-chat",
    title="OpenAI Chat Completions (and compatible APIs)",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(SK_KEY,),
    secret_request_headers=frozenset({"api-key", "openai-organization", "openai-project"}),
    secret_response_headers=frozenset({"openai-organization", "openai-project"}),
    env={"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "ssemock-placeholder-key"},
)
