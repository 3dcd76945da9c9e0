"""The admin routes that change a running replay server: its stubs (``/_ssemock/stubs``), its default
scenario (``/_ssemock/scenario``) and its faults by rate (``/_ssemock/chaos``), each change a
:class:`~ssemock.changes.Change` applied by :func:`~ssemock.changes.apply_change`.

Like every admin path they answer same-origin requests under a known ``Host`` only
(:mod:`ssemock.edge.guard`: a page of another origin gets ``403 ssemock_cross_origin`` and changes
nothing). A body is read within the bound of the file it stands for (1 MiB: ``413
ssemock_body_too_large``), as JSON when its ``Content-Type`` is ``application/json`` (or ``…+json``), else as
YAML; a document the files' loader refuses is ``400 ssemock_invalid_change`` naming the field.

Under ``--workers`` (:mod:`ssemock.workers`) the worker that receives a change applies it, then hands the
same record to every other worker (:data:`SPREAD`), holding the workers' change lock
(:mod:`ssemock.change_lock`) from reading it to the last answer, so that every worker makes the changes in
one order; the answer then adds ``workers`` (process id: its answer) and ``unanswered``, or is ``503
ssemock_change_incomplete`` naming the workers that did not take it, or ``503 ssemock_change_busy`` when the
change before it held the lock for :data:`~ssemock.change_lock.CHANGE_WAIT` seconds (nothing changed).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web

from .changes import Change, prepare_change, stub_summary
from .edge import refuse
from .errors import ScenarioError, SSEMockError, StubError
from .intake import read_body
from .limits import MAX_SCENARIO_FILE
from .refusals import ChangeIncompleteError, InvalidChangeError
from .state import STATE
from .stubs.files import MAX_STUB_FILE

__all__ = ["SPREAD", "Spreader", "Spreading", "add_change_routes", "answer_change", "change_from_body"]

STUBS_PATH = "/_ssemock/stubs"
SCENARIO_PATH = "/_ssemock/scenario"
CHAOS_PATH = "/_ssemock/chaos"


@dataclass
class Spreading:
    """What the worker processes did with a change: ``workers`` (process id: its answer, the receiving
    worker's included), ``unanswered`` (ids that did not answer in time) and ``refused`` (id: its error)."""

    workers: dict[str, Any]
    unanswered: list[int] = field(default_factory=list)
    refused: dict[str, Any] = field(default_factory=dict)


class Spreader(Protocol):
    """What :mod:`ssemock.workers` sets as :data:`SPREAD`: the other worker processes."""

    def ordered(self, what: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Held from reading the change ``what`` (its source, e.g. ``PUT /_ssemock/scenario``) to the last answer:
        one change at a time across the workers. Raises :class:`~ssemock.refusals.ChangeBusyError` on entry."""

    async def spread(self, change: Change, applied: dict[str, Any], read: float) -> Spreading:
        """Hand ``change``, applied here with the answer ``applied`` after ``read`` seconds of reading, to the
        other workers."""


SPREAD: web.AppKey[Spreader] = web.AppKey("ssemock_spread")
"""Set by :mod:`ssemock.workers` (absent in one process): the other workers, that take each change made here."""


def add_change_routes(app: web.Application) -> None:
    """Route ``/_ssemock/stubs`` (GET, POST, DELETE), ``/_ssemock/scenario`` and ``/_ssemock/chaos`` (GET, PUT,
    DELETE)."""
    app.router.add_get(STUBS_PATH, _stubs)
    app.router.add_post(STUBS_PATH, _add_stubs)
    app.router.add_delete(STUBS_PATH, _clear_stubs)
    app.router.add_get(SCENARIO_PATH, _scenario)
    app.router.add_put(SCENARIO_PATH, _set_scenario)
    app.router.add_delete(SCENARIO_PATH, _clear_scenario)
    app.router.add_get(CHAOS_PATH, _chaos)
    app.router.add_put(CHAOS_PATH, _set_chaos)
    app.router.add_delete(CHAOS_PATH, _clear_chaos)


async def _stubs(request: web.Request) -> web.Response:
    """The stubs served, as a JSON list in the order they are tried (those added at run time first).

    Each one is ``{"name", "match", "source", "times", "used", "added"}`` (``match``: its
    conditions as text, ``any request`` for none; ``used``: the requests it answered, in this process;
    ``added``: true for a stub added at run time)."""
    return web.json_response(stub_summary(request.app[STATE]))


async def _add_stubs(request: web.Request) -> web.Response:
    """Add the stubs of a stub file's document: they answer the next matching requests, tried first.

    The body is YAML, or JSON with ``Content-Type: application/json``, of at most 1 MiB: ``ssemock_stubs: 1``
    and ``stubs: [...]`` as in a file. The stubs are tried before every other stub, the latest addition
    first. Answers ``{"added": N, "stubs": [NAME, ...]}`` (a tool loop counts once in ``added``; ``stubs``
    names each step). An invalid document is ``400 ssemock_invalid_change`` naming the field
    (``stubs[0].reply.text``); nothing is added. Under ``--workers`` the answer adds ``workers`` (process id:
    its answer) and ``unanswered``, or is ``503 ssemock_change_incomplete`` naming the workers that did not
    take it."""
    return await change_from_body(request, "stubs.add", MAX_STUB_FILE, "the stub file bound (1 MiB)")


async def _clear_stubs(request: web.Request) -> web.Response:
    """Remove the stubs added at run time: ``{"cleared": N}``; the stubs loaded from files stay.

    The stubs loaded from stub files at start (``--stubs``, ``MockServer(stubs=...)``, the plugin's
    ``--ssemock-stubs``) and a test's inline stubs are served as they were loaded."""
    return await answer_change(request, Change("stubs.clear", source=f"DELETE {STUBS_PATH}"))


async def _scenario(request: web.Request) -> web.Response:
    """The default scenario, applied to a request that names none: ``{"scenario": [NAME, ...], "added":
    [NAME, ...]}`` (``[]``: faithful replay; ``added``: the scenarios given as documents at run time)."""
    state = request.app[STATE]
    return web.json_response({"scenario": list(state.scenario), "added": sorted(state.added_scenarios)})


async def _set_scenario(request: web.Request) -> web.Response:
    """Set the default scenario: served scenario names, or a scenario file's document.

    The body is YAML, or JSON with ``Content-Type: application/json``, of at most 1 MiB: scenario names
    (``crlf,split-bytes``, or a list ``["crlf", "split-bytes"]``), each served; or a scenario file's mapping
    (``steps: [...]``, ``name`` default ``runtime``), then served under its name too (``X-SSEMock-Scenario``
    may name it). Answers ``{"scenario": [NAME, ...]}``. A name not served is ``400
    ssemock_unknown_scenario``, an invalid document ``400 ssemock_invalid_change`` naming the field
    (``steps[0].stall.seconds``). Under ``--workers``, answered as ``POST /_ssemock/stubs`` is."""
    return await change_from_body(request, "scenario.set", MAX_SCENARIO_FILE, "the scenario file bound (1 MiB)")


async def _clear_scenario(request: web.Request) -> web.Response:
    """No default scenario (requests that name none are replayed faithfully), and the scenarios given as
    documents are served no more: ``{"scenario": [], "removed": [NAME, ...]}``."""
    return await answer_change(request, Change("scenario.clear", source=f"DELETE {SCENARIO_PATH}"))


async def _chaos(request: web.Request) -> web.Response:
    """The faults by rate: ``{"chaos": [RULE, ...], "seed": N}`` (each rule as ``--chaos`` writes it; ``[]``:
    none), drawn from ``seed`` and each request's ``seq``."""
    state = request.app[STATE]
    return web.json_response({"chaos": state.chaos.describe(), "seed": state.seed})


async def _set_chaos(request: web.Request) -> web.Response:
    """Set the faults by rate, replacing those the server had (``serve --chaos``'s included).

    The body is YAML, or JSON with ``Content-Type: application/json``, of at most 1 MiB: one rule as
    ``--chaos`` takes it (``cut-mid-event=0.05,http-429=0.02``, ``path=/v1/*:http-500=0.1``), a list of
    rules, or a mapping of scenario names to rates (``{"cut-mid-event": 0.05}``). Answers ``{"chaos": [RULE,
    ...]}``. A malformed rule, a rate out of [0, 1], rates summing to more than 1 or a scenario not served is
    ``400 ssemock_invalid_change``; nothing is changed. Under ``--workers``, answered as ``POST
    /_ssemock/stubs`` is."""
    return await change_from_body(request, "chaos.set", MAX_SCENARIO_FILE, "the scenario file bound (1 MiB)")


async def _clear_chaos(request: web.Request) -> web.Response:
    """No faults by rate from now on: ``{"chaos": []}``."""
    return await answer_change(request, Change("chaos.clear", source=f"DELETE {CHAOS_PATH}"))


async def change_from_body(request: web.Request, kind: str, limit: int, bound: str) -> web.Response:
    """Apply the change of ``kind`` whose document is the request's body (at most ``limit`` bytes, ``bound``
    naming that limit in a ``413``), read as JSON or YAML by its ``Content-Type``, and answer it
    (:func:`answer_change`): what the handler of a route of a new kind calls."""
    try:
        body = await read_body(request, limit, bound)
    except SSEMockError as exc:
        return refuse(exc)
    json_body = request.content_type == "application/json" or request.content_type.endswith("+json")
    text = body.decode("utf-8", "surrogateescape")  # read as UTF-8 again by the loader, which names a bad byte
    change = Change(kind, text, "json" if json_body else "yaml", source=f"{request.method} {request.path}")
    return await answer_change(request, change)


async def answer_change(request: web.Request, change: Change) -> web.Response:
    """Apply ``change`` here (read in a thread, made on the event loop) and, under ``--workers``, in every other
    worker, one change at a time; answer with what was done."""
    spreader = request.app.get(SPREAD)
    try:
        async with spreader.ordered(change.source) if spreader else contextlib.nullcontext():
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                commit = await asyncio.to_thread(prepare_change, request.app[STATE], change)
                applied = commit()
            except (StubError, ScenarioError) as exc:
                raise InvalidChangeError(exc) from exc
            if spreader is None:
                return web.json_response(applied)
            done = await spreader.spread(change, applied, loop.time() - started)
    except SSEMockError as exc:
        return refuse(exc)
    if done.unanswered or done.refused:
        return refuse(ChangeIncompleteError(change.source, done.workers, done.unanswered, done.refused))
    return web.json_response({**applied, "workers": done.workers, "unanswered": []})
