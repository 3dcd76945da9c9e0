"""Provider stream formats, one module per provider, each written after the bundled recordings.

Every module provides ``call_id``, ``events`` (the streamed events), ``answer`` (the
``stream: false`` JSON), ``headers`` and ``error`` (the provider's HTTP error body); see
:class:`ssemock.stubs.synth.Format`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import anthropic, gemini, openai_chat, openai_responses, openrouter

if TYPE_CHECKING:
    from ..synth import Format

__all__ = ["FORMATS"]

FORMATS: dict[str, Format] = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "openrouter": openrouter,
}
