"""Recorded paths holding the filter's placeholder are found through an index, with the choice the rule gives.

docs/reference/request-matching.md: a recorded path segment or query value holding ``REDACTED`` matches any
non-empty text in its place, within that segment or value, the rest compared as written; among the
matching interactions, the first not yet played in cassette order, then the first again. The cassette
below is written by hand; the server is the real one, read with httpx.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssemock import MockServer
from ssemock.placeholder_routes import PlaceholderIndex, RouteKey, holds_placeholder, path_fits, query_fits
from ssemock.redact import REDACTED

FILLER = 3000
"""Interactions ``POST /v1/files/REDACTED/versionN`` after the hand-written ones: as many routes of the
same segment count as the requests, each of which a comparison with every route would try."""

CASSETTE = """\
ssemock_cassette: 1
name: placeholders
interactions:
- request: {method: POST, path: /v1/files/file-abc/content}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: literal file-abc\\n\\n"}]}
- request: {method: POST, path: /v1/files/REDACTED/content}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: any file\\n\\n"}]}
- request: {method: POST, path: /v1/keys/REDACTED}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: key at the end\\n\\n"}]}
- request: {method: POST, path: /botREDACTED/sendMessage}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: bot token\\n\\n"}]}
- request: {method: GET, path: /v1/orgs/REDACTED/projects/proj-REDACTED-key/runs}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: several placeholders\\n\\n"}]}
- request: {method: GET, path: /v1/sessions/REDACTED.REDACTED/events}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: two in one segment\\n\\n"}]}
- request: {method: GET, path: /v1/items, query: [[cursor, REDACTED], [limit, "10"]]}
  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,
             chunks: [{text: "data: query value\\n\\n"}]}
"""
HIT = [
    ("POST", "/v1/files/file-9Zq/content", "any file"),  # in the middle
    ("POST", "/v1/keys/sk-proj-123", "key at the end"),  # at the end
    ("POST", "/bot7310493582:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ/sendMessage", "bot token"),  # within a segment
    ("GET", "/v1/orgs/org-1/projects/proj-x-y-key/runs", "several placeholders"),
    ("GET", "/v1/sessions/eyJhbGciOi.eyJzdWIiOi/events", "two in one segment"),
    ("GET", "/v1/items?limit=10&cursor=c-1", "query value"),
    ("POST", f"/v1/files/f/version{FILLER - 1}", f"version {FILLER - 1}"),
]
MISS = [
    ("POST", "/v1/files//content"),  # a placeholder stands for some text, not none
    ("POST", "/v1/files/a/b/content"),  # within one segment only
    ("POST", "/v1/keys/"),
    ("POST", "/v1/keys/sk/extra"),
    ("POST", "/botx/sendMessages"),
    ("POST", "/xbotx/sendMessage"),
    ("GET", "/v1/orgs/o/projects/proj--key/runs"),
    ("GET", "/v1/orgs/o/projects/proj-x-kez/runs"),
    ("GET", "/v1/sessions/abc/events"),  # no dot
    ("GET", "/v1/sessions/.abc/events"),
    ("GET", "/v1/items?limit=11&cursor=c-1"),
    ("GET", "/v1/items?limit=10"),
    ("POST", "/v1/orgs/org-1/projects/proj-x-y-key/runs"),  # the method is compared as written
    ("POST", "/v1/files/f/version"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockServer]:
    filler = "".join(
        f"- request: {{method: POST, path: /v1/files/REDACTED/version{n}}}\n"
        "  response: {status: 200, headers: {content-type: text/event-stream}, timing: none,\n"
        f'             chunks: [{{text: "data: version {n}\\n\\n"}}]}}\n'
        for n in range(FILLER)
    )
    path = tmp_path_factory.mktemp("placeholders") / "placeholders.yaml"
    path.write_text(CASSETTE + filler)
    with MockServer(path, scenarios=[], timing_scale=0, match_on=("method", "path", "query", "body")) as running:
        yield running


def answer(server: MockServer, method: str, path: str) -> tuple[int, str]:
    response = httpx.request(method, server.url + path, json={"text": "hi"} if method == "POST" else None)
    return response.status_code, response.text


def test_each_placeholder_shape_answers_with_its_interaction_and_nothing_else_matches(server: MockServer) -> None:
    server.reset()  # play counts cleared
    # A literal route and a placeholder route that both match: the first not yet played, in cassette order,
    # then the first again.
    played = [answer(server, "POST", "/v1/files/file-abc/content")[1] for _ in range(3)]
    assert played == ["data: literal file-abc\n\n", "data: any file\n\n", "data: literal file-abc\n\n"]
    for method, path, data in HIT:
        assert answer(server, method, path) == (200, f"data: {data}\n\n"), path
    for method, path in MISS:
        status, text = answer(server, method, path)
        assert status == 404 and '"ssemock_no_match"' in text, (method, path, status, text[:200])


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a recorded text holding the placeholder is compared with a received one, in
    every ssemock module that calls the comparison (``redacted_fits``)."""
    count = [0]
    for name, module in list(sys.modules.items()):
        compare = getattr(module, "redacted_fits", None) if name.startswith("ssemock.") else None
        if compare is not None:
            monkeypatch.setattr(module, "redacted_fits", _counted(compare, count))
    return count


