"""Reading the journal: one line per request, selecting requests, repeats, unmatched requests.

A journal entry (:class:`JournalEntry`, as JSON :meth:`JournalEntry.to_json`) is what the replay
server records for each request it received (see :mod:`ssemock.server`): ``seq``, ``method``, ``path``, ``query``,
``headers`` (secrets removed), ``body`` (parsed JSON or text), ``cassette``,
``interaction``, ``choice`` (why that interaction answered: the first matching one not yet played, a
repeat, or pinned by ``X-SSEMock-Interaction``; :mod:`ssemock.pinning`), ``stub`` (the stub that
answered, when one did), ``scenario`` (the names asked for,
or the server's default, as text: ``"crlf,split-bytes"`` as ``X-SSEMock-Scenario`` writes them), ``seed``,
``status``, ``outcome`` (``complete``,
``cut``, ``reset``, ``client_gone`` or ``refused``; ``complete`` too for a client that had the whole
answer and left before its recorded end), ``chunks_sent``,
``bytes_sent``, ``fault`` and ``draw`` (when a scenario applies by chance, :mod:`ssemock.chaos`: the scenario
the request drew, or null, and the number drawn, in [0, 1)), ``notes`` (scenario steps that had no effect,
and why; only when there is one) and, for a
refused request, ``error``. A body over the server's
``journal_body_limit`` (64 KiB by default) is ``{"sha256": HEX, "size": BYTES,
"prefix": TEXT}``; the server keeps the latest ``journal_capacity`` entries (1,000).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .edge.logs import ACCESS_NOTE, Outcome

if TYPE_CHECKING:
    from .resume import Resumed

__all__ = ["JournalEntry", "Sent", "describe_entry", "describe_journal", "repeats", "select", "send_journal",
           "unmatched", "unmatched_report"]


@dataclass(eq=False)
class Sent:
    """What the sending layer has written of an answer so far (:func:`ssemock.send.send_plan`)."""

    framing: str
    """``chunked``, ``length`` or ``close``; ``h2`` for DATA frames over HTTP/2 (``length`` stays ``length``)."""
    chunks: int = 0
    bytes: int = 0
    injected: list[str] = field(default_factory=list)
    """What the scenario's steps and the sending layer did, one line each."""


@dataclass(eq=False)
class JournalEntry:
    """One received request as the replay server records it, written by attribute as its answer
    goes; :meth:`to_json` gives the record that ``GET /_ssemock/requests`` answers (a JSON list of
    them), ``MockServer.requests`` and the fixture's ``requests`` (a list of those dicts). The
    fields are those of the module docstring; ``worker`` (the process id) is added with ``--workers``."""

    seq: int
    time: float
    """Seconds since the epoch when the request arrived."""
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    scenario: str | None
    seed: int
    cassette: str | None = None
    stub: str | None = None
    interaction: int | None = None
    choice: str | None = None
    """Why that interaction answered (:func:`ssemock.pinning.choice`); ``choice`` in :meth:`to_json`
    when an interaction answered."""
    status: int | None = None
    outcome: str | None = None
    sent: Sent | None = None
    """Set when the sending layer starts the answer."""
    resumed: Resumed | None = None
    error: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    """The scenario steps that had no effect a client can see, and why (``notes`` in :meth:`to_json`,
    when there is one)."""
    fault: str | None = None
    """The scenario the request drew by chance (:mod:`ssemock.chaos`), or None."""
    draw: float | None = None
    """The number drawn, in [0, 1); None when no scenario applied by chance (``fault`` and ``draw`` are in
    :meth:`to_json` only then)."""
    applied: tuple[str, ...] = ()
    """The names of the scenarios the answer was shaped by (those asked for with no ``probability``, and the
    fault drawn), counted by :mod:`ssemock.telemetry`."""

    @property
    def bytes_sent(self) -> int | None:
        """Body bytes written so far; None before the answer starts."""
        return None if self.sent is None else self.sent.bytes

    def start_sending(self, status: int, framing: str, injected: list[str]) -> Sent:
        """Note the answer's status and framing; returns the counts the sending layer goes on writing."""
        self.status = status
        self.sent = Sent(framing, injected=injected)
        return self.sent

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object (a new dict; its values are the entry's own, not copies)."""
        record: dict[str, Any] = {
            "seq": self.seq, "time": self.time, "method": self.method, "path": self.path, "query": self.query,
            "headers": self.headers, "body": self.body, "cassette": self.cassette, "stub": self.stub,
            "interaction": self.interaction, "scenario": self.scenario, "seed": self.seed, "status": self.status,
            "outcome": self.outcome,
        }
        if self.sent is not None:
            sent = self.sent
            record.update(framing=sent.framing, chunks_sent=sent.chunks, bytes_sent=sent.bytes, injected=sent.injected)
        if self.resumed is not None:
            record["resumed"] = self.resumed
        if self.error is not None:
            record["error"] = self.error
        if self.notes:
            record["notes"] = self.notes
        if self.choice is not None:
            record["choice"] = self.choice
        if self.draw is not None:
            record["fault"], record["draw"] = self.fault, self.draw
        return record


Entry = Mapping[str, Any]

# The criteria select() understands, each compared with the entry field of the same name.
CRITERIA = ("method", "path", "query", "body", "cassette", "interaction", "stub", "scenario", "status", "outcome")


def describe_entry(entry: Entry) -> str:
    """One line: ``#1 POST /v1/chat/completions -> 200 complete, 5 chunks, 1124 bytes (cassette #0)``; the
    stub, the scenario asked for and the fault drawn by chance (``fault http-429``) in the brackets."""
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
    if entry.get("fault"):  # drawn by chance (ssemock.chaos): it, not the scenario asked for, shaped the answer
        where.append(f"fault {entry['fault']}")
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
        request[ACCESS_NOTE] = Outcome("client_gone")
    return response
