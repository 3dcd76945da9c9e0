"""Which interaction answers, why, and pinning it (``X-SSEMock-Interaction: N``).

Seen in a trial: with ``--match-on path`` and a named cassette, identical requests were answered by
interaction 0, then 1, which made a correct client look wrong. The real replay server (``MockServer``
and the ``ssemock serve`` process), read by httpx."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, Chunk, Interaction, MockServer, Request, Response
from ssemock.cassette import save

HEADERS = [("content-type", "text/event-stream")]


def _cassette() -> Cassette:
    """Two answers to the same request (a conversation's two turns, recorded with different bodies)."""
    def turn(prompt: bytes, text: bytes) -> Interaction:
        return Interaction(Request("POST", "/v1/chat/completions", body=prompt),
                           Response(headers=HEADERS, chunks=[Chunk(0.0, b"data: " + text + b"\n\n")]))
    return Cassette("turns", [turn(b'{"turn": 1}', b"first"), turn(b'{"turn": 2}', b"second")])


def _ask(client: httpx.Client, url: str, **headers: str) -> tuple[int, str]:
    answer = client.post(url + "/v1/chat/completions", content=b'{"turn": 9}',
                         headers={"X-SSEMock-Cassette": "turns", **headers})
    return answer.status_code, answer.text


def test_the_journal_says_which_interaction_answered_and_why() -> None:
    with MockServer([_cassette()], scenarios=[], match_on=("method", "path"), timing_scale=0) as server, \
            httpx.Client(timeout=10) as client:
        answers = [_ask(client, server.url) for _ in range(3)]
        journal = server.requests
    assert answers == [(200, "data: first\n\n"), (200, "data: second\n\n"), (200, "data: first\n\n")]
    assert [(e["interaction"], e["choice"].split(" (")[0]) for e in journal] == [
        (0, "the first matching interaction not yet played"),
        (1, "the first matching interaction not yet played"),
        (0, "played 2 times: every matching interaction was played since the last reset, so they repeat from the "
            "first"),
    ]
    assert all("X-SSEMock-Interaction: N pins one" in e["choice"] for e in journal)


def test_a_pinned_interaction_answers_every_time() -> None:
    with MockServer([_cassette()], scenarios=[], match_on=("method", "path"), timing_scale=0) as server, \
            httpx.Client(timeout=10) as client:
        answers = [_ask(client, server.url, **{"X-SSEMock-Interaction": "1"}) for _ in range(3)]
        unpinned = _ask(client, server.url)  # the pinned answers counted as plays of #1: #0 is still unplayed
        journal = server.requests
    assert answers == [(200, "data: second\n\n")] * 3 and unpinned == (200, "data: first\n\n")
    assert [(e["interaction"], e["choice"]) for e in journal[:3]] == [(1, "pinned by X-SSEMock-Interaction: 1")] * 3


def test_a_pin_must_still_match_the_request() -> None:
    with MockServer([_cassette()], scenarios=[], match_on=("method", "path"), timing_scale=0) as server, \
            httpx.Client(timeout=10) as client:
        missing = client.post(server.url + "/v1/chat/completions", headers={"X-SSEMock-Interaction": "2"})
        other = client.post(server.url + "/v1/responses", headers={"X-SSEMock-Interaction": "0"})
        journal = server.requests
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "ssemock_no_match"
    assert missing.json()["error"]["message"] == (
        "X-SSEMock-Interaction: 2 pins no interaction: no cassette served here has one of that index "
        "(interactions, from 0: turns: 2)")
    error = other.json()["error"]
    assert other.status_code == 404 and error["type"] == "ssemock_no_match"
    assert error["message"].startswith("X-SSEMock-Interaction: 0 pins turns #0 POST /v1/chat/completions, which does "
                                       "not match POST /v1/responses: path: ")
    assert error["closest"] == [{"cassette": "turns", "interaction": 0, "request": "POST /v1/chat/completions",
                                 "differences": ["path: /v1/responses != recorded /v1/chat/completions"]}]
    assert [e["outcome"] for e in journal] == ["refused", "refused"]


@pytest.mark.parametrize("value", ["-1", "one", "1.0", "0x1", "99999999", "١"])
def test_a_pin_that_is_not_an_index_is_a_400(value: str) -> None:
    with MockServer([_cassette()], scenarios=[], match_on=("method", "path"), timing_scale=0) as server:
        answer = httpx.post(server.url + "/v1/chat/completions", headers={"X-SSEMock-Interaction": value.encode()},
                            timeout=10)
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "ssemock_bad_interaction"
    assert ("expected one header, the index of an interaction in its cassette: a whole number from 0 to 999999"
            in answer.json()["error"]["message"])


def test_two_pins_are_refused_not_half_followed() -> None:
    """Two headers pinned interaction 0 while the journal's headers said 1."""
    with MockServer([_cassette()], scenarios=[], match_on=("method", "path"), timing_scale=0) as server:
        answer = httpx.post(server.url + "/v1/chat/completions", timeout=10,
                            headers=[("X-SSEMock-Interaction", "0"), ("X-SSEMock-Interaction", "1")])
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "ssemock_bad_interaction"
    assert answer.json()["error"]["message"].startswith("X-SSEMock-Interaction: '0, 1': expected one header")


def test_ssemock_serve_match_on_path_pins_with_the_header(tmp_path: Path) -> None:
    save(_cassette(), tmp_path / "turns.yaml")
    process = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--match-on", "method,path",
                                "--cassettes", str(tmp_path / "turns.yaml"), "--timing-scale", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        with httpx.Client(timeout=10) as client:
            pinned = [_ask(client, url, **{"X-SSEMock-Interaction": "0"}) for _ in range(2)]
            journal = client.get(url + "/_ssemock/requests").json()
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert pinned == [(200, "data: first\n\n")] * 2
    assert [(e["cassette"], e["interaction"], e["choice"]) for e in journal] == [
        ("turns", 0, "pinned by X-SSEMock-Interaction: 0")] * 2


def test_a_pin_without_a_cassette_names_the_closest_first_and_says_to_name_one() -> None:
    """Among the bundled cassettes, interaction 1 of the one recorded on the same path comes first, and the
    message says how to choose (seen: the first cassette in name order, with 5 candidates listed)."""
    with MockServer(scenarios=[], timing_scale=0) as server:
        answer = httpx.post(server.url + "/v1/chat/completions", content=b"{}",
                            headers={"X-SSEMock-Interaction": "1", "Content-Type": "application/json"}, timeout=10)
    error = answer.json()["error"]
    assert answer.status_code == 404 and len(error["closest"]) == 3
    assert (error["closest"][0]["cassette"], error["closest"][0]["request"]) == (
        "openai-chat-tool-calls-usage", "POST /v1/chat/completions")
    assert [d.split(":")[0] for d in error["closest"][0]["differences"]] == ["body"]
    assert error["message"].endswith("cassettes have an interaction 1: name one with X-SSEMock-Cassette)")


def test_a_miss_in_a_named_cassette_says_the_body_only_ranks() -> None:
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as server:
        answer = httpx.post(server.url + "/v2/chat/completions", content=b'{"turn": 1}',
                            headers={"X-SSEMock-Cassette": "turns"}, timeout=10)
    assert answer.status_code == 404
    assert answer.json()["error"]["message"].startswith(
        "no recorded interaction matches POST /v2/chat/completions (match on method, path; body only ranks, the "
        "cassette being named); closest: turns #0")
