"""OpenAI Responses API (``POST /v1/responses``; also OpenRouter's ``/api/v1/responses``, which copies it).

Recognised by a path ending in ``/responses`` or a ``"type": "response.…"`` payload.

Error shapes:

* mid-stream, as in the bundled recording ``openai-responses-error-insufficient-quota``:
  ``event: error`` with ``{"type": "error", "sequence_number", "error": {"type", "code", "message",
  "param"}}``, then ``event: response.failed`` whose ``response`` is the last one sent (``response.created``
  / ``in_progress``) with ``status: "failed"`` and ``error: {"code", "message"}``; sequence numbers go on
  from the last event sent. Form ``json``: the error payload alone, bare.
* HTTP: the OpenAI error object, as for Chat Completions (:mod:`.openai_chat`).

Keys, headers and environment are those of :mod:`.openai_chat` (same service).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .base import ErrorSpec, Provider, SentPayloads, chosen, dump
from .chat import by_status, last_payload
from .openai_chat import PROVIDER as CHAT
from .openai_chat import TYPES

__all__ = ["PROVIDER"]

MID_STREAM_STATUS = 500
_EVENT = re.compile(r'"type"\s*:\s*"response\.')


def recognise(path: str, head: str) -> bool:
    """A ``…/responses`` path, or a payload typed ``response.…``."""
    return path.endswith("/responses") or _EVENT.search(head) is not None


def _sequence(sent: SentPayloads) -> int:
    value = last_payload(sent).get("sequence_number")
    return value + 1 if isinstance(value, int) and not isinstance(value, bool) else len(sent)


def stream_error(spec: ErrorSpec, sent: SentPayloads) -> list[str]:
    """``event: error`` then ``event: response.failed`` (see the module docstring)."""
    status = spec.status_or(MID_STREAM_STATUS)
    kind = chosen(spec.type, by_status(TYPES, status, "invalid_request_error"))
    code = chosen(spec.code, kind)
    seq = _sequence(sent)
    error = {"type": "error", "sequence_number": seq,
             "error": {"type": kind, "code": code, "message": spec.message, "param": None}}
    if chosen(spec.form, "sse") == "json":
        return [dump(error), ""]
    earlier = (p["response"] for p in reversed(sent) if isinstance(p.get("response"), dict))
    response: dict[str, Any] = copy.deepcopy(next(earlier, {}))
    response["status"] = "failed"
    response["error"] = {"code": code, "message": spec.message}
    failed = {"type": "response.failed", "sequence_number": seq + 1, "response": response}
    return ["event: error", f"data: {dump(error)}", "", "event: response.failed", f"data: {dump(failed)}", ""]


PROVIDER = Provider(
    name="openai-responses",
    title="OpenAI Responses API",
    recognise=recognise,
    stream_error=stream_error,
    http_error=CHAT.http_error,
    key_shapes=CHAT.key_shapes,
    secret_request_headers=CHAT.secret_request_headers,
    secret_response_headers=CHAT.secret_response_headers,
    env=CHAT.env,
)
