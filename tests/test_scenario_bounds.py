"""What the steps of a request's scenarios add to its response body is bounded (docs/reference/limits.md:
256 MiB by default, ``max_scenario_growth``; each line a step adds counts 128 bytes more): past
the bound the request is answered ``500 ssemock_scenario_too_large`` naming the scenario, the
step and the bound, journaled as refused, nothing of the stream is sent, and the server goes on.
The bound keeps a small scenario over a long stream from taking the process's memory."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from ssemock import MockServer, Scenario, ScenarioError, SSEMockError
from ssemock.cassette import Cassette, Chunk, Interaction, Request, Response
from ssemock.errors import ScenarioTooLargeError
from ssemock.plan import Plan
from ssemock.stubs import Match, Reply, Stub

MIB = 1024 * 1024
DEFAULT_LIMIT = 256 * MIB  # docs/reference/limits.md: 256 MiB added by scenario steps
LINE_COST = 128  # docs/reference/limits.md: each line a step adds counts 128 bytes more
SSE = [("Content-Type", "text/event-stream")]
PATH = "/v1/chat/completions"


def chat_chunk(i: int) -> str:
    return ('{"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,'
            f'"delta":{{"content":"tok{i}"}}}}]}}')


def stream(payloads: list[str], name: str = "long", headers: list[tuple[str, str]] = SSE) -> Cassette:
    """One interaction answering ``POST /v1/chat/completions`` with one event per payload."""
    chunks = [Chunk(0.0, f"data: {p}\n\n".encode()) for p in payloads]
    return Cassette(name, [Interaction(Request("POST", PATH), Response(headers=list(headers), chunks=chunks))])


def scenario(name: str, *steps: dict[str, Any]) -> Scenario:
    return Scenario.from_dict({"name": name, "steps": list(steps)})


def post(server: MockServer, names: str) -> httpx.Response:
    return httpx.post(server.url + PATH, headers={"X-SSEMock-Scenario": names}, timeout=120)


def refusal(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 500, answer.text[:200]
    error: dict[str, Any] = answer.json()["error"]
    assert error["type"] == "ssemock_scenario_too_large"
    return error


# ---- the attack: a large edit value over a long stream -------------------------------------------
CHILD = textwrap.dedent("""
    import json, resource, sys
    import httpx
    from ssemock import MockServer, Scenario
    from ssemock.cassette import Cassette, Chunk, Interaction, Request, Response

    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # a regression fails here, not the machine
    events, value = int(sys.argv[1]), int(sys.argv[2])
    chunks = [Chunk(0.0, ('data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,'
                          f'"delta":{{"content":"tok{i}"}}}}]}}\\n\\n').encode()) for i in range(events)]
    chunks.append(Chunk(0.0, b"data: [DONE]\\n\\n"))
    cassette = Cassette("long", [Interaction(Request("POST", "/v1/chat/completions"),
                                             Response(headers=[("Content-Type", "text/event-stream")], chunks=chunks))])
    legit = Scenario.from_dict({"name": "legit", "steps": [{"edit": {"set": {"model": "gpt-4o-mini"}}}]})
    attack = Scenario.from_dict({"name": "attack", "steps": [
        {"edit": {"set": {"choices[0].delta.content": "x" * value}}}]})
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # bytes (Linux: KiB)
    with MockServer(cassette, scenarios=[legit, attack], timing_scale=0, match_on=["path"]) as server:
        with httpx.Client(base_url=server.url, timeout=600) as client:
            post = lambda name: client.post("/v1/chat/completions", headers={"X-SSEMock-Scenario": name})
            first = post("legit")  # the stream's own cost (split, parsed, edited once) is in the baseline
            before = peak()
            attacked = post("attack")
            after = peak()
            again = post("legit")
        print(json.dumps({"first": [first.status_code, len(first.content)], "before": before, "after": after,
                          "status": attacked.status_code, "answer": attacked.json(),
                          "again": [again.status_code, len(again.content)], "journal": server.requests}))
