"""Stubs: match + synthesis of a 2,000-token answer, and the fixture's cost with an inline stub.

1. ``StubBook.answer`` on a book of 50 stubs whose last one answers (49 refused first, each on its
   ``contains`` condition), synthesizing a 2,000-token answer (the documented token-like rule) in
   the provider's format: OpenAI chat, OpenAI Responses, Anthropic, Gemini. Baseline, interleaved
   with ours in the same run: writing the same events the obvious way, each event's JSON value
   (built beforehand, so the baseline does less than a writer building them) through
   ``json.dumps`` into an SSE event and a :class:`~ssemock.cassette.Chunk`. The value is the
   median CPU time of the measuring thread (the machine may be shared: wall time counts other
   processes' turns), wall time in the spread. Goal: at most 5 ms. A floor no writer of this
   response shape goes below: one ``Chunk`` object per event, made from ready bytes (printed as
   ``floor``).
2. The same answers over HTTP, end to end: milliseconds from sending the request to the last byte,
   read by the benchmark client (:mod:`benchmarks.clients`) in its own process, from ``ssemock serve
   --stubs FILE`` (the 50 stubs, the default timing scale) against a bare aiohttp server doing the
   same work in the same arrangement: at each request it writes the events the obvious way (as in 1,
   from the values built beforehand), each event one ``write`` of one HTTP chunk, with the headers
   ours sends. Each server in its own process; a checked answer and a warm-up run each, then runs
   alternate (15, 5 with ``--quick``); median, min/median/max in the spread. Reported.
3. The ``ssemock`` fixture in a test that adds an inline stub (``ssemock.reply("Hello")``) and has
   no cassette, set-up + call + tear-down, against the same request (same client) to a bare
   in-process aiohttp server writing the stub's own answer (same status, headers, events and
   size), interleaved in one pytest session in a subprocess, as :mod:`benchmarks.fixture_overhead`
   measures. Goal: at most 2 ms more.

``python -m benchmarks.stub_synthesis [--quick]`` prints the figures (``--bare FILE`` is 2.'s baseline server).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ssemock.cassette import Chunk, Request, Response
from ssemock.providers.tokens import split_tokens
from ssemock.sse import Decoder, Event
from ssemock.stubs import StubBook, on, reply

from . import figure, spread
from .common import median
from .fixture_overhead import measure_session

__all__ = ["run"]

GOAL_MS = 5.0
FIXTURE_GOAL_MS = 2.0
WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven", "zebras",
         "quietly", "graze", "near", "1,234", "trees"]
PATHS = {
    "openai-chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "tell me a story"}],
                                             "stream": True, "stream_options": {"include_usage": True}}),
    "openai-responses": ("/v1/responses", {"input": "tell me a story", "stream": True}),
    "anthropic": ("/v1/messages", {"messages": [{"role": "user", "content": "tell me a story"}], "stream": True}),
    "gemini": ("/v1beta/models/gemini-2.0-flash:streamGenerateContent",
               {"contents": [{"role": "user", "parts": [{"text": "tell me a story"}]}]}),
}


def answer_text(tokens: int = 2000) -> str:
    """A text of exactly ``tokens`` token-like pieces."""
    text = " ".join(WORDS[i % len(WORDS)] for i in range(tokens))
    pieces = split_tokens(text)
    while len(pieces) > tokens:
        text = text.rsplit(" ", 1)[0]
        pieces = split_tokens(text)
    return text


def _obvious(values: list[tuple[str | None, Any]]) -> list[Chunk]:
    """The baseline writer: each event's JSON value through ``json.dumps``, framed, one chunk each."""
    chunks = []
    for t, (event, value) in enumerate(values):
        head = f"event: {event}\n" if event else ""
        data = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        chunks.append(Chunk(float(t), f"{head}data: {data}\n\n".encode()))
    return chunks


