"""Mistral AI chat completions (``POST /v1/chat/completions`` on api.mistral.ai; also ``/v1/fim/…`` and
``/v1/agents/…``).

The path is OpenAI's, so a request is recognised by a Mistral model name in the body (``mistral-…``,
``ministral-…``, ``magistral-…``, ``codestral-…``, ``devstral-…``, ``pixtral-…``, ``open-mistral-…``,
``mixtral-…``, ``voxtral-…``) or a Mistral-only path (``/v1/fim/completions``, ``/v1/agents/completions``).

Error shapes (Mistral API error responses; no bundled recording): the flat object ``{"object": "error",
"message", "type", "param", "code"}`` — ``code`` a string of digits or null (429 ``rate_limited`` /
``"1300"``; other 4xx ``invalid_request_error``; 5xx ``internal_server_error``) — as the HTTP body, and
mid-stream as one ``data:`` event (with ``choices``, inside a chunk as ``error``).

Keys: Mistral keys have no prefix (found by the generic name and entropy rules); header ``authorization``.
Environment: none (the ``mistralai`` SDK takes its server URL as an argument, so a key set alone
would send a test to the real service).
"""

from __future__ import annotations

import re
from typing import Any

from .base import ErrorSpec, Provider, SentPayloads, chosen
from .chat import by_status, error_lines

__all__ = ["PROVIDER"]

TYPES = {400: "invalid_request_error", 429: "rate_limited", 500: "internal_server_error"}
CODES = {429: "1300"}
MID_STREAM_STATUS = 500
_MODEL = re.compile(r'"model"\s*:\s*"(?:mistralai/)?(?:mistral|ministral|magistral|codestral|devstral|pixtral'
                    r'|open-mistral|open-mixtral|mixtral|voxtral)')


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    return spec.fill({"object": "error", "message": spec.message,
                      "type": chosen(spec.type, by_status(TYPES, status, "invalid_request_error")), "param": None,
                      "code": chosen(spec.code, CODES.get(status))})


def recognise(path: str, head: str) -> bool:
    """A Mistral-only path, or a Mistral model named in the body."""
    return path.endswith(("/v1/fim/completions", "/v1/agents/completions")) or _MODEL.search(head) is not None


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``data: {"object": "error", …}`` (or, with ``choices``, a chunk carrying it as ``error``)."""
    error = _error(spec, spec.status_or(MID_STREAM_STATUS))
    return error_lines(error, sent, spec, key=None)


def http_error(spec: ErrorSpec, status: int) -> Any:
    """``{"object": "error", "message", "type", "param", "code"}``."""
    return _error(spec, status)


PROVIDER = Provider(
    name="mistral",
    title="Mistral AI chat completions",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
)
