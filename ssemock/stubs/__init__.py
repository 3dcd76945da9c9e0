"""Stubs: a fake provider without a recording.

A stub is a match (provider/path, model, last user message, tool result, turn) and a reply
(text, reasoning, tool calls, refusal, finish reason, usage, or an HTTP error), sent in the
real format of the provider whose path the request arrives on, with the recordings' headers,
identifier shapes, field order and chunk granularity (each provider module's ``SYNTHESIS`` in
:mod:`ssemock.providers`).

The replay server consults its stubs before its cassettes; a synthesized answer is a
response like a recorded one, so scenarios, the journal and the verification helpers apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .book import StubBook

if TYPE_CHECKING:
    from .conversation import Conversation, read_conversation
    from .files import load_stubs, parse_stubs
    from .inline import Chain, on, reply, tool_call
    from .model import Hit, Match, ProviderError, Reply, Stub, Timing, ToolCall, Usage, count_stubs
    from .synth import synthesize

# Imported when first used: a server without stubs needs only an empty book.
_LAZY = {
    "Conversation": ".conversation", "read_conversation": ".conversation", "load_stubs": ".files",
    "parse_stubs": ".files", "Chain": ".inline", "on": ".inline", "reply": ".inline", "tool_call": ".inline",
    "Hit": ".model", "Match": ".model",
    "ProviderError": ".model", "Reply": ".model", "Stub": ".model", "Timing": ".model", "ToolCall": ".model",
    "Usage": ".model", "count_stubs": ".model", "synthesize": ".synth",
}
__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "Chain",
    "Conversation",
    "Hit",
    "Match",
    "ProviderError",
    "Reply",
    "Stub",
    "StubBook",
    "Timing",
    "ToolCall",
    "Usage",
    "count_stubs",
    "load_stubs",
    "on",
    "parse_stubs",
    "read_conversation",
    "reply",
    "synthesize",
    "tool_call",
]
