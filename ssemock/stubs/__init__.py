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

from .book import StubBook
from .conversation import Conversation, read_conversation
from .files import load_stubs, parse_stubs
from .inline import Chain, on, reply, tool_call
from .model import Hit, Match, ProviderError, Reply, Stub, Timing, ToolCall, Usage, count_stubs
from .synth import synthesize

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
