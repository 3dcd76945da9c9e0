"""What a stub is matched on: a chat request read into a :class:`Conversation`.

The provider follows from the path (the same paths the SDKs use):

=============================================  ===================
path                                           provider
=============================================  ===================
``/api/v1/chat/completions`` (OpenRouter)      ``openrouter``
``…/chat/completions``                          ``openai-chat``
``…/responses``                                 ``openai-responses``
``…/messages``                                  ``anthropic``
``…/models/NAME:streamGenerateContent``         ``gemini`` (stream; SSE with ``alt=sse``, else a JSON array)
``…/models/NAME:generateContent``               ``gemini`` (one JSON answer)
=============================================  ===================

A tool result is an OpenAI ``tool`` message, a Responses ``function_call_output`` item, an
Anthropic ``tool_result`` block or a Gemini ``functionResponse`` part; the *last user
message* is the text of the last user message that is not only tool results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..cassette import Request
from ..errors import JSONTooDeepError
from ..limits import MAX_JSON_PARSE, load_json
from ..providers.tokens import count_tokens

__all__ = ["MAX_CONTAINERS", "Conversation", "read_conversation"]


MAX_CONTAINERS = 200_000
"""The most ``{`` and ``[`` bytes (JSON objects and arrays, or brackets in text) a request body over
1 MiB may hold for stubs to read it: a real prompt has a few per message; 200,000 empty objects
already take some 30 MB as Python objects."""


@dataclass(frozen=True)
class Conversation:
    """A chat request as stubs see it.

    Attributes:
        provider: see the module table.
        path: the request path.
        model: the model asked for (``""`` when none).
        stream: True for a streamed answer.
        last_user: the text of the last user message, or None.
        tool_result: True when the conversation ends with a tool result.
        turn: 1 + the number of assistant messages.
        step: the number of assistant messages after the last user message.
        include_usage: OpenAI ``stream_options.include_usage``.
        sse: Gemini ``alt=sse`` (else a streamed JSON array).
        prompt_tokens: token-like pieces in every text of the request (for usage).
        max_tokens: the answer's length limit asked for, in tokens (OpenAI chat ``max_completion_tokens``
            or ``max_tokens``, Responses ``max_output_tokens``, Anthropic ``max_tokens``, Gemini
            ``generationConfig.maxOutputTokens``); None when none (or not a positive integer).
        body: the request's JSON object (echoed where the provider echoes it: Responses ``tools``).
        history: Responses only: the whole conversation's input items, the earlier answers'
            (``previous_response_id``, resolved by ``earlier``) first.
    """

    provider: str
    path: str
    model: str = ""
    stream: bool = False
    last_user: str | None = None
    tool_result: bool = False
    turn: int = 1
    step: int = 0
    include_usage: bool = False
    sse: bool = False
    prompt_tokens: int = 0
    max_tokens: int | None = None
    body: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    history: tuple[Any, ...] = field(default=(), compare=False, repr=False)
    """OpenAI Responses: the input items, those of ``previous_response_id`` first."""


def provider_of_path(path: str) -> str | None:
    """The provider a chat request on ``path`` speaks to, or None (not a chat path)."""
    if path.startswith("/api/v1/") and path.endswith("/chat/completions"):
        return "openrouter"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith((":streamGenerateContent", ":generateContent")):
        return "gemini"
    return None


def read_conversation(
    request: Request, earlier: Callable[[str], list[Any] | None] | None = None,
) -> Conversation | None:
    """``request`` as a :class:`Conversation`, or None when it is not a chat request.

    ``earlier(response_id)`` gives the input items of an earlier Responses answer (its request's
    items and its own output), so that a ``previous_response_id`` follow-up reads as the whole
    conversation; None or an unknown id: the request's own items only.

    The whole body is read, whatever its size (a production prompt passes 1 MiB easily); a body
    that is not a JSON object, nested deeper than 128 levels, or (over 1 MiB) holding more than
    :data:`MAX_CONTAINERS` ``{`` and ``[`` (each would be a Python object), reads as having no
    messages.
    """
    provider = provider_of_path(request.path)
    if provider is None or request.method != "POST":
        return None
    body = request.json_view()
    raw = request.body or b""
    if body is None and len(raw) > MAX_JSON_PARSE and raw.count(b"{") + raw.count(b"[") <= MAX_CONTAINERS:
        # Matching on bytes caps parsing at 1 MiB; a stub reads the whole prompt (the body is already
        # bounded by the server's max_request_body, and stubs are matched off the event loop), unless
        # it would make millions of objects (``[{},{},…]``: 30 MiB of them take over 1.5 GB).
        try:
            body = load_json(raw, max_size=len(raw))
        except JSONTooDeepError:
            body = None
    if not isinstance(body, dict):
        body = {}
    history: tuple[Any, ...] = ()
    if provider == "openai-responses":
        items = body.get("input")
        items = [{"role": "user", "content": items}] if isinstance(items, str) else _items(items)
        previous = body.get("previous_response_id")
        before = earlier(previous) if earlier is not None and isinstance(previous, str) else None
        history = (*(before or ()), *items)
        body = {**body, "input": list(history)}
    # (role, text, is_tool_result) per message, in order
    turns = _READERS[provider](body)
    user_at = max((i for i, (role, text, _) in enumerate(turns) if role == "user" and text is not None), default=-1)
    assistants = [i for i, (role, _, _) in enumerate(turns) if role == "assistant"]
    model = _clean(body.get("model"))
    stream = bool(body.get("stream"))
    sse = False
    if provider == "gemini":
        model = request.path.rsplit("/", 1)[-1].split(":", 1)[0]
        stream = request.path.endswith(":streamGenerateContent")
        sse = any(k == "alt" and v == "sse" for k, v in request.query)
    options = body.get("stream_options")
    return Conversation(
        provider=provider, path=request.path, model=model, stream=stream,
        last_user=turns[user_at][1] if user_at >= 0 else None,
        tool_result=bool(turns) and turns[-1][2],
        turn=1 + len(assistants), step=sum(1 for i in assistants if i > user_at),
        include_usage=isinstance(options, dict) and bool(options.get("include_usage")),
        sse=sse, prompt_tokens=sum(count_tokens(text) for _, text, _ in turns if text),
        max_tokens=_limit(provider, body), body=body, history=history,
    )


_CHAT_LIMITS = ("max_completion_tokens", "max_tokens")
_LIMITS = {"openai-chat": _CHAT_LIMITS, "openrouter": _CHAT_LIMITS,
           "openai-responses": ("max_output_tokens",), "anthropic": ("max_tokens",)}


def _limit(provider: str, body: dict[str, Any]) -> int | None:
    """The length limit the request asks for (see :attr:`Conversation.max_tokens`)."""
    config = body.get("generationConfig")
    found = [config.get("maxOutputTokens") if isinstance(config, dict) else None] if provider == "gemini" else \
        [body.get(name) for name in _LIMITS[provider]]
    return next((v for v in found if isinstance(v, int) and not isinstance(v, bool) and v > 0), None)


Turn = tuple[str, str | None, bool]
_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(value: Any) -> str:
    """A string field as text that encodes to UTF-8: ``""`` for a missing or non-string value, a
    lone surrogate (valid JSON, not valid UTF-8) as U+FFFD."""
    if not isinstance(value, str):
        return ""
    return value if value.isascii() else _SURROGATE.sub("\ufffd", value)


def _items(value: Any) -> list[Any]:
    """``value`` when it is a list (messages, items, parts), else no items."""
    return value if isinstance(value, list) else []


def _text(content: Any, kinds: tuple[str, ...] = ("text", "input_text")) -> str | None:
    """The text of a message content: a string, or the text parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type", "text") in kinds]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _openai_chat(body: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for message in _items(body.get("messages")):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        if role == "tool":
            turns.append(("tool", None, True))
        elif role in ("user", "assistant"):
            turns.append((role, _text(message.get("content")), False))
    return turns


def _openai_responses(body: dict[str, Any]) -> list[Turn]:
    items = body.get("input")
    if isinstance(items, str):
        return [("user", items, False)]
    turns: list[Turn] = []
    for item in _items(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "function_call_output":
            turns.append(("tool", None, True))
        elif kind in ("function_call", "reasoning") or item.get("role") == "assistant":
            if not (turns and turns[-1][0] == "assistant"):  # one assistant turn per answer
                turns.append(("assistant", None, False))
        elif item.get("role") == "user":
            turns.append(("user", _text(item.get("content")), False))
    return turns


def _anthropic(body: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for message in _items(body.get("messages")):
        if not isinstance(message, dict):
            continue
        role, content = str(message.get("role")), message.get("content")
        results = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        if role == "user" and results:
            turns.append(("tool", _text(content), True))
        elif role in ("user", "assistant"):
            turns.append((role, _text(content), False))
    return turns


def _gemini(body: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for content in _items(body.get("contents")):
        if not isinstance(content, dict):
            continue
        parts = [p for p in _items(content.get("parts")) if isinstance(p, dict)]
        role = "assistant" if content.get("role") == "model" else "user"
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")]
        if role == "user" and any("functionResponse" in p for p in parts):
            turns.append(("tool", None, True))
        else:
            turns.append((role, "\n".join(texts) if texts else None, False))
    return turns


_READERS = {
    "openai-chat": _openai_chat, "openrouter": _openai_chat, "openai-responses": _openai_responses,
    "anthropic": _anthropic, "gemini": _gemini,
}
