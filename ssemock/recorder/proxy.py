"""The recording reverse proxy: aiohttp handler, upstream forwarding, tee to the spool.

``GET /_ssemock/health`` is answered by the recorder itself; no ``/_ssemock/`` path
is ever forwarded or recorded, in any letter case (any other one is a 404 ``ssemock_admin_path``).

For each request: pick the cassette (``X-SSEMock-Cassette`` header, else the
recorder's default cassette, else the request fingerprint), replay a matching
interaction when the record mode allows it, else forward the request upstream
and stream the answer back: **one client write per upstream read**, awaited
(back-pressure, no buffering), each read kept as a chunk with its time in seconds
since the request was sent upstream. How the upstream body ended is kept:

* ``clean``: the body was complete;
* ``cut``: the connection closed before the body was complete (the client's
  connection is then closed without the chunked terminator too);
* ``reset``: the upstream reset the connection (the client gets a TCP RST);
* ``timeout``: no byte for ``read_timeout`` seconds, or the recorder was stopped
  while the stream ran (the client's connection is closed);
* ``client_gone``: the client disconnected first (the upstream request is dropped).

Compression: by default the request goes upstream with ``Accept-Encoding: identity``,
so cassettes hold readable text, can be scanned for secrets and keep the
provider's own chunk timing (a compressor's flushes would blur it). With
``keep_encoding=True`` the client's ``Accept-Encoding`` is forwarded and the
encoded wire bytes are recorded (``Content-Encoding`` kept; replay sends them as
they were); the ``Accept-Encoding`` forwarded keeps only the codings the recorder decodes
(gzip, deflate, identity). An encoded body is scanned decoded by :mod:`ssemock.coding`
(every gzip member, zlib or raw deflate, stacked codings) and as its wire bytes; if either
holds a secret the interaction is stored decoded and scrubbed instead. A body that does not
decode (an unknown coding such as ``br``, corrupt data, bytes after the last member) is not
recorded: the interaction is stored without its body and without ``Content-Encoding``, and its
progress line and cassette entry say ``response body dropped: ...`` (the client still gets every
byte as it came). A compressed request body
is decoded by aiohttp; it is forwarded and recorded decoded, without its
``Content-Encoding`` (400 ``ssemock_bad_request_body`` if it does not decode).
"""

from __future__ import annotations

import asyncio
import io
import posixpath
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from ..body_paths import BodyPath, compile_paths, without
from ..cassette import Chunk, End, Request, Response, body_digest, reason_phrase
from ..cassette.model import parse_json
from ..coding import CODINGS
from ..edge import refuse
from ..errors import CassetteError, JSONTooDeepError, NoMatchError, RecorderConfigError, RecorderError, SSEMockError
from ..intake import body_was_decoded, check_json, read_body
from ..journal import JournalEntry
from ..limits import MAX_HELD_BODY, show_size
from ..matching import find_interaction
from ..plan import Plan
from ..redact import RedactedRequest, Report
from ..refusals import (
    AdminPathError,
    BadCassetteError,
    BadRequestBodyError,
    BodyNotRecordedError,
    BodyTooLargeError,
    NotRecordedError,
    UnreadableBodyError,
    UnsupportedEncodingError,
    UpstreamError,
)
from ..scanner.fields import json_bytes
from ..send import send_plan
from .modes import RecordMode
from .progress import ProgressRow
from .relay import CASSETTE_HEADER, HOP_BY_HOP, Hold, client_response, finish_client, relay
from .shaping import choose_scenario, send_shaped, shape
from .spool import Entry, Spool
from .state import STATE, RecorderState
from .store import CassetteStore, cassette_name_for, check_cassette_name
from .tee import EventCounter, Tee

if TYPE_CHECKING:
    from ..scenario import Scenario

__all__ = ["ADMIN_PREFIX", "CASSETTE_HEADER", "WRITE_BEFORE_END_MAX", "handle", "health"]

WRITE_BEFORE_END_MAX = 1 << 20
"""Bytes of response body up to which an interaction is on disk before its client gets the
last byte; a larger one is written right after (5-30 MB/s of YAML on a 2-core machine)."""
ADMIN_PREFIX = "/_ssemock/"
_BODY_OPTION = "Recorder(limits=Limits(max_request_body=BYTES)) or ssemock record --max-request-body BYTES"
_DEPTH_OPTION = "Recorder(limits=Limits(max_json_depth=N)) or ssemock record --max-json-depth N"


