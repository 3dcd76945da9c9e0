"""What one recorder's handler needs, as the aiohttp application holds it (:data:`STATE`).

A module of its own: :class:`~ssemock.recorder.core.Recorder` builds it, the handler
(:mod:`.proxy`) reads it; neither imports the other for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from ..config import Limits
from ..redact import Filter
from ..version import __version__
from .modes import RecordMode
from .progress import Progress, ProgressRow
from .store import CassetteStore

if TYPE_CHECKING:
    from ..chaos import Chaos
    from ..scenario import Scenario

__all__ = ["STATE", "RecorderOptions", "RecorderState"]


@dataclass(frozen=True)
class RecorderOptions:
    """A recorder's options as its handler reads them, checked by :class:`~ssemock.recorder.core.Recorder`.

    Attributes:
        base_url: where requests go: the target URL without its user info (``https://host/base``).
        shown_target: how the target is named in messages and in the cassettes' provenance.
        credentials: the ``Authorization`` value made of the target's user info, or None.
        directory: the cassettes' directory.
        mode: the record mode.
        filter: what is removed before anything is written (the defaults and the extra secrets).
        cassette: the cassette of requests without ``X-SSEMock-Cassette``, or None (one per fingerprint).
        max_body_size: request bodies over this many bytes are stored by digest; None: every body kept.
        keep_encoding: forward the client's ``Accept-Encoding`` and record the encoded bytes.
        match_on: the matchers that find a recorded interaction to replay.
        ignore_body: body paths the ``body`` matcher ignores when replaying (besides each cassette's).
        drop_body: body paths deleted from every request body stored (``--drop-body-field``); each
            cassette written says so (``match: {dropped_body: [...]}``).
        replay_timing_scale: timing factor of replayed interactions (1 = as recorded).
        limits: the bounds on a request (``max_request_body``, ``max_json_depth`` and ``max_scenario_growth``
            are read).
        scenarios: the scenarios by name that ``scenario`` and ``chaos`` name (only those).
        scenario: the scenario names every answer is sent to its client under (the cassette keeps the
            upstream's own bytes); ``()``: none.
        chaos: faults by rate (:class:`~ssemock.chaos.Chaos`), or None; drawn from ``seed`` and the
            request's sequence number, as the replay server draws them.
        seed: the seed of the draws and of the scenarios' random choices.
    """

    base_url: str
    shown_target: str
    credentials: str | None
    directory: Path
    mode: RecordMode
    filter: Filter
    cassette: str | None
    max_body_size: int | None
    keep_encoding: bool
    match_on: tuple[str, ...]
    replay_timing_scale: float
    limits: Limits
    ignore_body: tuple[str, ...] = ()
    drop_body: tuple[str, ...] = ()
    scenarios: Mapping[str, Scenario] = field(default_factory=dict)
    scenario: tuple[str, ...] = ()
    chaos: Chaos | None = None
    seed: int = 0

    @property
    def shapes(self) -> bool:
        """Whether answers may be sent to their client under a scenario."""
        return bool(self.scenario or self.chaos)


@dataclass
class RecorderState:
    """What one recorder's handler needs: options, open cassettes, upstream session, progress."""

    options: RecorderOptions
    progress: Progress
    session: aiohttp.ClientSession = field(init=False)
    stores: dict[str, CassetteStore] = field(default_factory=dict)
    received: int = 0
    """Requests that reached a cassette (forwarded or replayed): the sequence number of the latest, drawn on."""
    finishing: set[asyncio.Future[None]] = field(default_factory=set)
    """Answers over 1 MiB whose client has its last byte and whose recording is still scrubbed."""
    _opening: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def store(self, name: str) -> CassetteStore:
        """The store of cassette ``name``, opened (and loaded from disk) on first use."""
        async with self._opening:
            if name not in self.stores:
                provenance = {"recorded_by": f"ssemock {__version__} record", "target": self.options.shown_target,
                              "recorded_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")}
                store = await asyncio.to_thread(CassetteStore.open, self.options.directory, name, provenance,
                                                self.options.drop_body)
                if store.repaired:
                    self.progress.note(f"cassette {name}: cut off an incomplete last interaction "
                                       f"({store.repaired} bytes) left by a recorder that was killed")
                self.stores[name] = store
            return self.stores[name]

    def report(self, row: ProgressRow) -> None:
        """Hand one finished interaction to the progress output."""
        self.progress.report(row)


STATE: web.AppKey[RecorderState] = web.AppKey("ssemock_recorder_state")
