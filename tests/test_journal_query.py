"""Journal queries: ``GET /_ssemock/requests?path=…&cassette=…&outcome=…&since=SEQ&limit=N`` and
``server.requests.filter(...)``, on a real ``MockServer`` and ``ssemock serve --workers 2``, read with httpx."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from ssemock import MockServer
from ssemock.journal_query import MAX_TEXT
from ssemock.mockserver import collect_cassettes
from ssemock.refusals import BadQueryError
from ssemock.workers import UNANSWERED_HEADER
from tests.test_workers import serve

CHAT, MESSAGES, RESPONSES = (
    "openai-chat-finish-length-usage",
    "anthropic-messages-thinking",
    "openai-responses-function-call",
)
# (cassette, scenario) in the order sent: seq 1 to 6, and the outcome each one's scenario names
SENT = [
    (CHAT, None),  # 1 complete
    (MESSAGES, None),  # 2 complete
    (CHAT, "cut-mid-event"),  # 3 cut
    ("no-such-cassette", None),  # 4 refused (404 ssemock_unknown_cassette)
    (RESPONSES, None),  # 5 complete
    (MESSAGES, "reset-mid-event"),  # 6 reset
]


def send(client: httpx.Client, url: str, cassette: str, scenario: str | None) -> None:
    known = collect_cassettes(None)
    inter = known[cassette if cassette in known else CHAT].interactions[0]
    path = "/v1/nothing" if cassette not in known else inter.request.path
    headers = {"X-SSEMock-Cassette": cassette, **({"X-SSEMock-Scenario": scenario} if scenario else {})}
    with client.stream("POST", url + path, content=inter.request.body, headers=headers) as resp:
        try:
            for _ in resp.iter_raw():
                pass
        except (httpx.RemoteProtocolError, httpx.ReadError):  # the cut and the reset
            pass


def seqs(entries: list[dict[str, Any]]) -> list[int]:
    return [e["seq"] for e in entries]


QUERIES = [
    ({"path": "/v1/messages"}, [2, 6]),
    ({"path": "/v1/*"}, [1, 2, 3, 4, 5, 6]),
    ({"path": "/v1/chat/*"}, [1, 3]),
    ({"path": "/v1"}, []),  # exact unless it ends in *
    ({"cassette": MESSAGES}, [2, 6]),
    ({"cassette": CHAT}, [1, 3]),
    ({"outcome": "complete"}, [1, 2, 5]),
    ({"outcome": "cut,reset"}, [3, 6]),
    ({"outcome": "refused"}, [4]),
    ({"since": "3"}, [4, 5, 6]),  # exclusive
    ({"since": "6"}, []),
    ({"since": "0"}, [1, 2, 3, 4, 5, 6]),
    ({"limit": "1"}, [1]),  # the first, oldest first
    ({"since": "3", "limit": "2"}, [4, 5]),  # the next page after seq 3
    ({"path": "/v1/messages", "outcome": "reset"}, [6]),
    ({"cassette": CHAT, "since": "1"}, [3]),
    ({"path": "/v1/*", "outcome": "complete", "since": "1", "limit": "1"}, [2]),
    ({}, [1, 2, 3, 4, 5, 6]),
]


@pytest.fixture(scope="module")
def served() -> Any:
    with MockServer(timing_scale=0) as server, httpx.Client() as client:
        for cassette, scenario in SENT:
            send(client, server.url, cassette, scenario)
        yield server


def test_the_six_requests_ended_as_their_scenarios_say(served: MockServer) -> None:
    outcomes = ["complete", "complete", "cut", "refused", "complete", "reset"]
    assert [(e["seq"], e["outcome"]) for e in served.requests] == list(enumerate(outcomes, 1))


@pytest.mark.parametrize(("query", "expected"), QUERIES)
def test_each_filter_and_combination_over_http(served: MockServer, query: dict[str, str], expected: list[int]) -> None:
    resp = httpx.get(served.url + "/_ssemock/requests", params=query)
    assert resp.status_code == 200
    assert seqs(resp.json()) == expected


@pytest.mark.parametrize(("query", "expected"), QUERIES)
def test_the_same_filters_in_python(served: MockServer, query: dict[str, str], expected: list[int]) -> None:
    typed = {k: int(v) if k in ("since", "limit") else v for k, v in query.items()}
    found = served.requests.filter(**typed)
    assert seqs(found) == expected
    assert seqs(found.filter()) == expected  # a Journal again


def test_outcome_takes_a_list_in_python(served: MockServer) -> None:
    assert seqs(served.requests.filter(outcome=["cut", "refused"])) == [3, 4]


BAD = [
    ({"limit": "0"}, "limit"),
    ({"limit": "1000001"}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"limit": ""}, "limit"),
    ({"since": "-1"}, "since"),
    ({"since": "1.5"}, "since"),
    ({"since": "٣"}, "since"),  # a digit, but not an ASCII one
    ({"outcome": "done"}, "outcome"),
    ({"outcome": "cut,"}, "outcome"),
    ({"path": ""}, "path"),
    ({"path": "/" + "x" * 2048}, "path"),
    ({"cassette": ""}, "cassette"),
    ({"outcomes": "cut"}, "outcomes"),  # no such parameter
    ({"limit": "9" * 23}, "limit"),  # a whole number, over the bound
    ([("outcome", "cut"), ("outcome", "reset")], "outcome"),  # given twice: outcome=cut,reset is meant
    ([("limit", "2"), ("limit", "2")], "limit"),
]


@pytest.mark.parametrize(("query", "parameter"), BAD)
def test_a_bad_parameter_is_a_400_naming_it(served: MockServer, query: Any, parameter: str) -> None:
    resp = httpx.get(served.url + "/_ssemock/requests", params=query)
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["type"] == "ssemock_bad_query"
    assert error["parameter"] == parameter
    assert f"query parameter {parameter!r}" in error["message"]


def test_the_bound_of_a_number_is_named_whatever_its_length(served: MockServer) -> None:
    for value in ("1000001", "9" * 23):
        resp = httpx.get(served.url + "/_ssemock/requests", params={"limit": value})
        assert "expected a whole number from 1 to 1,000,000" in resp.json()["error"]["message"]


def test_a_delete_with_a_parameter_is_refused_and_clears_nothing(served: MockServer) -> None:
    before = httpx.get(served.url + "/_ssemock/requests").json()
    resp = httpx.delete(served.url + "/_ssemock/requests", params={"outcome": "cut"})
    assert resp.status_code == 400
    assert resp.json()["error"]["type"] == "ssemock_bad_query"
    assert resp.json()["error"]["parameter"] == "outcome"
    assert httpx.get(served.url + "/_ssemock/requests").json() == before


def test_bad_values_in_python_raise_value_or_type_errors(served: MockServer) -> None:
    journal = served.requests
    with pytest.raises(BadQueryError, match="'limit'"):
        journal.filter(limit=0)
    with pytest.raises(ValueError, match=r"'outcome'.*complete, cut, reset"):
        journal.filter(outcome="done")
    with pytest.raises(TypeError, match="since"):
        journal.filter(since="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit"):
        journal.filter(limit=True)
    with pytest.raises(TypeError, match="outcome: expected names"):
        journal.filter(outcome=[5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="outcome: expected names"):
        journal.filter(outcome=b"cut")  # type: ignore[arg-type]


def test_the_filters_apply_across_workers(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2", "--timing-scale", "0") as served:
        sent = 0
        for _ in range(30):  # rounds of six, one connection each, until both workers have answered some
            for cassette, scenario in SENT:
                with httpx.Client(headers={"Connection": "close"}) as client:
                    send(client, served.url, cassette, scenario)
                sent += 1
            everything = httpx.get(f"{served.url}/_ssemock/requests").json()
            if len({e["worker"] for e in everything}) == 2:
                break
        rounds = sent // len(SENT)
        assert len(everything) == sent
        cut = httpx.get(f"{served.url}/_ssemock/requests", params={"outcome": "cut,reset"}).json()
        messages = httpx.get(f"{served.url}/_ssemock/requests", params={"path": "/v1/messages"}).json()
        first = httpx.get(f"{served.url}/_ssemock/requests", params={"limit": "3"}).json()
        later = httpx.get(f"{served.url}/_ssemock/requests", params={"since": "1"}).json()
        bad = httpx.get(f"{served.url}/_ssemock/requests", params={"limit": "0"})
    assert len(cut) == 2 * rounds and {e["outcome"] for e in cut} == {"cut", "reset"}
    assert len(messages) == 2 * rounds and {e["cassette"] for e in messages} == {MESSAGES}
    assert [(e["worker"], e["seq"]) for e in first] == [(e["worker"], e["seq"]) for e in everything[:3]]
    # since compares with each worker's own seq: every worker's first entry is left out
    assert sorted((e["worker"], e["seq"]) for e in later) == sorted(
        (e["worker"], e["seq"]) for e in everything if e["seq"] > 1
    )
    assert bad.status_code == 400 and bad.json()["error"]["parameter"] == "limit"


def test_across_workers_a_long_query_reaches_every_worker_and_a_delete_filter_is_refused(tmp_path: Path) -> None:
    with serve(tmp_path, "--workers", "2", "--timing-scale", "0") as served:
        for _ in range(30):  # until both workers have journaled a request
            with httpx.Client(headers={"Connection": "close"}) as client:
                send(client, served.url, CHAT, None)
            everything = httpx.get(f"{served.url}/_ssemock/requests").json()
            if len({e["worker"] for e in everything}) == 2:
                break
        # within the bounds (2,048 characters each), sent as curl sends them: '{' as one byte, which
        # the worker passing the query on writes as %7B
        braces = "{" * MAX_TEXT
        asked = subprocess.run(
            ["curl", "-sg", "-D", "-", f"{served.url}/_ssemock/requests?path=/{braces[1:]}&cassette={braces}"],
            capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        refused = httpx.delete(f"{served.url}/_ssemock/requests", params={"limit": "1"})
        twice = httpx.get(f"{served.url}/_ssemock/requests", params=[("outcome", "cut"), ("outcome", "reset")])
        kept = httpx.get(f"{served.url}/_ssemock/requests").json()
    head, _, body = asked.stdout.partition("\n\n")  # (text mode reads CRLF as LF)
    assert head.startswith("HTTP/1.1 200") and body == "[]"
    assert f"{UNANSWERED_HEADER}: \n" in head  # every worker answered
    assert "did not answer" not in (tmp_path / "stderr").read_text()
    assert refused.status_code == 400 and refused.json()["error"]["parameter"] == "limit"
    assert len(kept) == len(everything)  # the refused DELETE cleared nothing
    assert twice.status_code == 400 and twice.json()["error"]["parameter"] == "outcome"
