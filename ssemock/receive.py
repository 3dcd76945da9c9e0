"""Receive, the replay pipeline's first stage: an aiohttp request becomes an :class:`Exchange`.

The route is read from the path prefixes (``/_ssemock/c/NAME/``, ``/_ssemock/s/A,B/``) and the
headers (``X-SSEMock-Cassette``, ``X-SSEMock-Scenario``, ``Last-Event-ID``), the body within the
server's bounds (``limits.max_request_body`` bytes, ``limits.max_json_depth`` levels of JSON, parsed
once), and the request journaled (:class:`~ssemock.journal.JournalEntry`) before anything can refuse
it. :meth:`Exchange.admit` then raises what refuses it at the door; every refusal, here or in a
later stage, is an :class:`~ssemock.errors.SSEMockError` that :meth:`Exchange.refuse` answers.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote

from aiohttp import web

from .cassette import Request
from .chaos import faults, provider_of
from .edge import ACCESS_NOTE, refuse
from .edge.cors import cross_origin, rebound_page
from .errors import BodyTimeoutError, ConfigError, JSONTooDeepError, SSEMockError, did_you_mean, redacted
from .intake import check_json, journal_body, read_body
from .journal import JournalEntry
from .limits import MAX_SCENARIOS
from .names import scenario_names
from .redact import SECRET_QUERY_PARAMS, SECRET_REQUEST_HEADERS, redact_pairs
from .refusals import (
    BodyTooLargeError,
    CrossOriginError,
    TooManyScenariosError,
    UnknownAdminPathError,
    UnknownScenarioError,
    UnreadableBodyError,
    UnsupportedEncodingError,
)
from .resume import requested_id
from .scenario import Scenario
from .state import ServerState

__all__ = ["Exchange", "Route", "receive", "split_prefixes"]

_PREFIX = re.compile(r"^/_ssemock/([cs])/([^/]+)(/.*)?$")
_BODY_OPTION = "MockServer(limits=Limits(max_request_body=BYTES)) or ssemock serve --max-request-body BYTES"
_DEPTH_OPTION = "MockServer(limits=Limits(max_json_depth=N)) or ssemock serve --max-json-depth N"


@dataclass(frozen=True)
class Route:
    """Where a request goes: read once from its path prefixes and headers.

    Attributes:
        path: the provider path, prefixes removed, percent-decoded.
        cassette: the cassette named (header, prefix, else the server's default), or None.
        named: the request itself named the cassette (header or prefix): it is answered from that
            cassette, never by a stub.
        scenario: the scenario names asked for (the header's or prefix's ``"a,b"``, read by
            :func:`~ssemock.names.scenario_names`; else the server's default), a tuple.
        last_event_id: the ``Last-Event-ID`` of a ``GET`` reconnect, or None.
        unreadable: the header's or prefix's text when it holds an empty name (``","``, ``"a,"``),
            refused by :meth:`Exchange.admit`; else None.
    """

    path: str
    cassette: str | None
    named: bool
    scenario: tuple[str, ...]
    last_event_id: str | None
    unreadable: str | None = None

    @property
    def scenario_text(self) -> str | None:
        """The names as the journal writes them: ``"a,b"`` (``X-SSEMock-Scenario``'s form), or None."""
        return self.unreadable or ",".join(self.scenario) or None


@dataclass(eq=False)
class Exchange:
    """One replayed request on its way through the pipeline.

    Attributes:
        request: the aiohttp request.
        arrived: loop time (seconds) when it arrived; recorded times count from it.
        route: where it goes (:class:`Route`).
        received: the request as matching sees it (secret query parameters removed).
        entry: its journal entry, already in the journal.
        refusal: what refuses it at the door (body too large, too deep, late or unreadable), or None.
        scenario: the scenario its route names, composed (set by :meth:`admit`), or None.
    """

    request: web.Request
    arrived: float
    route: Route
    received: Request
    entry: JournalEntry
    refusal: SSEMockError | None = None
    scenario: Scenario | None = None

    def admit(self, state: ServerState) -> None:
        """Raise what refuses the request before any answer is chosen: its body's refusal, a web page
        that reached the server through DNS rebinding (:func:`~ssemock.edge.cors.rebound_page`: CORS
        cannot keep the answer from it), its scenario names; else set :attr:`scenario`: those named, composed with
        the fault the request drew by chance (:func:`~ssemock.chaos.faults`; the journal's ``fault`` and ``draw``)."""
        if self.refusal is not None:
            raise self.refusal
        if rebound_page(self.request, state.cors_origins):
            raise CrossOriginError(_rebound_message(self.request))
        if self.route.unreadable is not None:
            raise UnknownScenarioError(f"no scenario named in {self.route.unreadable[:80]!r}: expected scenario "
                                       "names, comma-separated", state.scenarios)
        if not self.route.scenario and not state.chaos:
            return  # the usual replay: nothing to compose nor draw
        chosen = chosen_scenarios(state, self.route.scenario)
        self.scenario, hit = faults(chosen, state.chaos, state.scenarios, seed=state.seed, seq=self.entry.seq,
                                    path=self.route.path, provider=provider_of(self.route.path, self.received.body))
        if hit is not None:
            self.entry.fault, self.entry.draw = hit.fault, hit.value
        self.entry.applied = tuple(name for name, _ in self.scenario.parts) if self.scenario is not None else ()

    def refuse(self, error: SSEMockError) -> web.Response:
        """The answer refusing the request with ``error``, journaled whole; a web page of another origin
        (:func:`~ssemock.edge.cors.cross_origin`, allowed by CORS or not) is told the error's type and
        what failed, not what :meth:`~ssemock.errors.SSEMockError.withheld` keeps from it (the cassette
        names, the closest interactions, recorded prompts)."""
        withheld = error.withheld()
        shown = None if withheld is None or not cross_origin(self.request) else (
            f"{withheld[0]}; a web page of another origin is not told {withheld[1]}: see the journal (GET "
            "/_ssemock/requests from curl or the server's own origin, MockServer.requests), which holds the whole "
            "error")
        return refuse(error, self.entry, shown=shown)


async def receive(request: web.Request, state: ServerState) -> Exchange:
    """Read ``request`` into an :class:`Exchange`, journaled.

    Raises:
        UnknownAdminPathError: a path under ``/_ssemock/`` that no admin route serves (not journaled).
        web.HTTPException: aiohttp's own answers while reading the body.
    """
    arrived = asyncio.get_running_loop().time()
    if state.timing_scale:
        # Requests that arrived together all note their arrival before any is answered: recorded
        # times count from it, and replaying one would otherwise delay the others' schedules.
        await asyncio.sleep(0)
    route = _route(request, state)
    body, refusal = await _body(request, state)
    url = request.rel_url
    received = Request(
        method=request.method,
        path=route.path,
        # Secret query parameters are never recorded, so they are neither matched nor echoed.
        query=redact_pairs(request.query.items(), SECRET_QUERY_PARAMS) if url.raw_query_string else [],
        headers=list(request.headers.items()),
        body=body,
    )
    if refusal is None:
        try:
            await check_json(received, state.limits.max_json_depth, _DEPTH_OPTION)
        except JSONTooDeepError as exc:
            refusal = exc
    journaled = None if refusal is not None else await journal_body(received, state.limits.journal_body_limit)
    state.received += 1  # from here to the append, no await: entries stay in seq order
    path, query, headers = _shown(route.path, received.query,
                                  redact_pairs(received.headers, SECRET_REQUEST_HEADERS, header=True))
    entry = JournalEntry(
        seq=state.received, time=time.time(), method=request.method, path=path, query=query, headers=headers,
        body=journaled, scenario=route.scenario_text and redacted(route.scenario_text), seed=state.seed,
    )
    state.journal.append(entry)
    request[ACCESS_NOTE] = entry
    return Exchange(request, arrived, route, received, entry, refusal)


def _shown(
    path: str, query: list[tuple[str, str]], headers: list[tuple[str, str]]
) -> tuple[str, dict[str, str], dict[str, str]]:
    """What the journal shows of a request: its path, query and headers (names and values) through the secret scanner
    (:func:`~ssemock.errors.redacted`), so that a key in the path (``/bot<token>/getMe``) reads ``REDACTED``.
    Scanned as one text first (about 8 microseconds for a usual request), one by one only if it holds one."""
    texts = [path, *(t for pair in query for t in pair), *(t for pair in headers for t in pair)]
    joined = "\n".join(texts)
    if redacted(joined) == joined:
        return path, dict(query), dict(headers)
    return (redacted(path), {redacted(name): redacted(value) for name, value in query},
            {redacted(name): redacted(value) for name, value in headers})


def _route(request: web.Request, state: ServerState) -> Route:
    path, cassette, scenario = split_prefixes(request.rel_url.raw_path)
    if path.startswith("/_ssemock/"):
        raise UnknownAdminPathError(request.path)
    headers = request.headers
    cassette = headers.get("X-SSEMock-Cassette", cassette)
    written = headers.get("X-SSEMock-Scenario", scenario)
    try:
        names, unreadable = scenario_names(written) or state.scenario, None
    except ConfigError:
        names, unreadable = (), written
    return Route(path=path, cassette=cassette or state.cassette, named=bool(cassette), scenario=names,
                 last_event_id=requested_id(request.method, headers), unreadable=unreadable)


async def _body(request: web.Request, state: ServerState) -> tuple[bytes | None, SSEMockError | None]:
    """The body within ``limits.max_request_body``, or the refusal to journal instead."""
    try:
        return await read_body(request, state.limits.max_request_body, _BODY_OPTION), None
    except web.HTTPException:
        raise  # aiohttp's own answers
    except (BodyTooLargeError, BodyTimeoutError, UnreadableBodyError, UnsupportedEncodingError) as exc:
        # refused and journaled (a timeout: the network edge answers the 408)
        return None, exc
    except Exception as exc:  # a failure of the connection
        request.content.feed_eof()  # nothing more to drain after the answer
        return None, UnreadableBodyError(str(exc))


def split_prefixes(raw_path: str) -> tuple[str, str | None, str | None]:
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


def chosen_scenarios(state: ServerState, names: tuple[str, ...]) -> list[Scenario]:
    """The scenarios ``names`` names, in order.

    Raises:
        TooManyScenariosError: more than :data:`~ssemock.limits.MAX_SCENARIOS` names.
        UnknownScenarioError: a name that is not served.
    """
    if len(names) > MAX_SCENARIOS:
        raise TooManyScenariosError(len(names), MAX_SCENARIOS)
    unknown = [n for n in names if n not in state.scenarios]
    if unknown:
        raise UnknownScenarioError(f"no scenario named {unknown[0]!r}{did_you_mean(unknown[0], state.scenarios)}",
                                   state.scenarios)
    return [state.scenarios[n] for n in names]


def _rebound_message(request: web.Request) -> str:
    origin = request.headers.get("Origin", "")
    return (f"Origin {origin[:200]!r} names a host this server does not answer web pages under (not localhost, a "
            "loopback address, the address it is bound to nor an --allow-host name): a web page reaching it through "
            "DNS rebinding sends its own name, and may read no replay; use http://127.0.0.1:PORT, or allow the name "
            "with --allow-host / allowed_hosts")
