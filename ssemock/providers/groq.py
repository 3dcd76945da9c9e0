"""Groq (OpenAI-compatible chat completions at ``POST /openai/v1/chat/completions``).

Recognised by an ``x_groq`` field in a chunk, or an ``/openai/v1/`` path unless the chunks carry Azure's
``prompt_filter_results`` / ``content_filter_results`` (Azure OpenAI's v1 API shares the path; it is
answered by :mod:`.openai_chat`).

Error shapes (Groq docs, "Errors"; no bundled recording): the error object ``{"message", "type"}`` with a
``code`` where Groq names one — HTTP 401 ``invalid_request_error`` / ``invalid_api_key``, 404
``invalid_request_error`` / ``model_not_found``, 429 ``tokens`` / ``rate_limit_exceeded``, other 4xx
``invalid_request_error``, 5xx ``internal_server_error``; as a body ``{"error": {…}}``. Mid-stream the
same ``{"error": {…}}`` is one ``data:`` event (as OpenAI's; the ``groq`` SDK is generated like ``openai``
and raises on a payload with an ``error`` key); with ``choices``, a chunk carrying it.

Keys: ``gsk_…``. Environment: ``GROQ_BASE_URL`` (the ``groq`` SDK appends ``/openai/v1/…``) and
``GROQ_API_KEY`` (both read by ``groq.Groq()``; its stream raises ``APIError`` on an ``error`` payload).
"""

from __future__ import annotations

from typing import Any

from .base import Default, ErrorSpec, KeyShape, Provider, SentPayloads, chosen
from .chat import by_status, error_lines

__all__ = ["PROVIDER"]

TYPES = {400: "invalid_request_error", 429: "tokens", 500: "internal_server_error"}
CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
MID_STREAM_STATUS = 500


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    error: dict[str, Any] = {"message": spec.message,
                             "type": chosen(spec.type, by_status(TYPES, status, "invalid_request_error"))}
    code = chosen(spec.code, CODES.get(status, Default()))
    if not isinstance(code, Default):
        error["code"] = code
    return spec.fill(error)


def recognise(path: str, head: str) -> bool:
    """An ``x_groq`` field, or an ``/openai/v1/`` path without Azure's content filter results."""
    return '"x_groq"' in head or (path.startswith("/openai/v1/") and "_filter_results" not in head)


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``data: {"error": …}`` (or, with ``choices``, a chunk carrying it)."""
    error = _error(spec, spec.status_or(MID_STREAM_STATUS))
    return error_lines(error, sent, spec)


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"error": {"message", "type"[, "code"]}}``."""
    return {"error": _error(spec, status)}


PROVIDER = Provider(
    name="groq",
    title="Groq (OpenAI-compatible chat completions)",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(KeyShape("ssemock-groq-key", ("gsk_",), "A-Za-z0-9", 20),),
    env={"GROQ_BASE_URL": "{url}", "GROQ_API_KEY": "ssemock-placeholder-key"},
)
