"""Import HAR 1.2 files: browser devtools, Playwright ``recordHar``, Charles, Proxyman, mitmproxy.

HAR is JSON; no HAR reader on PyPI adds what this needs (base64 bodies, bounds, errors naming
the entry), so the file is read with :mod:`json`, one entry at a time (:class:`.jsonwalk.JSONWalk`:
past ``--max-entries`` the rest is not parsed), after its first bytes are checked (a JSON object
starts with ``{``), and this subset of HAR 1.2 is used:

=======================================  ===================================================
HAR field                                becomes
=======================================  ===================================================
``log.entries[i].request.method, url``   the request (http and https URLs; others skipped)
``request.headers[{name, value}]``       request headers (HTTP/2 pseudo-headers dropped)
``request.postData.text`` / ``params``   the request body (``encoding: base64`` accepted)
``response.status, statusText``          status and reason (status 0, no answer: skipped)
``response._error`` / ``_failureText``   the answer failed after its head (``net::ERR_ABORTED``):
                                         it ends ``cut`` where the tool stopped reading
``response.headers``                     response headers, less ``Content-Encoding`` and
                                         ``Content-Length``: HAR keeps bodies decoded
``response.content.text`` (+ base64)     the body, cut into one chunk per SSE block
``timings.send, wait, receive`` (ms)     first byte at send + wait, last at + receive;
                                         ``-1`` (unknown) counts as 0, none at all: untimed;
                                         a total over 86,400,000 ms is an error
``startedDateTime``                      the earliest is the cassette's ``recorded_at``
=======================================  ===================================================

Ignored: ``cookies`` lists (never kept; the ``Cookie`` and ``Set-Cookie`` headers are secret
names), ``queryString`` (the URL holds it), ``cache``, sizes, ``pageref`` and ``_private``
fields. HAR keeps no chunk times: chunks between the first and last byte are placed by
their byte offset (a steady rate), which the provenance says. Secrets are removed by the
recorder's rules, as for every importer (:mod:`ssemock.importers`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..cassette import Cassette, Chunk, End, Interaction
from ..cassette.files import HEAD, Start
from ..cassette.read import NO_CONTENT_STATUSES
from ..errors import Described, ImportFormatError, short_repr
from ..limits import MAX_CASSETTE_FILE, MAX_CASSETTE_SECONDS, MAX_HAR_ENTRIES, MAX_INT_DIGITS, json_depth_exceeds
from . import NO_CONTENT_NOTE, request_from_url, untimed_response
from .jsonwalk import JSONWalk
from .raw import read_bytes

__all__ = ["import_har"]

_DEPTH = 32  # HAR nests 5 levels; a deeper file is not HAR


def import_har(
    path: str | Path,
    *,
    name: str | None = None,
    provenance: dict[str, Any] | None = None,
    streams_only: bool = False,
    max_entries: int = MAX_HAR_ENTRIES,
    max_size: int = MAX_CASSETTE_FILE,
) -> Cassette:
    """Convert one HAR file into a cassette, one interaction per entry, in file order.

    Args:
        path: the ``.har`` file.
        name: cassette name (default: the file name without ``.har``).
        provenance: extra provenance fields.
        streams_only: keep only the entries answered with ``text/event-stream``.
        max_entries: refuse a file with more entries than this (default 10,000).
        max_size: refuse a larger file, in bytes (default 512 MiB).

    Returns:
        A cassette; timed responses where the HAR has timings (seconds from the request).

    Raises:
        ImportFormatError: unreadable, too large, not JSON, not HAR (``log.entries``), too many
            entries, no entry kept (all without an answer, not http(s), or not streamed with
            ``streams_only``: no empty cassette is made), or an entry without a method, URL or
            status, or with a body that is not valid base64 (names the file and the entry's field, e.g.
            ``log.entries[3].response.content.text``).
    """
    p = Path(path)
    log, entries = _log(p, _file_text(p, max_size), max_entries)
    interactions, tally = [], _Tally()
    for i, entry in enumerate(entries):
        where = f"log.entries[{i}]"
        if not isinstance(entry, dict):
            raise ImportFormatError(p, where, "an object with 'request' and 'response'", entry)
        inter = _interaction(p, entry, where)
        if inter is None or (streams_only and not _streams(inter, entry)):
            tally.skipped += 1
            continue
        interactions.append(inter)
        tally.count(inter, entry, _started(p, entry, where))
    if not interactions:  # an empty cassette would replay nothing and hide why
        wanted = "an http(s) request with an answer" + (" in text/event-stream" if streams_only else "")
        raise ImportFormatError(p, "log.entries", f"at least one entry with {wanted}",
                                f"{len(entries)} entries, all skipped" if entries else "no entry")
    meta: dict[str, Any] = {"imported_from": p.name, "importer": "har"}
    creator = log.get("creator")
    if isinstance(creator, dict) and isinstance(creator.get("name"), str):
        meta["har_creator"] = f"{creator['name']} {creator.get('version', '')}".strip()
    meta.update(tally.notes(streams_only))
    meta.update(provenance or {})
    return Cassette(name or _stem(p), interactions, meta)


@dataclass
class _Tally:
    """What the entries imported from one HAR file lacked, for the provenance."""

    skipped: int = 0  # entries left out
    bodiless: int = 0  # without content.text
    dropped: int = 0  # a 204 or 304 answer's body dropped
    aborted: Counter[str] = field(default_factory=Counter)  # entries ended by a failure, by its text
    started: list[datetime] = field(default_factory=list)

    def count(self, inter: Interaction, entry: dict[str, Any], started: datetime | None) -> None:
        """Count the entry ``entry`` imported as ``inter``."""
        content = entry["response"].get("content")
        self.bodiless += not isinstance(content, dict) or content.get("text") is None
        self.dropped += inter.response.status in NO_CONTENT_STATUSES and isinstance(content, dict) and bool(
            content.get("text"))
        if (failure := _failure(entry["response"])) is not None:
            self.aborted[failure] += 1
        if started is not None:
            self.started.append(started)

    def notes(self, streams_only: bool) -> dict[str, str]:
        """The provenance fields: ``recorded_at``, ``timing`` and what was left out or cut."""
        meta = {}
        if self.started:
            meta["recorded_at"] = min(self.started).isoformat(timespec="seconds").replace("+00:00", "Z")
        meta["timing"] = ("first byte at timings.send + wait, last byte at + receive; chunks between "
                          "placed by byte offset (HAR keeps no chunk times)")
        if self.dropped:
            meta["bodies_dropped"] = NO_CONTENT_NOTE.format(f"{self.dropped} entries")
        if self.skipped:
            meta["entries_skipped"] = (f"{self.skipped} (no answer or only an interim 1xx one, not http(s)"
                                       + (", or not text/event-stream)" if streams_only else ")"))
        if self.bodiless:
            meta["bodies_missing"] = (f"{self.bodiless} entries: the tool kept no content.text "
                                      "(imported with empty bodies)")
        if self.aborted:
            failures = ", ".join(short_repr(text, 40) for text in sorted(self.aborted)[:3])
            meta["entries_aborted"] = (f"{self.aborted.total()} entries answered, then failed ({failures}"
                                       f"{', ...' if len(self.aborted) > 3 else ''}): imported as ended 'cut', "
                                       "what was received and no more")
        return meta


def _failure(resp: dict[str, Any]) -> str | None:
    """Why the tool says an answer failed: Chromium's ``_error``, Playwright's ``_failureText``
    (``net::ERR_ABORTED``), or None."""
    text = resp.get("_error") or resp.get("_failureText")
    return text if isinstance(text, str) and text else None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:  # int() would raise ValueError naming Python's setting
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits: at most {MAX_INT_DIGITS}")
    return int(text)


def _object_start(head: bytes) -> Described | None:
    """What is wrong with the first bytes of a HAR file: JSON (RFC 8259; in UTF-8, or UTF-16 or -32 as
    ``json.loads`` reads them) whose first character is ``{``."""
    text = head.decode(json.detect_encoding(head), "ignore").lstrip("\ufeff \t\r\n")  # "ignore": a cut character
    if text[:1] == "{" or (not text and len(head) == HEAD):  # only spaces so far: the parse decides
        return None
    shown = head.lstrip(b" \t\r\n")
    return Described(None, repr(shown[:16]) + ("..." if len(shown) > 16 else "") if shown else "an empty file")


_HAR_START = Start("a HAR file (JSON), whose first character is '{'", _object_start)


def _file_text(p: Path, max_size: int) -> str:
    """The text of HAR file ``p``, its first bytes checked before the rest is read (its bytes are
    dropped when this returns)."""
    raw = read_bytes(p, max_size, start=_HAR_START)
    try:
        return raw.decode(json.detect_encoding(raw), "surrogatepass")  # what json.loads does with bytes
    except UnicodeDecodeError as exc:
        raise ImportFormatError(p, "", "a HAR file (JSON)", str(exc)[:80]) from None


def _log(p: Path, text: str, max_entries: int) -> tuple[dict[str, Any], list[Any]]:
    """The HAR's ``log`` object and its ``entries`` list, checked: read one member at a time, the
    entries counted as they are read, so that a file with too many is refused before the rest is
    parsed (what else the file holds is read and dropped)."""
    try:
        walk = JSONWalk(text, json.JSONDecoder(parse_constant=_not_json, parse_int=_int))
        log: Any = None
        for key in walk.members("{"):
            if key != "log" or walk.next() != "{":
                walk.value()  # another member, or a log that is not an object: checked below
                continue
            log = {}
            for name in walk.members("{"):
                log[name] = _entries(p, walk, max_entries) if name == "entries" and walk.next() == "[" else walk.value()
        walk.end()
    except ImportFormatError:  # too many entries
        raise
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
        raise ImportFormatError(p, "", "a HAR file (JSON)", str(exc)[:80]) from None
    if json_depth_exceeds(log, _DEPTH - 1):
        raise ImportFormatError(p, "", f"a HAR file (JSON nested at most {_DEPTH} levels)", None)
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(log, dict) or not isinstance(entries, list):
        raise ImportFormatError(p, "log.entries", "a HAR file with a list of entries", None)
    return log, entries


def _entries(p: Path, walk: JSONWalk, max_entries: int) -> list[Any]:
    """The items of ``log.entries``, at most ``max_entries`` of them read."""
    entries: list[Any] = []
    for _ in walk.members("["):
        if len(entries) == max_entries:
            raise ImportFormatError(p, "log.entries", f"at most {max_entries} entries (--max-entries)",
                                    Described(None, "more (the rest not read)"))
        entries.append(walk.value())
    return entries


def _streams(inter: Interaction, entry: dict[str, Any]) -> bool:
    """Answered with ``text/event-stream`` (its header, or the HAR's ``content.mimeType``)."""
    content = entry["response"].get("content")
    mime = content.get("mimeType") if isinstance(content, dict) else None
    header = inter.response.header("content-type") or ""
    return "event-stream" in header.lower() or (isinstance(mime, str) and "event-stream" in mime.lower())


def _stem(p: Path) -> str:
    return p.name[: -len(".har")] if p.name.lower().endswith(".har") and len(p.name) > 4 else p.stem


def _interaction(p: Path, entry: dict[str, Any], where: str) -> Interaction | None:
    req, resp = entry.get("request"), entry.get("response")
    if not isinstance(req, dict):
        raise ImportFormatError(p, f"{where}.request", "an object", req)
    for key in ("method", "url"):
        if not isinstance(req.get(key), str) or not req[key]:
            raise ImportFormatError(p, f"{where}.request.{key}", "a string", req.get(key))
        _characters(p, req[key], f"{where}.request.{key}")
    if not req["url"].lower().startswith(("http://", "https://")):
        return None  # data:, blob:, ws:, chrome-extension: ...
    if not isinstance(resp, dict) or resp.get("status") in (0, -1, None):
        return None  # aborted or blocked: no answer was received
    status = resp["status"]
    if not isinstance(status, int) or isinstance(status, bool):
        raise ImportFormatError(p, f"{where}.response.status", "an HTTP status code", status)
    if 100 <= status <= 199:
        return None  # an interim answer (101 Switching Protocols: a WebSocket): no final answer to replay
    headers = [(k, v) for k, v in _headers(p, req.get("headers"), f"{where}.request.headers") if not k.startswith(":")]
    request, sent = request_from_url(req["method"], req["url"], headers, _post_data(p, req, where))
    content = resp.get("content")
    body = _text(p, content if isinstance(content, dict) else {}, f"{where}.response.content")
    resp_headers = [(k, v) for k, v in _headers(p, resp.get("headers"), f"{where}.response.headers")
                    if not k.startswith(":") and k.lower() not in ("content-encoding", "content-length")]
    reason = resp.get("statusText") if isinstance(resp.get("statusText"), str) and resp["statusText"] else None
    response = untimed_response(status, reason, resp_headers, body, sent)
    times = _times(p, entry.get("timings"), where)
    if times is not None:
        start, end = times
        total = max(1, sum(len(c.data) for c in response.chunks))
        offset = 0
        timed = []
        for chunk in response.chunks:
            timed.append(Chunk(round(start + (end - start) * offset / total, 6), chunk.data))
            offset += len(chunk.data)
        response.chunks, response.start, response.end, response.timed = timed, start, End(end, "clean"), True
    if _failure(resp) is not None:  # aborted after its head: the stream ended where the tool stopped reading
        response.end = End(response.end.t, "cut")
    return Interaction(request, response)


def _headers(p: Path, items: Any, where: str) -> list[tuple[str, str]]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ImportFormatError(p, where, "a list of {name, value} objects", items)
    out = []
    for j, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(
            item.get("value"), str
        ):
            raise ImportFormatError(p, f"{where}[{j}]", "an object with string 'name' and 'value'", item)
        for key in ("name", "value"):
            _characters(p, item[key], f"{where}[{j}].{key}")
        out.append((item["name"], item["value"]))
    return out


def _characters(p: Path, text: str, where: str) -> None:
    """Refuse text holding a lone surrogate (JSON may escape one, ``"\\ud800"``; UTF-8 cannot carry it)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ImportFormatError(p, where, "text without a lone surrogate (U+D800 to U+DFFF are not characters: "
                                "UTF-8 cannot carry them)",
                                Described(None, f"{text[exc.start]!r} at character {exc.start}")) from None


def _post_data(p: Path, req: dict[str, Any], where: str) -> bytes | None:
    post = req.get("postData")
    if not isinstance(post, dict):
        return None
    if isinstance(post.get("text"), str):
        return _text(p, post, f"{where}.request.postData")
    params = post.get("params")
    if isinstance(params, list) and params:  # a form given as fields only
        fields = [(str(x.get("name", "")), str(x.get("value", ""))) for x in params if isinstance(x, dict)]
        for j, (name, value) in enumerate(fields):
            _characters(p, name + value, f"{where}.request.postData.params[{j}]")
        return urlencode(fields).encode("ascii")
    return None


def _text(p: Path, content: dict[str, Any], where: str) -> bytes:
    """``content.text`` as bytes: base64-decoded when ``encoding`` says so, else UTF-8."""
    text = content.get("text")
    if text is None:
        return b""  # the tool did not keep the body
    if not isinstance(text, str):
        raise ImportFormatError(p, f"{where}.text", "a string", text)
    if str(content.get("encoding", "")).lower() == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ImportFormatError(p, f"{where}.text", "base64 text (encoding: base64)", text[:40]) from None
    return text.encode("utf-8", "surrogatepass")


_MAX_MS = MAX_CASSETTE_SECONDS * 1000


def _ms(p: Path, timings: dict[str, Any], key: str, where: str) -> float:
    """A HAR duration in milliseconds as seconds; -1 (not known, HAR 1.2) or none as 0."""
    value = timings.get(key)
    if value is None or value == -1:
        return 0.0
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= _MAX_MS:
        raise ImportFormatError(p, f"{where}.timings.{key}",
                                f"milliseconds from 0 to {_MAX_MS:,.0f}, or -1 (not known)", value)
    return float(value) / 1000


def _times(p: Path, timings: Any, where: str) -> tuple[float, float] | None:
    """(first byte, last byte) in seconds from the request, or None when the HAR keeps no timings."""
    if not isinstance(timings, dict):
        return None
    send, wait, receive = (_ms(p, timings, key, where) for key in ("send", "wait", "receive"))
    if not (send or wait or receive):
        return None
    start = round(send + wait, 6)
    end = round(start + receive, 6)
    if end > MAX_CASSETTE_SECONDS:
        raise ImportFormatError(p, f"{where}.timings", f"send + wait + receive at most {_MAX_MS:,.0f} ms",
                                round(end * 1000, 3))
    return start, end


def _started(p: Path, entry: dict[str, Any], where: str) -> datetime | None:
    value = entry.get("startedDateTime")
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        raise ImportFormatError(p, f"{where}.startedDateTime", "an ISO 8601 date and time", value)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)
