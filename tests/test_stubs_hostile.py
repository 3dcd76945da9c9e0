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
        assert caught.value.expected == "JSON nested at most 128 deep"
    with pytest.raises(StubError, match="nested at most 128 deep"):
        on().call_tool("t", _nested(depth))
    with pytest.raises(StubError, match="nested at most 128 deep"):
        on().error(500, body=_nested(depth))
