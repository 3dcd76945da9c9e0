"""Framing triggers from real bug reports, each said in at most 3 lines of YAML and served by the real
server on bundled recordings of two providers: a client with the matching bug fails, while httpx-sse
and the provider's SDK see what the WHATWG rules say the stream holds.

The expected events are the recording's (``Stream.truth``: a WHATWG parse of the recorded bytes)
with the change the rules predict: an empty ``data:`` line adds a LF to the data buffer; one space
after the colon is removed, a second one and trailing ones stay in the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest
import yaml

from ssemock import MockServer, Scenario
from ssemock.mockserver import collect_cassettes

from .sseclients import Seen, Stream, read_with_httpx_sse, sse_streams
from .test_conformance import sdk_outcome

TRIGGERS = {  # scenario name: the YAML a user writes
    "empty-data-lines": "- empty-data: {at: start}",
    "empty-data-alone": "- empty-data: {at: alone, space: true}",
    "done-two-spaces": '- field-spacing: {spaces: {data: 2}, only: "[DONE]"}',
    "done-trailing-space": '- field-spacing: {spaces: 0, trailing: 1, only: "[DONE]"}',
    "lf-then-crlf": "- line-endings: {eol: lf, blank: crlf}",
    "event-crlf": "- line-endings: {eol: lf, by_field: {event: crlf}}",
}
STREAMS = {s.cassette: s for s in sse_streams(collect_cassettes(None))}
OPENAI_CHAT, ANTHROPIC = STREAMS["openai-chat-tool-calls-usage"], STREAMS["anthropic-messages-thinking"]
QWEN, RESPONSES = STREAMS["alibaba-qwen-chat-emoji-split"], STREAMS["openai-responses-function-call"]


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    scenarios = [Scenario.from_dict({"name": name, "steps": yaml.safe_load(text)}) for name, text in TRIGGERS.items()]
    with MockServer(scenarios=scenarios, timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: MockServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def body(client: httpx.Client, stream: Stream, scenario: str | None) -> str:
    r = client.request(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario))
    assert r.status_code == 200
    return r.text


def is_json(data: str) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def test_each_trigger_is_at_most_three_lines_of_yaml() -> None:
    assert all(1 <= len(text.splitlines()) <= 3 for text in TRIGGERS.values())


# ---- empty data: lines inside an event --------------------------------------------------------
def json_per_data_line(client: httpx.Client, stream: Stream, scenario: str | None) -> list[object]:
    """Bug: every ``data:`` line is taken as a whole JSON payload (WHATWG joins an event's data lines)."""
    out = []
    for line in re.split(r"\r\n|\r|\n", body(client, stream, scenario)):
        if line.startswith("data:"):
            value = line[5:].removeprefix(" ")
            out.append(value if value == "[DONE]" else json.loads(value))
    return out


@pytest.mark.parametrize("stream", [OPENAI_CHAT, ANTHROPIC], ids=lambda s: s.cassette)
def test_empty_data_lines_inside_events(server: MockServer, client: httpx.Client, stream: Stream) -> None:
    text = body(client, stream, "empty-data-lines")
    assert "data:\n" in text and "data:\ndata: {" in text
    expected = [(kind, "\n" + data if is_json(data) else data) for kind, data in stream.truth()]
    assert read_with_httpx_sse(client, stream, "empty-data-lines") == expected
    assert json_per_data_line(client, stream, None)  # the buggy client reads the recording as it is
    with pytest.raises(ValueError, match="Expecting value"):
        json_per_data_line(client, stream, "empty-data-lines")
    assert sdk_outcome(server, stream, "empty-data-lines") == sdk_outcome(server, stream, None)


def json_per_event(client: httpx.Client, stream: Stream, scenario: str | None) -> list[object]:
    """Bug: every event's data is taken for JSON (or [DONE]); an event with empty data breaks it."""
    return [e[1] if e[1] == "[DONE]" else json.loads(e[1]) for e in read_with_httpx_sse(client, stream, scenario)]


@pytest.mark.parametrize("stream", [OPENAI_CHAT, ANTHROPIC], ids=lambda s: s.cassette)
def test_an_empty_data_line_alone_is_an_event_with_empty_data(
    server: MockServer, client: httpx.Client, stream: Stream
) -> None:
    assert body(client, stream, "empty-data-alone").startswith("data: \n\n")
    assert read_with_httpx_sse(client, stream, "empty-data-alone") == [("message", ""), *stream.truth()]
    assert json_per_event(client, stream, None)
    with pytest.raises(ValueError, match="Expecting value"):
        json_per_event(client, stream, "empty-data-alone")
    if stream is ANTHROPIC:  # the anthropic SDK skips events of types it does not know ("message")
        assert sdk_outcome(server, stream, "empty-data-alone") == sdk_outcome(server, stream, None)
    else:  # the openai SDK parses every event's data as JSON: json.loads("") raises out of the stream
        with pytest.raises(json.JSONDecodeError):
            sdk_outcome(server, stream, "empty-data-alone")


# ---- data:  [DONE] (two spaces) and data:[DONE]<space> -------------------------------------------
def stops_at_done(client: httpx.Client, stream: Stream, scenario: str | None) -> list[object]:
    """Bug: the end is recognised as the exact line ``data: [DONE]``, payloads by stripping ``"data: "``."""
    out = []
    for line in re.split(r"\r\n|\r|\n", body(client, stream, scenario)):
        if line == "data: [DONE]":
            return out
        if line.startswith("data"):
            out.append(json.loads(line.removeprefix("data: ")))
    raise AssertionError("no data: [DONE] line")


@pytest.mark.parametrize("stream", [OPENAI_CHAT, QWEN], ids=lambda s: s.cassette)
@pytest.mark.parametrize(("scenario", "line", "done"), [
    ("done-two-spaces", "\ndata:  [DONE]\n", " [DONE]"),
    ("done-trailing-space", "\ndata:[DONE] \n", "[DONE] "),
])
def test_done_with_two_spaces_or_a_trailing_space(
    server: MockServer, client: httpx.Client, stream: Stream, scenario: str, line: str, done: str
) -> None:
    assert line in body(client, stream, scenario)
    expected = [(kind, done if data == "[DONE]" else data) for kind, data in stream.truth()]
    assert ("message", "[DONE]") in stream.truth() and read_with_httpx_sse(client, stream, scenario) == expected
    assert stops_at_done(client, stream, None)
    with pytest.raises(ValueError, match="Expecting value"):
        stops_at_done(client, stream, scenario)
    if scenario == "done-trailing-space":
        assert sdk_outcome(server, stream, scenario) == sdk_outcome(server, stream, None)
    else:  # WHATWG data " [DONE]" is not the sentinel: the openai SDK (data.startswith("[DONE]")) parses it
        with pytest.raises(json.JSONDecodeError):
            sdk_outcome(server, stream, scenario)


# ---- line ends chosen per line ------------------------------------------------------------------
def events_split_on_lf_lf(client: httpx.Client, stream: Stream, scenario: str | None) -> Seen:
    """Bug: events are split at ``"\\n\\n"`` (an event may end in CRLF, CR or LF, then a blank line)."""
    seen = []
    for block in body(client, stream, scenario).split("\n\n"):
        fields = [line.partition(":")[::2] for line in re.split(r"\r\n|\r|\n", block) if line]
        data = [value.removeprefix(" ") for name, value in fields if name == "data"]
        kind = [value.removeprefix(" ") for name, value in fields if name == "event"]
        if data:
            seen.append((kind[-1] if kind else "message", "\n".join(data)))
    return seen


@pytest.mark.parametrize("stream", [OPENAI_CHAT, ANTHROPIC], ids=lambda s: s.cassette)
def test_an_lf_then_a_crlf_blank_line_ends_events(server: MockServer, client: httpx.Client, stream: Stream) -> None:
    text = body(client, stream, "lf-then-crlf")
    assert "}\n\r\n" in text and "\n\n" not in text
    assert read_with_httpx_sse(client, stream, "lf-then-crlf") == stream.truth()
    assert events_split_on_lf_lf(client, stream, None) == stream.truth()
    assert len(events_split_on_lf_lf(client, stream, "lf-then-crlf")) == 1  # every event merged into one
    assert sdk_outcome(server, stream, "lf-then-crlf") == sdk_outcome(server, stream, None)


def types_split_on_lf(client: httpx.Client, stream: Stream, scenario: str | None) -> list[str]:
    """Bug: lines are split at LF only, so a CRLF line keeps its CR in the value."""
    return [line.removeprefix("event: ") for line in body(client, stream, scenario).split("\n")
            if line.startswith("event:")]


@pytest.mark.parametrize("stream", [ANTHROPIC, RESPONSES], ids=lambda s: s.cassette)
def test_event_lines_in_crlf_and_data_lines_in_lf(server: MockServer, client: httpx.Client, stream: Stream) -> None:
    text = body(client, stream, "event-crlf")
    assert re.search(r"\nevent: [a-z_.]+\r\ndata: \{.*\}\n\n", text)
    assert read_with_httpx_sse(client, stream, "event-crlf") == stream.truth()
    types = [kind for kind, _ in stream.truth()]
    assert types_split_on_lf(client, stream, None) == types
    assert types_split_on_lf(client, stream, "event-crlf") == [t + "\r" for t in types]
    assert sdk_outcome(server, stream, "event-crlf") == sdk_outcome(server, stream, None)
