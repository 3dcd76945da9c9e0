"""A request body's JSON is parsed once per request, and a large one is parsed and keyed for
matching in a thread, not on the server's event loop. Real servers on 127.0.0.1, real clients
(httpx); what is observed is which thread parses and encodes, and how often: no timing."""

from __future__ import annotations

import json
import threading
import types
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import ssemock.body_key
import ssemock.limits
from ssemock import Cassette, Chunk, Interaction, MockServer, Request, Response
from ssemock.body_key import TEXT_PIECE, WHOLE_TEXT
from ssemock.intake import THREAD_PARSE

PATH = "/v1/chat/completions"


def answer(text: bytes) -> Response:
    return Response(status=200, headers=[("content-type", "text/event-stream")],
                    chunks=[Chunk(0.0, b"data: " + text + b"\n\n")])


def cassette(*bodies: bytes) -> Cassette:
    """One interaction per body, answering ``data: <index>``."""
    return Cassette("bodies", [Interaction(Request(method="POST", path=PATH, body=body), answer(str(i).encode()))
                               for i, body in enumerate(bodies)])


class Calls:
    """The JSON parser (``json.loads``) and the canonical encoder, recording the thread of each call
    and what it was given."""

    def __init__(self) -> None:
        self.loads: list[tuple[int, int]] = []  # (thread, bytes parsed)
        self.encodes: list[tuple[int, int]] = []  # (thread, items of the value encoded)

    def parses_of(self, body: bytes) -> list[int]:
        return [thread for thread, size in self.loads if size == len(body)]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Calls]:
    seen = Calls()
    real_loads, real_encoder = json.loads, ssemock.body_key._ENCODER

    def loads(data: Any, **kwargs: Any) -> Any:
        seen.loads.append((threading.get_ident(), len(data)))
        return real_loads(data, **kwargs)

    def encode(value: Any) -> str:
        seen.encodes.append((threading.get_ident(), len(value) if isinstance(value, (list, dict)) else 1))
        return real_encoder.encode(value)

    monkeypatch.setattr(json, "loads", loads)
    monkeypatch.setattr(ssemock.body_key, "_ENCODER", types.SimpleNamespace(encode=encode))
    yield seen


def loop_thread(server: MockServer) -> int:
    return server.call(threading.get_ident)


def post(server: MockServer, body: bytes) -> httpx.Response:
    return httpx.post(server.url + PATH, content=body, headers={"content-type": "application/json"}, timeout=60)


def test_a_small_body_is_parsed_once_for_the_check_the_journal_and_matching(calls: Calls) -> None:
    value = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    body = json.dumps(value).encode()
    recorded = json.dumps(value, separators=(",", ":")).encode()  # equal as JSON, not as bytes (nor in size)
    with MockServer([cassette(recorded)], scenarios=[], timing_scale=0) as server:
        got = post(server, body)
        assert got.status_code == 200 and got.text == "data: 0\n\n"
        assert calls.parses_of(body) == [loop_thread(server)]  # once, on the loop (small: cheaper than a thread)
        assert server.requests[-1]["body"] == json.loads(body)


def test_a_large_body_is_parsed_once_and_keyed_in_pieces_off_the_loop(calls: Calls) -> None:
    # Over WHOLE_TEXT bytes and over TEXT_PIECE items per container: the worst shape (tiny items).
    items = [{"i": i, "v": [0, 1]} for i in range(6 * TEXT_PIECE)]
    value = {"model": "m", "items": items, "ints": list(range(3 * TEXT_PIECE))}
    body = json.dumps(value).encode()
    assert len(body) > max(THREAD_PARSE, WHOLE_TEXT)
    recorded = json.dumps(value, separators=(",", ":")).encode()  # equal as JSON, not as bytes (nor in size)
    other = json.dumps({"model": "m", "items": items[:-1]}).encode()
    with MockServer([cassette(other, recorded)], scenarios=[], timing_scale=0) as server:
        calls.encodes.clear()  # the cassette's own keys were computed at start-up
        got = post(server, body)
        assert got.status_code == 200 and got.text == "data: 1\n\n"  # the index found it by its key
        loop = loop_thread(server)
        assert len(calls.parses_of(body)) == 1 and loop not in calls.parses_of(body)
        assert calls.encodes and all(thread != loop for thread, _ in calls.encodes)
        assert len(calls.encodes) > 1 and max(items for _, items in calls.encodes) <= TEXT_PIECE


def test_a_large_body_equal_as_json_but_written_otherwise_matches(calls: Calls) -> None:
    recorded = {"model": "m", "temperature": 1, "top": 1e16, "items": [{"i": i} for i in range(4 * TEXT_PIECE)]}
    sent = json.dumps({**recorded, "temperature": 1.0, "top": 1e16}, indent=1).encode()  # 1.0, 1e+16
    assert b"1.0" in sent and b"1e+16" in sent and len(sent) > THREAD_PARSE
    with MockServer([cassette(json.dumps(recorded, separators=(",", ":")).encode())], scenarios=[],
                    timing_scale=0) as server:
        got = post(server, sent)
        assert got.status_code == 200 and got.text == "data: 0\n\n"
        assert len(calls.parses_of(sent)) == 1  # the second reading (1.0 as 1) is only for its key


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"0" + b"}" * depth


def test_with_a_deeper_bound_a_body_past_the_default_depth_matches_its_bytes() -> None:
    body = nested(150)  # within max_json_depth=200, past the default 128 that matching reads JSON to
    with MockServer([cassette(body)], scenarios=[], timing_scale=0, max_json_depth=200) as server:
        got = post(server, body)
        assert got.status_code == 200 and got.text == "data: 0\n\n"
        refused = post(server, nested(201))
        assert refused.status_code == 400 and refused.json()["error"]["type"] == "ssemock_json_too_deep"


def test_a_request_parsed_with_a_deeper_bound_reads_as_too_deep_for_the_default() -> None:
    request = Request(method="POST", path=PATH, body=nested(150))
    assert request.json_view(strict=True, max_depth=200) is not None
    assert request.json_view() is None  # the default bound, 128, from the value already parsed
    with pytest.raises(ssemock.JSONTooDeepError):
        request.json_view(strict=True)
    assert request.json_view(max_depth=150) is not None


def test_the_depth_is_walked_when_the_brackets_could_nest_past_the_bound() -> None:
    from ssemock.limits import load_json

    in_a_string = {"text": "[" * 300 + "{" * 300}  # 600 brackets, 1 level deep
    assert load_json(json.dumps(in_a_string).encode(), max_depth=3) == in_a_string
    assert load_json(json.dumps([[{"a": "[[[[{{{{"}]]).encode(), max_depth=3) == [[{"a": "[[[[{{{{"}]]
    with pytest.raises(ssemock.JSONTooDeepError):
        load_json(json.dumps([[{"a": ["[[[["]}]]).encode(), max_depth=3)
    assert load_json(nested(3), max_depth=3) == json.loads(nested(3))
    for encoding in ("utf-8-sig", "utf-16-le", "utf-16-be", "utf-16", "utf-32-le", "utf-32"):  # json.loads reads them
        assert load_json(nested(3).decode().encode(encoding), max_depth=3) == json.loads(nested(3))
        with pytest.raises(ssemock.JSONTooDeepError):
            load_json(nested(4).decode().encode(encoding), max_depth=3)
