"""The README's core promises: CI runs its test command as written, and what the docs say of the bundled files.

The code blocks of README.md and docs/ run through Sybil (tests/docs_examples.py)."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import httpx
import yaml

from ssemock import MockServer, Scenario
from ssemock.cassette import loads
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .docs_examples import page_blocks
from .sseclients import sse_streams

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_the_cassette_examples_load() -> None:
    full, hand = blocks(section("Cassette format (version 1)"), "yaml")
    demo = loads(full, name="demo")
    assert demo.interactions[0].response.chunks[1].data == b"data: caf\xc3"
    events = loads(hand).interactions[0].response
    assert [c.t for c in events.chunks] == [0.05, 0.1, 0.15]
    assert yaml.safe_load(hand)["ssemock_cassette"] == 1


def test_ci_runs_the_readme_test_command_as_written() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    lines = [line.strip() for block in page_blocks("README.md", "sh") for line in block.splitlines()]
    [test_command] = [line for line in lines if line.endswith("-m pytest")]
    assert test_command in ci


FRAMING = {  # a step line of the README's Scenarios section: the recording, bytes its comment promises
    "- line-endings: {eol: [lf, crlf, cr]}": ("openai-chat-tool-calls-usage", b"}\n\r\ndata: {"),
    "- line-endings: {eol: lf, blank: crlf}": ("openai-chat-tool-calls-usage", b"}\n\r\ndata: [DONE]\n\r\n"),
    "- line-endings: {eol: lf, by_field: {event: crlf}}": ("anthropic-messages-thinking",
                                                           b"\n\nevent: message_stop\r\ndata: {"),
    '- field-spacing: {spaces: {data: 2}, only: "[DONE]"}': ("openai-chat-tool-calls-usage", b"\n\ndata:  [DONE]\n\n"),
    '- field-spacing: {spaces: 0, trailing: 1, only: "[DONE]"}': ("openai-chat-tool-calls-usage",
                                                                  b"\n\ndata:[DONE] \n\n"),
    "- empty-data: {at: start}": ("openai-chat-tool-calls-usage", b"\n\ndata:\ndata: {"),
    "- empty-data: {at: alone, space: true}": ("openai-chat-tool-calls-usage", b"data: \n\ndata: {"),
    "- line-separators: {where: comments}": ("openai-chat-tool-calls-usage",
                                             '}\n: {"x-ssemock": "\u2028\u2029\x85"}\n\n'.encode()),
}


def test_the_framing_step_examples_send_what_their_comments_say() -> None:
    streams = {s.cassette: s for s in sse_streams(collect_cassettes(None))}
    (_, steps_block) = blocks(section("Scenarios"), "yaml")
    lines = {line.split("#")[0].rstrip(): line for line in steps_block.splitlines()}
    scenarios = [Scenario.from_dict({"name": f"s{i}", "steps": yaml.safe_load(line)}) for i, line in enumerate(FRAMING)]
    with MockServer(scenarios=scenarios, timing_scale=0) as server, httpx.Client(base_url=server.url) as client:
        for index, (line, (cassette, expected)) in enumerate(FRAMING.items()):
            assert line in lines, line
            stream = streams[cassette]
            r = client.request(stream.method, stream.path, content=stream.body, headers=stream.headers(f"s{index}"))
            assert expected in r.content, line
            if "alone" in line:
                assert r.content.startswith(expected)


def test_the_readme_is_one_screen_of_short_sections() -> None:
    """Issue 23: at most 150 lines, no section over 40; the rest is in docs/, which the README links."""
    lines = README.splitlines()
    assert len(lines) <= 150
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")] + [len(lines)]
    longest = max(pairwise(starts), key=lambda span: span[1] - span[0])
    assert longest[1] - longest[0] <= 40, lines[longest[0]]
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        assert link.endswith(".md"), link


def test_the_docs_name_the_mcp_recording_s_protocol_version() -> None:
    """The version the docs' home page says MCP clients must accept is the one the bundled recording's server answered,
    and the installed ``mcp`` SDK negotiates it (``tests/test_resume.py`` runs that client on the recording)."""
    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

    cassette = collect_cassettes(None)["mcp-deepwiki-ping-comments-crlf"]
    answers = [json.loads(e.data) for i in cassette.interactions for e in decode(i.response.body)
               if isinstance(e, Event) and e.data.startswith("{")]
    versions = {a["result"]["protocolVersion"] for a in answers if "protocolVersion" in a.get("result", {})}
    assert versions == {"2025-11-25"}
    home = " ".join((ROOT / "docs" / "index.md").read_text(encoding="utf-8").split())
    said = re.search(r"MCP recording's `initialize` answer is protocol version `([^`]+)`", home)
    assert said is not None and {said.group(1)} == versions
    assert said.group(1) in HANDSHAKE_PROTOCOL_VERSIONS