async def handle(request: web.Request) -> web.StreamResponse:
    """Replay or forward-and-record one request (see the module docstring)."""
    st = request.app[STATE]
    options = st.options
    loop = asyncio.get_running_loop()
    arrived = loop.time()
    info = ProgressRow(request.method, options.filter.name(request.path))
    if _admin(request.path):
        return _refuse(st, replace(info, path=_shown_path(st, request)), AdminPathError())
    try:
        body = await read_body(request, options.limits.max_request_body, _BODY_OPTION)
        received = Request(request.method, request.path, [(str(k), v) for k, v in request.query.items()],
                           _client_headers(request), body)
        await check_json(received, options.limits.max_json_depth, _DEPTH_OPTION)
    except UnreadableBodyError as exc:  # e.g. a Content-Encoding: gzip body that is not gzip
        return _refuse(st, replace(info, path=_shown_path(st, request)), BadRequestBodyError(exc.reason))
    except (BodyTooLargeError, JSONTooDeepError, UnsupportedEncodingError) as exc:  # never forwarded nor recorded
        return _refuse(st, replace(info, path=_shown_path(st, request)), exc)
    # What may be written down, and the credentials sent: also kept out of the cassette's file name.
    headers = _upstream_headers(request, st)
    redacted = await asyncio.to_thread(_redact, st, received, headers)
    info.path = options.filter.name(redacted.path)
    named = request.headers.get(CASSETTE_HEADER) or options.cassette
    try:
        # The body as the cassette holds it (kept by digest: the bytes that digest is of).
        scrubbed = received.body if redacted.body is None else redacted.body
        fingerprint = Request(received.method, redacted.path, redacted.query, [], scrubbed)
        name = (check_cassette_name(options.filter.name(named)) if named
                else cassette_name_for(fingerprint, options.filter))
        store = await st.store(name)
    except (RecorderConfigError, CassetteError) as exc:
        return _refuse(st, replace(info, cassette=named and options.filter.name(named)), BadCassetteError(exc))
    info.cassette = name
    scenario = choose_scenario(st, received, info)
    replayed = await _replay(request, st, store, received, info, arrived, scenario)
    if replayed is not None:
        return replayed
    if options.mode is RecordMode.NONE or (options.mode is RecordMode.ONCE and store.existed):
        return _refuse(st, info, NotRecordedError(options.mode.value, name, f"{request.method} {request.path}"))
    return await _forward(request, st, store, received, info, redacted, headers, scenario)


def _admin(path: str) -> bool:
    """``path`` is under ``/_ssemock/`` in any letter case, also written with ``//``, ``/./`` or ``/x/../``
    (``/_SSEMOCK/health``, ``//_ssemock/health``: never forwarded; a client library or the upstream would
    read them as the admin path)."""
    folded = posixpath.normpath("/" + path.lstrip("/")).lower()
    return folded[: len(ADMIN_PREFIX)] == ADMIN_PREFIX or folded == ADMIN_PREFIX.rstrip("/")


def _refuse(st: RecorderState, info: ProgressRow, error: SSEMockError, action: str = "refused") -> web.Response:
    """The answer refusing a request with ``error`` (:func:`~ssemock.edge.replies.refuse`), reported first."""
    st.report(replace(info, action=action, status=error.status))
    return refuse(error)


async def health(request: web.Request) -> web.Response:
    """``GET /_ssemock/health``: the recorder's own answer (never forwarded nor recorded)."""
    st = request.app[STATE]
    return web.json_response({"status": "ok", "record_mode": st.options.mode.value,
                              "target": st.options.shown_target, "cassettes": len(st.stores)})


