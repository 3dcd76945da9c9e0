"""Gemini ``streamGenerateContent``, after ``gemini-streamgeneratecontent-tool-call-thought-signature``
(gemini-3-pro-preview) and ``gemini-streamgeneratecontent-crlf``.

With ``alt=sse``: ``data:`` lines ending in CRLF, no event names; each payload is one
``GenerateContentResponse`` (``candidates`` with ``content.parts``, ``role: model``,
``index: 0``; ``usageMetadata``; ``modelVersion``; ``responseId``), JSON written with
``": "`` after keys and no space after commas, as Google sends it. The first text part holds
one token-like piece, the next ones four; ``thought: true`` parts carry the reasoning; a
``functionCall`` part per tool call, the first with a ``thoughtSignature``; a last payload
with an empty text part and the ``finishReason``. Without ``alt=sse`` the same payloads form
one JSON array (:func:`ssemock.stubs.synth.synthesize`).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..synth import Piece, Script
from ..tokens import group, split_tokens

__all__ = ["EOL", "answer", "call_id", "error", "events", "headers"]

EOL = "\r\n"
FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY"}
_URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def call_id(script: Script) -> str:
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


def _parts(script: Script) -> list[tuple[dict[str, Any], int]]:
    """(part, tokens) in the order streamed."""
    reply = script.reply
    parts: list[tuple[dict[str, Any], int]] = []
    if reply.reasoning:
        parts += [({"text": p, "thought": True}, 1) for p in group(split_tokens(reply.reasoning), 4)]
    text = reply.refusal if reply.refusal is not None else reply.text
    if text:
        parts += [({"text": p}, 1) for p in group(split_tokens(text), 4)]
    for index, (_, call) in enumerate(script.calls):
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": dict(call.arguments)}}
        if index == 0:
            part["thoughtSignature"] = base64.b64encode(bytes(script.rng.getrandbits(8) for _ in range(180))).decode()
        parts.append((part, 1))
    return parts


def events(script: Script) -> list[Piece]:
    out = []
    done = 0
    visible = script.output_tokens - script.reasoning_tokens
    parts = _parts(script)
    for part, tokens in parts:
        done += tokens
        count = min(visible, round(visible * done / max(1, len(parts))))
        out.append(Piece(None, _dumps(_payload(script, [part], count)), tokens))
    finish = FINISH.get(script.reply.finish, script.reply.finish)
    out.append(Piece(None, _dumps(_payload(script, [{"text": ""}], visible, finish))))
    return out


def answer(script: Script) -> dict[str, Any]:
    merged: list[dict[str, Any]] = []
    for part, _ in _parts(script):
        last = merged[-1] if merged else None
        if last is not None and "text" in part and "text" in last and last.get("thought") == part.get("thought"):
            last["text"] += part["text"]
        else:
            merged.append(dict(part))
    finish = FINISH.get(script.reply.finish, script.reply.finish)
    return _payload(script, merged or [{"text": ""}], script.output_tokens - script.reasoning_tokens, finish)


def headers(script: Script, stream: bool) -> list[tuple[str, str]]:
    return [
        ("alt-svc", 'h3=":443"; ma=2592000,h3-29=":443"; ma=2592000'), ("content-disposition", "attachment"),
        ("content-type", "text/event-stream" if stream else "application/json; charset=UTF-8"),
        ("server-timing", f"gfet4t7; dur={script.rng.randint(300, 4000)}"),
        ("vary", "Origin"), ("vary", "X-Origin"), ("vary", "Referer"),
    ]


_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def error(status: int, message: str) -> dict[str, Any]:
    """Google's error shape: ``{"error": {"code", "message", "status"}}``."""
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}
