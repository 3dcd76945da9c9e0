"""Hostile stub files and hostile requests on stub paths: regexes run in linear time, stub files
are read by the project's strict YAML reader, odd request shapes get a clear JSON answer."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest

from ssemock import MockServer
from ssemock.errors import StubError
from ssemock.stubs import load_stubs, on

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