def _timed(call: Callable[[], Any]) -> tuple[float, float, Any]:
    """(CPU seconds of this thread, wall seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.thread_time()
    result = call()
    return time.thread_time() - cpu, time.perf_counter() - wall, result


def _ms(values: list[float]) -> str:
    ms = sorted(1000 * v for v in values)
    return f"{ms[0]:.2f}/{statistics.median(ms):.2f}/{ms[-1]:.2f}"


def synthesis_figures(rounds: int) -> list[dict[str, Any]]:
    text = answer_text()
    book = StubBook([*(s for i in range(49) for s in on(contains=f"topic-{i}").reply("no")), reply(text, times=None)])
    out = []
    for provider, (path, body) in PATHS.items():
        query = [("alt", "sse")] if provider == "gemini" else []
        request = Request("POST", path, query, [], json.dumps({"model": "m", **body}).encode())
        hit = book.answer(request)
        assert hit is not None and hit.stub.reply.text == text
        values = [(None if e.type == "message" else e.type, e.data if e.data == "[DONE]" else json.loads(e.data))
                  for e in _events(hit.response)]
        ready = [c.data for c in hit.response.chunks]
        stamps = [c.t for c in hit.response.chunks]
        ours_cpu, ours_wall, base_cpu, base_wall, floor = [], [], [], [], []
        ours, obvious = partial(book.answer, request), partial(_obvious, values)
        chunks = partial(lambda s, r: list(map(Chunk, s, r)), stamps, ready)
        for _ in range(rounds):
            cpu, wall, _hit = _timed(ours)
            ours_cpu.append(cpu)
            ours_wall.append(wall)
            cpu, wall, _chunks = _timed(obvious)
            base_cpu.append(cpu)
            base_wall.append(wall)
            floor.append(_timed(chunks)[0])
        value, baseline = 1000 * statistics.median(ours_cpu), 1000 * statistics.median(base_cpu)
        out.append(figure(
            f"stub match (50 stubs) + synthesis of a 2,000-token answer ({len(values)} events), {provider}, "
            "CPU ms", value, "ms", baseline=baseline, goal=f"<= {GOAL_MS:g} ms", met=value <= GOAL_MS,
            spread=f"CPU ms min/median/max ours {_ms(ours_cpu)}, baseline {_ms(base_cpu)}; wall ms ours "
                   f"{_ms(ours_wall)}, baseline {_ms(base_wall)}; floor (one Chunk per event) {_ms(floor)} "
                   f"({rounds} runs)"))
    return out


def http_figures(runs: int) -> list[dict[str, Any]]:
    """The answers of :func:`synthesis_figures` over HTTP, ours against the bare server (see the module docstring)."""
    import os
    import tempfile
    from pathlib import Path

    from .aimock_peer import Client, started

    text = answer_text()
    book = StubBook([*(s for i in range(49) for s in on(contains=f"topic-{i}").reply("no")), reply(text, times=None)])
    answers: dict[str, Any] = {}
    for provider, (path, body) in PATHS.items():
        query = [("alt", "sse")] if provider == "gemini" else []
        hit = book.answer(Request("POST", path, query, [], json.dumps({"model": "m", **body}).encode()))
        assert hit is not None
        values = [(None if e.type == "message" else e.type, e.data if e.data == "[DONE]" else json.loads(e.data))
                  for e in _events(hit.response)]
        answers[path] = {"headers": hit.response.headers, "values": values}
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-") as name:
        tmp = Path(name)
        (tmp / "none").mkdir()
        stubs = tmp / "stubs.yaml"  # a JSON string is a YAML double-quoted scalar
        refusing = "".join(f"  - name: topic-{i}\n    match: {{contains: topic-{i}}}\n    reply: {{text: 'no'}}\n"
                           for i in range(49))
        story = f"  - name: story\n    reply: {{text: {json.dumps(text)}}}\n"
        stubs.write_text(f"ssemock_stubs: 1\nstubs:\n{refusing}{story}", encoding="utf-8")
        (tmp / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
        commands = [[sys.executable, "-m", "ssemock", "serve", "--port", "0", "--cassettes", str(tmp / "none"),
                     "--stubs", str(stubs), "--quiet"],
                    [sys.executable, "-m", "benchmarks.stub_synthesis", "--bare", str(tmp / "answers.json")]]
        env = {**os.environ, "SSEMOCK_CACHE_DIR": str(tmp / "cache")}
        with started(*commands, env=env) as [(_, ours), (_, bare)], Client() as client:
            out = []
            for provider, (path, body) in PATHS.items():
                target = path + ("?alt=sse" if provider == "gemini" else "")
                job = {"n": 1, "body": json.dumps({"model": "m", **body}), "keep_times": False, "timeout": 60}
                ms: dict[str, list[float]] = {"ours": [], "bare": []}
                for index in range(-2, runs):  # -2: the answers checked, -1: warm-up
                    for kind, base in (("ours", ours), ("bare", bare))[:: 1 if index % 2 else -1]:
                        stream = client.run({**job, "url": base + target})["streams"][0]
                        if not stream["ok"] or (index == -2 and len(stream["sizes"]) < len(answers[path]["values"])):
                            raise RuntimeError(f"stub_synthesis: {kind} sent a wrong answer: {stream}"[:300])
                        if index >= 0:
                            ms[kind].append(1000 * stream["elapsed"])
                events = len(answers[path]["values"])
                out.append(figure(
                    f"stub answer over HTTP: 2,000-token answer ({events} events), {provider}, request to last byte",
                    median(ms["ours"]), "ms", baseline=median(ms["bare"]), goal="reported", met=True,
                    spread=spread(ms["ours"], ms["bare"])))
    return out


def bare_main(answers_file: str) -> None:
    """``--bare FILE``: the baseline server of :func:`http_figures`, until it is terminated."""
    import asyncio

    from aiohttp import web

    answers = json.loads(open(answers_file, encoding="utf-8").read())  # noqa: SIM115

    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        answer = answers[request.path]
        response = web.StreamResponse(headers=[tuple(h) for h in answer["headers"]])  # type: ignore[arg-type]
        response.enable_chunked_encoding()
        await response.prepare(request)
        for chunk in _obvious([tuple(v) for v in answer["values"]]):
            await response.write(chunk.data)
        await response.write_eof()
        return response

    async def serve() -> None:
        app = web.Application()
        app.router.add_post("/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        print(f"serving on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(serve())


def _events(response: Response) -> list[Event]:
    decoder = Decoder()
    found = [e for c in response.chunks for e in decoder.feed(c.data)]
    return [e for e in [*found, *decoder.close()] if isinstance(e, Event)]


TESTS = """
import pytest
from conftest import EXPECTED