async def _replay(
    request: web.Request, st: RecorderState, store: CassetteStore, received: Request,
    info: ProgressRow, arrived: float, scenario: Scenario | None,
) -> web.StreamResponse | None:
    if st.options.mode is RecordMode.ALL or not any(e.loaded for e in store.entries):
        return None
    if st.options.mode is RecordMode.ONCE and not store.existed:
        return None
    cassette, indexes = store.cassette()
    if st.options.mode is RecordMode.NEW_EPISODES:  # VCR: each recorded interaction is played once
        keep = [k for k, i in enumerate(indexes) if (store.name, i) not in store.played]
        cassette.interactions = [cassette.interactions[k] for k in keep]
        indexes = [indexes[k] for k in keep]
    try:
        match = find_interaction([cassette], received, st.options.match_on, played={}, ignore=st.options.ignore_body)
    except NoMatchError:
        return None
    index = indexes[match.index]
    store.played[(store.name, index)] = store.played.get((store.name, index), 0) + 1
    response = store.entries[index].interaction(with_chunks=True).response
    if response.body_not_recorded is not None:  # an empty answer would pretend to be the recorded one
        return _refuse(st, info, BodyNotRecordedError(store.name, index, response.body_not_recorded))
    # what send_plan notes of the replay (not journaled: the recorder's record is its progress row)
    entry = JournalEntry(seq=0, time=time.time(), method=received.method, path=info.path, query={}, headers={},
                         body=None, scenario=None, seed=0)
    listed = replace(info, action="replayed", status=response.status)
    plan = (Plan.of(response, timing_scale=st.options.replay_timing_scale) if scenario is None
            else await shape(st, response, received, scenario, listed))
    st.progress.begin(listed)  # listed from now on
    sent = await send_plan(request, plan, entry, arrived)
    if entry.sent is not None:
        listed.bytes, listed.chunks = entry.sent.bytes, entry.sent.chunks
    listed.end = entry.outcome
    st.progress.finish(listed)
    return sent


def _shown_path(st: RecorderState, request: web.Request) -> str:
    """The path of a request refused before it is read, as a progress line shows it: key shapes and
    the credentials its headers and query send replaced (as a recorded path would have them)."""
    query = [(str(k), v) for k, v in request.query.items()]
    redacted = st.options.filter.request(request.path, query, _client_headers(request), None, keep_body=False)
    return st.options.filter.name(redacted.path)


def _client_headers(request: web.Request) -> list[tuple[str, str]]:
    """The request headers, without ``Content-Encoding`` when the body was read decoded (by aiohttp's parser or
    :func:`~ssemock.intake.read_body`): the decoded body is what is forwarded and recorded."""
    decoded = body_was_decoded(request.headers)
    return [(str(k), v) for k, v in request.headers.items() if not (decoded and k.lower() == "content-encoding")]


def _decodable_accept(value: str) -> str:
    """An ``Accept-Encoding`` value with only the codings :mod:`ssemock.coding` decodes (``identity`` if none)."""
    kept = [item.strip() for item in value.split(",") if item.split(";")[0].strip().lower() in CODINGS]
    return ", ".join(kept) or "identity"


def _upstream_headers(request: web.Request, st: RecorderState) -> list[tuple[str, str]]:
    headers = [(k, v) for k, v in _client_headers(request) if k.lower() not in HOP_BY_HOP]
    if not st.options.keep_encoding:
        headers = [(k, v) for k, v in headers if k.lower() != "accept-encoding"] + [("Accept-Encoding", "identity")]
    else:  # only codings the scan can read: a body it cannot decode is not recorded
        headers = [(k, _decodable_accept(v) if k.lower() == "accept-encoding" else v) for k, v in headers]
    if st.options.credentials and not any(k.lower() == "authorization" for k, _ in headers):
        headers.append(("Authorization", st.options.credentials))  # user info of the target URL
    return headers


async def _forward(
    request: web.Request, st: RecorderState, store: CassetteStore, received: Request, info: ProgressRow,
    redacted: RedactedRequest, headers: list[tuple[str, str]], scenario: Scenario | None,
) -> web.StreamResponse:
    loop = asyncio.get_running_loop()
    body = received.body or b""
    # aiohttp sends a file-like body in pieces (a large bytes body would block the loop).
    data = None if not body else io.BytesIO(body) if len(body) > 1 << 16 else body
    t0 = loop.time()
    try:
        upstream = await st.session.request(
            request.method, st.options.base_url + request.raw_path, headers=headers, data=data,
            allow_redirects=False, skip_auto_headers=("User-Agent", "Content-Type", "Accept"),
        )
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        reason = str(exc) or type(exc).__name__
        return _refuse(st, replace(info, end=type(exc).__name__),
                       UpstreamError(f"upstream {st.options.base_url} failed: {reason}"), "failed")
    if upstream.status < 200:  # e.g. 101 Switching Protocols: an interim answer, never a final one to replay
        upstream.close()
        return _refuse(st, replace(info, end=f"interim status {upstream.status}"), UpstreamError(
            f"upstream {st.options.base_url} answered with the interim status {upstream.status} (1xx) as its final "
            "answer: not forwarded, not recorded"), "failed")
    async with upstream:
        return await _stream(request, st, store, received, redacted, upstream, info, t0, scenario)


