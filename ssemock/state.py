"""What one replay server knows (:class:`ServerState`), and the application keys its stages read.

The replay pipeline (design §2) reads it stage by stage: :mod:`ssemock.receive` (the request as an
:class:`~ssemock.receive.Exchange`), :mod:`ssemock.choose` (its answer), :mod:`ssemock.shape` (the
plan), :mod:`ssemock.send` (the wire); :mod:`ssemock.server` builds the application around them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeVar

from aiohttp import web

from .cassette import Cassette
from .chaos import Chaos
from .config import Limits
from .journal import JournalEntry
from .matching import DEFAULT_MATCH_ON, IndexCache, PlayCounts
from .offloop import OffLoop
from .resume import ResumeBook
from .scenario import Scenario
from .stubs import StubBook

__all__ = ["OFF_LOOP", "STATE", "ServerState", "off_loop"]

_T = TypeVar("_T")
STATE: web.AppKey[ServerState] = web.AppKey("ssemock_state")
OFF_LOOP: web.AppKey[OffLoop] = web.AppKey("ssemock_off_loop", OffLoop)


class ServerState:
    """Everything one replay server knows: cassettes, scenarios, options, journal.

    Attributes:
        cassettes: cassettes by name, in matching priority order.
        scenarios: scenarios by name.
        scenario: the default scenario names, a tuple (``()``: none).
        cassette: the default cassette name (used when a request names none), or None.
        match_on: matcher names (see :mod:`ssemock.matching`).
        ignore_body: body paths the ``body`` matcher ignores in every cassette, besides each cassette's
            own (:mod:`ssemock.body_paths`: ``metadata.trace_id``, ``messages[*].id``), as texts.
        strict: True: a cassette chosen by name (header, path prefix or :attr:`cassette`)
            is matched on every matcher of ``match_on``, the body included; False: the
            body only chooses among its interactions.
        timing_scale: multiplies recorded times; 0 = no delays.
        journal: one dict per request received, in order; a ring of ``limits.journal_capacity``
            entries (default 1,000): the oldest is dropped first.
        limits: the bounds on a request (:class:`~ssemock.config.Limits`: body size, JSON depth,
            scenario growth, journal).
        received: requests journaled since the last reset (the ``seq`` of the latest).
        stubs: synthesized answers, consulted before the cassettes (see :mod:`ssemock.stubs`).
        streams: the streams sent with event ids, for ``Last-Event-ID`` reconnects (:mod:`ssemock.resume`).
        cors_origins: the origins whose pages may read replay answers besides the loopback ones
            (``*``: any; see :mod:`ssemock.edge.cors`), as :func:`~ssemock.edge.cors.origin_names` writes them.
        added_scenarios: the names of the scenarios given as documents while the server runs (in
            :attr:`scenarios` too; :mod:`ssemock.changes`), which ``scenario.clear`` removes.
        chaos: the faults by rate (:class:`~ssemock.chaos.Chaos`, immutable: replace the whole value to change
            them while serving); drawn from ``seed`` and each request's ``seq``.
    """

    def __init__(
        self,
        cassettes: dict[str, Cassette] | None = None,
        scenarios: dict[str, Scenario] | None = None,
        scenario: Sequence[str] = (),
        cassette: str | None = None,
        match_on: Sequence[str] = DEFAULT_MATCH_ON,
        ignore_body: tuple[str, ...] = (),
        strict: bool = False,
        timing_scale: float = 1.0,
        journal: deque[JournalEntry] | None = None,
        played: dict[tuple[str, int], int] | None = None,
        indexes: IndexCache | None = None,
        seed: int = 0,
        limits: Limits | None = None,
        received: int = 0,
        stubs: StubBook | None = None,
        streams: ResumeBook | None = None,
        cors_origins: tuple[str, ...] = (),
        chaos: Chaos | None = None,
    ) -> None:
        self.cassettes = {} if cassettes is None else cassettes
        self.scenarios = {} if scenarios is None else scenarios
        self.scenario = tuple(scenario)
        self.cassette = cassette
        self.match_on = match_on
        self.ignore_body = ignore_body
        self.strict = strict
        self.timing_scale = timing_scale
        self.limits = Limits() if limits is None else limits
        self.journal = deque(maxlen=self.limits.journal_capacity) if journal is None else journal
        self.played = PlayCounts() if played is None else played
        self.indexes = IndexCache() if indexes is None else indexes
        self.seed = seed
        self.received = received
        self.stubs = StubBook() if stubs is None else stubs
        self.streams = ResumeBook() if streams is None else streams
        self.cors_origins = cors_origins
        self.added_scenarios: frozenset[str] = frozenset()
        self.chaos = Chaos() if chaos is None else chaos

    def reset(self) -> None:
        """Clear the journal, the play counts and the streams kept for resuming."""
        self.journal.clear()
        self.played.clear()
        self.streams.clear()
        self.received = 0


async def off_loop(app: web.Application, work: Callable[[threading.Event], _T]) -> _T:
    """``work(cancelled)`` run on one of the server's few threads (:class:`~ssemock.offloop.OffLoop`,
    :data:`~ssemock.offloop.PLAN_THREADS`), so that the server goes on answering meanwhile.

    When the waiting handler is cancelled (its client left, or the server stops), ``cancelled``
    is set: queued work never runs, running work may check it and stop early; the result is dropped.
    """
    return await app[OFF_LOOP].run(work)
