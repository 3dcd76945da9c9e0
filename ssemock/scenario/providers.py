"""The scenario side of :mod:`ssemock.providers`: which provider a plan's stream comes from, the events it
already sent as JSON, and the error fields shared by ``error-mid-stream`` and ``http-error``.

The error shapes themselves (and their sources) live in the provider modules, one per provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields as dataclass_fields
from typing import Any

from ..limits import bounded, is_integer, nullable, plain_json_problem, string
from ..plan import Plan
from ..providers import DEFAULT, FORMS, NAMES, Code, ErrorSpec, Provider, provider_for, provider_named
from ..providers.base import MAX_CODE, MAX_EXTRA, MAX_MESSAGE, MAX_TYPE, Default
from .base import Field, choice, flag
from .text import Block

__all__ = [
    "DEFAULT",
    "ERROR_FIELDS",
    "FORM_FIELD",
    "HEAD",
    "MESSAGE_FIELD",
    "OPTIONAL_MESSAGE_FIELD",
    "PROVIDER_FIELD",
    "STATUS_FIELD",
    "Code",
    "Default",
    "describe_set",
    "error_spec",
    "provider_of",
    "sent_payloads",
]

HEAD = 4096
"""Bytes of the response body read to recognise the provider."""

PROVIDER_FIELD = choice("auto", *NAMES)
"""``provider``: auto (recognised from the request path and the first payloads) or a provider name."""


def _code(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return len(value) <= MAX_TYPE
    return is_integer(value) and abs(value) < MAX_CODE


def _extra(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) for k in value) \
        and plain_json_problem(value, max_bytes=MAX_EXTRA) is None


ERROR_FIELDS: dict[str, Field] = {
    "type": Field(f"a non-empty string of at most {MAX_TYPE} characters",
                  lambda v: isinstance(v, str) and 0 < len(v) <= MAX_TYPE, string(minimum=1, maximum=MAX_TYPE)),
    "code": Field(f"a string of at most {MAX_TYPE} characters, an integer below 2**53 in size, or null", _code,
                  {"anyOf": [string(maximum=MAX_TYPE), bounded("integer", 1 - MAX_CODE, MAX_CODE - 1),
                             {"type": "null"}]}),
    "choices": flag(),
    "extra": Field(f"a mapping of field names to JSON values, at most {MAX_EXTRA} bytes as JSON", _extra,
                   {"type": "object"}),
}
"""Fields both error steps take (see :class:`~ssemock.providers.base.ErrorSpec`)."""
MESSAGE_FIELD = Field(f"a non-empty string of at most {MAX_MESSAGE} characters",
                      lambda v: isinstance(v, str) and 0 < len(v) <= MAX_MESSAGE,
                      string(minimum=1, maximum=MAX_MESSAGE))
OPTIONAL_MESSAGE_FIELD = Field(f"{MESSAGE_FIELD.expected}, or null", lambda v: v is None or MESSAGE_FIELD.check(v),
                               nullable(MESSAGE_FIELD.schema))
STATUS_FIELD = Field("an HTTP status code 100-599", lambda v: is_integer(v) and 100 <= v <= 599,
                     bounded("integer", 100, 599))
FORM_FIELD = choice(*FORMS)


def provider_of(plan: Plan, name: str = "auto") -> Provider:
    """The provider called ``name``, or (``auto``) the one recognised from the request path and the first
    :data:`HEAD` bytes of the response body."""
    if name != "auto":
        return provider_named(name)
    path = plan.request.path if plan.request is not None else ""
    return provider_for(path, plan.response.body[:HEAD].decode("utf-8", "replace"))


def sent_payloads(sent: list[Block]) -> list[dict[str, Any]]:
    """The JSON object of each block's data (``{}`` when it is not a JSON object)."""
    out: list[dict[str, Any]] = []
    for block in sent:
        try:
            value = json.loads(block.data or "")
        except ValueError:
            value = None
        out.append(value if isinstance(value, dict) else {})
    return out


def error_spec(step: Any, message: str) -> ErrorSpec:
    """The :class:`ErrorSpec` of a step's error fields (``status``, ``type``, ``code``, ``choices``, ``form``,
    ``extra``, those it has; unset ones stay :data:`~ssemock.providers.DEFAULT`)."""
    names = {f.name for f in dataclass_fields(ErrorSpec)} - {"message"}
    return ErrorSpec(message, **{n: getattr(step, n) for n in names if hasattr(step, n)})


def describe_set(step: Any) -> dict[str, Any]:
    """``{name: {field: value}}`` of a step, leaving out the fields left at :data:`~ssemock.providers.DEFAULT`
    and an empty ``extra``."""
    return {step.name: {k: getattr(step, k) for k in step.fields
                        if not isinstance(getattr(step, k), Default) and not (k == "extra" and not step.extra)}}

