"""Synthesis writes each provider's events in bulk (JSON templates, NUL-split joins, padding and
times drawn in a row) and its bytes are those of the event-by-event writer it replaced.

``tests/data/synthesis_digests.json`` holds the SHA-256 of every response (status, headers, chunk
times and bytes, end) the event-by-event writer gave for :data:`TEXTS` × replies × :data:`TIMINGS`
on each provider path, with the seed 7 and the clock at 2026-01-01T00:00:00Z; the bulk writer must
give the same bytes. The OpenAI Responses digests (streamed and JSON) were taken again when their
ids took the recorded shapes (``resp_`` + 50 hex digits, ``msg_``/``fc_``/``rs_`` items sharing its
first 16), checked on their own in ``tests/test_stubs_hostile.py``; nothing else of those answers
changed. The properties check the bulk pieces against the obvious one-event-at-a-time
rule on random texts and tool arguments.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock.cassette import Request, Response
from ssemock.providers.synthesis import BATCH, Piece, Script, Template, dumps, event_count, run, slot
from ssemock.providers.tokens import CACHED_TEXT, split_tokens
from ssemock.sse import Decoder, Event
from ssemock.stubs import Match, Reply, Stub, Timing, read_conversation, synthesize
from ssemock.stubs.inline import make_reply, tool_call
from ssemock.stubs.synth import encode_pieces, piece_times

DIGESTS = Path(__file__).parent / "data" / "synthesis_digests.json"
NOW = 1767225600.0  # 2026-01-01T00:00:00Z
TEXTS = ["Hello", "", 'He said "hi"\\ back\n\ttab \x00 nul \u2028 sep \U0001F600 emoji café 1234567 it\'s',
         " ".join(["word"] * 700) + "\n\nend."]
USER = {"messages": [{"role": "user", "content": "q"}]}
GEMINI = {"contents": [{"role": "user", "parts": [{"text": "q"}]}]}
STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
BODIES: dict[str, tuple[str, list[tuple[str, str]], dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", [], {**USER, "stream": True, "stream_options": {"include_usage": True}}),
    "openai-chat-nousage": ("/v1/chat/completions", [], {**USER, "stream": True}),
    "openai-responses": ("/v1/responses", [], {"input": "q", "stream": True}),
    "anthropic": ("/v1/messages", [], {**USER, "stream": True}),
    "gemini": (STREAM, [("alt", "sse")], GEMINI),
    "gemini-array": (STREAM, [], GEMINI),
    "openai-chat-json": ("/v1/chat/completions", [], USER),
    "responses-json": ("/v1/responses", [], {"input": "q"}),
    "anthropic-json": ("/v1/messages", [], USER),
    "gemini-json": ("/v1beta/models/gemini-2.0-flash:generateContent", [], GEMINI),
    "openrouter": ("/api/v1/chat/completions", [], {**USER, "stream": True}),
}
TIMINGS = {"none": Timing(), "rate": Timing(0.25, 40.0, 0.0, 0.3), "gap": Timing(0.1, None, 0.02, 0.0)}
ARGS = {"city": "Paris \u00e9\"", "n": [1, 2.5, None]}
SSE_PATHS = [(p, q, b) for name, (p, q, b) in BODIES.items()
             if name in {"openai-chat", "openai-responses", "anthropic", "gemini", "openrouter"}]


def replies() -> Iterator[tuple[str, Reply]]:
    for i, text in enumerate(TEXTS):
        yield f"text{i}", make_reply(text)
    yield "reasoning", make_reply(TEXTS[2], reasoning="Let me think \"hard\" about it.\nOK " * 5)
    yield "tools", make_reply(None, tool_calls=[tool_call("get_weather", ARGS), tool_call("f", {})])
    yield "text+tool", make_reply("Checking.", tool_calls=[tool_call("lookup", {"q": TEXTS[2]})])
    yield "refusal", make_reply(None, refusal="I can't help with \"that\".")


def digest(response: Response) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([response.status, response.headers, response.end.t, response.end.how]).encode())
    for chunk in response.chunks:
        h.update(repr(chunk.t).encode() + b"|" + chunk.data + b"#")
    return h.hexdigest()


def answer(path: str, query: list[tuple[str, str]], body: dict[str, Any], reply: Reply,
           timing: Timing = TIMINGS["none"]) -> Response:
    conv = read_conversation(Request("POST", path, query, [], json.dumps({"model": "m", **body}).encode()))
    assert conv is not None
    return synthesize(Stub(Match(), reply, timing, name="s"), conv, seed=7)


def test_bytes_are_those_of_the_event_by_event_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)
    expected = json.loads(DIGESTS.read_text())
    found = {f"{p}/{r}/{t}": digest(answer(*BODIES[p], reply, timing))
             for p in BODIES for r, reply in replies() for t, timing in TIMINGS.items()}
    assert len(found) == len(expected) == 264
    assert [k for k in expected if found[k] != expected[k]] == []


# ---- the bulk pieces against the one-at-a-time rule ---------------------------------------------------

texts = st.text(st.characters(codec="utf-8"), max_size=40)


@given(st.lists(texts, min_size=0, max_size=30), st.lists(st.integers(-10**6, 10**6), min_size=30, max_size=30),
       st.text(st.characters(codec="utf-8", exclude_characters="\ue000"), max_size=40))
def test_template_fill_many_is_dumps_of_each_value(values: list[str], numbers: list[int], constant: str) -> None:
    for dump in (dumps, lambda v: json.dumps(v, separators=(",", ": "), ensure_ascii=False)):
        template = Template({"a": [1, {"t": slot("t")}], "k": constant, "n": slot("n"), "c": slot("c")}, dump)
        filled = template.fill_many(len(values), t=values, n=numbers[:len(values)], c=constant)
        assert filled == [dump({"a": [1, {"t": v}], "k": constant, "n": n, "c": constant})
                          for v, n in zip(values, numbers)]


def _padding_one_at_a_time(rng: random.Random, pool: list[str], low: int, high: int) -> str:
    size = low + rng.getrandbits(8) % (high - low + 1)
    if len(pool[0]) < size:
        pool[0] += base64.b64encode(rng.randbytes(3072)).decode().translate(str.maketrans("+/", "xQ"))
    text, pool[0] = pool[0][:size], pool[0][size:]
    return text


@given(st.integers(0, 2**32), st.lists(st.tuples(st.integers(0, 3000), st.sampled_from([(2, 15), (10, 15)]))))
def test_paddings_in_a_row_are_the_paddings_one_at_a_time(seed: int, rounds: list[tuple[int, tuple[int, int]]]) -> None:
    script = Script(None, Reply(), "m", random.Random(seed), 0)  # type: ignore[arg-type]
    rng, pool = random.Random(seed), [""]
    for count, (low, high) in rounds:
        expected = [_padding_one_at_a_time(rng, pool, low, high) for _ in range(count)]
        assert script.paddings(count, low, high) == expected
        assert all(low <= len(p) <= high and p.isalnum() and p.isascii() for p in expected)
    assert script.rng.getstate() == rng.getstate()  # what is drawn next is drawn the same


pieces_st = st.lists(st.builds(Piece, st.sampled_from([None, "message", "content_block_delta"]),
                               st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30),
                               st.integers(0, 2), st.booleans()), max_size=20)


@given(pieces_st, st.sampled_from(["\n", "\r\n"]))
def test_encode_pieces_is_each_piece_on_its_own(pieces: list[Piece], eol: str) -> None:
    def one(p: Piece) -> bytes:
        if p.comment:
            return f": {p.data}{eol}{eol}".encode()
        head = f"event: {p.event}{eol}" if p.event else ""
        return f"{head}data: {p.data}{eol}{eol}".encode()

    assert encode_pieces(pieces, eol) == [one(p) for p in pieces]


nul_free = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), max_size=30)


@given(st.lists(st.tuples(st.sampled_from([None, "response.output_text.delta"]), st.lists(nul_free, max_size=6),
                          st.integers(0, 2))),
       st.sampled_from(["\n", "\r\n"]))
def test_a_run_writes_the_events_of_its_pieces(groups: list[tuple[str | None, list[str], int]], eol: str) -> None:
    """A run (``count`` texts joined by NUL) gives the bytes, times and events of one piece per text."""
    runs = [Piece(event, "\x00".join(datas), tokens, count=len(datas)) for event, datas, tokens in groups if datas]
    singles = [Piece(event, data, tokens) for event, datas, tokens in groups for data in datas]
    assert event_count(runs) == len(singles)
    assert encode_pieces(runs, eol) == encode_pieces(singles, eol)
    timing = Timing(0.25, 40.0, 0.0, 0.3)
    assert piece_times(runs, timing, random.Random(1)) == piece_times(singles, timing, random.Random(1))


# ---- random answers: every event is its own JSON, the text assembles back --------------------------------

def _events(response: Response) -> list[Event]:
    decoder = Decoder()
    found = [e for c in response.chunks for e in decoder.feed(c.data) if isinstance(e, Event)]
    return found + [e for e in decoder.close() if isinstance(e, Event)]


def _assembled(provider: str, events: list[Event]) -> tuple[str, str]:
    """(answer text, tool arguments) read back from the events, as the SDKs assemble them."""
    text, args = [], []
    for event in events:
        if event.data == "[DONE]":
            continue
        value = json.loads(event.data)
        if provider == "/v1/chat/completions" or provider == "/api/v1/chat/completions":
            for choice in value["choices"]:
                text.append(choice["delta"].get("content") or "")
                args += [c["function"]["arguments"] for c in choice["delta"].get("tool_calls", [])]
        elif provider == "/v1/responses":
            if value["type"] == "response.output_text.delta":
                text.append(value["delta"])
            elif value["type"] == "response.function_call_arguments.delta":
                args.append(value["delta"])
        elif provider == "/v1/messages":
            delta = value.get("delta", {})
            text.append(delta.get("text", "") if value["type"] == "content_block_delta" else "")
            args.append(delta.get("partial_json", "") if value["type"] == "content_block_delta" else "")
        else:
            for part in value["candidates"][0]["content"]["parts"]:
                text.append(part.get("text", ""))
                args += [json.dumps(part["functionCall"]["args"])] if "functionCall" in part else []
    return "".join(text), "".join(args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(st.characters(codec="utf-8"), max_size=300),
       st.dictionaries(st.text(max_size=8), st.text(st.characters(codec="utf-8"), max_size=30), max_size=4),
       st.sampled_from(SSE_PATHS))
def test_random_answers_are_valid_events_that_assemble_back(text: str, arguments: dict[str, str],
                                                            path: tuple[str, list[tuple[str, str]], dict[str, Any]]
                                                            ) -> None:
    events = _events(answer(*path, make_reply(text, tool_calls=[tool_call("f", arguments)])))
    dump = (lambda v: json.dumps(v, separators=(",", ": "), ensure_ascii=False)) if "gemini" in path[0] else dumps
    for event in events:
        if event.data not in ("[DONE]", '{"type": "ping"}'):
            assert dump(json.loads(event.data)) == event.data.rstrip(" ")  # one JSON text, as the provider writes it
    got_text, got_args = _assembled(path[0].split(":")[0] if "gemini" not in path[0] else "gemini", events)
    assert got_text == text
    expected_args = json.dumps(arguments) if "gemini" in path[0] else dumps(arguments)
    assert got_args == expected_args


def test_long_answers_are_written_in_batches_with_the_same_bytes() -> None:
    """More than BATCH events: runs of at most BATCH events, the same texts as one fill; a long text
    is cut into the same tokens in batches as in one pass."""
    template = Template({"t": slot("t"), "n": slot("n")})
    values = [f"v{i}" for i in range(2 * BATCH + 5)]
    numbers = list(range(len(values)))
    runs = run("e", template, len(values), 2, t=values, n=numbers)
    assert [p.count for p in runs] == [BATCH, BATCH, 5]
    assert [d for p in runs for d in p.datas()] == template.fill_many(len(values), t=values, n=numbers)
    assert encode_pieces(runs, "\n") == [f'event: e\ndata: {{"t":"v{i}","n":{i}}}\n\n'.encode()
                                          for i in numbers]
    line = "It's 1234567 words, don't   stop!\r\n"  # its last token, "!\r\n", ends the line
    long_text = line * 5000  # 180,000 characters: over CACHED_TEXT, cut in batches
    assert len(long_text) > CACHED_TEXT
    assert split_tokens(long_text) == split_tokens(line) * 5000
