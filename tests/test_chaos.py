"""Faults by rate (``--chaos``, ``probability:``): drawn from the seed and the request's sequence number, so
reproducible; within the binomial bounds; journaled and counted; by path and provider; bounded options.

Through ``ssemock serve`` in a process of its own and real clients (httpx, the openai SDK).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from math import comb
from pathlib import Path

import httpx
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from ssemock import ConfigError, MockServer, ScenarioError
from ssemock.chaos import Chaos, Rate, draw, parse_rule, pick
from ssemock.cli import main
from ssemock.journal import describe_journal
from ssemock.limits import MAX_CHAOS_RATES, MAX_CHAOS_RULES
from ssemock.mockserver import collect_cassettes
from ssemock.scenario import Scenario
from ssemock.stubs import reply

from .processes import reap
from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()

CASSETTE = "openai-chat-finish-length-usage"
REQUESTS = 2000
RATE = Fraction(5, 100)


def binomial_interval(n: int, p: Fraction, confidence: Fraction) -> tuple[int, int]:
    """The central interval [lo, hi] of Binomial(n, p) holding at least ``confidence``: P(X < lo) and P(X > hi)
    each at most (1 - confidence) / 2, computed exactly."""
    tail = (1 - confidence) / 2
    cumulative, lo = Fraction(0), None
    for k in range(n + 1):
        cumulative += comb(n, k) * p**k * (1 - p) ** (n - k)
        if lo is None and cumulative > tail:
            lo = k
        if cumulative >= 1 - tail:
            assert lo is not None
            return lo, k
    raise AssertionError("unreachable: the cumulative probability reaches 1")


def test_the_binomial_interval_of_the_chaos_test_is_69_to_133() -> None:
    """2,000 requests at 5 %: 100 expected, standard deviation 9.7; the 99.9 % central interval is [69, 133]."""
    assert binomial_interval(REQUESTS, RATE, Fraction(999, 1000)) == (69, 133)


@contextlib.contextmanager
def serve(tmp_path: Path, *argv: str) -> Iterator[str]:
    err = (tmp_path / "stderr").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--timing-scale", "0", *argv],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("ssemock serving on http://127.0.0.1:"), (tmp_path / "stderr").read_text()
        yield first.rsplit(" ", 1)[1]
    finally:
        reap(proc)
        err.close()


def run_requests(url: str, count: int) -> list[int]:
    """``count`` requests for the recorded chat stream, one after the other; the sequence numbers (from 1) of
    those whose stream the client saw cut (httpx: the body ended before its chunked terminator)."""
    recorded = collect_cassettes(None)[CASSETTE].interactions[0]
    whole = recorded.response.body
    cut = []
    with httpx.Client(base_url=url, headers={"X-SSEMock-Cassette": CASSETTE}) as client:
        for seq in range(1, count + 1):
            try:
                with client.stream("POST", recorded.request.path, content=recorded.request.body) as resp:
                    assert resp.status_code == 200
                    body = resp.read()
                assert body == whole
            except httpx.RemoteProtocolError:
                cut.append(seq)
    return cut


def faults(url: str) -> list[tuple[int, str | None, float]]:
    """The journal's ``(seq, fault, draw)`` of every request."""
    return [(e["seq"], e["fault"], e["draw"]) for e in httpx.get(f"{url}/_ssemock/requests").json()]


def test_a_5_percent_rate_lands_in_the_binomial_bounds_and_replays_the_same_faults_with_the_same_seed(
    tmp_path: Path,
) -> None:
    rule = "cut-mid-event=0.05"
    with serve(tmp_path, "--chaos", rule, "--seed", "7", "--journal-capacity", str(REQUESTS)) as url:
        cut = run_requests(url, REQUESTS)
        first = faults(url)
        scrape = httpx.get(f"{url}/_ssemock/metrics").text
        assert httpx.delete(f"{url}/_ssemock/requests").json() == {"cleared": REQUESTS}  # seq starts again at 1
        again = run_requests(url, REQUESTS)
        second = faults(url)
    lo, hi = binomial_interval(REQUESTS, RATE, Fraction(999, 1000))
    assert lo <= len(cut) <= hi, (len(cut), lo, hi)
    # What the client saw is what the journal says hit it, and every draw decides by the documented rule.
    assert [seq for seq, fault, _ in first if fault == "cut-mid-event"] == cut
    assert all((fault == "cut-mid-event") == (value < 0.05) for _, fault, value in first)
    assert second == first and again == cut
    counted = {
        s.labels.get("scenario"): s.value
        for family in text_string_to_metric_families(scrape)
        for s in family.samples
        if s.name == "ssemock_faults_applied_total"
    }
    assert counted == {"cut-mid-event": len(cut)}

    with serve(tmp_path, "--chaos", rule, "--seed", "8", "--journal-capacity", str(REQUESTS)) as url:
        other = run_requests(url, REQUESTS)
        third = faults(url)
    assert lo <= len(other) <= hi, (len(other), lo, hi)
    assert [seq for seq, fault, _ in third if fault == "cut-mid-event"] == other
    assert other != cut and [v for *_, v in third] != [v for *_, v in first]


