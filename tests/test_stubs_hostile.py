"""Hostile stub files and hostile requests on stub paths: regexes run in linear time, stub files
are read by the project's strict YAML reader, odd request shapes get a clear JSON answer."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import aiohttp
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock import MockServer
from ssemock.errors import StubError
from ssemock.stubs import Timing, load_stubs, on, reply

T = TypeVar("T")

CHAT = "/v1/chat/completions"


def _chat(text: str) -> dict[str, object]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}


async def _redos_and_health(url: str) -> tuple[int, float, int, float]:
    """POST the backtracking input, and meanwhile GET health; each status and its wall time (s)."""
    async with aiohttp.ClientSession() as session:
        async def post() -> tuple[int, float]:
            start = time.perf_counter()
            async with session.post(url + CHAT, json=_chat("a" * 40 + "!")) as resp:
                await resp.read()
                return resp.status, time.perf_counter() - start

        async def health() -> tuple[int, float]:
            await asyncio.sleep(0.05)
            start = time.perf_counter()
            async with session.get(url + "/_ssemock/health") as resp:
                await resp.read()
                return resp.status, time.perf_counter() - start

        (status, took), (health_status, health_took) = await asyncio.gather(post(), health())
    return status, took, health_status, health_took


def test_a_backtracking_regex_answers_at_once_and_health_stays_answerable(tmp_path: Path) -> None:
    # ^(a+)+$ on "a"*40 + "!" is 2**40 steps for a backtracking engine; RE2 is linear.
    (tmp_path / "redos.yaml").write_text(
        "ssemock_stubs: 1\nstubs: [{name: redos, match: {regex: '^(a+)+$'}, reply: {text: matched}}]\n")
    with MockServer(cassettes=[], stubs=[tmp_path], timing_scale=0) as server:
        status, took, health_status, health_took = asyncio.run(_redos_and_health(server.url))
        journal = server.requests
    assert status == 404  # the message ends with "!": no match
    assert health_status == 200
    assert took < 10 and health_took < 10  # a backtracking engine would take hours
    assert journal[-1]["status"] == 404


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)b", "(?<!a)b"])
def test_a_regex_re2_cannot_take_is_refused_naming_file_stub_and_field(tmp_path: Path, pattern: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"ssemock_stubs: 1\nstubs: [{{name: x, reply: {{text: a}}}}, {{match: {{regex: '{pattern}'}}, "
                   "reply: {text: b}}]\n")
    with pytest.raises(StubError) as caught:
        load_stubs(bad)
    assert caught.value.file == str(bad)
    assert caught.value.field == "stubs[1].match.regex"
    assert "RE2" in caught.value.expected
    with pytest.raises(StubError, match=r"match\.regex: expected a regular expression RE2 accepts"):
        on(regex=pattern)


def _laughs(levels: int) -> str:
    """A stub whose tool arguments expand to 10**levels items through aliases (~100 bytes a level)."""
    lines = ["ssemock_stubs: 1", "stubs:", "  - reply:", "      tool_calls:", "        - name: t",
             "          arguments:", "            d0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"            d{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_stub_files_refuse_aliases_before_expanding_them(tmp_path: Path) -> None:
    bomb = tmp_path / "laughs.yaml"
    bomb.write_text(_laughs(7))  # 10**7 items once expanded
    started = time.perf_counter()
    with pytest.raises(StubError) as caught:
        load_stubs(bomb)
    assert time.perf_counter() - started < 10  # expanding would take minutes and gigabytes
    assert caught.value.file == str(bomb)
    assert caught.value.field == "line 7"  # the first anchor
    assert "anchor" in caught.value.expected or "alias" in caught.value.expected


def test_a_stub_file_refuses_a_repeated_stub_and_name(tmp_path: Path) -> None:
    alias = tmp_path / "alias.yaml"
    alias.write_text("ssemock_stubs: 1\nstubs: [&a {name: x, reply: {text: hi}}, *a]\n")
    with pytest.raises(StubError, match="line 2"):
        load_stubs(alias)
    twice = tmp_path / "twice.yaml"
    twice.write_text("ssemock_stubs: 1\nstubs: [{name: x, reply: {text: hi}}, {name: x, reply: {text: ho}}]\n")
    with pytest.raises(StubError) as caught:
        load_stubs(twice)
    assert (caught.value.field, caught.value.got) == ("stubs[1].name", "x")


def _nested(depth: int) -> dict[str, object]:
    value: dict[str, object] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [128, 129])
def test_tool_arguments_and_error_bodies_are_bounded_at_128_levels(tmp_path: Path, depth: int) -> None:
    import json

    arguments = json.dumps(_nested(depth))
    deep = tmp_path / "deep.yaml"
    deep.write_text(f"ssemock_stubs: 1\nstubs: [{{reply: {{tool_calls: [{{name: t, arguments: {arguments}}}]}}}}]\n")
    body = tmp_path / "body.yaml"
    body.write_text(f"ssemock_stubs: 1\nstubs: [{{reply: {{error: {{status: 500, body: {arguments}}}}}}}]\n")
    if depth <= 128:
        [stub] = load_stubs(deep)
        assert stub.reply.tool_calls[0].arguments == _nested(depth)
        assert load_stubs(body)[0].reply.error is not None
        assert on().call_tool("t", _nested(depth)) is not None
        return
    for path, field in ((deep, "stubs[0].reply.tool_calls[0].arguments"), (body, "stubs[0].reply.error.body")):
        with pytest.raises(StubError) as caught:
            load_stubs(path)
        assert (caught.value.file, caught.value.field) == (str(path), field)
        assert caught.value.expected.startswith("plain JSON nested at most 128 deep (nested deeper than 128 levels")
    with pytest.raises(StubError, match="nested at most 128 deep"):
        on().call_tool("t", _nested(depth))
    with pytest.raises(StubError, match="nested at most 128 deep"):
        on().error(500, body=_nested(depth))


ID_SHAPES = {"resp": r"resp_[0-9a-f]{50}", "msg": r"msg_[0-9a-f]{50}", "fc": r"fc_[0-9a-f]{50}"}


@pytest.mark.parametrize("stream", [False, True])
def test_responses_ids_have_the_shapes_of_the_bundled_recording(stream: bool) -> None:
    # cassettes/openai-responses-function-call.yaml: resp_00d64fa806f33331…, fc_00d64fa806f33331…,
    # msg_0dacb603de1c9e6b…: 50 hex digits, items sharing their response's first 16.
    import json
    import re

    import httpx

    stubs = [on(contains="weather").call_tool("get_weather", {"city": "Paris"}), reply("Hello", times=None)]
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        answers = [httpx.post(server.url + "/v1/responses", json={"model": "gpt-4o", "input": text, "stream": stream})
                   for text in ("weather?", "hi")]
    for answer, kind in zip(answers, ("fc", "msg")):
        assert answer.status_code == 200
        if stream:
            events = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
            body = next(e["response"] for e in events if e["type"] == "response.completed")
        else:
            body = answer.json()
        assert re.fullmatch(ID_SHAPES["resp"], body["id"])
        [item] = body["output"]
        assert re.fullmatch(ID_SHAPES[kind], item["id"])
        assert item["id"][len(kind) + 1:][:16] == body["id"][5:21]


PATHS = ["/v1/chat/completions", "/api/v1/chat/completions", "/v1/responses", "/v1/messages",
         "/v1beta/models/g:streamGenerateContent", "/v1beta/models/g:streamGenerateContent?alt=sse",
         "/v1beta/models/g:generateContent", "/openai/deployments/d/chat/completions"]
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                     st.text(max_size=8), st.sampled_from(["\ud800", "user", "assistant", "tool", "model", "text",
                                                          "function_call_output", "tool_result", "weather"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["role", "content", "type", "text", "parts", "thought", "functionResponse",
                                     "parameters", "name", "include_usage", "effort"]), inner, max_size=3)),
    max_leaves=12)
_BODIES = st.fixed_dictionaries({}, optional={
    key: _VALUES for key in ("model", "messages", "input", "contents", "stream", "stream_options", "tools",
                             "reasoning", "instructions", "store", "tool_choice", "max_output_tokens")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), body=_BODIES)
def test_any_request_shape_on_a_stub_path_gets_an_answer_or_a_json_error(
    stub_server: MockServer, path: str, body: dict[str, object],
) -> None:
    import json

    import httpx

    data = json.dumps(body).encode()  # lone surrogates as \ud800 escapes: valid JSON
    answer = httpx.post(stub_server.url + path, content=data, headers={"content-type": "application/json"})
    assert answer.status_code in (200, 400, 404), answer.text[:300]
    if answer.status_code != 200:
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["error"]["type"] in ("ssemock_bad_request", "ssemock_no_match")


@pytest.fixture(scope="module")
def stub_server() -> Iterator[MockServer]:
    stubs = [on(contains="weather").call_tool("get_weather", {"city": "Paris"}).then_reply("Sunny"),
             on(regex="^(a+)+$").reply("a's"), reply("Hello", reasoning="hm", times=None)]
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        yield server


def test_malformed_fields_get_a_clear_answer_not_a_traceback(stub_server: MockServer) -> None:
    import httpx

    gemini = httpx.post(stub_server.url + "/v1beta/models/g:streamGenerateContent", json={"contents": 1})
    chat = httpx.post(stub_server.url + "/v1/chat/completions", json={"messages": True, "model": "gpt-4o"})
    lone = httpx.post(stub_server.url + "/v1/chat/completions", headers={"content-type": "application/json"},
                      content=b'{"model": "\\ud800", "messages": [{"role": "user", "content": "hi"}]}')
    # no messages: the catch-all stub answers; the model's lone surrogate is echoed as U+FFFD
    assert (gemini.status_code, chat.status_code, lone.status_code) == (200, 200, 200)
    assert chat.json()["model"] == "gpt-4o"
    assert lone.json()["model"] == "\ufffd"


INLINE_BAD = [
    (lambda: reply("x", timing=Timing(first_token=1e9)), "timing.first_token", "a number of seconds from 0 to 3600"),
    (lambda: on(timing=Timing(first_token=float("nan"))), "timing.first_token", "a number of seconds from 0 to 3600"),
    (lambda: Timing(tokens_per_second=float("inf")), "timing.tokens_per_second", "a number from 0.1 to 1e+06"),
    (lambda: Timing(jitter=True), "timing.jitter", "a number from 0 to 1"),  # type: ignore[arg-type]
    (lambda: reply("x", times=0), "times", "an integer from 1 to 1000000000"),
    (lambda: reply("x", times=2.5), "times", "an integer from 1 to 1000000000"),  # type: ignore[arg-type]
    (lambda: reply(3), "text", "a string of at most 1048576 characters"),  # type: ignore[arg-type]
    (lambda: reply("x", model=5), "model", "a string of at most 1048576 characters"),
    (lambda: reply("x", usage=3), "usage", "a mapping of input_tokens"),
    (lambda: reply("x", usage={"input_tokens": -1}), "usage.input_tokens", "an integer from 0 to 1000000000"),
    (lambda: reply("x", tool_calls="t"), "tool_calls", "a list of tool calls"),
    (lambda: on().call_tool("t", {"x": float("nan")}), "tool_calls[t].arguments", "plain JSON"),
    (lambda: on().call_tool("t", "city"), "tool_calls[t].arguments", "a JSON object"),  # type: ignore[arg-type]
    (lambda: on(turn=0), "match.turn", "an integer >= 1"),
    (lambda: on(tool_result="yes"), "match.tool_result", "true or false"),  # type: ignore[arg-type]
    (lambda: on(contains=5), "match.contains", "a string of at most"),  # type: ignore[arg-type]
    (lambda: on(regex=5), "match.regex", "a string of at most 1000 characters"),  # type: ignore[arg-type]
    (lambda: on().error(500, body={"x": float("inf")}), "error.body", "plain JSON"),
    (lambda: on().error(200), "error.status", "an HTTP error status from 400 to 599"),
]


@pytest.mark.parametrize(("make", "field", "expected"), INLINE_BAD)
def test_inline_stubs_are_checked_as_files_are(make: object, field: str, expected: str) -> None:
    with pytest.raises(StubError) as caught:
        make()  # type: ignore[operator]
    assert (caught.value.file, caught.value.field) == ("<inline>", field)
    assert caught.value.expected.startswith(expected)


@pytest.mark.parametrize(("timing", "field"), [("{first_token: .nan}", "first_token"),
                                               ("{tokens_per_second: .inf}", "tokens_per_second"),
                                               ("{chunk_gap: true}", "chunk_gap")])
def test_a_stub_file_refuses_nan_and_infinite_times_with_the_same_words(
    tmp_path: Path, timing: str, field: str,
) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text(f"ssemock_stubs: 1\nstubs: [{{reply: {{text: a}}, timing: {timing}}}]\n")
    with pytest.raises(StubError) as caught:
        load_stubs(bad)
    assert caught.value.field == f"stubs[0].timing.{field}"
    with pytest.raises(StubError) as inline:
        Timing(**{field: caught.value.got})
    assert inline.value.expected == caught.value.expected


async def _while_polling(
    url: str, period: float, work: Callable[[aiohttp.ClientSession], Awaitable[T]],
) -> tuple[T, float]:
    """What ``work`` returns, and the slowest health answer (s) while it ran (one poll every ``period`` s)."""
    worst, done = 0.0, False
    async with aiohttp.ClientSession() as session:
        async def poll() -> None:
            nonlocal worst
            while not done:
                start = time.perf_counter()
                async with session.get(url + "/_ssemock/health") as resp:
                    await resp.read()
                worst = max(worst, time.perf_counter() - start)
                await asyncio.sleep(period)

        polling = asyncio.create_task(poll())
        try:
            result = await work(session)
        finally:
            done = True
            await polling
    return result, worst


async def _stream_and_poll(url: str) -> tuple[int, float]:
    """Bytes of one streamed chat answer, and the slowest health answer (s) meanwhile."""
    async def stream(session: aiohttp.ClientSession) -> int:
        async with session.post(url + CHAT, json={**_chat("hi"), "stream": True}) as resp:
            return len(await resp.read())

    return await _while_polling(url, 0.01, stream)


def test_a_large_reply_does_not_hold_the_loop() -> None:
    # 1,045,000 characters (the per-reply bound is 1 MiB): ~209,000 OpenAI chunks, over 60 MB.
    with MockServer(cassettes=[], stubs=[reply("word " * 209_000)], timing_scale=0) as server:
        size, worst = asyncio.run(_stream_and_poll(server.url))
    assert size > 60_000_000
    # On the loop, synthesis and sending held it 5-15 s; the bound leaves room for a loaded machine
    # (the client shares this process's interpreter lock with the server's threads).
    assert worst < 2.5


async def _miss_and_poll(url: str, bodies: list[dict[str, object]]) -> tuple[list[dict[str, object]], float]:
    """The JSON answers to ``bodies`` (sent together), and the slowest health answer (s) meanwhile."""
    async def send_all(session: aiohttp.ClientSession) -> list[dict[str, object]]:
        async def post(body: dict[str, object]) -> dict[str, object]:
            async with session.post(url + CHAT, json=body) as resp:
                answer: dict[str, object] = await resp.json()
                return answer

        return list(await asyncio.gather(*(post(body) for body in bodies)))

    return await _while_polling(url, 0.005, send_all)


def test_ten_thousand_stubs_match_and_miss_off_the_loop(tmp_path: Path) -> None:
    lines = ["ssemock_stubs: 1", "stubs:"] + [
        f'  - {{name: s{i}, match: {{regex: "^q{i}[a-z]+x$", model: m{i}}}, reply: {{text: t{i}}}}}'
        for i in range(10_000)]
    (tmp_path / "many.yaml").write_text("\n".join(lines) + "\n")  # the documented bound: 10,000 stubs
    stubs = load_stubs(tmp_path / "many.yaml")
    miss = {"model": "zz", "messages": [{"role": "user", "content": "nothing"}]}
    hit = {"model": "m9999", "messages": [{"role": "user", "content": "q9999abcx"}]}
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        answers, worst = asyncio.run(_miss_and_poll(server.url, [miss] * 4 + [hit]))
    for answer in answers[:4]:
        # every stub fails two conditions (model, regex): the first of them is the closest
        assert answer["error"]["closest_stub"]["stub"] == "s0"  # type: ignore[index]
    assert answers[4]["choices"][0]["message"]["content"] == "t9999"  # type: ignore[index]
    assert worst < 1.0  # scored on the loop, each miss held it 1-4 s


def test_stubs_read_the_last_user_message_of_a_body_over_one_mebibyte() -> None:
    import httpx

    body = {"model": "gpt-4o", "messages": [{"role": "system", "content": "rules " * 200_000},  # 1.2 MB
                                            {"role": "user", "content": "what is the weather?"}]}
    stubs = [on(contains="weather").reply("sunny"), reply("catch-all", times=None)]
    with MockServer(cassettes=[], stubs=stubs, timing_scale=0) as server:
        answer = httpx.post(server.url + CHAT, json=body, timeout=60)
        journal = server.requests
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "sunny"
    assert answer.json()["model"] == "gpt-4o"
    assert journal[-1]["stub"] == "on(contains='weather') step 1: reply 'sunny'"


def test_a_previous_response_id_follow_up_gets_the_chain_s_next_step() -> None:
    import openai

    chain = on(contains="weather").call_tool("get_weather", {"city": "Paris"}).then_reply("Sunny")
    with MockServer(cassettes=[], stubs=chain, timing_scale=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0)
        first = client.responses.create(model="gpt-4o", input="weather in Paris?")
        [call] = [item for item in first.output if item.type == "function_call"]
        second = client.responses.create(model="gpt-4o", previous_response_id=first.id, input=[
            {"type": "function_call_output", "call_id": call.call_id, "output": "21 C"}])
        streamed = client.responses.create(model="gpt-4o", input="weather in Paris?", stream=True)
        streamed_id = next(e.response.id for e in streamed if e.type == "response.completed")
        third = client.responses.create(model="gpt-4o", previous_response_id=streamed_id, input=[
            {"type": "function_call_output", "call_id": "call_x", "output": "21 C"}])
        client.close()
        journal = server.requests
    assert (call.name, call.arguments) == ("get_weather", '{"city":"Paris"}')
    assert second.output_text == "Sunny" and third.output_text == "Sunny"
    assert [e["stub"] for e in journal] == ["on(contains='weather') step 1: call get_weather",
                                            "on(contains='weather') step 2: reply 'Sunny'"] * 2


def test_a_lone_surrogate_in_tool_arguments_is_refused_when_the_stub_is_made() -> None:
    # JSON can only escape it, and no answer can carry it as UTF-8: refused at once, naming the field,
    # rather than blamed on the request at the first answer.
    with pytest.raises(StubError, match="arguments"):
        on(contains="w").call_tool("f", {"a": "\ud800"})


FAST_READER = """
import json, socket, sys, time
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
sock = socket.create_connection((host, port))
sock.sendall(b"POST " + path.encode() + b" HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n"
             b"Connection: close\\r\\nContent-Length: " + str(len(body)).encode() + b"\\r\\n\\r\\n" + body)
