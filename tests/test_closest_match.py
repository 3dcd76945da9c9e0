"""The closest match is the closest: a 404's ``closest`` list is ranked by the number of matchers each
interaction fails, then by how much it differs, then by cassette order.

Seen in a trial: with several cassettes loaded, the no-match 404 listed a 5 MB body known by its digest
ahead of a one-character prompt edit. The real replay server (``MockServer``), read by httpx."""

from __future__ import annotations

import hashlib
import json

import httpx

from ssemock import Cassette, Interaction, MockServer, Request, Response

PATH = "/v1/chat/completions"


def _chat(content: str, model: str = "gpt-4o-mini", temperature: float = 0.2) -> bytes:
    return json.dumps({"model": model, "temperature": temperature, "stream": True,
                       "messages": [{"role": "system", "content": "be brief"},
                                    {"role": "user", "content": content}]}).encode()


def _cassette(name: str, *requests: Request) -> Cassette:
    return Cassette(name, [Interaction(r, Response()) for r in requests])


def _closest(cassettes: list[Cassette], body: bytes) -> list[tuple[str, int]]:
    with MockServer(cassettes, scenarios=[], timing_scale=0) as server:
        answer = httpx.post(server.url + PATH, content=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert answer.status_code == 404 and answer.json()["error"]["type"] == "ssemock_no_match"
    return [(c["cassette"], c["interaction"]) for c in answer.json()["error"]["closest"]]


def test_a_one_character_prompt_edit_ranks_before_a_large_body_known_by_its_digest() -> None:
    large = b"x" * (5 << 20)
    digest = Request("POST", PATH, body_sha256=hashlib.sha256(large).hexdigest(), body_size=len(large))
    big = _cassette("a-large-upload", digest)
    prompt = _cassette("b-prompt", Request("POST", PATH, body=_chat("hello")))
    with MockServer([big, prompt], scenarios=[], timing_scale=0) as server:
        answer = httpx.post(server.url + PATH, content=_chat("hellp"), timeout=10)
    error = answer.json()["error"]
    assert [(c["cassette"], c["interaction"]) for c in error["closest"]] == [("b-prompt", 0), ("a-large-upload", 0)]
    assert "closest: b-prompt #0 POST /v1/chat/completions, which differs in body: messages[1].content" in error[
        "message"]


def test_fewer_and_smaller_differences_rank_first_whatever_the_cassette_order() -> None:
    recorded = _cassette(
        "turns",
        Request("POST", PATH, body=_chat("tell me a story", model="gpt-4.1", temperature=0.9)),  # 3 leaves differ
        Request("POST", "/v1/responses", body=_chat("hello")),  # path differs: one matcher more
        Request("POST", PATH, body=_chat("a completely different question")),  # one leaf, far
        Request("POST", PATH, body=_chat("hello!")),  # one leaf, one character
    )
    assert _closest([recorded], _chat("hello")) == [("turns", 3), ("turns", 2), ("turns", 0)]


def test_bodies_that_are_not_json_rank_by_likeness() -> None:
    recorded = _cassette("forms", Request("POST", PATH, body=b"q=news+from+tokyo&units=imperial"),
                         Request("POST", PATH, body=b"q=weather+in+paris&units=metric"))
    assert _closest([recorded], b"q=weather+in+paris&units=metrik") == [("forms", 1), ("forms", 0)]