@given(st.integers(-(2**63), 2**63), st.integers(1, 10**9))
def test_a_draw_is_a_number_in_0_to_1(seed: int, seq: int) -> None:
    value = draw(seed, seq)
    assert 0 <= value < 1 and value == draw(seed, seq)


@given(st.lists(st.floats(0, 0.25), min_size=1, max_size=4), st.floats(0, 1, exclude_max=True))
def test_rates_lie_end_to_end_from_0(rates: list[float], value: float) -> None:
    """The scenario drawn is the one whose stretch of [0, 1) holds the draw; none past the sum."""
    named = [Rate(f"s{i}", r) for i, r in enumerate(rates)]
    edges = [sum(rates[: i + 1]) for i in range(len(rates))]
    expected = next((f"s{i}" for i, edge in enumerate(edges) if value < edge), None)
    assert pick(named, value) == expected


@given(
    st.lists(st.sampled_from(["cut-mid-event", "http-429", "http-500", "stall"]), min_size=1, max_size=4, unique=True),
    st.lists(st.floats(0, 0.25), min_size=4, max_size=4),
    st.one_of(st.none(), st.just("path=/v1/chat/*:"), st.just("provider=gemini:")),
)
def test_a_rule_reads_back_from_what_it_describes(names: list[str], rates: list[float], scope: str | None) -> None:
    text = (scope or "") + ",".join(f"{n}={r!r}" for n, r in zip(names, rates))
    rule = parse_rule(text)
    assert [(r.scenario, r.rate) for r in rule.rates] == list(zip(names, rates))
    assert parse_rule(rule.describe()) == rule


def test_a_scenario_files_probability_applies_on_the_same_draw(tmp_path: Path) -> None:
    """``probability: 0.25`` in a scenario file named by ``--scenario``: a request gets it when its draw is below
    0.25, and the client sees that scenario's 503; the others are answered as recorded."""
    flaky = tmp_path / "flaky.yaml"
    flaky.write_text("ssemock_scenario: 1\nname: flaky\nprobability: 0.25\nsteps:\n- http-error: {status: 503}\n")
    with (
        MockServer(
            cassettes=[],
            scenarios=[flaky],
            scenario="flaky",
            seed=3,
            stubs=[reply("hello", times=None)],
            timing_scale=0,
        ) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0) as client,
    ):
        statuses = []
        for _ in range(200):
            try:
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
                statuses.append(200)
            except openai.APIStatusError as exc:
                statuses.append(exc.status_code)
        journal = server.requests
    assert [e["fault"] for e in journal] == ["flaky" if e["draw"] < 0.25 else None for e in journal]
    assert statuses == [503 if e["fault"] else 200 for e in journal]
    assert 20 <= statuses.count(503) <= 80  # 50 expected; far inside the 99.9 % interval [31, 71]


def test_rates_by_path_and_by_provider(tmp_path: Path) -> None:
    """The first scoped rule that covers a request applies, else the rule without a scope."""
    chaos = ["path=/v1/chat/*:http-429=1", "provider=anthropic:http-500=1", "http-401=1"]
    with MockServer(cassettes=[], chaos=chaos, stubs=[reply("hi", times=None)], timing_scale=0) as server:
        with httpx.Client(base_url=server.url) as client:
            chat = client.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": []})
            messages = client.post(
                "/v1/messages", json={"model": "claude-sonnet-4-5", "messages": [], "max_tokens": 10}
            )
            responses = client.post("/v1/responses", json={"model": "gpt-4o", "input": "hi"})
        journal = server.requests
    assert (chat.status_code, messages.status_code, responses.status_code) == (429, 500, 401)
    assert [e["fault"] for e in journal] == ["http-429", "http-500", "http-401"]


