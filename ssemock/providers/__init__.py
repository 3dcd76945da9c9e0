"""What ssemock knows about each provider, one module per provider, and the registry that picks one.

::

    openai_chat        OpenAI Chat Completions (and compatible APIs)
    openai_responses   OpenAI Responses API
    anthropic          Anthropic Messages API
    gemini             Google Gemini API and Gemini on Vertex AI
    openrouter         OpenRouter chat completions
    groq               Groq
    mistral            Mistral AI
    generic            any other stream (the fallback)

Each module defines ``PROVIDER``, a :class:`~ssemock.providers.base.Provider`: how its requests are
recognised, its mid-stream and HTTP error shapes (with their sources), its key shapes and the environment
variables its SDKs read. The scenario steps ``error-mid-stream`` and ``http-error``, redaction
(:mod:`ssemock.redact`) and the ``ssemock_env`` fixture read them from here. A module that can
write its provider's streams without a recording sets ``synthesize=`` on its ``PROVIDER``
(:attr:`~ssemock.providers.base.Provider.synthesize`; None until then).

Example::

    >>> provider_for("/v1/messages", "").name
    'anthropic'
    >>> provider_for("/v1/chat/completions", '{"model": "mistral-small-latest"}').name
    'mistral'
"""

from __future__ import annotations

from . import anthropic, gemini, generic, groq, mistral, openai_chat, openai_responses, openrouter
from .base import DEFAULT, FORMS, Code, ErrorSpec, KeyShape, Provider

__all__ = [
    "DEFAULT", "FORMS", "NAMES", "PROVIDERS", "Code", "ErrorSpec", "KeyShape", "Provider", "env_vars", "key_shapes",
    "provider_for", "provider_named", "secret_request_headers", "secret_response_headers",
]

PROVIDERS: tuple[Provider, ...] = (
    openrouter.PROVIDER,  # before openai-chat: same path tail, same chunks
    openai_responses.PROVIDER,
    groq.PROVIDER,
    mistral.PROVIDER,  # before openai-chat: same path, told by the model name
    anthropic.PROVIDER,
    gemini.PROVIDER,
    openai_chat.PROVIDER,
    generic.PROVIDER,  # recognises everything: last
)
"""Every provider, in the order :func:`provider_for` asks them."""
NAMES: tuple[str, ...] = tuple(p.name for p in PROVIDERS)
_BY_NAME = {p.name: p for p in PROVIDERS}


def provider_for(request_path: str, body_head: str) -> Provider:
    """The provider of a request: the first of :data:`PROVIDERS` that recognises it (at worst ``generic``).

    Args:
        request_path: the request path, without the query (``/v1/chat/completions``).
        body_head: the first few KiB of the request or the response body, as text (may be empty).
    """
    path = request_path.split("?", 1)[0]
    return next(p for p in PROVIDERS if p.recognise(path, body_head))


def provider_named(name: str) -> Provider:
    """The provider called ``name`` (one of :data:`NAMES`). Raises ``KeyError`` for another name."""
    return _BY_NAME[name]


def env_vars() -> dict[str, str]:
    """Every provider's environment variables (name -> value with ``{url}`` for the base URL), in order."""
    out: dict[str, str] = {}
    for provider in (openai_chat.PROVIDER, anthropic.PROVIDER, gemini.PROVIDER, *PROVIDERS):
        out.update(provider.env)
    return out


def key_shapes() -> tuple[KeyShape, ...]:
    """Every provider's key shapes, each once (by rule id), in the order of :func:`env_vars`."""
    seen: dict[str, KeyShape] = {}
    for provider in (openai_chat.PROVIDER, anthropic.PROVIDER, gemini.PROVIDER, *PROVIDERS):
        for shape in provider.key_shapes:
            seen.setdefault(shape.rule, shape)
    return tuple(seen.values())


def secret_request_headers() -> frozenset[str]:
    """Request header names that carry a provider credential (lower case)."""
    return frozenset().union(*(p.secret_request_headers for p in PROVIDERS))


def secret_response_headers() -> frozenset[str]:
    """Response header names that identify a provider account (lower case)."""
    return frozenset().union(*(p.secret_response_headers for p in PROVIDERS))