async def _stream(
    request: web.Request, st: RecorderState, store: CassetteStore, received: Request,
    redacted: RedactedRequest, upstream: aiohttp.ClientResponse, info: ProgressRow, t0: float,
    scenario: Scenario | None,
) -> web.StreamResponse:
    """Relay the upstream answer (held back whole when it is to be shaped by ``scenario``), record it, and end
    the client's answer: as the upstream's ended, or the held answer sent under ``scenario``."""
    loop = asyncio.get_running_loop()
    start = loop.time() - t0
    raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in upstream.raw_headers]
    response, no_body = client_response(request, upstream, raw_headers)
    tee = Tee(st, upstream.headers.get("Content-Type", ""), upstream.headers.get("Content-Encoding", ""),
              redacted.credentials)
    hold = None if scenario is None else Hold(MAX_HELD_BODY)
    how, held, cancelled = await relay(request, response, upstream, tee, t0, no_body, hold)
    end = loop.time() - t0
    tee.complete = how == "clean"
    report = redacted.report
    resp_headers = st.options.filter.response_headers_scrubbed(raw_headers, redacted.credentials, report)
    host = upstream.request_info.headers.get("Host", "")
    recorded = Response(upstream.status, reason_phrase(upstream.reason), resp_headers, [], round(start, 6),
                        End(round(end, 6), how))
    info = replace(info, action="recorded", status=upstream.status, bytes=tee.size, chunks=tee.count, events=None,
                   ttfb=tee.first, duration=end, end=how, filtered=report.lines())
    recording = _Recording(tee, _recorded_request(received, redacted, host), recorded, report)
    plan = None
    if hold is not None and scenario is not None:
        if hold.released:
            info.unshaped = f"the answer is over {show_size(hold.limit)}, the most held back to shape"
        else:  # the upstream's answer as it came (not scrubbed: the client gets the provider's bytes)
            shown = Response(upstream.status, upstream.reason, [(k, v) for k, v in raw_headers
                                                                 if k.lower() not in HOP_BY_HOP],
                             [Chunk(t, data) for t, data in hold.chunks], round(start, 6), End(round(end, 6), how))
            plan = await shape(st, shown, received, scenario, info)
    if tee.size > WRITE_BEFORE_END_MAX and cancelled is None and plan is None:
        return await _finish_large(request, st, store, response, recording, info, held)
    # The last reads are scrubbed before the client's last byte: the recording is complete by then.
    spool, entry, counter = await recording.entry(cancelled is None)
    info.bytes, info.chunks, info.filtered = spool.size, spool.count, entry.filtered
    if spool.size > WRITE_BEFORE_END_MAX:  # grew past it by a scrubbing: written right after the last byte
        store.submit(entry)
        counter = None
    else:
        try:  # on disk and listed before the client gets its last byte
            await store.append(entry)
        except RecorderError as exc:  # kept for another try at stop, which reports it if it fails again
            info.error = str(exc)
        except asyncio.CancelledError as exc:  # stopping: the write goes on, stop() waits for it
            cancelled = exc
    info.events = counter.events if counter else None
    st.report(info)
    if cancelled is not None:
        raise cancelled
    if plan is not None:
        return await send_shaped(request, plan, info.path, t0)
    await finish_client(request, response, how, held)
    return response