def test_a_path_glob_may_hold_a_colon() -> None:
    """Gemini paths hold a ':': the scope ends at the last one."""
    rule = parse_rule("path=/v1beta/models/*:streamGenerateContent:http-429=0.5")
    assert rule.path == "/v1beta/models/*:streamGenerateContent" and rule.rates == (Rate("http-429", 0.5),)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "cut-mid-event=0.7,http-429=0.4",
            "the rates of one rule sum to at most 1 (a request draws one fault), got 1.1",
        ),
        ("cut-mid-event=1.5", "the rate of cut-mid-event: expected a rate from 0 to 1, got '1.5'"),
        ("cut-mid-event=-0.1", "the rate of cut-mid-event: expected a rate from 0 to 1, got '-0.1'"),
        ("cut-mid-event=nan", "the rate of cut-mid-event: expected a rate from 0 to 1, got 'nan'"),
        ("cut-mid-event= 0.1", "the rate of cut-mid-event: expected a rate from 0 to 1, got ' 0.1'"),
        ("cut-mid-event", "expected NAME=RATE (a scenario name, a rate from 0 to 1), got 'cut-mid-event'"),
        ("cut-mid-event=0.1,cut-mid-event=0.1", "cut-mid-event has two rates in one rule"),
        ("host=x:http-429=0.1", "a scope is path=GLOB: or provider=NAME:, got 'host=x'"),
        (
            "provider=openai:http-429=0.1",
            "provider= takes one of openrouter, openai-responses, groq, mistral, "
            "anthropic, gemini, openai-chat, generic, got 'openai'",
        ),
        ("path=v1/*:http-429=0.1", "path= takes a glob starting with '/', at most 200 characters"),
        (
            ",".join(f"s{i}=0" for i in range(MAX_CHAOS_RATES + 1)),
            f"at most {MAX_CHAOS_RATES} rates in one rule, got 33",
        ),
    ],
)
def test_a_bad_chaos_rule_is_refused_naming_the_option(
    rule: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--chaos", rule])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ssemock serve: error: argument --chaos: expected a chaos rule ") and message in err, err
    with pytest.raises(ConfigError, match=r"^chaos "):
        MockServer(chaos=rule)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (5, "chaos: expected rules such as 'cut-mid-event=0.05,http-429=0.02', got 5"),
        (True, "chaos: expected rules such as 'cut-mid-event=0.05,http-429=0.02', got True"),
        (0.5, "chaos: expected rules such as 'cut-mid-event=0.05,http-429=0.02', got 0.5"),
        ({"http-500": 10**400}, "chaos: the rate of http-500: expected a rate from 0 to 1, got 1000"),
        ({"http-500": float("nan")}, "chaos: the rate of http-500: expected a rate from 0 to 1, got nan"),
        ({"http-500": 2}, "chaos: the rate of http-500: expected a rate from 0 to 1, got 2"),
        ({"provider=anthropic:http-429": 0.2},
         "chaos: the keys of a mapping are scenario names, got 'provider=anthropic:http-429'"),
        ({"http-500=0.5,cut-mid-event": 0.5},
         "chaos: the keys of a mapping are scenario names, got 'http-500=0.5,cut-mid-event'"),
        ({1: 0.5}, "chaos: the keys of a mapping are scenario names, got 1"),
    ],
)
def test_a_chaos_value_of_another_shape_is_refused(value: object, message: str) -> None:
    """Seen by an attacker: a bare number was iterated (``TypeError``, a 500 over HTTP), a huge integer rate
    overflowed a float, and a mapping key holding a scope or a second rate made a rule of its own."""
    with pytest.raises(ConfigError) as refused:
        Chaos.of(value)  # type: ignore[arg-type]
    assert str(refused.value).startswith(message), refused.value


def test_a_mapping_rate_of_minus_zero_is_zero() -> None:
    assert Chaos.of({"http-500": -0.0}).describe() == ["http-500=0.0"]


