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

import base64
import json
import re
from dataclasses import replace
from typing import Any

from .base import MAX_CODE, Default, ErrorSpec, KeyShape, Provider, SentPayloads, chosen, dump
from .chat import by_status
from .synthesis import Piece, Script, Synthesis, Template, event_count, nearest, run, slot
from .tokens import group

__all__ = ["PROVIDER", "STATUSES", "SYNTHESIS"]

STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL", 501: "NOT_IMPLEMENTED",
            503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
MID_STREAM_STATUS = 503
_CANDIDATES = re.compile(r'"candidates"\s*:')


def _error(spec: ErrorSpec, status: int) -> dict[str, Any]:
    return {"error": spec.fill({"code": chosen(spec.code, status), "message": spec.message,
                                "status": chosen(spec.type, by_status(STATUSES, status, "UNKNOWN"))})}


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


HTTP_MESSAGES = {
    # Google APIs' message for a request without valid credentials (Vertex AI, an OAuth token that is not)
    401: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
         "valid authentication credential.",
    429: "Resource has been exhausted (e.g. check quota).",
    500: "An internal error has occurred. Please retry or report in "
         "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
}
"""The messages the Gemini API's HTTP errors carry, by status (its troubleshooting guide lists the statuses)."""


PROVIDER = Provider(
    name="gemini",
    title="Google Gemini API and Gemini on Vertex AI",
    recognise=recognise,
    stream_error=stream_error,
    http_error=http_error,
    http_messages=HTTP_MESSAGES,
    key_shapes=(KeyShape("ssemock-google-api-key", ("AIza",), "A-Za-z0-9_-", 30),
                KeyShape("ssemock-google-oauth-token", ("ya29.",), "A-Za-z0-9_-", 20)),
    secret_request_headers=frozenset({"x-goog-api-key"}),
    env={"GOOGLE_GEMINI_BASE_URL": "{url}", "GEMINI_API_KEY": "ssemock-placeholder-key"},
)


# ---- synthesis -------------------------------------------------------------------------------------
# Synthesis (answers without a recording, see ssemock.stubs):
# Gemini ``streamGenerateContent``, after ``gemini-streamgeneratecontent-tool-call-thought-signature``
# (gemini-3-pro-preview) and ``gemini-streamgeneratecontent-crlf``.
#
# With ``alt=sse``: ``data:`` lines ending in CRLF, no event names; each payload is one
# ``GenerateContentResponse`` (``candidates`` with ``content.parts``, ``role: model``,
# ``index: 0``; ``usageMetadata``; ``modelVersion``; ``responseId``), JSON written with
# ``": "`` after keys and no space after commas, as Google sends it. The first text part holds
# one token-like piece, the next ones four; ``thought: true`` parts carry the reasoning; a
# ``functionCall`` part per tool call, the first with a ``thoughtSignature``; a last payload
# with an empty text part and the ``finishReason``. Without ``alt=sse`` the same payloads form
# one JSON array (:func:`ssemock.stubs.synth.synthesize`).


EOL = "\r\n"
FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY"}
_URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _synth_call_id(script: Script) -> str:
    return ""  # Gemini sends no call identifiers


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ": "), ensure_ascii=False)


def _usage(script: Script, candidates: int) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "promptTokenCount": script.input_tokens, "candidatesTokenCount": candidates,
        "totalTokenCount": script.input_tokens + candidates + script.reasoning_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": script.input_tokens}],
    }
    if script.reasoning_tokens:
        usage["thoughtsTokenCount"] = script.reasoning_tokens
    return usage


