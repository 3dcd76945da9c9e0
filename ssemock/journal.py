"""Reading the journal: one line per request, selecting requests, repeats, unmatched requests.

A journal entry is the dict the replay server records for each request it
received (see :mod:`ssemock.server`): ``seq``, ``method``, ``path``, ``query``,
``headers`` (secrets removed), ``body`` (parsed JSON or text), ``cassette``,
``interaction``, ``stub`` (the stub that answered, when one did), ``scenario``, ``seed``,
``status``, ``outcome`` (``complete``,
``cut``, ``reset``, ``client_gone`` or ``refused``; ``complete`` too for a client that had the whole
answer and left before its recorded end), ``chunks_sent``,
``bytes_sent`` and, for a refused request, ``error``. A body over the server's
``journal_body_limit`` (64 KiB by default) is ``{"sha256": HEX, "size": BYTES,
"prefix": TEXT}``; the server keeps the latest ``journal_capacity`` entries (1,000).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from aiohttp import web

from .edge.logs import ACCESS_NOTE

if TYPE_CHECKING:
    from .resume import Resumed

__all__ = ["JournalEntry", "describe_entry", "describe_journal", "repeats", "select", "send_journal", "unmatched",
           "unmatched_report"]


class JournalEntry(TypedDict, total=False):
    """One received request as the replay server records it; ``GET /_ssemock/requests`` answers a
    JSON list of them, ``MockServer.requests`` and the fixture's ``requests`` a list of these dicts.
    The fields are those of the module docstring; ``worker`` (the process id) with ``--workers``."""

    seq: int
    time: float
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    cassette: str | None
    stub: str | None
    interaction: int | None
    scenario: str | None
    seed: int
    status: int | None
    outcome: str | None
    chunks_sent: int
    bytes_sent: int
    framing: str
    injected: list[str]
    resumed: Resumed | None
    error: dict[str, Any]
    worker: int


Entry = Mapping[str, Any]

# The criteria select() understands, each compared with the entry field of the same name.
CRITERIA = ("method", "path", "query", "body", "cassette", "interaction", "stub", "scenario", "status", "outcome")


def describe_entry(entry: Entry) -> str:
    """One line: ``#1 POST /v1/chat/completions -> 200 complete, 5 chunks, 1124 bytes (cassette #0)``."""
    query = "&".join(f"{k}={v}" for k, v in (entry.get("query") or {}).items())
    line = f"#{entry.get('seq')} {entry.get('method')} {entry.get('path')}{'?' + query if query else ''}"
    line += f" -> {entry.get('status')} {entry.get('outcome') or 'in progress'}"
    if entry.get("outcome") == "refused":
        error = entry.get("error") or {}
        return f"{line} ({error.get('type', 'error')})"
    if "chunks_sent" in entry:
        line += f", {entry['chunks_sent']} chunks, {entry.get('bytes_sent', 0)} bytes"
    where = [f"{entry['cassette']} #{entry.get('interaction')}"] if entry.get("cassette") else []
    if entry.get("stub"):
        where.append(f"stub {entry['stub']}")
    if entry.get("scenario"):
        where.append(f"scenario {entry['scenario']}")
    return f"{line} ({', '.join(where)})" if where else line


def describe_journal(entries: Sequence[Entry]) -> str:
    """One line per entry, or ``(no requests)``."""
    return "\n".join(describe_entry(e) for e in entries) or "(no requests)"


def select(entries: Iterable[Entry], **where: Any) -> list[Entry]:
    """The entries whose fields equal every criterion given.

    Args:
        entries: journal entries.
        **where: field values among :data:`CRITERIA`. ``body`` given as a mapping
            matches a JSON body containing those keys with equal values (the
            request may carry more); any other value must equal the field.

    Raises:
        TypeError: a criterion that is not a journal field.
    """
    unknown = sorted(set(where) - set(CRITERIA))
    if unknown:
        raise TypeError(f"unknown journal field {unknown[0]!r}; valid: {', '.join(CRITERIA)}")
    return [e for e in entries if all(_matches(name, e.get(name), want) for name, want in where.items())]


def _matches(name: str, got: Any, want: Any) -> bool:
    if name == "body" and isinstance(want, Mapping):
        return isinstance(got, Mapping) and all(k in got and got[k] == v for k, v in want.items())
    if name == "method" and isinstance(want, str):
        return isinstance(got, str) and got.upper() == want.upper()
    return bool(got == want)


def repeats(entries: Sequence[Entry]) -> list[tuple[Entry, Entry]]:
    """Requests sent again: ``(first, again)`` pairs with equal method, path, query and body."""
    seen: dict[str, Entry] = {}
    found = []
    for entry in entries:
        key = json.dumps(
            [entry.get("method"), entry.get("path"), entry.get("query"), entry.get("body")],
            sort_keys=True, default=str,
        )
        if key in seen:
            found.append((seen[key], entry))
        else:
            seen[key] = entry
    return found


def unmatched(entries: Iterable[Entry]) -> list[Entry]:
    """The requests the server refused (no matching interaction, unknown cassette or scenario)."""
    return [e for e in entries if e.get("outcome") == "refused"]


def unmatched_report(entries: Sequence[Entry]) -> str | None:
    """What a test failure says about refused requests: each request, the closest
    recorded interactions and how they differ; None when every request was answered."""
    refused = unmatched(entries)
    if not refused:
        return None
    noun = "request was" if len(refused) == 1 else "requests were"
    lines = [f"ssemock: {len(refused)} {noun} refused by the fake provider:"]
    for entry in refused:
        error = entry.get("error") or {}
        lines.append(describe_entry(entry))
        message = str(error.get("message", ""))
        lines.append(f"  {message.split('; closest: ')[0] if error.get('closest') else message}")
        for near in error.get("closest") or []:
            lines.append(f"  closest: {near['cassette']} #{near['interaction']} {near['request']}")
            lines.extend(f"    {difference}" for difference in near.get("differences", []))
        if error.get("known"):
            lines.append(f"  known: {', '.join(error['known'])}")
    lines.append("all requests:")
    lines.extend(f"  {describe_entry(e)}" for e in entries)
    return "\n".join(lines)


async def send_journal(
    request: web.Request, entries: Iterable[Entry], headers: dict[str, str] | None = None,
) -> web.StreamResponse:
    """Answer ``GET /_ssemock/requests``: the entries as one JSON array, encoded and written
    entry by entry, so that a full journal (1,000 entries of up to 64 KiB bodies by default)
    never holds the event loop while it is encoded; ``headers`` are added to the answer's."""
    snapshot = list(entries)
    response = web.StreamResponse(headers={**(headers or {}), "Content-Type": "application/json; charset=utf-8"})
    await response.prepare(request)
    try:
        await response.write(b"[")
        since_yield = 0
        for index, entry in enumerate(snapshot):
            piece = (b", " if index else b"") + json.dumps(entry).encode()
            await response.write(piece)  # waits only when the socket's buffer is full
            since_yield += len(piece)
            if since_yield >= 64 * 1024:
                since_yield = 0
                await asyncio.sleep(0)  # let the loop answer other requests meanwhile
        await response.write(b"]")
        await response.write_eof()
    except ConnectionError:  # the client left before the end: its access line says so
        request[ACCESS_NOTE] = {"outcome": "client_gone"}
    return response
