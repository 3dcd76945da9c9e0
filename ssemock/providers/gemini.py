"""Google Gemini API (``…/models/M:streamGenerateContent``) and Gemini on Vertex AI
(``/v1/projects/P/locations/L/publishers/google/models/M:streamGenerateContent``).

Recognised by a ``generateContent`` path (any case) or a ``candidates`` payload.

Error shapes (Google API error model, AIP-193 / ``google.rpc.Status``: ``code`` is the HTTP status as a
number, ``status`` the canonical code name):

* mid-stream, as in the bundled recording ``gemini-vertex-error-mid-stream``: the JSON error object
  ``{"error": {"code", "message", "status"}}`` pretty-printed (two-space indent), written after the SSE
  events without any ``data:`` prefix (form ``json``, the default); form ``sse`` sends it compact as one
  ``data:`` event. Default code 503, status ``UNAVAILABLE``.
* HTTP: the same object (compact JSON).

A step's ``type`` sets ``status`` (e.g. ``RESOURCE_EXHAUSTED``) and ``code`` sets ``code`` (a string code
is sent as a string); unset, both follow the HTTP status (``status``; mid-stream, a numeric ``code``
picks the status name): 400 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND,
409 ABORTED, 429 RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL, 501 NOT_IMPLEMENTED, 503 UNAVAILABLE,
504 DEADLINE_EXCEEDED.

Keys: ``AIza…`` API keys and ``ya29.`` OAuth tokens (Vertex); header ``x-goog-api-key`` (and the
``key`` query parameter, a generic name). Environment: ``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``
(``google-genai``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .base import MAX_CODE, Default, ErrorSpec, KeyShape, Provider, SentPayloads, chosen, dump
from .chat import by_status

__all__ = ["PROVIDER", "STATUSES"]

STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "NOT_IMPLEMENTED",
            503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
MID_STREAM_STATUS = 503
_CANDIDATES = re.compile(r'"candidates"\s*:')


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    return {"error": {"code": chosen(spec.code, status), "message": spec.message,
                      "status": chosen(spec.type, by_status(STATUSES, status, "UNKNOWN"))}}


def recognise(path: str, head: str) -> bool:
    """A ``generateContent`` path (``streamGenerateContent`` included), or a ``candidates`` payload."""
    return "generatecontent" in path.lower() or _CANDIDATES.search(head) is not None


def _mid_stream_status(spec: ErrorSpec) -> int:
    if not isinstance(spec.status, Default):
        return spec.status
    code = spec.code
    if isinstance(code, int) and not isinstance(code, bool) and abs(code) < MAX_CODE:
        return code
    return MID_STREAM_STATUS


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """The error object, bare and pretty-printed (default), or as one ``data:`` event (form ``sse``)."""
    body = _error(spec, _mid_stream_status(spec))
    if chosen(spec.form, "json") == "sse":
        return [f"data: {dump(body)}", ""]
    return json.dumps(body, indent=2, ensure_ascii=False).split("\n")


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"error": {"code", "message", "status"}}``."""
    return _error(spec, status)


PROVIDER = Provider(
    name="gemini",
    title="Google Gemini API and Gemini on Vertex AI",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    key_shapes=(KeyShape("ssemock-google-api-key", ("AIza",), "A-Za-z0-9_-", 30),
                KeyShape("ssemock-google-oauth-token", ("ya29.",), "A-Za-z0-9_-", 20)),
    secret_request_headers=frozenset({"x-goog-api-key"}),
    env={"GOOGLE_GEMINI_BASE_URL": "{url}", "GEMINI_API_KEY": "ssemock-placeholder-key"},
)
