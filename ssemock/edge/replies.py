"""JSON error answers in the shape providers use."""

from __future__ import annotations

from typing import Any

from aiohttp import web

__all__ = ["error_response"]


def error_response(status: int, kind: str, message: str, **extra: Any) -> web.Response:
    """A JSON error in the shape providers use: ``{"error": {"type", "message", ...}}``."""
    body = {"error": {"type": kind, "message": message, **extra}}
    return web.json_response(body, status=status)
