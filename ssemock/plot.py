"""The timeline picture of one recorded stream: ``ssemock inspect NAME --plot out.svg|png``.

Top panel: one stem per chunk at the time it is sent, its height the chunk's bytes; a dashed
line per event where the chunk that completes it arrives, coloured by event type; markers for
the first byte, the first event and the end (and how it ended: ``clean``, ``cut``, ``reset``, …).
Bottom panel: the gap before each chunk (seconds). Under a scenario (``--scenario``) the
picture shows the stream as the replay server would send it at timing scale 1: injected
delays (``first-byte``, ``stall``) as shaded spans, a cut as the end marker, and the steps'
notes (what was inserted, dropped, cut) as text. A recording without timing (imported from
VCR.py or raw bodies) is drawn against the chunk's position instead of seconds.

The picture carries what it shows as data, for tools and tests: the SVG's or PNG's
``Description`` metadata is JSON (:class:`Timeline` fields), and in an SVG each mark is a group
with an id: ``chunks``, ``gaps``, ``events-TYPE``, ``first-byte``, ``first-event``,
``end-HOW``, ``injected-first-byte-delay``, ``injected-pause-N``, ``injected-notes``.

matplotlib comes with the ``plot`` extra (``pip install matplotlib`` does the same) and is imported
only when a picture is drawn; without it :class:`~ssemock.errors.PlotError` says how to install it.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cassette import Cassette
from .diff import timed_events
from .errors import ConfigError, PlotError
from .names import scenario_names
from .plan import Plan
from .scenario import Scenario

__all__ = ["FORMATS", "Timeline", "draw", "pick_interaction", "plot_interaction", "timeline"]

FORMATS = ("svg", "png")
_INSTALL = "pip install matplotlib (ssemock's 'plot' extra)"
_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")


@dataclass
class Timeline:
    """What the picture shows; x values are seconds when ``timed``, else chunk positions.

    Attributes:
        title: cassette name, interaction and scenario.
        timed: whether the recording kept timing.
        chunks: ``[x, bytes]`` per chunk, in order.
        gaps: seconds (or positions) since the previous chunk (the first: since the request), per chunk.
        events: ``[x, type]`` per dispatched event.
        headers: seconds when the status line and headers are sent (timed only).
        first_byte: x of the first chunk, or None without a body.
        first_event: x of the first event, or None.
        end: x of the end of the body; ``end_how``: how it ended.
        first_byte_delay: seconds injected before the headers (a scenario's ``first-byte``).
        pauses: ``[x - seconds, seconds]`` injected before the chunk at ``x`` (a scenario's ``stall``).
        notes: what the scenario's steps did, one line each.
    """

    title: str
    timed: bool
    chunks: list[tuple[float, int]]
    gaps: list[float]
    events: list[tuple[float, str]]
    headers: float
    first_byte: float | None
    first_event: float | None
    end: float
    end_how: str
    first_byte_delay: float = 0.0
    pauses: list[tuple[float, float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plot_interaction(cassette: Cassette, path: Path, *, scenario: str | None = None,
                     interaction: int | None = None) -> str:
    """Draw interaction ``interaction`` of ``cassette`` (None: the only one) into ``path``, under
    ``scenario`` (a scenario file, or bundled names ``a,b``); returns the line that describes it.

    Raises:
        ConfigError: no scenario file nor bundled scenario of that name.
        PlotError: see :func:`pick_interaction` and :func:`draw`.
    """
    index = pick_interaction(cassette, interaction)
    line = timeline(cassette, index, None if scenario is None else _scenario(scenario))
    draw(line, path)
    return f"{path}: {line.title}, {len(line.chunks)} chunk(s), {len(line.events)} event(s), end {line.end_how}"


def _scenario(spec: str) -> Scenario:
    """A scenario file, or bundled scenarios by name (``--scenario``)."""
    if Path(spec).is_file():
        return Scenario.load(spec)
    from .mockserver import collect_scenarios

    known = collect_scenarios(None)
    try:
        names = scenario_names(spec)
    except ConfigError:
        names = ()
    if not names or any(n not in known for n in names):
        raise ConfigError(f"--scenario: no scenario file or bundled scenario named {spec!r}")
    return Scenario.compose(known[n] for n in names)


def pick_interaction(cassette: Cassette, index: int | None) -> int:
    """``index``, checked, or the first interaction whose response is an event stream (else 0).

    Raises:
        PlotError: ``index`` is not an interaction of ``cassette``.
    """
    count = len(cassette.interactions)
    if index is not None:
        if not 0 <= index < count:
            raise PlotError(f"{cassette.name}: no interaction #{index} (it has {count}: 0 to {count - 1})")
        return index
    streams = [i for i, x in enumerate(cassette.interactions)
               if "event-stream" in (x.response.header("content-type") or "")]
    if not count:
        raise PlotError(f"{cassette.name}: no interaction to draw")
    return streams[0] if streams else 0


def timeline(cassette: Cassette, index: int, scenario: Scenario | None = None, *, seed: int = 0) -> Timeline:
    """The timeline of interaction ``index``, as sent under ``scenario`` (timing scale 1)."""
    interaction = cassette.interactions[index]
    plan = Plan.of(interaction.response, seed=seed, request=interaction.request)
    if scenario is not None:
        scenario.apply(plan)
    response = plan.response
    timed = response.timed
    xs = _send_times(plan) if timed else [float(i) for i in range(len(response.chunks))]
    chunks = [(x, len(c.data)) for x, c in zip(xs, response.chunks)]
    gaps = [b - a for a, b in zip([0.0, *xs], xs)]
    plain = dataclasses.replace(response, headers=[(k, v) for k, v in response.headers
                                                   if k.lower() != "content-encoding"])
    events = [(xs[e.chunk], e.event.type) for e in timed_events(plain) if e.chunk < len(xs)]
    end = (_shift(plan, len(response.chunks)) + response.end.t) if timed else float(len(response.chunks))
    name = f"{cassette.name} #{index}" + (f" under {scenario.name}" if scenario is not None else "")
    pauses = [((xs[i] if i < len(xs) else end) - s, s) for i, s in sorted(plan.pauses.items()) if s > 0]
    return Timeline(
        title=name, timed=timed, chunks=chunks, gaps=gaps, events=events,
        headers=plan.first_byte_delay + response.start if timed else 0.0,
        first_byte=xs[0] if xs else None, first_event=events[0][0] if events else None,
        end=max(end, xs[-1] if xs else 0.0), end_how=response.end.how, first_byte_delay=plan.first_byte_delay,
        pauses=pauses, notes=list(plan.notes),
    )


def _shift(plan: Plan, index: int) -> float:
    """Absolute seconds injected before chunk ``index``: the first-byte delay and earlier pauses."""
    return plan.first_byte_delay + sum(s for i, s in plan.pauses.items() if i <= index)


def _send_times(plan: Plan) -> list[float]:
    """When each chunk is written at timing scale 1 (as :func:`ssemock.server.send_plan` does, without pacing)."""
    return [_shift(plan, i) + c.t for i, c in enumerate(plan.response.chunks)]


def draw(line: Timeline, path: Path) -> None:
    """Draw ``line`` into ``path`` (``.svg`` or ``.png``, chosen by the suffix).

    Raises:
        PlotError: another suffix, or matplotlib missing (the ``plot`` extra).
    """
    kind = path.suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise PlotError(f"{path}: expected a file name ending .svg or .png, got {path.suffix or 'no suffix'!r}")
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError(f"drawing {path.name} needs matplotlib: {_INSTALL}") from None
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ssemock", "font.size": 9}):
        fig = Figure(figsize=(10, 5.6), layout="constrained")
        if line.timed:
            top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
            bottom.vlines([x for x, _ in line.chunks], 0, line.gaps, color="#555555", linewidth=1, gid="gaps")
            bottom.set_ylabel("gap before (s)")
            bottom.set_xlabel("seconds from the request")
        else:  # positions only: no gaps to draw
            top = fig.subplots()
            top.set_xlabel("chunk (no timing recorded)")
        _draw_top(top, line)
        fig.suptitle(line.title)
        if line.notes:
            notes = "\n".join(textwrap.fill(n, 40) for n in line.notes[:20])
            top.text(1.01, 0.0, notes, transform=top.transAxes, fontsize=7, va="bottom", gid="injected-notes")
        metadata: dict[str, Any] = {"Title": line.title, "Description": json.dumps(dataclasses.asdict(line))}
        if kind == "svg":
            metadata["Date"] = None  # the same stream draws the same file
        else:
            metadata["Software"] = "ssemock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format=kind, metadata=metadata, dpi=110)


def _draw_top(ax: Any, line: Timeline) -> None:
    xs = [x for x, _ in line.chunks]
    sizes = [n for _, n in line.chunks]
    ax.vlines(xs, 0, sizes, color="#333333", linewidth=1.2, gid="chunks", label="chunk (bytes)")
    ax.plot(xs, sizes, "o", color="#333333", markersize=2.5)
    top = max(sizes, default=1) or 1
    types = sorted({t for _, t in line.events}, key=[t for _, t in line.events].index)
    for n, kind in enumerate(types[: len(_COLOURS)]):
        at = [x for x, t in line.events if t == kind]
        ax.vlines(at, 0, top * 1.05, colors=_COLOURS[n], linestyles="dashed", linewidth=0.8,
                  gid=f"events-{kind}", label=f"event: {kind}")
    rest = [x for x, t in line.events if t in types[len(_COLOURS):]]
    if rest:
        ax.vlines(rest, 0, top * 1.05, colors="#aaaaaa", linestyles="dashed", gid="events-other",
                  label="event: other types")
    if line.first_byte_delay > 0:
        ax.axvspan(0, line.first_byte_delay, color="#ffbb78", alpha=0.5, gid="injected-first-byte-delay",
                   label=f"injected: {line.first_byte_delay:g} s before the headers")
    for k, (start, seconds) in enumerate(line.pauses):
        # untimed: a band just before the chunk it delays (positions are not seconds)
        span = (start, start + seconds) if line.timed else (start + seconds - 0.5, start + seconds)
        ax.axvspan(*span, color="#ff9896", alpha=0.5, gid=f"injected-pause-{k}",
                   label=f"injected pause: {seconds:g} s" if line.timed or k == 0 else None)
    marks: list[tuple[str, float | None, str, str]] = [
        ("headers", line.headers if line.timed else None, "#7f7f7f", "headers"),
        ("first-byte", line.first_byte, "#ff7f0e", "first byte"),
        ("first-event", line.first_event, "#d62728", "first event"),
    ]
    for n, (gid, where, colour, label) in enumerate(marks):
        if where is not None:
            ax.plot([where], [top * (1.16 - 0.05 * (n % 2))], marker="v", color=colour, linestyle="none", gid=gid,
                    label=f"{label}: {where:.3f} s" if line.timed else f"{label}: chunk {where:g}")
    ended = "#2ca02c" if line.end_how == "clean" else "#d62728"
    ax.plot([line.end], [top * 1.1], marker="X" if line.end_how != "clean" else "s", color=ended,
            linestyle="none", gid=f"end-{line.end_how}", label=f"end: {line.end_how}")
    if line.timed:
        ax.set_xlim(left=0)
    ax.set_ylabel("bytes per chunk")
    ax.set_ylim(0, top * 1.2)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
