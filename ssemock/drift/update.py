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

from ..cassette import Cassette, Interaction, Response, save
from ..errors import short_repr
from .run import Outcome

__all__ = ["kept_because", "update_cassettes"]


def update_cassettes(cassettes: Sequence[Cassette], outcomes: Sequence[Outcome]) -> tuple[list[Path], list[str]]:
    """Replace, in each cassette file, the interactions whose outcome has findings and a new recording, but
    those the new answer would make worse (:func:`kept_because`: its reason goes to the outcome's
    ``not_updated``).

    Returns:
        The files written, in order, and one line per file that could not be written (it is then unchanged).
    """
    written, problems = [], []
    for cassette in cassettes:
        changed = {}
        for o in outcomes:
            if o.cassette == cassette.path and o.findings and o.new is not None:
                o.not_updated = kept_because(cassette.interactions[o.index], o.new)
                if o.not_updated is None:
                    changed[o.index] = o.new
        if not changed or cassette.path is None:
            continue
        # a new Cassette: the loaded one may be shared by the cache of parsed cassettes
        interactions = []
        for index, old in enumerate(cassette.interactions):
            new = changed.get(index)
            interactions.append(old if new is None else Interaction(old.request, new.response))
        stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        provenance = {**cassette.provenance, "drift_updated_at": stamp, "drift_updated_interactions": sorted(changed)}
        try:
            written.append(save(replace(cassette, interactions=interactions, provenance=provenance), cassette.path))
        except OSError as exc:
            problems.append(f"{cassette.path}: not updated: {exc.strerror or exc}")
    return written, problems


def kept_because(old: Interaction, new: Interaction) -> str | None:
    """Why the recording ``old`` is kept although the answer drifted, or None: a success answered by a
    redirect or an error now (an expired key, a rate limit, a login page's redirect: recorded, it would
    replace a good stream), an event stream answered by another content type (a proxy's HTML page), a
    new answer whose body was not recorded (it does not decode, or was too large), or a stream that ended
    cleanly cut now."""
    was, now = old.response, new.response
    if was.status < 300 <= now.status:
        return f"the provider answered {now.status} now; the recording of a {was.status} is kept"
    if _event_stream(was) and not _event_stream(now):
        shown = short_repr(now.header("content-type") or "none", 80)
        return f"the answer is no event stream now (Content-Type {shown}); the recorded event stream is kept"
    if now.body_not_recorded is not None and was.body_not_recorded is None:
        return f"the new answer's body was not recorded ({now.body_not_recorded}); the recording is kept"
    if was.end.how == "clean" and now.end.how != "clean":
        return f"the answer ended '{now.end.how}' now; the recording that ended clean is kept"
    return None


def _event_stream(response: Response) -> bool:
    media = (response.header("content-type") or "").partition(";")[0].strip().lower()
    return media == "text/event-stream"
