"""Pieces shared by the chat-completion shapes (OpenAI Chat Completions and the APIs that copy it:
OpenRouter, Groq, Mistral): the chunk that carries an error, and the status -> type/code tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import ErrorSpec, SentPayloads, chosen, dump

__all__ = ["by_status", "chunk_lines", "error_chunk", "error_lines", "last_payload"]


def by_status(table: Mapping[int, Any], status: int, fallback: Any) -> Any:
    """The table's value for ``status``; else for its class (``500`` for any 5xx); else ``fallback``."""
    if status in table:
        return table[status]
    return table.get(status // 100 * 100, fallback)


def last_payload(sent: SentPayloads) -> Mapping[str, Any]:
    """The JSON object of the last event sent, or ``{}``."""
    return sent[-1] if sent else {}


def error_chunk(error: dict[str, Any], sent: SentPayloads, spec: ErrorSpec, *, choices: bool) -> dict[str, Any]:
    """A ``chat.completion.chunk`` carrying ``error``, as OpenRouter sends one mid-stream.

    The id, provider, model, object and created fields are copied from the last chunk sent (in the
    recorded order: ``id``, ``provider``, ``error``, ``model``, ``object``, ``created``, ``choices``). With
    ``choices`` (``spec.choices`` wins when set), one choice with an empty delta and ``finish_reason: "error"``.
    """
    last = last_payload(sent)
    chunk: dict[str, Any] = {key: last[key] for key in ("id", "provider") if key in last}
    chunk["error"] = error
    chunk.update({key: last[key] for key in ("model", "object", "created") if key in last})
    if chosen(spec.choices, choices):
        chunk["choices"] = [_error_choice(last)]
    return chunk


def _error_choice(last: Mapping[str, Any]) -> dict[str, Any]:
    """``{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}`` (OpenRouter docs), with the other
    keys of the last chunk's choice set to null and its delta's ``role`` kept (as in the recording
    ``openrouter-chat-keepalive-midstream-error``)."""
    choices = last.get("choices")
    before = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = before.get("delta")
    role = {"role": delta["role"]} if isinstance(delta, dict) and "role" in delta else {}
    choice: dict[str, Any] = {"index": 0, "delta": {**role, "content": ""}, "finish_reason": "error"}
    choice.update({key: None for key in before if key not in choice})
    return choice


def chunk_lines(payload: Any, spec: ErrorSpec, *, done: bool) -> list[str]:
    """``payload`` as one ``data:`` event (then ``data: [DONE]`` when ``done``), or as bare JSON (form ``json``)."""
    if chosen(spec.form, "sse") == "json":
        return [dump(payload), ""]
    return [f"data: {dump(payload)}", "", *(["data: [DONE]", ""] if done else [])]


def error_lines(error: dict[str, Any], sent: SentPayloads, spec: ErrorSpec, *, key: str | None = "error") -> list[str]:
    """The OpenAI-style mid-stream error: ``{key: error}`` (``error`` itself when ``key`` is None) as one
    ``data:`` event; with ``choices: true``, a chunk carrying ``error`` (see :func:`error_chunk`)."""
    if spec.choices is True:
        payload = error_chunk(error, sent, spec, choices=True)
    else:
        payload = error if key is None else {key: error}
    return chunk_lines(payload, spec, done=False)
