"""Request matching: the indexed choice is the linear scan's choice; large cassettes on the wire."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette, Chunk, Interaction, MockServer, Request, Response
from ssemock.cassette import body_digest
from ssemock.errors import NoMatchError
from ssemock.matching import MATCHERS, REPORT_BUDGET, IndexCache, PlayCounts, find_interaction

SSE = [("content-type", "text/event-stream")]

# Recorded bodies: equal JSON written differently, 1 vs 1.0 vs true, the filter's REDACTED
# (matches any value), raw bytes, empty, JSON null (compared as bytes), stored by digest, none.
RECORDED_BODIES: list[Any] = [
    None, b'{"a": 1}', b'{"a":1.0}', b'{"a": true}', b'{"a": "REDACTED"}', b'{"b": [1, 2], "a": 1}',
    b"raw bytes", b"", b"null", b"[1, 2.5]", ("sha", b'{"a": 1}'), ("sha", b"raw bytes"),
]
RECEIVED_BODIES = [
    b'{"a": 1}', b'{ "a" : 1.0 }', b'{"a": true}', b'{"a": 2}', b'{"a": 1, "b": [1, 2]}', b"raw bytes",
    b"", b"null", b"[1,2.5]", b'{"a": [1]}', b"other",
]
METHODS = ["GET", "POST"]
PATHS = ["/a", "/b"]
QUERIES: list[list[tuple[str, str]]] = [[], [("x", "1")], [("x", "1"), ("y", "2")], [("y", "2"), ("x", "1")]]


def recorded_request(method: str, path: str, query: list[tuple[str, str]], body: Any) -> Request:
    if isinstance(body, tuple):
        return Request(method, path, list(query), body_sha256=body_digest(body[1]), body_size=len(body[1]))
    return Request(method, path, list(query), body=body)


def interaction(request: Request, text: str = "x") -> Interaction:
    return Interaction(request, Response(200, None, SSE, [Chunk(0.0, f"data: {text}\n\n".encode())]))


recorded = st.builds(
    recorded_request, st.sampled_from(METHODS), st.sampled_from(PATHS), st.sampled_from(QUERIES),
    st.sampled_from(RECORDED_BODIES),
)
received = st.builds(
    lambda m, p, q, b: Request(m, p, list(q), body=b), st.sampled_from(METHODS), st.sampled_from(PATHS),
    st.sampled_from(QUERIES), st.sampled_from(RECEIVED_BODIES),
)
matchers = st.lists(st.sampled_from(sorted(MATCHERS)), min_size=1, max_size=4, unique=True)


def outcome(pool: list[Cassette], request: Request, match_on: list[str], played: dict[Any, int],
            explicit: bool, indexes: IndexCache | None) -> tuple[str, int] | None:
    try:
        found = find_interaction(pool, request, match_on, played=played, explicit=explicit, indexes=indexes)
    except NoMatchError:
        return None
    return found.cassette.name, found.index


@settings(max_examples=300, deadline=None)
@given(
    cassettes=st.lists(st.lists(recorded, max_size=8), min_size=1, max_size=3),
    steps=st.lists(st.one_of(received, st.just("reset")), min_size=1, max_size=14),
    match_on=matchers,
    explicit=st.booleans(),
)
def test_the_index_chooses_what_comparing_every_interaction_chooses(
    cassettes: list[list[Request]], steps: list[Any], match_on: list[str], explicit: bool
) -> None:
    pool = [Cassette(f"c{n}", [interaction(r) for r in requests]) for n, requests in enumerate(cassettes)]
    indexes, fast = IndexCache(), PlayCounts()
    slow: dict[Any, int] = {}
    for step in steps:
        if step == "reset":
            fast.clear()
            slow.clear()
            continue
        want = outcome(pool, step, match_on, slow, explicit, None)
        assert outcome(pool, step, match_on, fast, explicit, indexes) == want
        assert dict(fast) == slow


def big_cassette(count: int) -> Cassette:
    """``count`` chat interactions, each recorded with its own prompt."""
    return Cassette("big", [
        interaction(Request("POST", "/v1/chat/completions", body=json.dumps(
            {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": f"question {i}"}]}
        ).encode()), text=str(i))
        for i in range(count)
    ])


def prompt(i: int) -> dict[str, Any]:
    return {"messages": [{"content": f"question {i}", "role": "user"}], "stream": True, "model": "gpt-4o"}


def test_a_large_cassette_on_the_wire_by_body_with_play_order_and_a_bounded_miss_report() -> None:
    count = 20_000
    big = big_cassette(count)
    # Two more recordings of one prompt: identical requests get them in order, then the first again.
    big.interactions += [big.interactions[7], big.interactions[7]]
    with MockServer([big], scenarios=[], timing_scale=0) as server, httpx.Client(base_url=server.url) as http:
        for i in (count - 1, 0, 12_345):
            response = http.post("/v1/chat/completions", json=prompt(i))
            assert response.text == f"data: {i}\n\n"
        for _ in range(4):
            http.post("/v1/chat/completions", json=prompt(7))
        assert [e["interaction"] for e in server.requests[3:]] == [7, count, count + 1, 7]

        miss = http.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": []})
        assert miss.status_code == 404
        error = miss.json()["error"]
        assert error["type"] == "ssemock_no_match"
        # The closest are recordings of the same method and path, differing in the body only.
        assert [c["interaction"] for c in error["closest"]] == [0, 1, 2]
        assert error["closest"][0]["differences"] == ["body: messages: 0 items != recorded 1"]


def test_a_miss_compares_a_bounded_number_of_interactions() -> None:
    big = big_cassette(5_000)
    compared = 0
    original = MATCHERS["body"]

    def counting(received: Request, recorded: Request) -> None:
        nonlocal compared
        compared += 1
        original(received, recorded)

    MATCHERS["body"] = counting
    try:
        with pytest.raises(NoMatchError) as caught:
            find_interaction([big], Request("POST", "/v1/chat/completions", body=b'{"other": 1}'),
                             played=PlayCounts(), indexes=IndexCache())
    finally:
        MATCHERS["body"] = original
    assert compared <= REPORT_BUDGET + 1  # the report, plus the final check of a choice (none here)
    assert caught.value.closest[0]["differences"][0].startswith("body: messages: missing")


def test_a_cassette_changed_between_requests_is_indexed_again() -> None:
    cassette = Cassette("c", [interaction(Request("GET", "/a"))])
    indexes, played = IndexCache(), PlayCounts()
    assert find_interaction([cassette], Request("GET", "/a"), played=played, indexes=indexes).index == 0
    cassette.interactions.append(interaction(Request("GET", "/b")))
    assert find_interaction([cassette], Request("GET", "/b"), played=played, indexes=indexes).index == 1
    cassette.interactions = [interaction(Request("GET", "/c"))]
    assert find_interaction([cassette], Request("GET", "/c"), played=played, indexes=indexes).index == 0
    del cassette
    assert len(indexes) == 0  # dropped with its cassette


def test_a_miss_on_an_unknown_path_names_the_closest_path_of_a_large_cassette() -> None:
    big = big_cassette(REPORT_BUDGET * 3)
    big.interactions.append(interaction(Request("POST", "/v1/embeddings", body=b'{"input": "x"}')))
    with pytest.raises(NoMatchError) as caught:
        find_interaction([big], Request("POST", "/v1/embeddings", body=b'{"input": "y"}'),
                         played=PlayCounts(), indexes=IndexCache())
    assert caught.value.closest[0]["interaction"] == REPORT_BUDGET * 3
    assert caught.value.closest[0]["differences"] == ['body: input: "y" != recorded "x"']
