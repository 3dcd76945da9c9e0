"""The fallback for any other stream (MCP servers, unknown APIs): it recognises every request.

Error shapes (ssemock's own, the shape of its ``ssemock_…`` errors): mid-stream ``event: error`` with
``{"error": {"type", "message"}}`` (default type ``server_error``); HTTP ``{"error": {"type", "message"}}``
(type ``server_error`` for 5xx, ``invalid_request_error`` otherwise). A ``code`` is added when a step sets it.
"""

from __future__ import annotations

from typing import Any

from .base import Default, ErrorSpec, Provider, SentPayloads, chosen, dump

__all__ = ["PROVIDER"]


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    error: dict[str, Any] = {"type": chosen(spec.type, kind), "message": spec.message}
    if not isinstance(spec.code, Default):
        error["code"] = spec.code
    return {"error": spec.fill(error)}


def recognise(path: str, head: str) -> bool:
    """Always true: the last provider asked."""
    return True


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``event: error`` + ``{"error": {"type", "message"}}`` (form ``json``: the payload bare)."""
    body = _error(spec, spec.status_or(500))
    if chosen(spec.form, "sse") == "json":
        return [dump(body), ""]
    return ["event: error", f"data: {dump(body)}", ""]


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"error": {"type", "message"}}``."""
    return _error(spec, status)


PROVIDER = Provider(
    name="generic", title="Any other server-sent event stream", recognise=recognise, stream_error=stream_error,
    http_error=http_error,
)