total = len(sock.recv(1 << 20))
print("started", flush=True)
while piece := sock.recv(1 << 20):  # as fast as the socket gives: the server never waits for room
    total += len(piece)
print(total, time.monotonic(), flush=True)  # the system's monotonic clock, shared with the test
"""


def test_a_long_stub_answer_to_a_fast_reader_leaves_the_server_answering() -> None:
    """A stub answer of 200,000 token events sent at once (every deadline passed) to a reader that never
    lets the socket fill: the server still answers another request while it is being sent."""
    with MockServer(cassettes=[], stubs=[reply("word " * 200_000, times=None)]) as server:  # 1 MB: within 1 MiB
        url = httpx.URL(server.url)
        with subprocess.Popen([sys.executable, "-c", FAST_READER, str(url.host), str(url.port),
                               "/v1/chat/completions"], stdout=subprocess.PIPE, text=True) as reader:
            try:
                assert reader.stdout is not None and reader.stdout.readline() == "started\n"
                health = httpx.get(server.url + "/_ssemock/health", timeout=60)
                answered = time.monotonic()
                total, ended = reader.stdout.readline().split()
            finally:
                reader.kill()
    assert health.status_code == 200
    # answered while the events were still going out: the send takes about a second on an idle machine
    # (200,000 writes); a sender holding the loop would answer only once it is done, a few ms before the
    # reader ends
    assert answered < float(ended) - 0.2
    assert int(total) > 200_000 * 200  # every event of the answer was read (about 300 bytes each)


def test_a_large_body_of_many_tiny_objects_is_not_read_for_stubs_but_a_long_prompt_is() -> None:
    """Over 1 MiB, a body holding more than MAX_CONTAINERS objects and arrays reads as having no
    messages (30 MiB of ``{}`` would take over 1.5 GB as Python objects); a long prompt is read whole."""
    from ssemock.stubs.conversation import MAX_CONTAINERS

    prompt = {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather? " + "x" * (2 << 20)}]}
    crowded = {**prompt, "x": [{}] * (MAX_CONTAINERS + 1)}
    with MockServer(cassettes=[], stubs=on(contains="weather").reply("Sunny")) as server:  # answers once
        many = httpx.post(server.url + "/v1/chat/completions", json=crowded, timeout=60)
        long_prompt = httpx.post(server.url + "/v1/chat/completions", json=prompt, timeout=60)
    assert long_prompt.status_code == 200 and long_prompt.json()["choices"][0]["message"]["content"] == "Sunny"
    assert many.status_code == 404 and many.json()["error"]["type"] == "ssemock_no_match"
    assert "closest stub" in many.json()["error"]["message"]


@pytest.mark.parametrize(("make", "field"), [
    (lambda: reply("a\ud800b"), "text"),
    (lambda: reply("x", reasoning="\udfff"), "reasoning"),
    (lambda: on().call_tool("f\ud800", {}), "tool_calls.name"),
])
def test_a_lone_surrogate_in_an_inline_stub_is_refused_when_the_stub_is_made(make: object, field: str) -> None:
    """UTF-8 cannot encode a lone surrogate: refused at once, not blamed on the first request."""
    with pytest.raises(StubError) as caught:
        make()  # type: ignore[operator]
    assert (caught.value.file, caught.value.field) == ("<inline>", field)
    assert caught.value.expected.endswith("without lone surrogates")


def test_tool_call_is_where_the_error_says() -> None:
    from ssemock.stubs import tool_call

    with pytest.raises(StubError, match=r"ssemock\.stubs\.tool_call\(name, arguments\)"):
        reply("x", tool_calls=[("f", {"a": 1})])  # type: ignore[list-item]
    assert reply("x", tool_calls=[tool_call("f", {"a": 1})]).reply.tool_calls[0].arguments == {"a": 1}
