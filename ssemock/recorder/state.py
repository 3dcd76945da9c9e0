"""What one recorder's handler needs, as the aiohttp application holds it (:data:`STATE`).

A module of its own: :class:`~ssemock.recorder.core.Recorder` builds it, the handler
(:mod:`.proxy`) reads it; neither imports the other for it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from ..limits import MAX_JSON_DEPTH, MAX_REQUEST_BODY
from ..redact import Filter
from ..version import __version__
from .modes import RecordMode
from .progress import Progress
from .store import CassetteStore

__all__ = ["STATE", "RecorderState"]


@dataclass
class RecorderState:
    """What one recorder's handler needs: options, open cassettes, upstream session, progress."""

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
    progress: Progress
    session: aiohttp.ClientSession = field(init=False)
    stores: dict[str, CassetteStore] = field(default_factory=dict)
    max_request_body: int = MAX_REQUEST_BODY
    max_json_depth: int = MAX_JSON_DEPTH
    finishing: set[asyncio.Future[None]] = field(default_factory=set)
    """Answers over 1 MiB whose client has its last byte and whose recording is still scrubbed."""
    _opening: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def store(self, name: str) -> CassetteStore:
        """The store of cassette ``name``, opened (and loaded from disk) on first use."""
        async with self._opening:
            if name not in self.stores:
                provenance = {"recorded_by": f"ssemock {__version__} record", "target": self.shown_target,
                              "recorded_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")}
                store = await asyncio.to_thread(CassetteStore.open, self.directory, name, provenance)
                if store.repaired:
                    self.progress.note(f"cassette {name}: cut off an incomplete last interaction "
                                       f"({store.repaired} bytes) left by a recorder that was killed")
                self.stores[name] = store
            return self.stores[name]

    def report(self, info: dict[str, Any]) -> None:
        """Hand one interaction's description to the progress output."""
        self.progress.report(info)


STATE: web.AppKey[RecorderState] = web.AppKey("ssemock_recorder_state")
