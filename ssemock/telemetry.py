"""Telemetry: ``GET /_ssemock/metrics``, the replay server's counts in the Prometheus text exposition.

The request path only adds to plain counters of the server's :class:`Meter` (a few integer additions
and two bucket searches per request, on the event loop that answers it: no lock, no object kept);
``prometheus-client`` (imported at the first scrape, not when the server starts: it takes about 0.1 s)
builds the metric families from them when the endpoint is scraped, in a
registry of that scrape's own (never the process-wide default registry, so that several servers in
one process keep their own counts), and writes the exposition (the text format, or OpenMetrics when
the scraper's ``Accept`` asks for it). The metrics:

* ``ssemock_streams_open`` (gauge): answers being sent now;
* ``ssemock_requests_total{outcome}`` (counter): replay requests (those the journal records), counted
  when their answer ends, by the journal's ``outcome`` (``complete``, ``cut``, ``reset``,
  ``client_gone``, ``refused``, ``stopped``, ``error``);
* ``ssemock_sent_bytes_total`` (counter): response body bytes written (the journal's ``bytes_sent``:
  the bytes a client reads from the body, before any chunked framing);
* ``ssemock_faults_applied_total{scenario}`` (counter): answers sent under each scenario (asked for by
  the request or the server's default, or drawn by chance: :mod:`ssemock.chaos`; one asked for with a
  ``probability`` only when drawn), one count per scenario name;
* ``ssemock_time_to_first_byte_seconds`` (histogram, :data:`FIRST_BYTE_BUCKETS`): from the request's
  arrival to its response's status line and headers being written;
* ``ssemock_stream_duration_seconds`` (histogram, :data:`DURATION_BUCKETS`): from the request's arrival
  to the end of its answer.

The two histograms count the answers the sending layer sent (every request but the refused ones).
Counts are never reset: ``DELETE /_ssemock/requests`` clears the journal, not the counters. Under
``ssemock serve --workers`` every sample carries the label ``worker`` (the process id), and a scrape of
any worker shows every worker (:mod:`ssemock.workers` gathers their :class:`Meter` records).
"""

from __future__ import annotations

import asyncio
import math
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .journal import JournalEntry

if TYPE_CHECKING:
    from prometheus_client.core import Metric

__all__ = [
    "DURATION_BUCKETS",
    "FIRST_BYTE_BUCKETS",
    "HEADERS_AT",
    "METER",
    "Histogram",
    "Meter",
    "exposition",
    "note_headers",
    "send_metrics",
]

FIRST_BYTE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Upper bounds (seconds) of the time-to-first-byte histogram's buckets (and ``+Inf``)."""
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
"""Upper bounds (seconds) of the stream-duration histogram's buckets (and ``+Inf``)."""

HEADERS_AT: web.RequestKey[float] = web.RequestKey("ssemock_headers_at", float)
"""Loop time (seconds) when a response's headers were written (:func:`note_headers`)."""


@dataclass(eq=False)
class Histogram:
    """Observations in buckets: ``counts[i]`` those at most ``bounds[i]`` and above the bound before;
    the last count is above every bound (``+Inf``). Seconds."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    """The sum of the observations."""

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def cumulative(self) -> list[tuple[str, float]]:
        """Prometheus' buckets: ``(le, observations at most le)``, the last ``("+Inf", count)``."""
        running, buckets = 0, []
        for bound, count in zip((*map(_le, self.bounds), "+Inf"), self.counts):
            running += count
            buckets.append((bound, float(running)))
        return buckets


def _le(bound: float) -> str:
    return repr(float(bound))


