"""Comparing two cassettes event by event and in time: ``ssemock diff A B``.

For reviewing a re-recording: A is the recording (the reference), B the new one. Interactions
are paired by position; for each pair the request (method, path, query, JSON body), the
response status, ``Content-Type`` and ending, the events and the timing are compared:

* events (decoded as a WHATWG parser would, after any gzip/deflate ``Content-Encoding``) are
  aligned with :class:`difflib.SequenceMatcher` on their type and data (JSON data compared as
  values: key order and spacing do not count), so an inserted or lost event is reported as
  such instead of shifting every later one (exactly so when the events differ from one
  another; among repeated identical events the alignment may pair them otherwise, and
  report a lost one as a few differences); an event changed in place is reported with the
  first JSON path that differs (``choices[0].delta.content: "Hello" != recorded "Hi"``: B's
  value, then A's). Comments (keep-alives) are not compared. JSON keys named in ``ignore``
  (``id``, ``created``, …) are left out everywhere in request bodies and event data;
* timing, when both responses kept it: the time to the headers, to the first event, to the
  end, and of each pair of aligned events, each against ``tolerance`` seconds (default
  :data:`TOLERANCE`, 0.5 s: a network's jitter is not a difference).

Headers other than ``Content-Type`` are not compared (dates, request ids and rate-limit counters
differ between any two recordings).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from .cassette import Cassette, Interaction, Response
from .errors import JSONTooDeepError
from .limits import NOT_JSON, load_json
from .matchers import json_difference
from .matching import describe
from .sse import Decoder, Event

__all__ = ["MAX_IGNORED", "TOLERANCE", "Difference", "TimedEvent", "diff_cassettes", "timed_events"]

TOLERANCE = 0.5
"""Seconds two times may differ by before it is a difference."""
MAX_IGNORED = 64
"""At most this many JSON keys ignored (``--ignore``)."""


@dataclass(frozen=True)
class Difference:
    """One difference: ``where`` (``"#0 POST /v1/chat/completions: event 3"``) and ``what``."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass(frozen=True)
class TimedEvent:
    """A dispatched event, the time (seconds from the request) and index of the chunk that completed it."""

    event: Event
    t: float
    chunk: int


def timed_events(response: Response) -> list[TimedEvent]:
    """The events of an event-stream ``response`` with their times (decoded from gzip/deflate first).

    Returns an empty list for other content types or a body that does not decode.
    """
    if "event-stream" not in (response.header("content-type") or "").lower():
        return []
    encoding = (response.header("content-encoding") or "identity").lower()
    chunks = [c.data for c in response.chunks]
    if encoding != "identity":
        from .importers import decoded_body  # here: "ssemock serve" (which imports this module) needs no importer

        plain = decoded_body(b"".join(chunks), encoding)
        if plain is None:
            return []
        chunks = [plain]  # decoded as one: the per-chunk times are lost, the last one kept
    decoder = Decoder()
    out: list[TimedEvent] = []
    first = 0 if encoding == "identity" else len(response.chunks) - 1
    for index, data in enumerate(chunks, start=first):
        t = response.chunks[index].t
        out.extend(TimedEvent(e, t, index) for e in decoder.feed(data) if isinstance(e, Event))
    return out


def diff_cassettes(
    a: Cassette, b: Cassette, *, tolerance: float = TOLERANCE, ignore: frozenset[str] = frozenset(),
    timing: bool = True,
) -> list[Difference]:
    """The differences between cassette ``a`` (the reference) and ``b``; empty when equal.

    Args:
        tolerance: seconds two times may differ by (default 0.5).
        ignore: JSON keys left out of bodies and event data, at any depth.
        timing: False compares no times.
    """
    found: list[Difference] = []
    if len(a.interactions) != len(b.interactions):
        found.append(Difference("cassette", f"{len(a.interactions)} interaction(s) in A, {len(b.interactions)} in B"))
    for index, (x, y) in enumerate(zip(a.interactions, b.interactions)):
        where = f"#{index} {describe(x.request)}"
        found += [Difference(where, w) for w in _interaction(x, y, ignore, tolerance if timing else None)]
    return found


