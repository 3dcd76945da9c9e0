"""``ssemock drift --update``: the recordings that drifted replaced by the provider's answer now.

Each cassette file is written once, atomically (:func:`ssemock.cassette.save`: a temporary file in the
same directory, then a rename), with every other interaction as it was. An interaction keeps its
recorded request (what replay matches on); its response becomes the new recording, which the
recorder's secret filter has scrubbed as it scrubs every recording. The cassette's provenance gets
``drift_updated_at`` (UTC) and ``drift_updated_interactions`` (the indexes replaced).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from ..cassette import Cassette, Interaction, save
from .run import Outcome

__all__ = ["update_cassettes"]


def update_cassettes(cassettes: Sequence[Cassette], outcomes: Sequence[Outcome]) -> list[Path]:
    """Replace, in each cassette file, the interactions whose outcome has findings and a new recording.

    Returns:
        The files written, in order.

    Raises:
        OSError: a file cannot be written (the file is then unchanged).
    """
    written = []
    for cassette in cassettes:
        changed = {o.index: o.new for o in outcomes if o.cassette == cassette.path and o.findings and o.new is not None}
        if not changed or cassette.path is None:
            continue
        # a new Cassette: the loaded one may be shared by the cache of parsed cassettes
        interactions = []
        for index, old in enumerate(cassette.interactions):
            new = changed.get(index)
            interactions.append(old if new is None else Interaction(old.request, new.response))
        stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        provenance = {**cassette.provenance, "drift_updated_at": stamp, "drift_updated_interactions": sorted(changed)}
        written.append(save(replace(cassette, interactions=interactions, provenance=provenance), cassette.path))
    return written