@dataclass(eq=False)
class Meter:
    """One server's counts (one worker's under ``--workers``), as the module docstring lists them."""

    streams_open: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    """Ended requests by journal outcome."""
    bytes_sent: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    """Answers sent by scenario name."""
    first_byte: Histogram = field(default_factory=lambda: Histogram(FIRST_BYTE_BUCKETS))
    duration: Histogram = field(default_factory=lambda: Histogram(DURATION_BUCKETS))

    def ended(self, request: web.Request, entry: Any, arrived: float) -> None:
        """Count ``request``'s answer, ended now: ``entry`` is its access note (a
        :class:`~ssemock.journal.JournalEntry` when it was journaled, else it is not counted);
        ``arrived``: loop time (seconds) when it arrived."""
        if not isinstance(entry, JournalEntry):
            return
        outcome = entry.outcome or "error"
        self.requests[outcome] = self.requests.get(outcome, 0) + 1
        sent = entry.sent
        if sent is None:
            return
        self.bytes_sent += sent.bytes
        for name in entry.applied:
            self.faults[name] = self.faults.get(name, 0) + 1
        now = asyncio.get_running_loop().time()
        self.duration.observe(now - arrived)
        headers = request.get(HEADERS_AT)
        if headers is not None:
            self.first_byte.observe(headers - arrived)

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON (for the exchange between workers); :meth:`from_json` reads it back."""
        return {
            "streams_open": self.streams_open,
            "requests": self.requests,
            "bytes_sent": self.bytes_sent,
            "faults": self.faults,
            "first_byte": [self.first_byte.counts, self.first_byte.total],
            "duration": [self.duration.counts, self.duration.total],
        }

    @classmethod
    def from_json(cls, data: Any) -> Meter:
        """The meter :meth:`to_json` wrote. Raises ``ValueError`` (or ``KeyError``, ``TypeError``) on anything else."""
        meter = cls(
            int(data["streams_open"]),
            {str(k): int(v) for k, v in data["requests"].items()},
            int(data["bytes_sent"]),
            {str(k): int(v) for k, v in data["faults"].items()},
        )
        for name, bounds in (("first_byte", FIRST_BYTE_BUCKETS), ("duration", DURATION_BUCKETS)):
            counts, total = data[name]
            if len(counts) != len(bounds) + 1:
                raise ValueError(f"{name}: {len(counts)} buckets, expected {len(bounds) + 1}")
            setattr(meter, name, Histogram(bounds, [int(c) for c in counts], float(total)))
        return meter


METER: web.AppKey[Meter] = web.AppKey("ssemock_meter", Meter)


async def note_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: note when the headers are written (:data:`HEADERS_AT`)."""
    request[HEADERS_AT] = asyncio.get_running_loop().time()


class _Families:
    """A ``prometheus-client`` collector of the meters given, each labelled with its worker (or not)."""

    def __init__(self, meters: Sequence[tuple[str | None, Meter]]) -> None:
        self.meters = meters

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

        worker = ["worker"] if any(w is not None for w, _ in self.meters) else []
        streams = GaugeMetricFamily("ssemock_streams_open", "Answers being sent now.", labels=worker)
        requests = CounterMetricFamily(
            "ssemock_requests", "Replay requests whose answer ended, by journal outcome.", labels=[*worker, "outcome"]
        )
        sent = CounterMetricFamily("ssemock_sent_bytes", "Response body bytes written.", labels=worker)
        faults = CounterMetricFamily(
            "ssemock_faults_applied", "Answers sent under each scenario, by name.", labels=[*worker, "scenario"]
        )
        first = HistogramMetricFamily(
            "ssemock_time_to_first_byte_seconds",
            "Seconds from a request's arrival to its response headers.",
            labels=worker,
        )
        duration = HistogramMetricFamily(
            "ssemock_stream_duration_seconds",
            "Seconds from a request's arrival to the end of its answer.",
            labels=worker,
        )
        for name, meter in self.meters:
            own = [] if name is None else [name]
            streams.add_metric(own, meter.streams_open)
            for outcome, count in sorted(meter.requests.items()):
                requests.add_metric([*own, outcome], count)
            sent.add_metric(own, meter.bytes_sent)
            for scenario, count in sorted(meter.faults.items()):
                faults.add_metric([*own, scenario], count)
            for family, histogram in ((first, meter.first_byte), (duration, meter.duration)):
                family.add_metric(own, histogram.cumulative(), _finite(histogram.total))
        yield from (streams, requests, sent, faults, first, duration)


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def exposition(meters: Sequence[tuple[str | None, Meter]], accept: str | None = None) -> tuple[bytes, str]:
    """The exposition of ``meters`` (``(worker label or None, meter)`` pairs), in the format ``accept`` (an
    ``Accept`` header) chooses: ``(body, content type)``."""
    from prometheus_client import CollectorRegistry  # imported when first scraped (about 0.1 s), not at start
    from prometheus_client.exposition import choose_encoder

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(meters))
    encoder, content_type = choose_encoder(accept or "")
    return encoder(registry), content_type


def send_metrics(
    request: web.Request, meters: Sequence[tuple[str | None, Meter]], headers: dict[str, str] | None = None
) -> web.Response:
    """The answer to ``GET /_ssemock/metrics`` showing ``meters``; ``headers`` are added to the answer's."""
    body, content_type = exposition(meters, request.headers.get("Accept"))
    return web.Response(body=body, headers={**(headers or {}), "Content-Type": content_type})


async def handle_metrics(request: web.Request) -> web.Response:
    """The Prometheus exposition of this server's counts (OpenMetrics when ``Accept`` asks for it): streams
    open, requests by journal outcome, body bytes sent, answers by scenario, time-to-first-byte and stream
    duration histograms (seconds); with ``--workers``, every worker's, labelled ``worker``."""
    return send_metrics(request, [(None, request.app[METER])])
