"""The JSON Schema of stub files, built from the tables and bounds the stub loader checks
(:mod:`ssemock.stubs.files`, :mod:`ssemock.stubs.checks`, :mod:`ssemock.stubs.model`).

What a schema cannot say (the loader still checks it): stub names unique in a file, a ``regex`` that
RE2 accepts, JSON nested at most 128 deep, and an integer written ``1.0``.
"""

from __future__ import annotations

from typing import Any

from ..limits import bounded, string
from ..stubs import checks, files, model

__all__ = ["stubs_schema"]

_TEXT = {
    "anyOf": [string(maximum=model.MAX_TEXT), {"type": "null"}],
    "description": f"a string of at most {model.MAX_TEXT} characters",
}


def _closed(keys: tuple[str, ...], properties: dict[str, Any], description: str) -> dict[str, Any]:
    """An object of ``keys`` only (the loader names the first other key), described by ``properties``."""
    assert set(properties) <= set(keys), sorted(set(properties) - set(keys))
    return {
        "type": "object",
        "description": description,
        "propertyNames": {"enum": list(keys)},
        "properties": {key: properties[key] for key in keys if key in properties},
    }


def _match() -> dict[str, Any]:
    text = {"anyOf": [string(maximum=model.MAX_TEXT), {"type": "null"}]}
    return _closed(
        files.MATCH_KEYS,
        {
            "provider": {"enum": [*model.PROVIDERS, None], "description": "the provider format of the request path"},
            "path": {**text, "description": "the request path, exactly"},
            "model": {**text, "description": "the model asked for, exactly"},
            "equals": {**text, "description": "the last user message equals this"},
            "contains": {**text, "description": "the last user message contains this"},
            "regex": {
                "anyOf": [string(maximum=model.MAX_REGEX), {"type": "null"}],
                "description": "the last user message has a match of this RE2 regular expression",
            },
            "tool_result": {"type": ["boolean", "null"], "description": "the conversation ends with a tool result"},
            "turn": {
                "anyOf": [bounded("integer", 1, None), {"type": "null"}],
                "description": "1 + the number of assistant messages",
            },
        },
        "which requests the stub answers: every condition given must hold",
    )


def _timing() -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key, (low, high) in model.TIMING_BOUNDS.items():
        properties[key] = {**bounded("number", low, high), "description": f"a number from {low:g} to {high:g}"}
    properties["tokens_per_second"] = {"anyOf": [properties["tokens_per_second"], {"type": "null"}]}
    return {
        **_closed(tuple(model.TIMING_BOUNDS), properties, "when the reply's events are sent (seconds)"),
        "type": ["object", "null"],
    }


def _reply() -> dict[str, Any]:
    low, high = checks.ERROR_STATUSES
    error = _closed(
        files.ERROR_KEYS,
        {
            "status": {**bounded("integer", low, high), "description": f"an HTTP error status from {low} to {high}"},
            "body": {"description": "the JSON body (or text); none: the provider's own error shape"},
            "message": _TEXT,
        },
        "answer with this HTTP error instead",
    )
    error["required"] = ["status"]
    call = _closed(
        files.TOOL_CALL_KEYS,
        {
            "name": {"type": "string", "minLength": 1, "description": "the tool's name"},
            "arguments": {"type": "object", "description": "the JSON object of arguments"},
            "id": _TEXT,
        },
        "one tool call",
    )
    call["required"] = ["name"]
    count_low, count_high = checks.COUNTS
    usage = _closed(
        checks.USAGE_KEYS,
        {key: bounded("integer", count_low, count_high) for key in checks.USAGE_KEYS},
        "token counts reported; unset ones are counted",
    )
    rest = {
        "text": _TEXT,
        "reasoning": _TEXT,
        "refusal": _TEXT,
        "model": _TEXT,
        "reasoning_field": {"enum": [*model.REASONING_FIELDS, None]},
        "tool_calls": {"type": ["array", "null"], "maxItems": model.MAX_TOOL_CALLS, "items": call},
        "finish_reason": {"enum": [*model.FINISH_REASONS, None]},
        "usage": {**usage, "type": ["object", "null"]},
    }
    reply = _closed(files.REPLY_KEYS, {"error": error}, "what the stub answers")
    # With `error`, the loader reads nothing else of the reply.
    reply["if"] = {"required": ["error"]}
    reply["else"] = {"properties": rest}
    return reply


def stubs_schema() -> dict[str, Any]:
    """The stub file schema (draft 2020-12) as JSON data, without ``$schema`` and ``$id``."""
    low, high = checks.TIMES
    stub = _closed(
        files.STUB_KEYS,
        {
            "name": {"type": "string", "minLength": 1, "description": "unique in the file; default: file name#index"},
            "match": {**_match(), "type": ["object", "null"]},
            "reply": {"$ref": "#/$defs/reply"},
            "steps": {
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "#/$defs/reply"},
                "description": "replies answered in turn (a tool loop)",
            },
            "timing": _timing(),
            "times": {
                "anyOf": [bounded("integer", low, high), {"type": "null"}],
                "description": "how many requests it may answer (none: any number)",
            },
        },
        "a match and what it answers",
    )
    stub["oneOf"] = [{"required": ["reply"]}, {"required": ["steps"]}]
    return {
        "title": "ssemock stubs",
        **_closed(
            (files.FORMAT_KEY, "stubs"),
            {
                files.FORMAT_KEY: {"const": 1, "description": "the stub file format version"},
                "stubs": {"type": ["array", "null"], "maxItems": files.MAX_STUBS, "items": stub},
            },
            "synthesized answers: stubs matched against requests, answered in the provider's format",
        ),
        "required": [files.FORMAT_KEY],
        "$defs": {"reply": _reply()},
    }
