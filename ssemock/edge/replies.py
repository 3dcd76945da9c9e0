"""JSON error answers in the shape providers use: every refusal is written by :func:`refuse`."""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from ..errors import SSEMockError, redacted

__all__ = ["Refused", "error_response", "refuse"]

class Refused(Protocol):
    """The fields of a journal entry (:class:`ssemock.journal.JournalEntry`) that a refusal sets."""

    status: int | None
    outcome: str | None
    error: dict[str, Any] | None


def refuse(error: SSEMockError, entry: Refused | None = None, *, shown: str | None = None) -> web.Response:
    """The answer to a request refused with ``error``: ``{"error": {"type": error.code, "message":
    str(error), **error.details()}}`` with the status ``error.status``; the connection ends with it
    when ``error.close`` (the request body was left unread).

    Every string of the answer (and of the journal's copy) goes through the secret scanner first
    (:func:`~ssemock.errors.redacted`): a message quoting the request (``no recorded interaction matches
    POST /bot<token>/getMe``) never echoes a key it held.

    Args:
        entry: the request's journal entry, noted ``refused`` with that status and that same error dict.
        shown: the message told instead (to a web page of another origin): the answer then holds the
            type and this message only; the journal keeps the whole error.
    """
    body = _shown({"type": error.code, "message": str(error), **error.details()})
    if entry is not None:
        entry.status, entry.outcome, entry.error = error.status, "refused", body
    reply = web.json_response({"error": body if shown is None else {"type": error.code, "message": shown}},
                              status=error.status, headers=_shown(error.answer_headers()) or None)
    if error.close:
        reply.force_close()
    return reply


def _shown(value: Any) -> Any:
    """``value`` (strings, lists, dicts) with key shapes and values under credential names replaced."""
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, list):
        return [_shown(item) for item in value]
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    return value


def error_response(status: int, kind: str, message: str, **extra: Any) -> web.Response:
    """A JSON error of any ``status`` and type ``kind``: ``{"error": {"type", "message", ...}}``
    (ssemock's own answers are errors of :mod:`ssemock.refusals`, written by :func:`refuse`)."""
    return web.json_response({"error": {"type": kind, "message": message, **extra}}, status=status)
