"""Shape, the replay pipeline's third stage: an :class:`~ssemock.choose.Answer` becomes the
:class:`~ssemock.plan.Plan` that :mod:`ssemock.send` writes.

The plan is a copy of the answer's response (shared with the cassette when nothing edits it), edited
by the exchange's scenario (its steps run off the loop: they may rebuild a large body, at most
``limits.max_scenario_growth`` bytes more), then cut after the event a ``Last-Event-ID`` reconnect
names (:mod:`ssemock.resume`). The transport steps of the scenario (stall, disconnect, http-error,
keep-alive, framing, … but ``drop-and-resume``) apply to the stream that answers a ``Last-Event-ID``
reconnect, after the cut, counted from its first event (:func:`ssemock.scenario.model.on_reconnect`); the
other steps shaped the body before the cut (a stream resumed from a ``drop-and-resume`` was shaped when
first sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .choose import Answer
from .edge import stopping
from .errors import ScenarioTooLargeError
from .plan import Plan
from .receive import Exchange
from .refusals import UnknownEventIdError
from .resume import resume
from .scenario.base import Step
from .scenario.model import Scenario, on_reconnect
from .state import ServerState, off_loop

__all__ = ["shape"]

_GROWTH_OPTION = ("MockServer(limits=Limits(max_scenario_growth=BYTES)) or ssemock serve --max-scenario-growth "
                  "BYTES")


async def shape(exchange: Exchange, answer: Answer, state: ServerState) -> Plan:
    """The plan to send for ``answer``; the journal entry notes a resume (``resumed``).

    Raises:
        ScenarioTooLargeError: the scenario's steps would add more than ``limits.max_scenario_growth``
            bytes (nothing is sent).
        UnknownEventIdError: a reconnect names an event id that no event of the stream set.
    """
    last_id, entry = exchange.route.last_event_id, exchange.entry
    scenario = exchange.scenario
    if answer.resumed is not None:
        plan = Plan.of(answer.response, seed=state.seed, timing_scale=state.timing_scale)
        assert last_id is not None  # a stream is resumed after the event a reconnect names
        entry.resumed = resume(plan, last_id, stream=answer.resumed, now=exchange.arrived)
        if scenario is not None:
            await _apply(exchange, plan, state, scenario, on_reconnect)
        entry.notes = plan.ineffective
        return plan
    shared = scenario is None and last_id is None and answer.remember is not None  # sent as recorded
    plan = Plan.of(answer.response, seed=state.seed, timing_scale=state.timing_scale, request=answer.request,
                   shared=shared)
    if answer.remember is None:  # a stub's synthesized events: paced only under a fragmentation step
        plan.budget = 0.0
    resuming = last_id is not None and answer.remember is not None
    if scenario is not None:
        await _apply(exchange, plan, state, scenario, (lambda step: not on_reconnect(step)) if resuming else None)
    entry.notes = plan.ineffective
    if resuming:
        assert last_id is not None
        if (note := resume(plan, last_id)) is None:
            raise UnknownEventIdError(last_id)
        entry.resumed = note
        if scenario is not None:  # the faults apply to the stream that answers the reconnect
            await _apply(exchange, plan, state, scenario, on_reconnect)
    return plan


async def _apply(exchange: Exchange, plan: Plan, state: ServerState, scenario: Scenario,
                 only: Callable[[Step], bool] | None) -> None:
    """Apply ``scenario``'s steps (those ``only`` keeps) to ``plan``, off the loop."""
    plan.growth_limit = state.limits.max_scenario_growth
    try:
        await off_loop(exchange.request.app, lambda cancelled: scenario.apply(plan, cancelled.is_set, only))
    except asyncio.CancelledError:
        exchange.entry.outcome = "stopped" if stopping(exchange.request) else "client_gone"
        raise
    except ScenarioTooLargeError as exc:  # the half-built plan is dropped: nothing was sent
        raise ScenarioTooLargeError(exc.scenario, exc.step, exc.limit, exc.added, line_cost=exc.line_cost,
                                    option=_GROWTH_OPTION) from None