async def _finish_large(
    request: web.Request, st: RecorderState, store: CassetteStore, response: web.StreamResponse,
    recording: _Recording, info: ProgressRow, held: bytes,
) -> web.StreamResponse:
    """An answer over :data:`WRITE_BEFORE_END_MAX`: listed, then the client's last byte, then
    what is left of the scan and the write (which :meth:`RecorderState.flush` waits for)."""
    listed = st.progress.begin(info)  # bytes and chunks as received until scrubbed
    finished = asyncio.get_running_loop().create_future()
    st.finishing.add(finished)
    try:
        await finish_client(request, response, recording.response.end.how, held)
        try:
            spool, entry, _ = await recording.entry(True)
        except asyncio.CancelledError:  # stopping: scrubbed without the loop, then written at stop
            spool, entry, _ = await recording.entry(False)
            store.submit(entry)
            listed.bytes, listed.chunks, listed.filtered = spool.size, spool.count, entry.filtered
            st.progress.finish(listed)
            raise
        store.submit(entry)
        listed.bytes, listed.chunks, listed.filtered = spool.size, spool.count, entry.filtered
        st.progress.finish(listed)
    finally:
        st.finishing.discard(finished)
        finished.set_result(None)
    return response


class _Recording:
    """A recorded answer whose body is still with its :class:`~ssemock.recorder.tee.Tee`: turned into an
    :class:`Entry`."""

    def __init__(self, tee: Tee, request: Request, response: Response, report: Report) -> None:
        self.tee, self.request, self.response, self.report = tee, request, response, report

    async def entry(self, wait: bool) -> tuple[Spool, Entry, EventCounter | None]:
        """Scrub what is left (``wait``: in the scan thread, else blocking); the spool, the entry
        and the event counter fed as the file is written (None for an encoded or non-SSE body)."""
        headers = self.response.headers
        spool, rules, headers = await self.tee.close(headers) if wait else self.tee.close_now(headers)
        self.response.headers = headers
        self.report.add("response body", rules)
        if self.tee.dropped is not None:
            self.report.names.append(f"response body dropped: {self.tee.dropped}")
            self.response.body_not_recorded = self.tee.dropped
        if self.tee.stored_decoded is not None:
            self.report.names.append(f"response body {self.tee.stored_decoded}")
        counter = EventCounter() if self.tee.counts_events(headers) else None
        filtered = self.report.lines()
        entry = Entry(self.request, self.response, spool, filtered=filtered,
                      observe=counter.feed if counter else None)
        return spool, entry, counter


def _redact(st: RecorderState, received: Request, sent_headers: list[tuple[str, str]]) -> RedactedRequest:
    """What may be written down of a request, and the credentials it sends (blocking: CPU work); the
    body fields the recorder drops (``drop_body``) are deleted from a JSON body kept whole."""
    body = received.body or b""
    keep = st.options.max_body_size is None or len(body) <= st.options.max_body_size
    redacted = st.options.filter.request(received.path, received.query, sent_headers, body, keep_body=keep)
    if st.options.drop_body and redacted.body:
        redacted.body = _dropped(redacted.body, compile_paths(st.options.drop_body), redacted.report)
    return redacted


def _dropped(body: bytes, paths: tuple[BodyPath, ...], report: Report) -> bytes:
    """``body`` without the fields ``paths`` name when it is JSON (else as it is); each path dropped is
    reported (``body metadata.trace_id dropped``, on the progress line)."""
    value = parse_json(body)
    if value is None:
        return body
    kept = without(value, paths)
    if kept is value:
        return body
    report.names += [f"body {p.text} dropped" for p in paths if without(value, (p,)) is not value]
    return json_bytes(kept)


def _recorded_request(received: Request, redacted: RedactedRequest, host: str) -> Request:
    headers = [(k, _as_written(v)) for k, v in redacted.headers]
    req = Request(received.method, redacted.path, redacted.query, [("Host", host), *headers])
    body = received.body or b""
    if redacted.body is None and body:
        req.body_sha256, req.body_size = body_digest(body), len(body)
    elif body:
        req.body = redacted.body
    return req


def _as_written(value: str) -> str:
    """A request header value as a cassette can hold it: one with bytes that are not UTF-8
    (which aiohttp reads as lone surrogates, ``surrogateescape``) is read as Latin-1, one
    character per byte, as response header values are; no byte is lost."""
    if value.isascii() or not _SURROGATE.search(value):
        return value
    try:
        return value.encode("utf-8", "surrogateescape").decode("latin-1")
    except UnicodeEncodeError:  # not from a byte (never from aiohttp): written escaped
        return value.encode("utf-8", "backslashreplace").decode("latin-1")


_SURROGATE = re.compile("[\ud800-\udfff]")
