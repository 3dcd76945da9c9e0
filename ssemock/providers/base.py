"""The typed records every provider module fills in: :class:`Provider`, :class:`ErrorSpec`, :class:`KeyShape`.

A provider module (``openai_chat``, ``anthropic``, …) says, for one provider:

* how its requests are recognised (:attr:`Provider.recognise`: request path and the first bytes of a body);
* how it reports an error after an HTTP 200 has gone out (:attr:`Provider.stream_error`: SSE lines);
* its HTTP error body for a status (:attr:`Provider.http_error`: a JSON value);
* the shapes of its keys (:attr:`Provider.key_shapes`, read by :mod:`ssemock.redact`) and the headers
  that carry them;
* the environment variables its SDKs read (:attr:`Provider.env`, set by the ``ssemock_env`` fixture);
* optionally, how to synthesize a stream without a recording (:attr:`Provider.synthesize`; None when
  the module has no synthesis).

This module imports nothing from the rest of ssemock, so any layer may use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT", "FORMS", "MAX_CODE", "MAX_EXTRA", "MAX_MESSAGE", "MAX_TYPE", "Code", "Default", "ErrorSpec", "KeyShape",
    "Provider", "chosen", "dump", "phrase",
]

FORMS = ("sse", "json")
"""How a mid-stream error is written: ``sse`` (``data:`` lines, with the provider's ``event:`` line if it
sends one) or ``json`` (the bare JSON text, without any field name: what Gemini/Vertex sends)."""
MAX_MESSAGE = 65_536
"""Longest error message, in characters."""
MAX_TYPE = 256
"""Longest error type, status string or string code, in characters."""
MAX_EXTRA = 65_536
"""Largest ``extra`` fields of an error, in bytes of compact JSON."""
MAX_CODE = 2**53
"""Largest absolute value of a numeric error code (the integers a JSON number keeps exactly)."""


class Default:
    """The value of an error field left unset: the provider's own value is used."""

    _instance: Default | None = None

    def __new__(cls) -> Default:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Final = Default()

Code = str | int | None
"""An error code as providers send it: a string (``"rate_limit_exceeded"``, Mistral's ``"3505"``),
a number (Gemini's ``429``, OpenRouter's ``400``) or null."""


@dataclass(frozen=True)
class ErrorSpec:
    """An error to send, as a step asks for it; every field left at :data:`DEFAULT` takes the provider's value.

    Attributes:
        message: the error message (at most :data:`MAX_MESSAGE` characters).
        status: the HTTP status the error stands for (100-599): the response status of an HTTP error;
            mid-stream, it picks the provider's type/code/status for that status. DEFAULT: the
            provider's usual mid-stream status (e.g. 500, Anthropic 529, Gemini 503).
        type: the error type (OpenAI, Anthropic, Groq, Mistral ``type``; Gemini's ``status`` string, e.g.
            ``RESOURCE_EXHAUSTED``; OpenRouter has none: added only when set).
        code: the error code, string, integer or None (null). Gemini and OpenRouter send the HTTP status as
            a number; OpenAI a string or null; Mistral a string of digits; Anthropic none (added only when set).
        choices: with a ``choices`` list (``finish_reason: "error"``) in a chat-completion chunk (True), or
            without (False). Only chat-completion shapes use it (OpenRouter sends it; others only when True).
        form: ``sse`` or ``json`` (see :data:`FORMS`); mid-stream only.
        extra: more fields merged into the provider's error object (``param``, OpenRouter's ``metadata``,
            Gemini's ``details``, …); they replace the provider's fields of the same name.
    """

    message: str
    status: int | Default = DEFAULT
    type: str | Default = DEFAULT
    code: Code | Default = DEFAULT
    choices: bool | Default = DEFAULT
    form: Literal["sse", "json"] | Default = DEFAULT
    extra: Mapping[str, Any] = field(default_factory=dict)

    def fill(self, error: dict[str, Any]) -> dict[str, Any]:
        """``error`` (the provider's error object) with :attr:`extra` merged in; the same dict."""
        error.update(self.extra)
        return error

    def status_or(self, usual: int) -> int:
        """:attr:`status`, or ``usual`` when unset."""
        return usual if isinstance(self.status, Default) else self.status


def chosen(value: Any, default: Any) -> Any:
    """``value``, or ``default`` when ``value`` is :data:`DEFAULT`."""
    return default if isinstance(value, Default) else value


def phrase(status: int) -> str:
    """The reason phrase of an HTTP status (``"Too Many Requests"``), or ``"Error"`` for an unnamed one."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def dump(value: Any) -> str:
    """Compact JSON, non-ASCII kept (the form the providers' streams use)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class KeyShape:
    """A provider key's shape, turned into a redaction rule by :mod:`ssemock.scanner.shapes`.

    Attributes:
        rule: the rule id reported when it matches, e.g. ``"ssemock-groq-key"``.
        prefixes: the fixed starts of a key (ASCII), e.g. ``("gsk_",)``.
        alphabet: the characters after the prefix, as a regex class body (``"A-Za-z0-9_-"``).
        least: fewest characters after the prefix.
    """

    rule: str
    prefixes: tuple[str, ...]
    alphabet: str
    least: int


SentPayloads = Sequence[Mapping[str, Any]]
"""The JSON objects of the events already sent, in order (``{}`` for an event whose data is not an object)."""


@dataclass(frozen=True)
class Provider:
    """What ssemock knows about one provider (see the module docstring).

    Attributes:
        name: the name used in scenario files (``openai-chat``, ``gemini``, …).
        title: a human name with its sources, one line.
        recognise: ``(request_path, body_head) -> bool``: whether a request path (without query) and the
            first bytes of the request or response body (text) belong to this provider.
        stream_error: ``(spec, sent) -> lines``: the lines that report ``spec`` after the events ``sent``;
            each event ends with an empty line ``""``.
        http_error: ``(spec, status) -> JSON value``: the body of an HTTP error response with ``status``.
        key_shapes: shapes of this provider's keys (redaction).
        secret_request_headers: lower-case request header names that carry a credential of this provider.
        secret_response_headers: lower-case response header names that identify the account.
        env: environment variable -> value its SDKs read; ``{url}`` stands for the fake provider's base URL.
        synthesize: a stream synthesizer for answers without a recording, or None (not provided).
        http_messages: HTTP status -> the error message this provider sends with it (its documented
            wording), for an ``http-error`` step that sets none; other statuses: the reason phrase.
    """

    name: str
    title: str
    recognise: Callable[[str, str], bool]
    stream_error: Callable[[ErrorSpec, SentPayloads], list[str]]
    http_error: Callable[[ErrorSpec, int], Any]
    key_shapes: tuple[KeyShape, ...] = ()
    secret_request_headers: frozenset[str] = frozenset()
    secret_response_headers: frozenset[str] = frozenset()
    env: Mapping[str, str] = field(default_factory=dict)
    synthesize: Callable[..., Any] | None = None
    http_messages: Mapping[int, str] = field(default_factory=dict)
