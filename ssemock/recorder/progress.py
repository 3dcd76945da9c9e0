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
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """Collects one dict per interaction and prints a line for each to ``stream`` (None: silent).

    Attributes:
        interactions: one dict per request handled, in completion order, with keys
            ``seq``, ``action``, ``cassette``, ``method``, ``path``, ``status``,
            ``bytes``, ``chunks``, ``events``, ``ttfb`` (seconds to the first body byte,
            or None), ``duration`` (seconds), ``end`` (how it ended) and ``filtered``
            (what was removed before writing: names only, never values); ``error``
            when a recorded interaction could not be written (tried again at stop).
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.interactions: list[dict[str, Any]] = []

    def report(self, info: dict[str, Any]) -> None:
        """Record one finished interaction and print its line."""
        self.finish(self.begin(info))

    def begin(self, info: dict[str, Any]) -> dict[str, Any]:
        """List an interaction now (no line yet); returns the listed dict for :meth:`finish`."""
        info = {**info, "seq": len(self.interactions) + 1}
        self.interactions.append(info)
        return info

    def finish(self, listed: dict[str, Any], **figures: Any) -> None:
        """Update a listed interaction with its final ``figures`` and print its line."""
        listed.update(figures)
        if self.stream is not None:
            print(self.line(listed), file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """Print one line that is not about an interaction (e.g. a file repaired)."""
        if self.stream is not None:
            print(f"ssemock record: {text}", file=self.stream, flush=True)

    @staticmethod
    def line(info: dict[str, Any]) -> str:
        """The one-line description of an interaction."""
        parts = [f"[{info['seq']}] {info['action']} {info['method']} {info['path']} -> {info['status']}"]
        if info["action"] in ("recorded", "replayed"):
            parts.append(f"{info['bytes']} bytes in {info['chunks']} chunks")
        if info["action"] == "recorded":
            if info["events"] is not None:
                parts.append(f"{info['events']} events")
            if info["ttfb"] is not None:
                parts.append(f"first byte {info['ttfb']:.3f} s")
            parts.append(f"{info['duration']:.3f} s")
        text = ", ".join(parts)
        if info.get("end"):
            text += f", {info['end']}"
        if info.get("cassette"):
            text += f"; cassette {info['cassette']}"
        if info.get("filtered"):
            text += f" (filtered: {', '.join(info['filtered'])})"
        if info.get("error"):
            text += f"; NOT WRITTEN: {info['error']}"
        return text

    def summary(self) -> str:
        """One line: counts by action, cassettes written, bytes recorded."""
        actions = Counter(i["action"] for i in self.interactions)
        recorded = [i for i in self.interactions if i["action"] == "recorded"]
        cassettes = sorted({i["cassette"] for i in recorded})
        counts = ", ".join(f"{n} {a}" for a, n in sorted(actions.items())) or "no requests"
        total = sum(i["bytes"] for i in recorded)
        return (f"ssemock record: {counts}; {total} bytes recorded into {len(cassettes)} cassette(s)"
                + (f": {', '.join(cassettes)}" if cassettes else ""))
