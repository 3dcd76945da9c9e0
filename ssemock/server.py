"""The replay server: aiohttp app factory, the replay handler over the pipeline's stages
(:mod:`ssemock.receive` → :mod:`ssemock.choose` → :mod:`ssemock.shape` → :mod:`ssemock.send`), admin routes.

HTTP contract (design §4):

* any method and path not under ``/_ssemock/`` is matched against the cassettes
  and answered with the recorded response under the selected scenario;
* ``X-SSEMock-Cassette: NAME`` or the path prefix ``/_ssemock/c/NAME/`` selects a
  cassette; ``X-SSEMock-Scenario: A,B`` or ``/_ssemock/s/A,B/`` selects scenarios;
* admin: ``GET /_ssemock/health``, ``GET /_ssemock/cassettes``,
  ``GET /_ssemock/scenarios``, ``GET``/``DELETE /_ssemock/requests`` (the journal; GET filtered by
  :mod:`ssemock.journal_query`), ``GET /_ssemock/metrics`` (:mod:`ssemock.telemetry`);
* admin changes while running (:mod:`ssemock.change_routes`): ``GET``/``POST``/``DELETE /_ssemock/stubs``
  (list, add from a stub file's YAML or JSON, clear those added), ``GET``/``PUT``/``DELETE /_ssemock/scenario``
  (the default scenario: names or a scenario file's document);
* errors are JSON ``{"error": {"type": "ssemock_…", "message": …}}`` with the status and
  the fields of their class: :data:`ssemock.refusals.HTTP_ERRORS` lists them (404
  ``ssemock_no_match`` with ``closest``, 413 ``ssemock_body_too_large`` past ``max_request_body``,
  403 ``ssemock_cross_origin`` to a page that reached the server through DNS rebinding:
  :func:`ssemock.edge.cors.rebound_page`, …); :func:`ssemock.edge.replies.refuse` writes them;
* a ``GET`` with ``Last-Event-ID`` continues a stream after that event (:mod:`ssemock.resume`);
* over HTTP/2 (:mod:`ssemock.http2`) the same routes answer each stream; a scenario with steps of the HTTP/2
  layer answers an HTTP/1.x request with 400 ``ssemock_needs_http2``, one with steps of the TLS layer a request
  without TLS with 400 ``ssemock_needs_tls``.

The response is sent by :func:`ssemock.send.send_plan` (faithful replay, scenario plans).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from .cassette import Cassette
from .change_routes import add_change_routes
from .choose import Answer, choose
from .edge import ACCESS_NOTE, activity, error_response, refuse
from .edge.cors import allow_cors
from .edge.framing import H2_STREAM
from .edge.tls_writes import tls_transport
from .errors import SSEMockError
from .journal import send_journal
from .journal_query import JournalQuery, check_clear
from .matching import describe, prepare_indexes
from .offloop import OffLoop
from .plan import Plan
from .receive import Exchange, receive
from .refusals import NeedsHTTP2Error, NeedsTLSError, UnknownAdminPathError
from .send import TIMELINE, drop_default_content_type, send_plan
from .shape import shape
from .state import OFF_LOOP, STATE, ServerState
from .telemetry import METER, Meter, handle_metrics, note_headers
from .timeline import Timeline

__all__ = ["ServerState", "create_app", "error_response"]

REPLAY_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
# Every other /_ssemock path but the replay prefixes: /_ssemock itself, and below it. Routed apart from the
# replay paths (under /_ssemock, not /), so that resolving a replay path never tries this pattern.
ADMIN_ELSE = ("/_ssemock", r"/_ssemock/{tail:(?![cs]/).*}")


def create_app(state: ServerState) -> web.Application:
    """Build the aiohttp application serving ``state``.

    Replay routes let pages of loopback origins and of ``state.cors_origins`` read them (CORS, for
    browser ``EventSource`` and ``fetch``; :mod:`ssemock.edge.cors`); admin routes have no CORS and,
    once served by :func:`ssemock.edge.start_runner`, answer same-origin requests under a known
    ``Host`` only (:mod:`ssemock.edge.guard`).
    """
    app = web.Application(client_max_size=state.limits.max_request_body)
    app[STATE] = state
    app[OFF_LOOP] = OffLoop()
    app[TIMELINE] = Timeline()
    app[METER] = Meter()
    app.on_cleanup.append(_close_off_loop)
    app.router.add_get("/_ssemock/health", _health)
    app.router.add_get("/_ssemock/cassettes", _cassettes)
    app.router.add_get("/_ssemock/scenarios", _scenarios)
    app.router.add_get("/_ssemock/requests", _journal)
    app.router.add_delete("/_ssemock/requests", _clear_journal)
    app.router.add_get("/_ssemock/metrics", handle_metrics)
    add_change_routes(app)
    for admin in ADMIN_ELSE:
        app.router.add_route("*", admin, _unknown_admin_path)  # no CORS on any admin path
    every_path = _EveryPath()
    app.router.register_resource(every_path)
    # One route per method (not "*"), so that aiohttp-cors can answer OPTIONS preflights.
    replay = [every_path.add_route(method, _replay) for method in REPLAY_METHODS]
    allow_cors(app, replay, state.cors_origins)
    # Any other method that is an RFC 9110 token (PROPFIND, QUERY, …; the HTTP parser refuses
    # the rest) is replayed too, without CORS: a browser could not send it cross-origin anyway.
    every_path.add_route("*", _replay)
    app.on_response_prepare.append(drop_default_content_type)
    app.on_response_prepare.append(note_headers)
    app.on_startup.append(_prepare_indexes)
    return app


class _EveryPath(web.Resource):
    """The replay routes' resource: every path (what ``/{tail:.*}`` matched), found without a pattern to try
    nor a ``tail`` to decode for each request (the replay handler reads the raw path)."""

    @property
    def canonical(self) -> str:
        return "/"

    def _match(self, path: str) -> dict[str, str] | None:
        return _NO_PARTS if path.startswith("/") else None

    def raw_match(self, path: str) -> bool:
        return False  # routes are added to it directly, never found by their path

    def get_info(self) -> Any:  # aiohttp's _InfoDict
        return {"path": "/"}

    def url_for(self) -> Any:  # type: ignore[override]
        raise NotImplementedError("no URL names every path")

    def add_prefix(self, prefix: str) -> None:
        raise NotImplementedError("the replay routes serve an application of their own, never a sub-application")

    def __repr__(self) -> str:
        return "<EveryPath /{any path}>"


_NO_PARTS: dict[str, str] = {}  # the match info of every replay request: no part of the path is named


async def _prepare_indexes(app: web.Application) -> None:
    """Index the cassettes before the first request, not during it."""
    state = app[STATE]
    prepare_indexes(state.indexes, state.cassettes.values(), state.match_on, state.ignore_body)


async def _unknown_admin_path(request: web.Request) -> web.Response:
    """Any other path under ``/_ssemock/`` (but the ``c/`` and ``s/`` replay prefixes), any method: 404
    ``ssemock_unknown_admin_path``."""
    return refuse(UnknownAdminPathError(f"{request.method} {request.path}"))


async def _health(request: web.Request) -> web.Response:
    """``{"status": "ok", "cassettes": N, "scenarios": N, "in_flight": N, "tasks": N}``: the counts served,
    the requests being answered besides this one and the asyncio tasks alive."""
    state = request.app[STATE]
    return web.json_response(
        {"status": "ok", "cassettes": len(state.cassettes), "scenarios": len(state.scenarios),
         **activity(request.app)}
    )


async def _cassettes(request: web.Request) -> web.Response:
    """The cassettes served, as a JSON list: each one's ``name``, ``provenance`` and one summary per
    interaction (``request``, ``status``, ``content_type``, ``chunks``, ``bytes``, ``timing``, ``end``)."""
    state = request.app[STATE]
    return web.json_response([cassette_summary(c) for c in state.cassettes.values()])


def cassette_summary(cassette: Cassette) -> dict[str, Any]:
    """Name, provenance and one line per interaction, for the admin API and ``inspect``."""
    return {
        "name": cassette.name,
        "provenance": cassette.provenance,
        "interactions": [
            {
                "request": describe(i.request),
                "status": i.response.status,
                "content_type": i.response.header("content-type"),
                "chunks": len(i.response.chunks),
                "bytes": sum(len(c.data) for c in i.response.chunks),
                "timing": "recorded" if i.response.timed else "none",
                "end": i.response.end.how,
            }
            for i in cassette.interactions
        ],
    }


async def _scenarios(request: web.Request) -> web.Response:
    """The scenarios served, as a JSON list of ``{"name", "description"}``."""
    state = request.app[STATE]
    return web.json_response(
        [{"name": s.name, "description": s.description} for s in state.scenarios.values()]
    )


async def _journal(request: web.Request) -> web.StreamResponse:
    """The journal: one JSON object per request received, oldest first (what was asked, the interaction or
    stub that answered, the scenario, what was sent and injected). Filtered by ``path``, ``cassette``,
    ``outcome``, ``since`` (a ``seq``, exclusive) and ``limit`` (:mod:`ssemock.journal_query`); a bad
    parameter is ``400 ssemock_bad_query`` naming it."""
    try:
        query = JournalQuery.parse(request.query)
    except SSEMockError as exc:
        return refuse(exc)
    return await send_journal(request, query.apply(entry.to_json() for entry in request.app[STATE].journal))


async def _clear_journal(request: web.Request) -> web.Response:
    """Clear the journal, the play counts and the streams kept for ``Last-Event-ID``: ``{"cleared": N}``
    (the entries removed). Takes no parameters: one (``?outcome=cut``) is ``400 ssemock_bad_query``, and
    nothing is cleared."""
    try:
        check_clear(request.query)
    except SSEMockError as exc:
        return refuse(exc)
    state = request.app[STATE]
    count = len(state.journal)
    state.reset()
    return web.json_response({"cleared": count})


async def _replay(request: web.Request) -> web.StreamResponse:
    """Every other path, any method: the recorded (or stubbed) answer that matches the request, under its
    scenarios. ``X-SSEMock-Cassette: NAME`` or the prefix ``/_ssemock/c/NAME/`` picks the cassette;
    ``X-SSEMock-Scenario: A,B`` or ``/_ssemock/s/A,B/`` the scenarios; a ``GET`` with ``Last-Event-ID``
    continues a stream after that event. No match: 404 ``ssemock_no_match`` naming the closest interaction."""
    meter = request.app[METER]
    arrived = asyncio.get_running_loop().time()
    try:
        sending = await _answer(request)
        # The choosing's locals (the request's copy, its parsed body, the candidates) are gone by now,
        # not held for the whole stream: each live one is work for every garbage collection meanwhile.
        if isinstance(sending, web.StreamResponse):
            return sending
        meter.streams_open += 1
        try:
            return await sending
        finally:
            meter.streams_open -= 1
    finally:
        meter.ended(request, request.get(ACCESS_NOTE), arrived)


async def _answer(request: web.Request) -> web.StreamResponse | Coroutine[Any, Any, web.StreamResponse]:
    """The replay pipeline (design §2): receive → choose → shape, then the sending, not started yet;
    or the refusal, from whichever stage raised it."""
    state = request.app[STATE]
    try:
        exchange = await receive(request, state)
    except UnknownAdminPathError as exc:
        return refuse(exc)
    try:
        exchange.admit(state)
        answer = await choose(exchange, state)
        plan = await shape(exchange, answer, state)
        if plan.h2 is not None and H2_STREAM not in request:
            raise NeedsHTTP2Error(plan.h2.steps, f"HTTP/{request.version.major}.{request.version.minor}")
        if plan.tls is not None and request.transport is not None and tls_transport(request) is None:
            raise NeedsTLSError(plan.tls.steps)
    except SSEMockError as exc:
        return exchange.refuse(exc)
    return _send(exchange, answer, plan)


async def _send(exchange: Exchange, answer: Answer, plan: Plan) -> web.StreamResponse:
    """Send ``plan`` (:func:`~ssemock.send.send_plan`); a recorded answer that is not a reconnect is kept
    for ``Last-Event-ID`` reconnects, also when the client left (it may come back)."""
    request = exchange.request
    remember = answer.remember if exchange.route.last_event_id is None else None
    try:
        return await send_plan(request, plan, exchange.entry, exchange.arrived, own_cors=True)
    finally:
        if remember is not None:
            path, cassette, index = remember
            request.app[STATE].streams.register(plan, path, cassette, index, asyncio.get_running_loop().time(),
                                                recorded=exchange.scenario is None)


async def _close_off_loop(app: web.Application) -> None:
    app[OFF_LOOP].close()
