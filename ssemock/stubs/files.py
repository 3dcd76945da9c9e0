"""Stub files: YAML, validated field by field (errors name the file, the field and what was expected).

Format (``ssemock_stubs: 1`` first)::

    ssemock_stubs: 1
    stubs:
      - name: weather                    # optional; default: file name and position
        match:                           # every condition optional (see ssemock.stubs.Match)
          contains: weather              # or equals / regex; provider, path, model, tool_result, turn
        steps:                           # answered in turn (a tool loop); or one `reply:`
          - tool_calls: [{name: get_weather, arguments: {city: Paris}}]
          - text: Sunny
        timing: {first_token: 0.3, tokens_per_second: 40, jitter: 0.2}
        times: 5                         # optional: answers at most 5 requests

A reply holds ``text``, ``reasoning``, ``tool_calls`` (``name``, ``arguments``, ``id``),
``refusal``, ``finish_reason``, ``usage`` (``input_tokens``, ``output_tokens``,
``reasoning_tokens``) and ``model``, or ``error`` (``status``, ``body``, ``message``).
Bounds: :data:`MAX_STUB_FILE` bytes per file (1 MiB), :data:`MAX_STUBS` stubs per file
(10,000), and those of :mod:`ssemock.stubs.model`. The YAML is read as cassettes are (anchors,
aliases, duplicate keys and deep nesting refused with their line); stub names are unique per
file; tool ``arguments`` and error ``body`` are plain JSON nested at most 128 deep.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import StubError
from ..limits import is_integer
from .model import FINISH_REASONS, TIMING_BOUNDS, Match, ProviderError, Reply, Stub, Timing, Usage

__all__ = [
    "MAX_STUBS", "MAX_STUB_FILE", "check_finish", "check_status", "check_times", "load_stubs", "parse_stubs",
    "parse_usage",
]

FORMAT_KEY = "ssemock_stubs"
MAX_STUB_FILE = 1024 * 1024
MAX_STUBS = 10_000
_MATCH_KEYS = ("provider", "path", "model", "equals", "contains", "regex", "tool_result", "turn")
_REPLY_KEYS = ("text", "reasoning", "tool_calls", "refusal", "finish_reason", "usage", "model", "error")


def check_status(status: Any, file: str, field: str) -> int:
    if not is_integer(status) or not 400 <= status <= 599:
        raise StubError(file, field, "an HTTP error status from 400 to 599", status)
    return int(status)


def check_times(times: Any, file: str, field: str) -> None:
    """Refuse a ``times`` that is not None or an integer from 1 to 1,000,000,000."""
    if times is not None and (not is_integer(times) or not 1 <= times <= 10**9):
        raise StubError(file, field, "an integer from 1 to 1000000000 (or none: any number)", times)


def check_finish(finish: Any, file: str, field: str) -> None:
    if finish is not None and finish not in FINISH_REASONS:
        raise StubError(file, field, f"one of {', '.join(FINISH_REASONS)}", finish)


def _mapping(value: Any, file: str, field: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise StubError(file, field, "a mapping", value)
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise StubError(file, f"{field}.{unknown[0]}", f"one of the keys {', '.join(keys)}", unknown[0])
    return value


def parse_usage(value: Any, file: str, field: str) -> Usage:
    data = _mapping(value, file, field, ("input_tokens", "output_tokens", "reasoning_tokens"))
    for key, count in data.items():
        if not is_integer(count) or not 0 <= count <= 10**9:
            raise StubError(file, f"{field}.{key}", "an integer from 0 to 1000000000", count)
    return Usage(**data)


def check_text(value: Any, file: str, field: str) -> str | None:
    """``value``: None, or a string of at most ``MAX_TEXT`` characters that UTF-8 can encode (no lone
    surrogate: the answer would fail to encode at the first request). Raises :class:`StubError`."""
    from .model import MAX_TEXT

    if value is None:
        return None
    expected = f"a string of at most {MAX_TEXT} characters without lone surrogates"
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise StubError(file, field, expected, value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise StubError(file, field, expected, value) from None
    return value



def parse_reply(value: Any, file: str, field: str) -> Reply:
    """A :class:`Reply` from its mapping. Raises :class:`StubError`."""
    from .inline import check_json, tool_call
    from .model import MAX_TOOL_CALLS

    data = _mapping(value, file, field, _REPLY_KEYS)
    if "error" in data:
        error = _mapping(data["error"], file, f"{field}.error", ("status", "body", "message"))
        status = check_status(error.get("status"), file, f"{field}.error.status")
        message = check_text(error.get("message"), file, f"{field}.error.message")
        check_json(error.get("body"), file, f"{field}.error.body")
        fault = ProviderError(status, error.get("body")) if message is None else \
            ProviderError(status, error.get("body"), message)
        return Reply(error=fault)
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list) or len(calls) > MAX_TOOL_CALLS:
        raise StubError(file, f"{field}.tool_calls", f"a list of at most {MAX_TOOL_CALLS} tool calls", calls)
    made = []
    for index, call in enumerate(calls):
        where = f"{field}.tool_calls[{index}]"
        entry = _mapping(call, file, where, ("name", "arguments", "id"))
        if not isinstance(entry.get("arguments", {}), Mapping):
            raise StubError(file, f"{where}.arguments", "a mapping (the JSON object of arguments)", entry["arguments"])
        name: Any = entry.get("name")  # tool_call checks it
        if not isinstance(name, str) or not name:
            raise StubError(file, f"{where}.name", "a non-empty string", name)
        check_json(entry.get("arguments", {}), file, f"{where}.arguments")
        made.append(tool_call(name, entry.get("arguments"), id=check_text(entry.get("id"), file, f"{where}.id")))
    check_finish(data.get("finish_reason"), file, f"{field}.finish_reason")
    return Reply(
        text=check_text(data.get("text"), file, f"{field}.text"),
        reasoning=check_text(data.get("reasoning"), file, f"{field}.reasoning"), tool_calls=tuple(made),
        refusal=check_text(data.get("refusal"), file, f"{field}.refusal"), finish_reason=data.get("finish_reason"),
        usage=parse_usage(data.get("usage") or {}, file, f"{field}.usage"),
        model=check_text(data.get("model"), file, f"{field}.model"),
    )


def _match(value: Any, file: str, field: str) -> Match:
    data = dict(_mapping(value or {}, file, field, _MATCH_KEYS))
    try:
        return Match(**data)
    except StubError as exc:
        raise StubError(file, f"{field}.{exc.field.removeprefix('match.')}", exc.expected, exc.got) from None


def _timing(value: Any, file: str, field: str) -> Timing:
    data = _mapping(value or {}, file, field, tuple(TIMING_BOUNDS))
    try:
        return Timing(**data)
    except StubError as exc:
        raise StubError(file, f"{field}.{exc.field.removeprefix('timing.')}", exc.expected, exc.got) from None


def parse_stubs(doc: Any, file: str) -> list[Stub]:
    """The stubs of a parsed stub file, in order. Raises :class:`StubError` naming the field."""
    from .inline import Chain

    if not isinstance(doc, Mapping) or doc.get(FORMAT_KEY) != 1:
        raise StubError(file, FORMAT_KEY, "a stub file starting with `ssemock_stubs: 1`", None)
    _mapping(doc, file, "", (FORMAT_KEY, "stubs"))
    entries = doc.get("stubs") or []
    if not isinstance(entries, list) or len(entries) > MAX_STUBS:
        raise StubError(file, "stubs", f"a list of at most {MAX_STUBS} stubs", entries)
    stubs: list[Stub] = []
    names: set[str] = set()
    stem = Path(file).stem
    for index, entry in enumerate(entries):
        where = f"stubs[{index}]"
        data = _mapping(entry, file, where, ("name", "match", "reply", "steps", "timing", "times"))
        name = data.get("name", f"{stem}#{index}")
        if not isinstance(name, str) or not name:
            raise StubError(file, f"{where}.name", "a non-empty string", name)
        if name in names:
            raise StubError(file, f"{where}.name", "a name no other stub of the file has", name)
        names.add(name)
        if ("reply" in data) == ("steps" in data):
            raise StubError(file, where, "exactly one of `reply` or `steps`", dict(data))
        times = data.get("times")
        check_times(times, file, f"{where}.times")
        match, timing = _match(data.get("match"), file, f"{where}.match"), _timing(data.get("timing"), file,
                                                                                    f"{where}.timing")
        steps = [data["reply"]] if "reply" in data else data["steps"]
        if not isinstance(steps, list) or not steps:
            raise StubError(file, f"{where}.steps", "a non-empty list of replies", steps)
        chain = Chain(match, timing)
        for number, step in enumerate(steps):
            chain.add_step(parse_reply(step, file, f"{where}.steps[{number}]" if "steps" in data else f"{where}.reply"),
                        "step")
        for number, stub in enumerate(chain):
            stub.name = name if len(steps) == 1 else f"{name} step {number + 1}"
            stub.times, stub.source = times, file
            stubs.append(stub)
    return stubs


def load_stubs(source: str | os.PathLike[str]) -> list[Stub]:
    """The stubs of a file, or of every ``*.yaml`` / ``*.yml`` file under a directory (in name order).

    Raises:
        StubError: a file is missing, larger than :data:`MAX_STUB_FILE`, not YAML, or invalid.
    """
    from ..cassette.read import read_yaml

    path = Path(source)
    if path.is_dir():
        files = sorted(p for pattern in ("*.yaml", "*.yml") for p in path.rglob(pattern) if p.is_file())
        return [stub for file in files for stub in load_stubs(file)]
    try:
        doc = read_yaml(path, str(path), limit=MAX_STUB_FILE, error=StubError)
    except FileNotFoundError:
        raise StubError(str(path), "", "an existing stub file or directory", None) from None
    return parse_stubs(doc, str(path))
