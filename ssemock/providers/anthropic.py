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

from typing import Any

from .base import Default, ErrorSpec, Provider, SentPayloads, chosen, dump
from .chat import by_status
from .openai_chat import SK_KEY

__all__ = ["PROVIDER"]

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
    return {"type": "error", "error": error}


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


PROVIDER = Provider(
    name="anthropic",
    title="Anthropic Messages API",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(SK_KEY,),
    secret_request_headers=frozenset({"x-api-key"}),
    secret_response_headers=frozenset({"anthropic-organization-id"}),
    env={"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "ssemock-placeholder-key"},
)