def _interaction(x: Interaction, y: Interaction, ignore: frozenset[str], tolerance: float | None) -> list[str]:
    out: list[str] = []
    if describe(x.request) != describe(y.request):
        out.append(f"request {describe(y.request)} in B")
    body = json_difference(_without(y.request.json(), ignore), _without(x.request.json(), ignore), "")
    if body is None and (x.request.json() is None) and x.request.body != y.request.body:
        body = "not the same bytes"
    if body:
        out.append(f"request body: {body}")
    rx, ry = x.response, y.response
    for label, va, vb in (("status", rx.status, ry.status), ("content-type", rx.header("content-type"),
                          ry.header("content-type")), ("end", rx.end.how, ry.end.how)):
        if va != vb:
            out.append(f"{label}: {va} in A, {vb} in B")
    ea, eb = timed_events(rx), timed_events(ry)
    if not ea and not eb and rx.body != ry.body:
        va, vb = _json(rx.body.decode("utf-8", "surrogateescape")), _json(ry.body.decode("utf-8", "surrogateescape"))
        both = va is not NOT_JSON and vb is not NOT_JSON
        what = json_difference(_without(vb, ignore), _without(va, ignore), "") if both else "not the same bytes"
        out += [f"body: {what}"] if what else []
    out += _events(ea, eb, ignore, tolerance if rx.timed and ry.timed else None)
    if tolerance is not None and rx.timed and ry.timed:
        marks = [("headers", rx.start, ry.start), ("end", rx.end.t, ry.end.t)]
        if ea and eb:
            marks.insert(1, ("first event", ea[0].t, eb[0].t))
        out += [_late(label, ta, tb) for label, ta, tb in marks if abs(ta - tb) > tolerance]
    return out


def _events(ea: list[TimedEvent], eb: list[TimedEvent], ignore: frozenset[str], tolerance: float | None) -> list[str]:
    keys_a = [_key(e.event, ignore) for e in ea]
    keys_b = [_key(e.event, ignore) for e in eb]
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            if tolerance is not None:
                out += [_late(f"event {i}", ea[i].t, eb[j].t) for i, j in zip(range(i1, i2), range(j1, j2))
                        if abs(ea[i].t - eb[j].t) > tolerance]
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.append(f"event {i1 + k}: {_changed(ea[i1 + k].event, eb[j1 + k].event, ignore)}")
        out += [f"event {i}: only in A: {_show(ea[i].event)}" for i in range(i1 + pairs, i2)]
        out += [f"event {j} of B: only in B: {_show(eb[j].event)}" for j in range(j1 + pairs, j2)]
    return out


def _late(label: str, ta: float, tb: float) -> str:
    return f"{label} at {ta:.3f} s in A, {tb:.3f} s in B ({tb - ta:+.3f} s)"


def _key(event: Event, ignore: frozenset[str]) -> tuple[str, str]:
    value = _json(event.data)
    data = event.data if value is NOT_JSON else json.dumps(_without(value, ignore), sort_keys=True)
    return event.type, data


def _changed(ea: Event, eb: Event, ignore: frozenset[str]) -> str:
    if ea.type != eb.type:
        return f"type {ea.type!r} in A, {eb.type!r} in B"
    va, vb = _json(ea.data), _json(eb.data)
    if va is not NOT_JSON and vb is not NOT_JSON:
        return json_difference(_without(vb, ignore), _without(va, ignore), "") or "the same JSON"
    return f"{_short(ea.data)} in A, {_short(eb.data)} in B"


def _show(event: Event) -> str:
    return f"{event.type} {_short(event.data)}"


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _json(text: str) -> Any:
    """``text`` as a JSON value, or :data:`NOT_JSON` (not JSON, or nested deeper than 128 levels)."""
    try:
        return load_json(text.encode("utf-8", "surrogateescape"))
    except JSONTooDeepError:
        return NOT_JSON


def _without(value: Any, ignore: frozenset[str]) -> Any:
    """``value`` with the keys in ``ignore`` removed at any depth."""
    if not ignore:
        return value
    if isinstance(value, dict):
        return {k: _without(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_without(v, ignore) for v in value]
    return value
