"""Progress output: one line per interaction as it ends, and a summary at exit.

A line reads::

    [3] recorded POST /v1/chat/completions -> 200, 12345 bytes in 87 chunks, 45 events,
        first byte 0.412 s, 4.810 s, clean; cassette post-v1-chat-completions-1a2b3c4d5e6f
        (filtered: request header authorization)

(one line on the terminal). ``action`` is ``recorded``, ``replayed`` (the record
mode allowed a replay), ``refused`` (no match and the mode forbids recording, or a
bad cassette name) or ``failed`` (the upstream could not be reached).

When an interaction is listed: a recorded one once it is in its cassette file, a refused
or failed one before its answer is sent, both before the client has its last byte; a
recorded one over 1 MiB before its client's last byte too, with ``bytes`` and ``chunks``
as received (they and ``filtered`` are updated, and its line printed, once its body is
scrubbed, right after); a replayed one when its answer starts (its ``bytes``, ``chunks``
and ``end`` are filled in, and its line printed, when the answer ends).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["Progress", "ProgressRow"]


_OUTCOMES = {"clean": "complete", "timeout": "cut"}
"""How a recorded answer's end reads as a journal outcome (the others are the same word)."""


@dataclass
class ProgressRow:
    """One request a recorder handled, as its progress line and :attr:`Recorder.interactions` show it.

    Attributes:
        method, path: the request's, the path with credentials and key shapes replaced.
        status: the answer's status (None until known).
        action: ``recorded``, ``replayed``, ``refused`` or ``failed``.
        cassette: the cassette it went to, or None (refused before one was chosen).
        bytes, chunks: body bytes and reads of the answer (a large recorded one: as received
            until it is scrubbed, then as written).
        events: SSE events in a recorded answer, or None (not counted).
        ttfb: seconds from the request sent upstream to the first body byte, or None.
        duration: seconds the recorded answer took, or None.
        end: how the answer ended (``clean``, ``cut``, ``reset``, ``timeout``, ``client_gone``; an
            exception name or ``interim status N`` when it failed), or None.
        filtered: what was removed before writing (names only, never values).
        error: why a recorded interaction could not be written (tried again at stop), or None.
        seq: its number, from 1, in listing order (0 until listed).
        scenario: the scenarios its client's answer was sent under (``record --scenario``, ``--chaos``;
            the cassette keeps the upstream's bytes), as ``a,b``; or None.
        fault, draw: the scenario drawn by chance (or None) and the number drawn, in [0, 1)
            (:mod:`ssemock.chaos`); ``draw`` None when nothing applied by chance.
        unshaped: why the scenario was not applied after all (the answer was over the bound), or None.
    """

    method: str
    path: str
    status: int | None = None
    action: str = ""
    cassette: str | None = None
    bytes: int = 0
    chunks: int = 0
    events: int | None = 0
    ttfb: float | None = None
    duration: float | None = None
    end: str | None = None
    filtered: list[str] = field(default_factory=list)
    error: str | None = None
    seq: int = 0
    scenario: str | None = None
    fault: str | None = None
    draw: float | None = None
    unshaped: str | None = None

    def to_journal(self) -> dict[str, Any]:
        """The row in the replay journal's shape (:meth:`ssemock.journal.JournalEntry.to_json`: ``seq``,
        ``method``, ``path``, ``cassette``, ``status``, ``outcome``, ``chunks_sent``, ``bytes_sent``...),
        with the recorder's own fields besides: ``action``, ``end``, ``events``, ``ttfb``, ``duration``,
        ``filtered`` and ``write_error`` (this row's :attr:`error`)."""
        end = self.end
        outcome = {"refused": "refused", "failed": "error"}.get(self.action) or (
            None if end is None else _OUTCOMES.get(end, end))
        return {
            "seq": self.seq, "method": self.method, "path": self.path, "query": {}, "headers": {}, "body": None,
            "cassette": self.cassette, "stub": None, "interaction": None, "scenario": self.scenario, "seed": 0,
            "status": self.status, "outcome": outcome, "chunks_sent": self.chunks, "bytes_sent": self.bytes,
            "action": self.action, "end": self.end, "events": self.events, "ttfb": self.ttfb,
            "duration": self.duration, "filtered": list(self.filtered), "write_error": self.error,
            **({} if self.draw is None else {"fault": self.fault, "draw": self.draw}),
        }

    def line(self) -> str:
        """The one-line description of the interaction."""
        parts = [f"[{self.seq}] {self.action} {self.method} {self.path} -> {self.status}"]
        if self.action in ("recorded", "replayed"):
            parts.append(f"{self.bytes} bytes in {self.chunks} chunks")
        if self.action == "recorded":
            if self.events is not None:
                parts.append(f"{self.events} events")
            if self.ttfb is not None:
                parts.append(f"first byte {self.ttfb:.3f} s")
            parts.append(f"{self.duration or 0.0:.3f} s")
        text = ", ".join(parts)
        if self.end:
            text += f", {self.end}"
        if self.cassette:
            text += f"; cassette {self.cassette}"
        if self.filtered:
            text += f" (filtered: {', '.join(self.filtered)})"
        if self.unshaped:
            text += f"; sent unshaped: {self.unshaped}"
        elif self.scenario:
            text += f"; sent under {self.scenario}"
        if self.draw is not None:
            text += f"; fault {self.fault or 'none'} (draw {self.draw:.6f})"
        if self.error:
            text += f"; NOT WRITTEN: {self.error}"
        return text


class Progress:
    """Collects one :class:`ProgressRow` per interaction and prints its line to ``stream`` (None: silent).

    Attributes:
        interactions: the rows of the requests handled, in listing order.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.interactions: list[ProgressRow] = []

    def report(self, row: ProgressRow) -> None:
        """List one finished interaction and print its line."""
        self.finish(self.begin(row))

    def begin(self, row: ProgressRow) -> ProgressRow:
        """List an interaction now (no line yet): ``row`` numbered, for :meth:`finish`."""
        row.seq = len(self.interactions) + 1
        self.interactions.append(row)
        return row

    def finish(self, listed: ProgressRow) -> None:
        """Print the line of a listed interaction whose final figures are in (set on ``listed``)."""
        if self.stream is not None:
            print(listed.line(), file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """Print one line that is not about an interaction (e.g. a file repaired)."""
        if self.stream is not None:
            print(f"ssemock record: {text}", file=self.stream, flush=True)

    def summary(self) -> str:
        """One line: counts by action, cassettes written, bytes recorded."""
        actions = Counter(i.action for i in self.interactions)
        recorded = [i for i in self.interactions if i.action == "recorded"]
        cassettes = sorted({i.cassette or "" for i in recorded})
        counts = ", ".join(f"{n} {a}" for a, n in sorted(actions.items())) or "no requests"
        total = sum(i.bytes for i in recorded)
        return (f"ssemock record: {counts}; {total} bytes recorded into {len(cassettes)} cassette(s)"
                + (f": {', '.join(cassettes)}" if cassettes else ""))
