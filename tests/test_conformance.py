"""The conformance matrix on every bundled real recording, read by real clients.

For each semantics- or payload-preserving preset, the events a client sees equal what the
same client sees on the clean replay (type and data, or type and JSON value for the
payload-preserving presets); for our decoder they also equal what a WHATWG parser
dispatches from the recorded bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

import ssemock
from ssemock import MockServer
from ssemock.mockserver import collect_cassettes, collect_scenarios

from .sseclients import Seen, Stream, read_with_decoder, read_with_httpx_sse, read_with_node, sse_streams, view

MATRIX = ssemock.conformance_matrix()
PRESETS = collect_scenarios(None)
STREAMS = sse_streams(collect_cassettes(None))


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: MockServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def test_the_matrix_is_the_preserving_presets_of_the_issue() -> None:
    preserving = [
        "split-bytes", "split-random", "split-utf8", "split-crlf", "crlf", "cr", "mixed-eol", "bom",
        "keepalive", "multiline-data", "no-space", "extra-fields", "meta-blocks", "json-separators", "long-lines",
    ]
    assert ssemock.conformance_matrix() == sorted(preserving)
    assert {PRESETS[n].preserves for n in ("json-separators", "long-lines", "multiline-data")} == {"payloads"}


def test_every_bundled_recording_is_covered() -> None:
    covered = {s.cassette for s in STREAMS}
    assert len(covered) == 14 and len(STREAMS) >= 17
    assert all(s.truth() for s in STREAMS), "every stream dispatches events"


Reader = Callable[[httpx.Client, Stream, "str | None"], Seen]
READERS: dict[str, Reader] = {"decoder": read_with_decoder, "httpx-sse": read_with_httpx_sse}

# Findings: real clients that fail a preserving preset (strict: the test fails when they are fixed).
FINDINGS = {
    ("bom", "httpx-sse"): "httpx-sse 0.4.3 keeps a leading U+FEFF: the first field name becomes '\ufeffdata'"
                          " or '\ufeffevent', so the first event is lost or loses its type (WHATWG strips one BOM)",
    ("meta-blocks", "httpx-sse"): "httpx-sse 0.4.3 dispatches an event with empty data for a block holding only"
                                  " 'retry:' or 'id:' (WHATWG: no dispatch when the data buffer is empty)",
    ("cr", "node"): "eventsource-parser 3.1.1 holds a final bare CR waiting for an LF and has no end-of-stream"
                    " call, so the last event of a CR-framed stream is never dispatched",
    ("mixed-eol", "node"): "eventsource-parser 3.1.1: as for cr, when the stream's last line end is a bare CR",
}


def cases(*readers: str) -> list[object]:
    """(scenario, reader) parameters; known client failures are strict xfails."""
    out = []
    for reader in readers:
        for name in MATRIX:
            reason = FINDINGS.get((name, reader))
            marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)] if reason else []
            out.append(pytest.param(name, reader, marks=marks, id=f"{name}-{reader}"))
    return out


@pytest.mark.parametrize(("scenario", "reader"), cases(*READERS))
def test_python_readers_see_the_clean_events(
    server: MockServer, client: httpx.Client, scenario: str, reader: str
) -> None:
    preserves = PRESETS[scenario].preserves
    for stream in STREAMS:
        server.reset()
        clean = READERS[reader](client, stream, None)
        server.reset()
        got = READERS[reader](client, stream, scenario)
        assert server.requests[0]["scenario"] == scenario and server.requests[0]["outcome"] == "complete"
        assert view(got, preserves) == view(clean, preserves), stream.id
        if reader == "decoder":
            assert clean == stream.truth(), stream.id


@pytest.mark.parametrize(("scenario", "reader"), cases("node"))
def test_node_eventsource_parser_sees_the_clean_events(server: MockServer, scenario: str, reader: str) -> None:
    preserves = PRESETS[scenario].preserves
    server.reset()
    clean = read_with_node(server.url, STREAMS, None)
    server.reset()
    got = read_with_node(server.url, STREAMS, scenario)
    assert [len(c) for c in clean] == [len(s.truth()) for s in STREAMS]
    for stream, before, after in zip(STREAMS, clean, got):
        assert view(after, preserves) == view(before, preserves), stream.id