""")


def test_an_edit_with_a_large_value_over_a_long_stream_is_refused_at_the_bound_in_bounded_memory() -> None:
    events, value = 20_000, MIB - 2  # "x" * value is 1 MiB as JSON: the most one edit may set
    # Unbounded, every event gains 1 MiB: 20 GB to build (1,000 events took 6 GB of memory and 53 s).
    done = subprocess.run([sys.executable, "-c", CHILD, str(events), str(value)], capture_output=True, text=True,
                          timeout=600, env=os.environ, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    error = report["answer"]["error"]
    assert report["status"] == 500 and error["type"] == "ssemock_scenario_too_large"
    assert (error["scenario"], error["step"], error["limit"]) == ("attack", "steps[0].edit", DEFAULT_LIMIT)
    for shown in ("'attack'", "steps[0].edit", str(DEFAULT_LIMIT), str(error["added"]), "max_scenario_growth"):
        assert shown in error["message"], (shown, error["message"])
    # stopped at the event that went over: past the bound by less than that event's own gain
    assert DEFAULT_LIMIT < error["added"] <= DEFAULT_LIMIT + value + 200
    refused = report["journal"][1]
    assert (refused["status"], refused["outcome"], refused["scenario"]) == (500, "refused", "attack")
    assert refused["error"] == error
    # the other requests are served, before and after
    assert report["first"] == report["again"] and report["first"][0] == 200
    assert [e["outcome"] for e in report["journal"]] == ["complete", "refused", "complete"]
    # memory: a few times the bound at most (measured: ~290 MiB more), not the 20 GB asked for
    assert report["after"] - report["before"] < 4 * DEFAULT_LIMIT, report["after"] - report["before"]


def test_a_legit_edit_of_every_event_of_a_long_stream_is_sent_whole() -> None:
    events = 100_000
    rename = scenario("rename", {"edit": {"set": {"model": "gpt-4o-mini-2024-07-18"}}})
    with MockServer(stream([chat_chunk(i) for i in range(events)] + ["[DONE]"]), scenarios=[rename],
                    timing_scale=0, match_on=["path"]) as server, httpx.Client(timeout=300) as client:
        with connect_sse(client, "POST", server.url + PATH, headers={"X-SSEMock-Scenario": "rename"}) as source:
            data = [sse.data for sse in source.iter_sse()]
        entry = server.requests[-1]
    assert data[-1] == "[DONE]" and len(data) == events + 1
    payloads = [json.loads(d) for d in data[:-1]]
    assert all(p["model"] == "gpt-4o-mini-2024-07-18" for p in payloads)
    assert [p["choices"][0]["delta"]["content"] for p in payloads] == [f"tok{i}" for i in range(events)]
    assert (entry["status"], entry["outcome"]) == (200, "complete")


# ---- the edge: just under is sent, just over is refused ------------------------------------------
@pytest.fixture(scope="module")
def empty_values() -> Cassette:
    return stream(['{"a":""}'] * 1000 + ["[DONE]"], name="empty")


def test_edit_at_the_bound_is_sent_and_one_byte_over_is_refused(empty_values: Cassette) -> None:
    # each of the 1,000 events {"a":""} gains exactly 1,000 bytes: {"a":"xxx…"} (no line added)
    size, events = 1000, 1000
    fill = scenario("fill", {"edit": {"set": {"a": "x" * size}}})
    added = size * events
    with MockServer(empty_values, scenarios=[fill], timing_scale=0, max_scenario_growth=added) as server:
        sent = post(server, "fill")
    assert sent.status_code == 200
    assert sent.text == "".join(f'data: {{"a":"{"x" * size}"}}\n\n' for _ in range(events)) + "data: [DONE]\n\n"
    with MockServer(empty_values, scenarios=[fill], timing_scale=0, max_scenario_growth=added - 1) as server:
        error = refusal(post(server, "fill"))
        entry = server.requests[-1]
    assert (error["scenario"], error["step"], error["limit"], error["added"]) == ("fill", "steps[0].edit", added - 1,
                                                                                  added)
    assert (entry["status"], entry["outcome"], entry["error"]) == (500, "refused", error)
    assert "bytes_sent" not in entry or entry["bytes_sent"] == 0


def test_added_lines_count_128_bytes_more_at_the_bound(empty_values: Cassette) -> None:
    # 1,000 comments ": ping" + LF, blank line: 8 bytes and 2 lines each
    comments = scenario("comments", {"keepalive": {"leading": 1000, "every_events": 0, "text": "ping"}})
    added = 1000 * (8 + 2 * LINE_COST)
    with MockServer(empty_values, scenarios=[comments], timing_scale=0, max_scenario_growth=added) as server:
        sent = post(server, "comments")
    assert sent.status_code == 200 and sent.text.startswith(": ping\n\n" * 1000 + 'data: {"a":""}\n\n')
    with MockServer(empty_values, scenarios=[comments], timing_scale=0, max_scenario_growth=added - 1) as server:
        error = refusal(post(server, "comments"))
    assert (error["step"], error["limit"], error["added"]) == ("steps[0].keepalive", added - 1, added)


GROWING = [
    {"edit": {"set": {"a": "x" * 10}}},
    {"replace": {"where": {"contains": "a"}, "data": "x" * 100}},
    {"insert": {"at": 0, "data": "x" * 2000}},
    {"extra-fields": {}},
    {"meta-blocks": {}},
    {"keepalive": {"leading": 0, "every_events": 1}},
    {"empty-data": {}},
    {"field-spacing": {"spaces": 16}},
    {"multiline-data": {"parts": 2}},
    {"json-separators": {}},
    {"long-lines": {"sizes": [5000]}},
    {"line-separators": {}},
    {"event-ids": {}},
    {"line-endings": {"eol": "crlf"}},
]


@pytest.mark.parametrize("step", GROWING, ids=lambda s: next(iter(s)))
def test_every_step_that_grows_the_body_counts_what_it_adds(step: dict[str, Any]) -> None:
    """With 1,000 bytes allowed, each of these steps goes over on 1,000 events and is named."""
    payloads = ['{"a":"","text":"hi","content":"hi"}'] * 1000
    grow = scenario("grow", step)
    with MockServer(stream(payloads), scenarios=[grow], timing_scale=0, max_scenario_growth=1000) as server:
        error = refusal(post(server, "grow"))
        assert (error["scenario"], error["step"]) == ("grow", f"steps[0].{next(iter(step))}")
        assert error["added"] > 1000
        # the same server answers the stream without the scenario
        plain = httpx.post(server.url + PATH, timeout=60)
    assert plain.status_code == 200 and plain.text.count("data: ") == 1000


def test_a_composed_scenario_names_the_scenario_the_step_comes_from(empty_values: Cassette) -> None:
    ids = scenario("ids", {"event-ids": {}})
    fill = scenario("fill", {"drop": {"where": {"index": 0}}}, {"edit": {"set": {"a": "x" * 1000}}})
    with MockServer(empty_values, scenarios=[ids, fill], timing_scale=0, max_scenario_growth=500_000) as server:
        error = refusal(post(server, "ids,fill"))  # event-ids adds ~135,000 of it, the edit the rest
    assert (error["scenario"], error["step"]) == ("fill", "steps[1].edit")


def test_a_recorded_gzip_body_counts_what_decoding_adds() -> None:
    plain = b"".join(f"data: {chat_chunk(i)}\n\n".encode() for i in range(20_000))  # 2.7 MB, ~100 KB as gzip
    packed = gzip.compress(plain)
    headers = [*SSE, ("Content-Encoding", "gzip")]
    cassette = Cassette("gz", [Interaction(Request("POST", PATH), Response(headers=headers,
                                                                          chunks=[Chunk(0.0, packed)]))])
    crlf = scenario("crlf", {"line-endings": {"eol": "crlf"}})
    with MockServer(cassette, scenarios=[crlf], timing_scale=0, max_scenario_growth=MIB) as server:
        error = refusal(post(server, "crlf"))
    assert error["scenario"] == "crlf" and "decoding" in error["step"] and error["added"] > MIB
    with MockServer(cassette, scenarios=[crlf], timing_scale=0) as server:  # the default bound: sent
        sent = post(server, "crlf")
    assert sent.status_code == 200 and sent.content == plain.replace(b"\n", b"\r\n")


# ---- validation and the Python API ---------------------------------------------------------------
def test_edit_set_values_are_at_most_1_mib_together() -> None:
    # a scenario file holds at most 1 MiB; a Scenario built in Python is checked the same way
    half = "x" * (MIB // 2 - 2)  # MIB // 2 bytes as JSON, with its quotes
    assert len(scenario("two", {"edit": {"set": {"a": half, "b": half}}}).steps) == 1
    with pytest.raises(ScenarioError) as caught:
        scenario("two", {"edit": {"set": {"a": half, "b": half + "x"}}})
    assert caught.value.field == "steps[0].edit.set"
    assert "at most 1048576 bytes (1 MiB) together" in caught.value.expected


def test_python_callers_of_apply_get_the_error_and_may_set_their_own_bound(empty_values: Cassette) -> None:
    fill = scenario("fill", {"edit": {"set": {"a": "x" * 1000}}})
    response = empty_values.interactions[0].response
    plan = Plan.of(response)
    assert plan.growth_limit == DEFAULT_LIMIT
    plan.growth_limit = 999_999
    with pytest.raises(ScenarioTooLargeError) as caught:
        fill.apply(plan)
    assert isinstance(caught.value, SSEMockError) and isinstance(caught.value, ValueError)
    assert (caught.value.scenario, caught.value.step, caught.value.limit, caught.value.added) == (
        "fill", "steps[0].edit", 999_999, 1_000_000)
    whole = fill.apply(Plan.of(response))  # the default bound
    assert whole.response.body.count(b"x" * 1000) == 1000


def test_the_option_is_checked() -> None:
    with pytest.raises(SSEMockError, match="max_scenario_growth: expected an integer >= 0"):
        MockServer(max_scenario_growth=-1)



def test_a_stub_with_a_long_text_is_bounded_as_a_recording() -> None:
    long = Stub(Match(), Reply(text="word " * 20_000))  # thousands of streamed chunks
    fill = scenario("fill", {"edit": {"set": {"choices[0].delta.content": "x" * 1000}}})
    request = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with MockServer([], stubs=[long], scenarios=[fill], timing_scale=0, max_scenario_growth=100_000) as server:
        error = refusal(httpx.post(server.url + PATH, json=request, headers={"X-SSEMock-Scenario": "fill"},
                                   timeout=60))
        entry = server.requests[-1]
        plain = httpx.post(server.url + PATH, json=request, timeout=60)
    assert (error["scenario"], error["step"], error["limit"]) == ("fill", "steps[0].edit", 100_000)
    assert (entry["stub"], entry["outcome"]) == (long.name, "refused")
    assert plain.status_code == 200 and plain.text.count("data: ") > 100