def _counted(compare: Callable[[str, str], bool], count: list[int]) -> Callable[[str, str], bool]:
    def counted(received: str, recorded: str) -> bool:
        count[0] += 1
        return compare(received, recorded)

    return counted


def test_a_request_is_compared_with_the_routes_its_segments_lead_to_not_with_every_one(
    server: MockServer, comparisons: list[int]
) -> None:
    """Against 3,000 routes ``/v1/files/REDACTED/versionN`` of its segment count, a request is compared
    with a few recorded segments (one per placeholder segment on its way, and the final check of the
    interaction chosen), where the comparison with each route took 3,000."""
    for method, path, data in HIT:
        comparisons[0] = 0
        assert answer(server, method, path) == (200, f"data: {data}\n\n"), path
        assert comparisons[0] <= 4, (path, comparisons[0])


SEGMENTS = ["", "a", "ab", "b", REDACTED, f"a{REDACTED}", f"{REDACTED}b", f"a{REDACTED}b", f"{REDACTED}a{REDACTED}"]
RECEIVED = ["", "a", "ab", "b", "aab", "abb", "ba", "aa", REDACTED, f"a{REDACTED}b"]
FIELDS = [(True, True, True), (True, True, False), (True, False, True), (False, True, True)]
"""Which of method, path and query are required (the body is filed apart)."""


def _key(method: str, segments: list[str], query: list[tuple[str, str]]) -> RouteKey:
    return method, "/" + "/".join(segments), tuple(sorted(query))


def _keys(segments: list[str], values: list[str]) -> Any:
    pairs = st.lists(st.tuples(st.sampled_from(["k", "l"]), st.sampled_from(values)), max_size=3)
    return st.builds(_key, st.sampled_from(["GET", "POST"]), st.lists(st.sampled_from(segments), max_size=4), pairs)


@given(
    st.lists(_keys(SEGMENTS, ["1", REDACTED, f"t{REDACTED}"]), max_size=25),
    st.lists(_keys(RECEIVED, ["1", "2", "tx", "", REDACTED]), min_size=1, max_size=10),
    st.sampled_from(FIELDS),
)
def test_the_index_finds_exactly_the_routes_a_comparison_with_each_finds(
    recorded: list[RouteKey], received: list[RouteKey], fields: tuple[bool, bool, bool]
) -> None:
    def required(key: RouteKey) -> RouteKey:
        method, path, query = key
        return (method if fields[0] else None, path if fields[1] else None, query if fields[2] else None)

    index = PlaceholderIndex()
    filed: list[RouteKey] = []
    for key in map(required, recorded):
        if holds_placeholder(key):
            index.add(key)
            if key not in filed:
                filed.append(key)
    for method, path, query in map(required, received):
        expected = [
            key
            for key in filed
            if key[0] == method
            and (key[1] is None or path_fits(path or "", key[1]))
            and (key[2] is None or query_fits(query or (), key[2]))
        ]
        assert index.fitting((method, path, query)) == expected
