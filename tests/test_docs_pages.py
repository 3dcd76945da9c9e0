"""What the docs pages' examples promise beyond running: the bytes a step sends, what a cassette holds."""

from __future__ import annotations

import httpx
import yaml

from ssemock import MockServer, Scenario
from ssemock.cassette import loads
from ssemock.mockserver import collect_cassettes

from .docs_examples import page_blocks
from .sseclients import sse_streams


def test_the_cassette_format_examples_load_as_they_say() -> None:
    """docs/reference/cassette-format.md: the full example keeps a chunk that is not UTF-8 on its own, and the
    hand-written one (``events:``) gets one chunk per event, ``interval`` seconds apart."""
    full, hand = page_blocks("docs/reference/cassette-format.md", "yaml")
    demo = loads(full, name="demo")
    assert demo.interactions[0].response.chunks[1].data == b"data: caf\xc3"
    events = loads(hand).interactions[0].response
    assert [c.t for c in events.chunks] == [0.05, 0.1, 0.15]
    assert yaml.safe_load(hand)["ssemock_cassette"] == 1


FRAMING = {  # a step line of docs/how-to/write-a-scenario.md: the recording, bytes its comment promises
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
    (steps_block,) = [b for b in page_blocks("docs/how-to/write-a-scenario.md", "yaml") if "name: every-step" in b]
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
