"""``GET /_ssemock/metrics``: scraped from real servers (``MockServer``, ``ssemock serve --workers 2``) by
real clients, read by ``prometheus-client``'s own parser after requests of known outcomes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from ssemock import MockServer
from ssemock.journal_query import OUTCOMES
from ssemock.mockserver import collect_cassettes
from ssemock.telemetry import DURATION_BUCKETS, FIRST_BYTE_BUCKETS
from tests.test_workers import serve

CASSETTE = "openai-chat-tool-calls-usage"
SLOW_FIRST_BYTE = "ssemock_scenario: 1\nname: first-byte-1200ms\nsteps:\n- first-byte: {seconds: 1.2}\n"
STALL = "ssemock_scenario: 1\nname: stall-3s\nsteps:\n- stall: {after_events: 1, seconds: 3}\n"
BUNDLED = Path(__file__).resolve().parent.parent / "scenarios"


def samples(url: str, accept: str | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The scrape of ``url``'s metrics, parsed by prometheus-client: value by (sample name, sorted labels)."""
    resp = httpx.get(f"{url}/_ssemock/metrics", headers={"Accept": accept} if accept else {})
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(resp.text)
        for s in family.samples
    }


def total(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """The sum of the samples named ``name`` whose labels include ``labels`` (over every worker)."""
    return sum(v for (n, got), v in found.items() if n == name and set(labels.items()) <= set(got))


def stream(client: httpx.Client, url: str, *, scenario: str | None = None, cassette: str = CASSETTE) -> int:
    """One request for the recorded chat stream; the body bytes the client read (up to a cut)."""
    inter = collect_cassettes(None)[CASSETTE].interactions[0]
    headers = {"X-SSEMock-Cassette": cassette, **({"X-SSEMock-Scenario": scenario} if scenario else {})}
    read = 0
    with client.stream("POST", url + inter.request.path, content=inter.request.body, headers=headers) as resp:
        try:
            for piece in resp.iter_raw():
                read += len(piece)
        except (httpx.RemoteProtocolError, httpx.ReadError):  # a cut (no chunked terminator), a reset
            pass
    return read


def test_counts_bytes_and_histograms_equal_what_the_clients_did(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text(SLOW_FIRST_BYTE)
    with MockServer(timing_scale=0, scenarios=[tmp_path / "slow.yaml", BUNDLED]) as server, httpx.Client() as client:
        read = sum(stream(client, server.url) for _ in range(5))
        read += sum(stream(client, server.url, scenario="cut-mid-event") for _ in range(3))
        read += stream(client, server.url, scenario="first-byte-1200ms")
        for _ in range(2):
            assert (
                client.post(
                    server.url + "/v1/chat/completions",
                    json={"model": "none"},
                    headers={"X-SSEMock-Cassette": "no-such-cassette"},
                ).status_code
                == 404
            )
        found = samples(server.url)
    recorded = collect_cassettes(None)[CASSETTE].interactions[0].response.body
    assert read > 6 * len(recorded)  # the six whole answers, and three cut ones
    assert total(found, "ssemock_requests_total", outcome="complete") == 6
    assert total(found, "ssemock_requests_total", outcome="cut") == 3
    assert total(found, "ssemock_requests_total", outcome="refused") == 2
    assert total(found, "ssemock_requests_total") == 11  # admin requests are not counted
    assert total(found, "ssemock_sent_bytes_total") == read
    assert total(found, "ssemock_faults_applied_total", scenario="cut-mid-event") == 3
    assert total(found, "ssemock_faults_applied_total", scenario="first-byte-1200ms") == 1
    assert total(found, "ssemock_streams_open") == 0
    for name, bounds in (
        ("ssemock_time_to_first_byte_seconds", FIRST_BYTE_BUCKETS),
        ("ssemock_stream_duration_seconds", DURATION_BUCKETS),
    ):
        assert total(found, f"{name}_count") == 9  # every answer sent; the refusals are not streams
        assert total(found, f"{name}_bucket", le="+Inf") == 9
        assert [total(found, f"{name}_bucket", le=repr(b)) for b in bounds] == sorted(
            total(found, f"{name}_bucket", le=repr(b)) for b in bounds
        )
    # the 1.2 s first byte lies above 1 s, and its answer lasted as long; the others, at timing scale 0, did not
    assert total(found, "ssemock_time_to_first_byte_seconds_bucket", le="1.0") == 8
    assert total(found, "ssemock_time_to_first_byte_seconds_bucket", le="2.5") == 9
    assert 1.2 <= total(found, "ssemock_time_to_first_byte_seconds_sum") < 2.5 + 8 * 1.0
    assert total(found, "ssemock_stream_duration_seconds_bucket", le="1.0") == 8
    assert total(found, "ssemock_stream_duration_seconds_sum") >= 1.2


def test_reset_and_client_gone_are_counted_by_their_journal_outcome() -> None:
    with MockServer(timing_scale=1) as server, httpx.Client() as client:
        stream(client, server.url, scenario="reset-mid-event")
        inter = collect_cassettes(None)[CASSETTE].interactions[0]
        with client.stream(
            "POST",
            server.url + inter.request.path,
            content=inter.request.body,
            headers={"X-SSEMock-Cassette": CASSETTE, "X-SSEMock-Scenario": "stall"},
        ) as resp:
            assert resp.status_code == 200
            pieces = resp.iter_raw()
            next(pieces)  # the first event; then 5 s of stall: the client leaves
            assert total(samples(server.url), "ssemock_streams_open") == 1
        deadline = time.monotonic() + 10
        while (found := samples(server.url)) and total(found, "ssemock_streams_open") and time.monotonic() < deadline:
            time.sleep(0.02)
    assert total(found, "ssemock_streams_open") == 0
    assert total(found, "ssemock_requests_total", outcome="reset") == 1
    assert total(found, "ssemock_requests_total", outcome="client_gone") == 1
    assert total(found, "ssemock_requests_total") == 2


def test_two_servers_in_one_process_keep_their_own_counts() -> None:
    with MockServer(timing_scale=0) as one, MockServer(timing_scale=0) as two, httpx.Client() as client:
        for _ in range(3):
            stream(client, one.url)
        stream(client, two.url)
        assert total(samples(one.url), "ssemock_requests_total", outcome="complete") == 3
        assert total(samples(two.url), "ssemock_requests_total", outcome="complete") == 1
        one.reset()  # clears the journal, never a counter
        assert total(samples(one.url), "ssemock_requests_total", outcome="complete") == 3


def test_openmetrics_is_answered_when_the_scraper_asks_for_it() -> None:
    with MockServer(timing_scale=0) as server, httpx.Client() as client:
        stream(client, server.url)
        resp = client.get(
            server.url + "/_ssemock/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
    assert resp.headers["content-type"].startswith("application/openmetrics-text")
    assert resp.text.endswith("# EOF\n")
    assert 'ssemock_requests_total{outcome="complete"} 1.0' in resp.text


@pytest.mark.parametrize(
    "headers", [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Host": "evil.example"}]
)
def test_the_metrics_follow_the_admin_routes_origin_rules(headers: dict[str, str]) -> None:
    with MockServer(timing_scale=0) as server:
        resp = httpx.get(server.url + "/_ssemock/metrics", headers=headers)
    assert resp.status_code in (403, 421)
    assert resp.json()["error"]["type"] in ("ssemock_cross_origin", "ssemock_misdirected_host")


def scrape_until_both(url: str, workers: Iterable[int]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    expected = {str(w) for w in workers}
    found = samples(url)
    assert {dict(labels)["worker"] for name, labels in found if name == "ssemock_sent_bytes_total"} == expected
    return found


def test_with_two_workers_a_scrape_of_either_shows_both(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2", "--timing-scale", "0") as served:
        read = 0
        answered: set[int] = set()
        count = 0
        while len(answered) < 2 and count < 200:  # one connection per request: the kernel spreads them
            for _ in range(10):
                with httpx.Client(headers={"Connection": "close"}) as client:
                    read += stream(client, served.url)
                count += 1
            answered = {e["worker"] for e in httpx.get(f"{served.url}/_ssemock/requests").json()}
        workers = served.workers()
        assert answered == set(workers)
        scrapes = []
        for _ in range(6):  # each on a new connection, so that both workers answer some of them
            scrapes.append(scrape_until_both(served.url, workers))
        journal = httpx.get(f"{served.url}/_ssemock/requests").json()
    for found in scrapes:
        assert total(found, "ssemock_requests_total", outcome="complete") == count
        assert total(found, "ssemock_sent_bytes_total") == read
        assert total(found, "ssemock_stream_duration_seconds_count") == count
        assert total(found, "ssemock_time_to_first_byte_seconds_count") == count
        for worker in workers:  # each worker's own counts, under its label
            own = sum(1 for e in journal if e["worker"] == worker)
            assert total(found, "ssemock_requests_total", worker=str(worker)) == own


def test_a_scrape_during_requests_in_flight_answers(tmp_path: Path) -> None:
    """Scrapes while streams are being sent: the gauge counts them, and every scrape parses."""
    (tmp_path / "stall.yaml").write_text(STALL)
    with MockServer(timing_scale=1, scenarios=[tmp_path / "stall.yaml"], scenario="stall-3s") as server:

        def one() -> None:
            with httpx.Client() as client:
                stream(client, server.url)

        threads = [threading.Thread(target=one) for _ in range(3)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while total(samples(server.url), "ssemock_streams_open") < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert total(samples(server.url), "ssemock_streams_open") == 3
        for thread in threads:
            thread.join(15)
        assert total(samples(server.url), "ssemock_requests_total", outcome="complete") == 3


@given(
    names=st.lists(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz-0123456789", min_size=1, max_size=40), min_size=1, max_size=8
    )
)
@settings(max_examples=20, deadline=None)
def test_no_request_adds_a_label_value_beyond_the_loaded_scenarios(names: list[str]) -> None:
    """Scenario and cassette names that clients send (header, path prefix) and that are not loaded are refused
    before the meter counts them: the label values stay the loaded scenario names and the journal's outcomes."""
    with MockServer(timing_scale=0) as server, httpx.Client() as client:
        loaded = set(server.state.scenarios)
        for name in names:
            stream(client, server.url, scenario=f"cut-mid-event,{name}")
            stream(client, server.url, cassette=name)
            client.post(f"{server.url}/_ssemock/s/{name}/v1/chat/completions", json={})
        found = samples(server.url)
    scenarios = {dict(labels)["scenario"] for name, labels in found if name == "ssemock_faults_applied_total"}
    outcomes = {dict(labels)["outcome"] for name, labels in found if name == "ssemock_requests_total"}
    assert scenarios <= loaded
    assert outcomes <= set(OUTCOMES) - {"in_progress"}


@pytest.mark.parametrize(
    "headers", [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Host": "evil.example"}]
)
def test_with_workers_the_gathered_routes_keep_the_admin_origin_rules(tmp_path: Path, headers: dict[str, str]) -> None:
    """The workers' gathering runs after the edge's checks: a page of another site reads neither the
    gathered metrics nor the gathered journal, nor clears it."""
    with serve(tmp_path, "--workers", "2", "--timing-scale", "0") as served:
        with httpx.Client(headers={"Connection": "close"}) as client:
            stream(client, served.url)
        answers = [
            httpx.get(f"{served.url}/_ssemock/metrics", headers=headers),
            httpx.get(f"{served.url}/_ssemock/requests", headers=headers),
            httpx.delete(f"{served.url}/_ssemock/requests", headers=headers),
        ]
        kept = httpx.get(f"{served.url}/_ssemock/requests").json()
    for resp in answers:
        assert resp.status_code in (403, 421)
        assert resp.json()["error"]["type"] in ("ssemock_cross_origin", "ssemock_misdirected_host")
    assert len(kept) == 1
