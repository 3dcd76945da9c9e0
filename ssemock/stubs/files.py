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
``reasoning_tokens``), ``model`` and ``reasoning_field`` (``reasoning_content`` or ``reasoning``: the
``/v1/chat/completions`` delta field that streams ``reasoning``, as DeepSeek or OpenRouter do), or
``error`` (``status``, ``body``, ``message``).
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
from .checks import check_finish, check_json, check_status, check_text, check_times, checked_mapping, parse_usage
from .inline import Chain, tool_call
from .model import MAX_TOOL_CALLS, REASONING_FIELDS, TIMING_BOUNDS, Match, ProviderError, Reply, Stub, Timing

__all__ = ["ERROR_KEYS", "FORMAT_KEY", "MATCH_KEYS", "MAX_STUBS", "MAX_STUB_FILE", "REPLY_KEYS", "STUB_KEYS",
           "TOOL_CALL_KEYS", "holds_stub_files", "is_stub_file", "load_stubs", "parse_reply", "parse_stubs"]

FORMAT_KEY = "ssemock_stubs"
MAX_STUB_FILE = 1024 * 1024
MAX_STUBS = 10_000
STUB_KEYS = ("name", "match", "reply", "steps", "timing", "times")
"""The keys of a stub (exactly one of ``reply`` and ``steps``)."""
MATCH_KEYS = ("provider", "path", "model", "equals", "contains", "regex", "tool_result", "turn")
"""The conditions of ``match`` (see :class:`~ssemock.stubs.model.Match`)."""
REPLY_KEYS = ("text", "reasoning", "reasoning_field", "tool_calls", "refusal", "finish_reason", "usage", "model",
              "error")
"""The keys of a reply (with ``error``, the others are not read)."""
ERROR_KEYS = ("status", "body", "message")
"""The keys of a reply's ``error``."""
TOOL_CALL_KEYS = ("name", "arguments", "id")
"""The keys of a tool call."""


def parse_reply(value: Any, file: str, field: str) -> Reply:
    """A :class:`Reply` from its mapping. Raises :class:`StubError`."""
    data = checked_mapping(value, file, field, REPLY_KEYS)
    if "error" in data:
        error = checked_mapping(data["error"], file, f"{field}.error", ERROR_KEYS)
        status = check_status(error.get("status"), file, f"{field}.error.status")
        message = check_text(error.get("message"), file, f"{field}.error.message")
        check_json(error.get("body"), file, f"{field}.error.body")
        fault = ProviderError(status, error.get("body")) if message is None else \
            ProviderError(status, error.get("body"), message)
        return Reply(error=fault)
    calls = _or_empty(data.get("tool_calls"), [])
    if not isinstance(calls, list) or len(calls) > MAX_TOOL_CALLS:
        raise StubError(file, f"{field}.tool_calls", f"a list of at most {MAX_TOOL_CALLS} tool calls", calls)
    made = []
    for index, call in enumerate(calls):
        where = f"{field}.tool_calls[{index}]"
        entry = checked_mapping(call, file, where, TOOL_CALL_KEYS)
        if not isinstance(entry.get("arguments", {}), Mapping):
            raise StubError(file, f"{where}.arguments", "a mapping (the JSON object of arguments)", entry["arguments"])
        name: Any = entry.get("name")  # tool_call checks it
        if not isinstance(name, str) or not name:
            raise StubError(file, f"{where}.name", "a non-empty string", name)
        check_json(entry.get("arguments", {}), file, f"{where}.arguments")
        made.append(tool_call(name, entry.get("arguments"), id=check_text(entry.get("id"), file, f"{where}.id")))
    check_finish(data.get("finish_reason"), file, f"{field}.finish_reason")
    if data.get("reasoning_field") not in (None, *REASONING_FIELDS):
        raise StubError(file, f"{field}.reasoning_field", "reasoning_content | reasoning | null",
                        data["reasoning_field"])
    return Reply(
        text=check_text(data.get("text"), file, f"{field}.text"),
        reasoning=check_text(data.get("reasoning"), file, f"{field}.reasoning"), tool_calls=tuple(made),
        refusal=check_text(data.get("refusal"), file, f"{field}.refusal"), finish_reason=data.get("finish_reason"),
        usage=parse_usage(_or_empty(data.get("usage"), {}), file, f"{field}.usage"),
        model=check_text(data.get("model"), file, f"{field}.model"), reasoning_field=data.get("reasoning_field"),
    )


def _or_empty(value: Any, empty: Any) -> Any:
    """``value``, or ``empty`` when it is None (an empty YAML value): any other value is checked as written."""
    return empty if value is None else value


def _match(value: Any, file: str, field: str) -> Match:
    data = dict(checked_mapping(_or_empty(value, {}), file, field, MATCH_KEYS))
    try:
        return Match(**data)
    except StubError as exc:
        raise StubError(file, f"{field}.{exc.field.removeprefix('match.')}", exc.expected, exc.got) from None


def _timing(value: Any, file: str, field: str) -> Timing:
    data = checked_mapping(_or_empty(value, {}), file, field, tuple(TIMING_BOUNDS))
    try:
        return Timing(**data)
    except StubError as exc:
        raise StubError(file, f"{field}.{exc.field.removeprefix('timing.')}", exc.expected, exc.got) from None


def parse_stubs(doc: Any, file: str) -> list[Stub]:
    """The stubs of a parsed stub file, in order. Raises :class:`StubError` naming the field."""
    if not isinstance(doc, Mapping) or doc.get(FORMAT_KEY) != 1 or isinstance(doc.get(FORMAT_KEY), bool):
        raise StubError(file, FORMAT_KEY, "a stub file starting with `ssemock_stubs: 1`", None)
    checked_mapping(doc, file, "", (FORMAT_KEY, "stubs"))
    entries = _or_empty(doc.get("stubs"), [])
    if not isinstance(entries, list) or len(entries) > MAX_STUBS:
        raise StubError(file, "stubs", f"a list of at most {MAX_STUBS} stubs", entries)
    stubs: list[Stub] = []
    names: set[str] = set()
    stem = Path(file).stem
    for index, entry in enumerate(entries):
        where = f"stubs[{index}]"
        data = checked_mapping(entry, file, where, STUB_KEYS)
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


def is_stub_file(path: Path) -> bool:
    """True when the file starts with the stub format key (``ssemock_stubs: 1``), after any comment lines
    (such as the ``# yaml-language-server: $schema=...`` modeline) in its first 4 KiB."""
    with path.open("rb") as file:
        head = file.read(4096)
    for line in head.splitlines():
        text = line.strip()
        if text and not text.startswith(b"#"):
            return text.startswith(b"ssemock_stubs")
    return False


def holds_stub_files(directory: Path) -> bool:
    """True when a ``*.yaml`` / ``*.yml`` file under ``directory`` is a stub file (what ``serve --stubs`` reads)."""
    return any(p.is_file() and is_stub_file(p) for pattern in ("*.yaml", "*.yml") for p in directory.rglob(pattern))
