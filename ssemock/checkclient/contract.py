"""The output contract of a client graded by ``ssemock check-client``: what it prints on stdout.

A client prints either

* **events** (an SSE-level reader: a library, a parser): one JSON object per line for each event it
  dispatched, ``{"type": "message", "data": "...", "id": "..."}``; ``data`` (a string) is required,
  ``type`` defaults to ``"message"`` and ``id`` (the last event ID at dispatch, as
  ``EventSource.lastEventId``) is compared only when printed; or
* **an answer** (an SDK-level client): one JSON object (any keys; e.g. ``text``, ``tool_calls``,
  ``finish_reason``, ``usage``) holding what it assembled, on one or several lines.

It exits with a non-zero status when it reports an error (an HTTP error, a cut stream, a timeout, an
incomplete answer). Empty output is zero events. Output past :data:`MAX_OUTPUT` bytes is an error of
the client's, graded as such.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MAX_OUTPUT", "Output", "PrintedEvent", "read_output"]

MAX_OUTPUT = 64 * 1024 * 1024
"""Bytes of a client's stdout read at most by default (``--max-output``)."""
Mode = Literal["events", "answer", "invalid"]


@dataclass(frozen=True)
class PrintedEvent:
    """One event a client printed: its type, data and (None when not printed) last event ID."""

    type: str
    data: str
    id: str | None = None


@dataclass(frozen=True)
class Output:
    """A client's stdout read by the contract.

    Attributes:
        mode: ``events``, ``answer`` or ``invalid`` (not the contract: ``problem`` says where).
        events: the events printed (mode ``events``).
        answer: the JSON object printed (mode ``answer``), else None.
        problem: why the output is ``invalid`` (``line 3: ...``), else None.
    """

    mode: Mode
    events: tuple[PrintedEvent, ...] = ()
    answer: Any = None
    problem: str | None = None


def read_output(stdout: bytes) -> Output:
    """``stdout`` as :class:`Output`; never raises (what breaks the contract is ``invalid``)."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Output("invalid", problem=f"stdout is not UTF-8 (byte {exc.start})")
    lines = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        return Output("events")
    first = _json(lines[0][1])
    if isinstance(first, dict) and isinstance(first.get("data"), str) and len(lines) >= 1 and _is_event(first):
        return _events(lines)
    try:
        whole = json.loads(text)
    except ValueError as exc:
        return Output("invalid", problem=f"neither JSON lines of events nor one JSON object: {exc}")
    if not isinstance(whole, dict):
        return Output("invalid", problem=f"one JSON value that is not an object ({type(whole).__name__})")
    return Output("answer", answer=whole)


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _is_event(value: dict[str, Any]) -> bool:
    return set(value) <= {"type", "data", "id"} and all(isinstance(value.get(k, ""), str) for k in ("type", "id"))


def _events(lines: list[tuple[int, str]]) -> Output:
    events = []
    for number, line in lines:
        value = _json(line)
        if not isinstance(value, dict) or not isinstance(value.get("data"), str) or not _is_event(value):
            return Output(
                "invalid",
                problem=f'line {number}: expected {{"type", "data", "id"}} with string values, got {line[:80]!r}',
            )
        events.append(PrintedEvent(value.get("type", "message"), value["data"], value.get("id")))
    return Output("events", tuple(events))
