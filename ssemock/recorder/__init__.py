"""The recorder: a streaming reverse proxy that records what a provider really sends.

``Recorder(target, cassette_dir, mode=...)`` (also ``ssemock record --target URL``)
forwards every request to the provider and streams the answer back read by read,
while each read is kept with its time offset into a cassette; secrets are
filtered out before anything is written (:mod:`ssemock.redact`).

Modules: :mod:`.modes` (record modes), :mod:`.proxy` (the aiohttp handler),
:mod:`.spool` (one interaction: metadata in memory, chunks off the heap), :mod:`.store` (the
interactions of one cassette; one writer per cassette),
:mod:`.writer` (appending interactions to cassette files, chunk by chunk), :mod:`.progress` (one line
per interaction, summary), :mod:`.state` (what the handler reads: options, open cassettes, upstream
session), :mod:`.core` (``Recorder``).
"""

from __future__ import annotations

from .core import Recorder
from .modes import RecordMode, record_mode
from .progress import Progress, ProgressRow
from .relay import CASSETTE_HEADER
from .state import RecorderOptions

__all__ = ["CASSETTE_HEADER", "Progress", "ProgressRow", "RecordMode", "Recorder", "RecorderOptions", "record_mode"]
