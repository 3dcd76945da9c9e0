"""What a correct reader prints for a case: the events the WHATWG reference decoder
(:class:`ssemock.sse.Decoder`) dispatches from the bytes the replay server sends, the scenario's steps
applied as the server applies them (same seed), without the network."""

from __future__ import annotations

from ..cassette import Cassette
from ..plan import Plan
from ..scenario import Scenario
from ..sse import Event, decode
from .contract import PrintedEvent

__all__ = ["expected_events", "plan_events", "sent_plan", "stream_interaction"]


def expected_events(
    cassette: Cassette, index: int, scenario: Scenario | None, *, seed: int = 0
) -> tuple[PrintedEvent, ...] | None:
    """The events (type, data, last event ID) a WHATWG reader dispatches from interaction ``index`` of
    ``cassette`` as sent under ``scenario``; None when that answer is no ``text/event-stream`` 200 or its
    body does not decode from its ``Content-Encoding``."""
    return plan_events(sent_plan(cassette, index, scenario, seed))


def plan_events(plan: Plan) -> tuple[PrintedEvent, ...] | None:
    """The events a WHATWG reader dispatches from ``plan`` as sent (see :func:`expected_events`)."""
    if plan.response.status != 200 or not plan.is_event_stream or not plan.decode_content():
        return None
    body = b"".join(chunk.data for chunk in plan.response.chunks)
    return tuple(PrintedEvent(e.type, e.data, e.last_event_id) for e in decode(body) if isinstance(e, Event))


def stream_interaction(cassette: Cassette) -> int | None:
    """The first interaction of ``cassette`` answered with a ``text/event-stream`` 200, or None."""
    for index, interaction in enumerate(cassette.interactions):
        response = interaction.response
        if response.status == 200 and "event-stream" in (response.header("content-type") or "").lower():
            return index
    return None


def sent_plan(cassette: Cassette, index: int, scenario: Scenario | None, seed: int = 0) -> Plan:
    """Interaction ``index``'s plan as the server sends it under ``scenario`` (status, headers, chunks,
    injected pauses)."""
    interaction = cassette.interactions[index]
    plan = Plan.of(interaction.response, seed=seed, request=interaction.request)
    if scenario is not None:
        scenario.apply(plan)
    return plan