def _payload(script: Script, parts: list[Any], candidates: int, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    return {"candidates": [candidate], "usageMetadata": _usage(script, candidates), "modelVersion": script.model,
            "responseId": script.named("id", _URLSAFE, 23)}


Run = tuple[dict[str, Any], list[str]]
"""Parts streamed one per payload: (the part with ``slot("t")`` for its text, or a whole part, the texts)."""


def _runs(script: Script) -> list[Run]:
    """The parts in the order streamed, one payload each (``texts`` empty: the part as it is, one token)."""
    reply = script.reply
    runs: list[Run] = []
    if reply.reasoning:
        runs.append(({"text": slot("t"), "thought": True}, group(script.tokens(reply.reasoning), 4)))
    text = reply.refusal if reply.refusal is not None else reply.text
    if text:
        runs.append(({"text": slot("t")}, group(script.tokens(text), 4)))
    for index, (_, call) in enumerate(script.calls):
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": dict(call.arguments)}}
        if index == 0:
            part["thoughtSignature"] = base64.b64encode(bytes(script.rng.getrandbits(8) for _ in range(180))).decode()
        runs.append((part, []))
    return runs


def _parts(script: Script) -> list[dict[str, Any]]:
    """Every part streamed, in order."""
    parts = []
    for part, texts in _runs(script):
        parts += [{**part, "text": t} for t in texts] if texts else [part]
    return parts


def _synth_events(script: Script) -> list[Piece]:
    """One payload per part, ``candidatesTokenCount`` growing with the parts sent (one template per run)."""
    out: list[Piece] = []
    visible = script.output_tokens - script.reasoning_tokens
    runs = _runs(script)
    total = sum(max(1, len(texts)) for _, texts in runs)
    for part, texts in runs:
        done = event_count(out)
        counts = [min(visible, round(visible * (done + i) / max(1, total))) for i in range(1, max(1, len(texts)) + 1)]
        if not texts:
            out.append(Piece(None, _dumps(_payload(script, [part], counts[0])), 1))
            continue
        payload = _payload(script, [part], 0)
        payload["usageMetadata"].update(candidatesTokenCount=slot("c"), totalTokenCount=slot("s"))
        extra = script.input_tokens + script.reasoning_tokens
        out += run(None, Template(payload, _dumps), len(texts), t=texts, c=counts, s=[c + extra for c in counts])
    finish = FINISH.get(script.reply.finish, script.reply.finish)
    out.append(Piece(None, _dumps(_payload(script, [{"text": ""}], visible, finish))))
    return out


def _synth_answer(script: Script) -> dict[str, Any]:
    merged: list[dict[str, Any]] = []
    for part in _parts(script):
        last = merged[-1] if merged else None
        if last is not None and "text" in part and "text" in last and last.get("thought") == part.get("thought"):
            last["text"] += part["text"]
        else:
            merged.append(dict(part))
    finish = FINISH.get(script.reply.finish, script.reply.finish)
    return _payload(script, merged or [{"text": ""}], script.output_tokens - script.reasoning_tokens, finish)


def _synth_headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    return [
        ("alt-svc", 'h3=":443"; ma=2592000,h3-29=":443"; ma=2592000'), ("content-disposition", "attachment"),
        ("content-type", "text/event-stream" if stream else "application/json; charset=UTF-8"),
        ("server-timing", f"gfet4t7; dur={script.rng.randint(300, 4000)}"),
        ("vary", "Origin"), ("vary", "X-Origin"), ("vary", "Referer"),
    ]


def _text_event(events: list[tuple[str, Any]], spot: int, text: str) -> tuple[str | None, str]:
    """A payload whose one candidate holds one text part, the nearest text payload copied
    (``usageMetadata``, ``modelVersion``, ``responseId``) without its ``finishReason``."""
    def fits(kind: str, v: Any) -> bool:
        parts = (v.get("candidates") or [{}])[0].get("content", {}).get("parts") or [{}]
        return "text" in parts[0] and not parts[0].get("thought")

    near = nearest(events, spot, fits)
    candidate = {k: v for k, v in near["candidates"][0].items() if k != "finishReason"}
    candidate["content"] = {**candidate["content"], "parts": [{"text": text}]}
    return None, _dumps({**near, "candidates": [candidate]})


SYNTHESIS = Synthesis(_synth_events, _synth_answer, _synth_headers, _synth_call_id, eol=EOL, text_event=_text_event)
PROVIDER = replace(PROVIDER, synthesize=SYNTHESIS)
