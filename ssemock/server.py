"""The replay server: aiohttp app factory, replay handler, admin routes, journal.

HTTP contract (design §4):

* any method and path not under ``/_ssemock/`` is matched against the cassettes
  and answered with the recorded response under the selected scenario;
* ``X-SSEMock-Cassette: NAME`` or the path prefix ``/_ssemock/c/NAME/`` selects a
  cassette; ``X-SSEMock-Scenario: A,B`` or ``/_ssemock/s/A,B/`` selects scenarios;
* admin: ``GET /_ssemock/health``, ``GET /_ssemock/cassettes``,
  ``GET /_ssemock/scenarios``, ``GET``/``DELETE /_ssemock/requests`` (the journal);
* errors are JSON ``{"error": {"type": "ssemock_…", "message": …}}``: 404
  ``ssemock_no_match`` (with ``closest``), 404 ``ssemock_unknown_cassette``,
  400 ``ssemock_unknown_scenario``, 400 ``ssemock_too_many_scenarios`` (more than
  :data:`~ssemock.limits.MAX_SCENARIOS`, 8, composed for one request), 413 ``ssemock_body_too_large`` (a body over
  ``max_request_body``), 400 ``ssemock_json_too_deep`` (JSON nested deeper than
  ``max_json_depth``), 400 ``ssemock_bad_request``, 404 ``ssemock_unknown_event_id`` (a
  ``Last-Event-ID`` that no stream sent), 500 ``ssemock_scenario_too_large`` (the scenario's
  steps would add more than ``max_scenario_growth`` bytes to the response; nothing is sent),
  403 ``ssemock_cross_origin`` (a web page that reached the server through DNS rebinding:
  :func:`ssemock.edge.cors.rebound_page`);
* a ``GET`` with ``Last-Event-ID`` continues a stream after that event (:mod:`ssemock.resume`).

The response is sent by :func:`ssemock.send.send_plan` (faithful replay, scenario plans).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from aiohttp import web

from .cassette import Cassette, Request
from .edge import ACCESS_NOTE, activity, error_response, stopping
from .edge.cors import allow_cors, cross_origin, rebound_page
from .errors import BodyTimeoutError, NoMatchError, ScenarioTooLargeError
from .intake import THREAD_PARSE, Refusal, check_json, journal_body, read_body
from .limits import (
    JOURNAL_BODY,
    JOURNAL_CAPACITY,
    MAX_JSON_DEPTH,
    MAX_REQUEST_BODY,
    MAX_SCENARIO_GROWTH,
    MAX_SCENARIOS,
)
from .matching import (
    DEFAULT_MATCH_ON,
    IndexCache,
    PlayCounts,
    describe,
    find_interaction,
    indexes_ready,
    key_request,
    prepare_indexes,
)
from .offloop import OffLoop
from .redact import SECRET_QUERY_PARAMS, SECRET_REQUEST_HEADERS, redact_pairs
from .resume import ResumeBook, requested_id, resume, unknown_id_message
from .scenario import Plan, Scenario
from .send import TIMELINE, drop_default_content_type, send_plan
from .stubs import StubBook
from .timeline import Timeline

if TYPE_CHECKING:
    from .journal import JournalEntry

__all__ = ["ServerState", "create_app", "error_response"]

_T = TypeVar("_T")
_PREFIX = re.compile(r"^/_ssemock/([cs])/([^/]+)(/.*)?$")
STATE: web.AppKey[ServerState] = web.AppKey("ssemock_state")
OFF_LOOP: web.AppKey[OffLoop] = web.AppKey("ssemock_off_loop", OffLoop)
REPLAY_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
_BODY_OPTION = "MockServer(max_request_body=BYTES) or ssemock serve --max-request-body BYTES"
# Every other /_ssemock path but the replay prefixes: /_ssemock itself, and below it. Routed apart from the
# replay paths (under /_ssemock, not /), so that resolving a replay path never tries this pattern.
ADMIN_ELSE = ("/_ssemock", r"/_ssemock/{tail:(?![cs]/).*}")
_DEPTH_OPTION = "MockServer(max_json_depth=N) or ssemock serve --max-json-depth N"
_GROWTH_OPTION = "MockServer(max_scenario_growth=BYTES) or ssemock serve --max-scenario-growth BYTES"


class ServerState:
    """Everything one replay server knows: cassettes, scenarios, options, journal.

    Attributes:
        cassettes: cassettes by name, in matching priority order.
        scenarios: scenarios by name.
        scenario: the default scenario names (comma-separated), or None.
        cassette: the default cassette name (used when a request names none), or None.
        match_on: matcher names (see :mod:`ssemock.matching`).
        strict: True: a cassette chosen by name (header, path prefix or :attr:`cassette`)
            is matched on every matcher of ``match_on``, the body included; False: the
            body only chooses among its interactions.
        timing_scale: multiplies recorded times; 0 = no delays.
        journal: one dict per request received, in order; a ring of ``journal_capacity``
            entries (default 1,000): the oldest is dropped first.
        journal_body_limit: bodies larger than this many bytes (default 64 KiB) are journaled as
            ``{"sha256": HEX, "size": BYTES, "prefix": TEXT}`` (the first 1 KiB, as text).
        max_request_body: larger request bodies are refused with 413 (bytes, default 32 MiB).
        max_json_depth: JSON bodies nested deeper are refused with 400 (default 128).
        max_scenario_growth: most bytes a request's scenario steps may add to its response body
            (default 256 MiB); past it the request is answered 500 ``ssemock_scenario_too_large``.
        received: requests journaled since the last reset (the ``seq`` of the latest).
        stubs: synthesized answers, consulted before the cassettes (see :mod:`ssemock.stubs`).
        streams: the streams sent with event ids, for ``Last-Event-ID`` reconnects (:mod:`ssemock.resume`).
        cors_origins: the origins whose pages may read replay answers besides the loopback ones
            (``*``: any; see :mod:`ssemock.edge.cors`), as :func:`~ssemock.edge.cors.origin_names` writes them.
    """

    def __init__(
        self,
        cassettes: dict[str, Cassette] | None = None,
        scenarios: dict[str, Scenario] | None = None,
        scenario: str | None = None,
        cassette: str | None = None,
        match_on: Sequence[str] = DEFAULT_MATCH_ON,
        strict: bool = False,
        timing_scale: float = 1.0,
        journal: deque[JournalEntry] | None = None,
        played: dict[tuple[str, int], int] | None = None,
        indexes: IndexCache | None = None,
        seed: int = 0,
        journal_body_limit: int = JOURNAL_BODY,
        max_request_body: int = MAX_REQUEST_BODY,
        max_json_depth: int = MAX_JSON_DEPTH,
        max_scenario_growth: int = MAX_SCENARIO_GROWTH,
        received: int = 0,
        stubs: StubBook | None = None,
        streams: ResumeBook | None = None,
        cors_origins: tuple[str, ...] = (),
    ) -> None:
        self.cassettes = {} if cassettes is None else cassettes
        self.scenarios = {} if scenarios is None else scenarios
        self.scenario = scenario
        self.cassette = cassette
        self.match_on = match_on
        self.strict = strict
        self.timing_scale = timing_scale
        self.journal = deque(maxlen=JOURNAL_CAPACITY) if journal is None else journal
        self.played = PlayCounts() if played is None else played
        self.indexes = IndexCache() if indexes is None else indexes
        self.seed = seed
        self.journal_body_limit = journal_body_limit
        self.max_request_body = max_request_body
        self.max_json_depth = max_json_depth
        self.max_scenario_growth = max_scenario_growth
        self.received = received
        self.stubs = StubBook() if stubs is None else stubs
        self.streams = ResumeBook() if streams is None else streams
        self.cors_origins = cors_origins

    def reset(self) -> None:
        """Clear the journal, the play counts and the streams kept for resuming."""
        self.journal.clear()
        self.played.clear()
        self.streams.clear()
        self.received = 0


def create_app(state: ServerState) -> web.Application:
    """Build the aiohttp application serving ``state``.

    Replay routes let pages of loopback origins and of ``state.cors_origins`` read them (CORS, for
    browser ``EventSource`` and ``fetch``; :mod:`ssemock.edge.cors`); admin routes have no CORS and,
    once served by :func:`ssemock.edge.start_runner`, answer same-origin requests under a known
    ``Host`` only (:mod:`ssemock.edge.guard`).
    """
    app = web.Application(client_max_size=state.max_request_body)
    app[STATE] = state
    app[OFF_LOOP] = OffLoop()
    app[TIMELINE] = Timeline()
    app.on_cleanup.append(_close_off_loop)
    app.router.add_get("/_ssemock/health", _health)
    app.router.add_get("/_ssemock/cassettes", _cassettes)
    app.router.add_get("/_ssemock/scenarios", _scenarios)
    app.router.add_get("/_ssemock/requests", _journal)
    app.router.add_delete("/_ssemock/requests", _clear_journal)
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
    prepare_indexes(state.indexes, state.cassettes.values(), state.match_on)


async def _unknown_admin_path(request: web.Request) -> web.Response:
    return error_response(404, "ssemock_unknown_admin_path", f"no admin endpoint {request.method} {request.path}")


async def _health(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return web.json_response(
        {"status": "ok", "cassettes": len(state.cassettes), "scenarios": len(state.scenarios),
         **activity(request.app)}
    )


async def _cassettes(request: web.Request) -> web.Response:
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
    state = request.app[STATE]
    return web.json_response(
        [{"name": s.name, "description": s.description} for s in state.scenarios.values()]
    )


async def _journal(request: web.Request) -> web.StreamResponse:
    from .journal import send_journal  # the admin API's reader: a server that is never asked imports none of it

    return await send_journal(request, request.app[STATE].journal)


async def _clear_journal(request: web.Request) -> web.Response:
    state = request.app[STATE]
    count = len(state.journal)
    state.reset()
    return web.json_response({"cleared": count})


def _split_prefixes(raw_path: str) -> tuple[str, str | None, str | None]:
    """Remove ``/_ssemock/c/NAME`` and ``/_ssemock/s/NAMES`` prefixes (any order).

    Works on the raw (still percent-encoded) path, so a cassette in a subdirectory is
    reachable as ``/_ssemock/c/openai%2Fchat/...``; returns the decoded provider path.
    """
    if not raw_path.startswith("/_ssemock/"):  # no prefix (the usual case): no pattern to try
        return unquote(raw_path), None, None
    cassette = scenario = None
    path = raw_path
    while (m := _PREFIX.match(path)) is not None:
        if m.group(1) == "c":
            cassette = unquote(m.group(2))
        else:
            scenario = unquote(m.group(2))
        path = m.group(3) or "/"
    return unquote(path), cassette, scenario


async def _replay(request: web.Request) -> web.StreamResponse:
    answer = await _answer(request)
    # The matching's locals (the request's copy, its parsed body, the candidates) are gone by now,
    # not held for the whole stream: each live one is work for every garbage collection meanwhile.
    return answer if isinstance(answer, web.StreamResponse) else await answer


async def _answer(request: web.Request) -> web.StreamResponse | Coroutine[Any, Any, web.StreamResponse]:
    """The answer to a replayed request: a refusal, or the sending of its plan, not started yet."""
    state = request.app[STATE]
    arrived = asyncio.get_running_loop().time()
    if state.timing_scale:
        # Requests that arrived together all note their arrival before any is answered: recorded
        # times count from it, and replaying one would otherwise delay the others' schedules.
        await asyncio.sleep(0)
    url, headers, method = request.rel_url, request.headers, request.method
    path, cassette_name, scenario_names = _split_prefixes(url.raw_path)
    if path.startswith("/_ssemock/"):
        return error_response(404, "ssemock_unknown_admin_path", f"no admin endpoint {request.path}")
    cassette_name = headers.get("X-SSEMock-Cassette", cassette_name)
    named = bool(cassette_name)  # a request naming its cassette is answered from it, never by a stub
    cassette_name = cassette_name or state.cassette
    scenario_names = headers.get("X-SSEMock-Scenario", scenario_names) or state.scenario
    try:
        body = await read_body(request, state.max_request_body, _BODY_OPTION)
    except web.HTTPException:
        raise  # aiohttp's own answers
    except BodyTimeoutError as exc:  # journaled as refused; the network edge answers the 408
        body = Refusal(408, "ssemock_body_timeout", f"{exc} (body_timeout, --body-timeout)", close=True)
    except Exception as exc:  # e.g. a body labelled gzip that is not gzip
        request.content.feed_eof()  # nothing more to drain after the answer
        body = Refusal(400, "ssemock_bad_request", f"cannot read the request body: {exc}", close=True)
    received = Request(
        method=method,
        path=path,
        # Secret query parameters are never recorded, so they are neither matched nor echoed.
        query=redact_pairs(request.query.items(), SECRET_QUERY_PARAMS) if url.raw_query_string else [],
        headers=list(headers.items()),
        body=body if isinstance(body, bytes) else None,
    )
    refusal = body if isinstance(body, Refusal) else await check_json(received, state.max_json_depth, _DEPTH_OPTION)
    journaled = None if refusal is not None else await journal_body(received, state.journal_body_limit)
    state.received += 1  # from here to the append, no await: entries stay in seq order
    entry: JournalEntry = {
        "seq": state.received,
        "time": time.time(),
        "method": method,
        "path": path,
        "query": dict(received.query) if received.query else {},
        "headers": dict(redact_pairs(received.headers, SECRET_REQUEST_HEADERS, header=True)),
        "body": journaled,
        "cassette": None,
        "stub": None,
        "interaction": None,
        "scenario": scenario_names,
        "seed": state.seed,
        "status": None,
        "outcome": None,
    }
    state.journal.append(entry)
    request[ACCESS_NOTE] = entry
    if refusal is not None:
        return _refuse(entry, refusal.response(error_response))
    if rebound_page(request, state.cors_origins):  # CORS cannot keep the answer from this page
        return _refuse(entry, _rebound(request))
    last_id = requested_id(method, headers)
    if last_id is not None and (earlier := state.streams.find(last_id, path)) is not None:
        plan = Plan.of(earlier.response, seed=state.seed, timing_scale=state.timing_scale)
        entry["cassette"], entry["interaction"] = earlier.cassette, earlier.interaction
        entry["resumed"] = resume(plan, last_id, stream=earlier, now=arrived)
        return send_plan(request, plan, entry, arrived, own_cors=True)

    scenario, problem, private = _scenario(state, scenario_names)
    if problem is not None and private:  # the scenarios served are the user's: not told to other origins
        return _refuse_foreign(request, entry, problem, "a scenario named is not served",
                               "which one, nor the scenarios served")
    if problem is not None:
        return _refuse(entry, problem)
    try:
        # A large reply takes a while to synthesize: off the loop, which goes on answering meanwhile.
        book, hit = state.stubs, None
        if len(book) and not named:
            quick = book.quick(received)  # a thread would cost more than a short answer
            hit = book.answer(received, state.seed) if quick else await _off_loop(
                request.app, lambda _: book.answer(received, state.seed))
    except asyncio.CancelledError:
        entry["outcome"] = "stopped" if stopping(request) else "client_gone"
        raise
    except UnicodeEncodeError as exc:  # a lone surrogate (valid JSON) echoed into the answer
        return _refuse(entry, error_response(
            400, "ssemock_bad_request", f"the request holds text that is not valid Unicode ({exc.reason} at "
            f"{exc.start}: {exc.object[exc.start:exc.end]!r}); a stub cannot echo it"))
    if hit is not None:
        entry["stub"] = hit.stub.name
        return _serve(request, entry, arrived, scenario, Plan.of(
            hit.response, seed=state.seed, timing_scale=state.timing_scale, request=received))
    if cassette_name is not None and cassette_name not in state.cassettes:
        return _refuse_foreign(request, entry, error_response(
            404, "ssemock_unknown_cassette", f"no cassette named {cassette_name!r}",
            known=sorted(state.cassettes),
        ), f"no cassette named {cassette_name!r}", "the cassettes served")
    pool = [state.cassettes[cassette_name]] if cassette_name else list(state.cassettes.values())
    if not indexes_ready(state.indexes, pool, state.match_on):
        # A cassette given after start-up (a test's own): indexed in a thread (seconds for 100,000
        # interactions), so the server goes on answering meanwhile.
        await asyncio.to_thread(prepare_indexes, state.indexes, pool, state.match_on)
    if pool and len(received.body or b"") > THREAD_PARSE:  # its canonical JSON text: off the loop
        await asyncio.to_thread(key_request, received, state.match_on)
    try:
        match = find_interaction(pool, received, state.match_on, played=state.played, indexes=state.indexes,
                                 explicit=cassette_name is not None and not state.strict)
    except NoMatchError as exc:
        # scoring thousands of stubs takes a while: off the loop
        stub = await _off_loop(request.app, lambda _: state.stubs.closest(received)) if len(state.stubs) else None
        return _refuse_foreign(request, entry, _no_match(exc, stub),
                               f"no recorded interaction matches {exc.request}",
                               "which ones come closest nor how they differ")
    entry["cassette"], entry["interaction"] = match.cassette.name, match.index
    recorded = scenario is None and last_id is None  # sent as recorded: the plan shares the cassette's response
    plan = Plan.of(match.interaction.response, seed=state.seed, timing_scale=state.timing_scale,
                   request=match.interaction.request, shared=recorded)
    return _serve(request, entry, arrived, scenario, plan, last_id=last_id,
                  remember=(path, match.cassette.name, match.index), recorded=recorded)


def _rebound(request: web.Request) -> web.Response:
    """The 403 to a page that reached the server through DNS rebinding (:func:`~ssemock.edge.cors.rebound_page`)."""
    origin = request.headers.get("Origin", "")
    return error_response(
        403, "ssemock_cross_origin",
        f"Origin {origin[:200]!r} names a host this server does not answer web pages under (not localhost, a "
        "loopback address, the address it is bound to nor an --allow-host name): a web page reaching it through "
        "DNS rebinding sends its own name, and may read no replay; use http://127.0.0.1:PORT, or allow the name "
        "with --allow-host / allowed_hosts")


def _no_match(exc: NoMatchError, stub: dict[str, Any] | None) -> web.Response:
    """The 404 for a request nothing answers: the closest interactions, and the closest stub."""
    if stub is None:
        return error_response(404, "ssemock_no_match", str(exc), closest=exc.closest)
    message = f"{exc}\nclosest stub: {stub['stub']} ({stub['match']}): {'; '.join(stub['differences'])}"
    return error_response(404, "ssemock_no_match", message, closest=exc.closest, closest_stub=stub)


async def _serve(
    request: web.Request, entry: JournalEntry, arrived: float, scenario: Scenario | None, plan: Plan,
    *, last_id: str | None = None, remember: tuple[str, str, int] | None = None, recorded: bool = False,
) -> web.StreamResponse:
    """Apply ``scenario`` to ``plan``, then send it: after the event ``last_id`` when given (a reconnect,
    404 ``ssemock_unknown_event_id`` when no event set it), and kept for reconnects when ``remember``
    (path, cassette name, interaction index) is given; ``recorded``: the plan sends a cassette's own
    response as it is (see :meth:`~ssemock.resume.ResumeBook.register`)."""
    if scenario is not None:
        plan.growth_limit = request.app[STATE].max_scenario_growth
        try:
            await _build(request.app, scenario, plan)
        except asyncio.CancelledError:
            entry["outcome"] = "stopped" if stopping(request) else "client_gone"
            raise
        except ScenarioTooLargeError as exc:  # the half-built plan is dropped: nothing was sent
            return _refuse(entry, error_response(
                500, "ssemock_scenario_too_large", f"{exc}; nothing was sent ({_GROWTH_OPTION})",
                scenario=exc.scenario, step=exc.step, limit=exc.limit, added=exc.added))
    if last_id is not None:
        if (note := resume(plan, last_id)) is None:
            return _refuse(entry, error_response(404, "ssemock_unknown_event_id", unknown_id_message(last_id)))
        entry["resumed"] = note
        return await send_plan(request, plan, entry, arrived, own_cors=True)
    try:
        return await send_plan(request, plan, entry, arrived, own_cors=True)
    finally:  # also when the client left: it may come back with Last-Event-ID
        if remember is not None:
            path, cassette, index = remember
            request.app[STATE].streams.register(plan, path, cassette, index, asyncio.get_running_loop().time(),
                                                recorded=recorded)


async def _build(app: web.Application, scenario: Scenario, plan: Plan) -> None:
    """Apply ``scenario`` to ``plan`` off the loop (:func:`_off_loop`; steps may rebuild a large body)."""
    await _off_loop(app, lambda cancelled: scenario.apply(plan, cancelled.is_set))


async def _off_loop(app: web.Application, work: Callable[[threading.Event], _T]) -> _T:
    """``work(cancelled)`` run on one of the server's few threads (:class:`~ssemock.offloop.OffLoop`,
    :data:`~ssemock.offloop.PLAN_THREADS`), so that the server goes on answering meanwhile.

    When the waiting handler is cancelled (its client left, or the server stops), ``cancelled``
    is set: queued work never runs, running work may check it and stop early; the result is dropped.
    """
    return await app[OFF_LOOP].run(work)


async def _close_off_loop(app: web.Application) -> None:
    app[OFF_LOOP].close()


def _scenario(state: ServerState, names: str | None) -> tuple[Scenario | None, web.Response | None, bool]:
    """The scenario composed of ``names`` (comma-separated), or the 400 refusing them; the flag says
    whether the refusal lists the scenarios served (``known``: not for pages of other origins)."""
    if not names:
        return None, None, False
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if len(wanted) > MAX_SCENARIOS:
        return None, error_response(
            400, "ssemock_too_many_scenarios",
            f"{len(wanted)} scenarios named; at most {MAX_SCENARIOS} are composed for one request",
            limit=MAX_SCENARIOS,
        ), False
    unknown = [n for n in wanted if n not in state.scenarios]
    if unknown or not wanted:
        named = f"no scenario named {unknown[0]!r}" if unknown else \
            f"no scenario named in {names[:80]!r}: expected scenario names, comma-separated"
        return None, error_response(400, "ssemock_unknown_scenario", named, known=sorted(state.scenarios)), True
    return Scenario.compose(state.scenarios[n] for n in wanted), None, False


def _refuse_foreign(
    request: web.Request, entry: JournalEntry, response: web.Response, failed: str, withheld: str,
) -> web.Response:
    """:func:`_refuse`; but a page of another origin (:func:`~ssemock.edge.cors.cross_origin`, allowed
    by CORS or not) gets the error's type and a message saying what ``failed`` and what is ``withheld``,
    naming the journal, not the cassette names, the closest interactions nor how the request differs
    from them (recorded prompts)."""
    _refuse(entry, response)  # the journal keeps the whole error
    if not cross_origin(request):
        return response
    return error_response(
        response.status, entry["error"]["type"], f"{failed}; a web page of another origin is not told {withheld}: "
        "see the journal (GET /_ssemock/requests from curl or the server's own origin, MockServer.requests), "
        "which holds the whole error")


def _refuse(entry: JournalEntry, response: web.Response) -> web.Response:
    entry["status"] = response.status
    entry["outcome"] = "refused"
    assert response.body is not None
    entry["error"] = json.loads(bytes(response.body))["error"]  # type: ignore[arg-type]
    return response
