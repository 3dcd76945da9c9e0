"""Drift: is a recording still what the provider sends? (``ssemock drift CASSETTE… --target URL``)

Each recorded request is sent again to the provider through the recorder (:mod:`.run`); the new
answer is compared with the recording by shape, never by value (:mod:`.shape`): event types and
their order, JSON key paths and types per event type, header names, line endings, fields, comments
and keep-alives, first-byte time and the gaps between reads. The findings come in tiers
(:mod:`.compare`: breaking, changed, cosmetic); ``--update`` replaces the recordings that drifted
(:mod:`.update`); :mod:`.cli` is the command, its report and its exit status.
"""

from __future__ import annotations

from .compare import KINDS, Finding, Tier, Tolerance, compare
from .run import DriftOptions, Outcome, replay_all
from .shape import VOLATILE_HEADER_PREFIXES, VOLATILE_HEADERS, Shape, shape_of

__all__ = [
    "KINDS",
    "VOLATILE_HEADERS",
    "VOLATILE_HEADER_PREFIXES",
    "DriftOptions",
    "Finding",
    "Outcome",
    "Shape",
    "Tier",
    "Tolerance",
    "compare",
    "replay_all",
    "shape_of",
]
