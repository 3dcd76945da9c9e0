"""What the recorder's client gets when it is to be broken on purpose (``ssemock record --scenario``, ``--chaos``).

The scenario is chosen as the replay server chooses it (:func:`ssemock.chaos.faults`: the scenarios named, and
one drawn by chance from the seed and the request's sequence number), applied by the same engine
(:meth:`ssemock.scenario.Scenario.apply` on a :class:`~ssemock.plan.Plan`) and sent by the same sending layer
(:func:`ssemock.send.send_plan`). A forwarded answer to shape is held back whole (at most
:data:`~ssemock.limits.MAX_HELD_BODY`, :class:`~ssemock.recorder.relay.Hold`), recorded as the upstream sent it,
then sent to its client under the scenario, its chunks as soon as they are due (their times count from when the
request went upstream: none is late by more than the upstream took).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from aiohttp import web

from ..cassette import Request, Response
from ..errors import ScenarioTooLargeError
from ..journal import JournalEntry
from ..plan import Plan
from ..send import send_plan
from .progress import ProgressRow
from .state import RecorderState

if TYPE_CHECKING:
    from ..scenario import Scenario

__all__ = ["choose_scenario", "send_shaped", "shape"]


def choose_scenario(st: RecorderState, received: Request, info: ProgressRow) -> Scenario | None:
    """The scenario the client's answer is sent under (``record --scenario``, ``--chaos``; noted on ``info``), or
    None: chosen as the replay server chooses it (:func:`ssemock.chaos.faults`), on the request's sequence number."""
    options = st.options
    if not options.shapes:
        return None
    from ..chaos import faults, provider_of  # a recorder that shapes nothing never imports the scenario steps

    st.received += 1
    scenario, hit = faults(
        [options.scenarios[n] for n in options.scenario],
        options.chaos,
        options.scenarios,
        seed=options.seed,
        seq=st.received,
        path=received.path,
        provider=provider_of(received.path, received.body),
    )
    if hit is not None:
        info.fault, info.draw = hit.fault, hit.value
    info.scenario = None if scenario is None else scenario.name
    return scenario


async def shape(
    st: RecorderState, response: Response, received: Request, scenario: Scenario, info: ProgressRow
) -> Plan:
    """The plan of ``response`` under ``scenario`` (its steps run in a thread); the plan of ``response`` as it is
    when the steps would add more than ``limits.max_scenario_growth`` bytes (``info.unshaped`` says so)."""
    plan = Plan.of(response, seed=st.options.seed, timing_scale=st.options.replay_timing_scale, request=received)
    plan.growth_limit = st.options.limits.max_scenario_growth
    try:
        return await asyncio.to_thread(scenario.apply, plan)
    except ScenarioTooLargeError as exc:
        info.unshaped = str(exc)
        return Plan.of(response, timing_scale=st.options.replay_timing_scale, request=received)


async def send_shaped(request: web.Request, plan: Plan, path: str, arrived: float) -> web.StreamResponse:
    """Send ``plan`` to the client (:func:`~ssemock.send.send_plan`); ``arrived``: loop time its times count from."""
    # what send_plan notes of the answer (not journaled: the recorder's record is its progress row)
    entry = JournalEntry(
        seq=0,
        time=time.time(),
        method=request.method,
        path=path,
        query={},
        headers={},
        body=None,
        scenario=None,
        seed=0,
    )
    return await send_plan(request, plan, entry, arrived)