def test_unknown_scenarios_and_too_many_rules_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--chaos", "cut-mid-evnt=0.1"]) == 2
    assert capsys.readouterr().err == (
        "ssemock: error: serve: --chaos 'cut-mid-evnt=0.1': no scenario named "
        "'cut-mid-evnt'; did you mean 'cut-mid-event'?\n"
    )
    many = [arg for _ in range(MAX_CHAOS_RULES + 1) for arg in ("--chaos", "http-429=0.01")]
    assert main(["serve", "--port", "0", *many]) == 2
    assert capsys.readouterr().err == f"ssemock: error: serve: --chaos: at most {MAX_CHAOS_RULES} rules, got 17\n"
    with pytest.raises(ConfigError, match=r"^chaos: the rate of http-429: expected a rate from 0 to 1, got 'high'$"):
        MockServer(chaos={"http-429": "high"})
    with pytest.raises(ConfigError, match=r"^seed must be an integer, got 1.5$"):
        MockServer(seed=1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1.5, -0.1, "often", True])
def test_a_scenario_files_probability_out_of_0_to_1_is_refused(value: object) -> None:
    with pytest.raises(ScenarioError, match=r"x.yaml: probability: expected a number from 0 to 1"):
        Scenario.from_dict({"name": "x", "probability": value, "steps": []}, source="x.yaml")


def test_a_chaos_value_is_one_typed_record_the_server_holds() -> None:
    """The rates are one immutable value on the server's state: swapping it changes what later requests draw."""
    server = MockServer(cassettes=[], chaos={"http-429": 0.5}, stubs=[reply("hi", times=None)], timing_scale=0)
    assert server.state.chaos == Chaos.of("http-429=0.5") and server.state.chaos.describe() == ["http-429=0.5"]
    with server, httpx.Client(base_url=server.url) as client:
        server.call(lambda: setattr(server.state, "chaos", Chaos.of("http-500=1")))
        assert client.post("/v1/chat/completions", json={}).status_code == 500
        # the one-line description names the fault that answered, beside the stub
        assert describe_journal(server.requests).endswith("-> 500 complete, 1 chunks, "
                                                          f"{server.requests[0]['bytes_sent']} bytes "
                                                          f"(stub {server.requests[0]['stub']}, fault http-500)")


def test_the_marker_takes_chaos_and_seed(pytester: pytest.Pytester) -> None:
    """``@pytest.mark.ssemock(chaos=..., seed=...)``: the test's requests draw from its seed; the next test,
    without them, gets none."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_marker="""
        import httpx
        import pytest
        from ssemock.chaos import draw

        @pytest.mark.ssemock(chaos="http-429=0.5", seed=11)
        def test_drawn(ssemock):
            ssemock.reply("hi", times=None)
            statuses = [httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "m", "messages": []}
                                   ).status_code for _ in range(12)]
            assert statuses == [429 if draw(11, seq) < 0.5 else 200 for seq in range(1, 13)]
            assert [e["draw"] for e in ssemock.requests] == [draw(11, seq) for seq in range(1, 13)]

        def test_none(ssemock):
            ssemock.reply("hi", times=None)
            assert httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "m", "messages": []}
                              ).status_code == 200
            assert "draw" not in ssemock.requests[0]

        @pytest.mark.ssemock(chaos="http-429=2")
        def test_bad(ssemock):
            pass
    """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.ssemock: chaos 'http-429=2': the rate of http-429: expected a rate from 0 to 1, got '2'*"]
    )


def test_under_workers_each_worker_draws_on_its_own_sequence(tmp_path: Path) -> None:
    """``--workers 2``: every entry of the gathered journal drew ``draw(seed, its worker's seq)``, and its fault
    is the one that draw names."""
    with serve(tmp_path, "--workers", "2", "--chaos", "cut-mid-event=0.3", "--seed", "4") as url:
        cut = run_requests(url, 60)
        journal = httpx.get(f"{url}/_ssemock/requests").json()
    assert len(journal) == 60 and all(isinstance(e["worker"], int) for e in journal)  # gathered from the workers
    for entry in journal:
        assert entry["draw"] == draw(4, entry["seq"])
        assert entry["fault"] == ("cut-mid-event" if entry["draw"] < 0.3 else None)
        assert entry["outcome"] == ("cut" if entry["fault"] else "complete")
    assert len(cut) == sum(1 for e in journal if e["fault"])