CHAT = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}


def stream(client, url):
    with client.stream("POST", url + "/v1/chat/completions", json=CHAT) as resp:
        assert resp.status_code == 200
        return resp.read()


@pytest.mark.parametrize("n", range(COUNT))
def test_fixture(ssemock, client, n):
    ssemock.reply("Hello")
    body = stream(client, ssemock.url)
    assert b'"delta":{"content":"Hello"}' in body and body.endswith(b"data: [DONE]\\n\\n")


@pytest.mark.parametrize("n", range(COUNT))
def test_bare(bare, client, n):
    assert stream(client, bare) == EXPECTED


@pytest.mark.parametrize("n", range(COUNT))
def test_empty(n):
    pass
"""


# The bare server writes the stub's own answer to the same request: same status, headers, events and bytes.
STUB_RESPONSE = """
import json
from ssemock.cassette import Request
from ssemock.stubs import StubBook, reply
_CHAT = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
_REQUEST = Request("POST", "/v1/chat/completions", [], [("Content-Type", "application/json")],
                   json.dumps(_CHAT).encode())
RESPONSE = StubBook([reply("Hello")]).answer(_REQUEST).response
"""


def fixture_session(count: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """One pytest session (a subprocess): per-test wall ms (set-up + call + tear-down) by kind, in run
    order, and per-test CPU ms of the whole process (test, client and server threads)."""
    return measure_session(TESTS.replace("COUNT", str(count)), STUB_RESPONSE, ("fixture", "bare", "empty"),
                           "stub fixture")


def fixture_figures(count: int, runs: int) -> list[dict[str, Any]]:
    """The inline-stub test against the same request to a bare in-process aiohttp server writing
    the stub's own answer (synthesized once beforehand: the same status, headers and 4 events,
    941 bytes), interleaved, as :mod:`benchmarks.fixture_overhead` measures; then the same in CPU
    time of the whole process (less sensitive to other processes than wall time)."""
    sessions = [fixture_session(count) for _ in range(runs)]
    per_run = {k: [median(s[0][k]) for s in sessions] for k in ("fixture", "bare", "empty")}
    cpu = {k: [median(s[1][k]) for s in sessions] for k in ("fixture", "bare")}
    over = [f - b for f, b in zip(per_run["fixture"], per_run["bare"])]
    cpu_over = [f - b for f, b in zip(cpu["fixture"], cpu["bare"])]
    return [
        figure(f"stub fixture: ssemock.reply + streamed request through the ssemock fixture, per test "
               f"(median of {count})", median(per_run["fixture"]), "ms", baseline=median(per_run["bare"]),
               goal=f"<= {FIXTURE_GOAL_MS:g} ms more than the bare server", met=median(over) <= FIXTURE_GOAL_MS,
               spread=spread(per_run["fixture"], per_run["bare"])),
        figure("stub fixture: inline stub minus bare in-process aiohttp server, per test", median(over), "ms",
               baseline=None, goal=f"<= {FIXTURE_GOAL_MS:g} ms", met=median(over) <= FIXTURE_GOAL_MS,
               spread=spread(over)),
        figure("stub fixture: inline stub minus bare server, CPU ms of the whole process per test", median(cpu_over),
               "ms", baseline=None, goal="reported", met=True,
               spread=f"{spread(cpu_over)}; per test, fixture as {spread(cpu['fixture'], cpu['bare'])}"),
    ]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures (see the module docstring)."""
    return [*synthesis_figures(21 if quick else 101), *http_figures(5 if quick else 15),
            *fixture_figures(*((100, 1) if quick else (300, 3)))]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bare"]:
        bare_main(sys.argv[2])
    else:
        for item in run(quick="--quick" in sys.argv[1:]):
            print(json.dumps(item))
