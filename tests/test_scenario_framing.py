"""The framing steps' exact bytes and what a WHATWG parser makes of them: line ends per line, per
blank line and per field; spaces after the colon and after the value; empty ``data:`` lines;
separators in comments. Properties: any line-end choice keeps the events; any spacing keeps the
JSON payloads."""

from __future__ import annotations

import re
from typing import Any

import httpx
import httpx_sse
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import MockServer, Scenario, ScenarioError
from ssemock.cassette import Chunk, Response
from ssemock.mockserver import collect_cassettes
from ssemock.plan import Plan
from ssemock.sse import Event, decode

from .rawclient import raw_request
from .sseclients import view

CASSETTES = collect_cassettes(None)
RECORDINGS = ["openai-chat-tool-calls-usage", "anthropic-messages-thinking", "openai-responses-function-call",
              "gemini-streamgeneratecontent-crlf"]
CHAT = b'data: {"a": 1}\n\ndata: [DONE]\n\n'
TYPED = b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n"


def stream(body: bytes) -> Response:
    return Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=[Chunk(0.0, body)])


def apply(steps: list[dict[str, Any]], response: Response) -> Plan:
    return Scenario.from_dict({"steps": steps}).apply(Plan.of(response))


def sent(steps: list[dict[str, Any]], body: bytes) -> bytes:
    return apply(steps, stream(body)).response.body


def events(body: bytes) -> list[tuple[str, str]]:
    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def httpx_sse_events(body: bytes) -> list[tuple[str, str]]:
    """An independent parser: httpx-sse over an httpx response holding ``body``."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)
    return [(sse.event, sse.data) for sse in httpx_sse.EventSource(response).iter_sse()]


def recorded(name: str) -> Response:
    return CASSETTES[name].interactions[0].response


def payloads(seen: list[tuple[str, str]]) -> list[tuple[str, Any]]:
    return view(seen, "payloads")


# ---- line-endings ------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "body", "expected"), [
    ({"eol": ["lf", "crlf", "cr"]}, TYPED, b"event: a\ndata: 1\r\n\revent: b\ndata: 2\r\n\r"),
    ({"eol": "lf", "blank": "crlf"}, CHAT, b'data: {"a": 1}\n\r\ndata: [DONE]\n\r\n'),
    ({"eol": "lf", "by_field": {"event": "crlf"}}, TYPED, b"event: a\r\ndata: 1\n\nevent: b\r\ndata: 2\n\n"),
    ({"eol": "cr", "blank": ["lf", "cr"]}, CHAT, b'data: {"a": 1}\r\r\ndata: [DONE]\r\r'),  # CR + LF: CRLF
    ({"eol": ["cr", "lf"]}, CHAT, b'data: {"a": 1}\r\r\ndata: [DONE]\r\r\n'),
])
def test_line_ends_are_chosen_line_by_line(args: dict[str, Any], body: bytes, expected: bytes) -> None:
    assert sent([{"line-endings": args}], body) == expected
    assert events(expected) == events(body)


def test_a_blank_line_after_a_bare_cr_is_moved_to_crlf_and_the_journal_says_so() -> None:
    plan = apply([{"line-endings": {"eol": "cr", "blank": "lf"}}], stream(CHAT))
    assert plan.response.body == b'data: {"a": 1}\r\r\ndata: [DONE]\r\r\n'
    assert plan.notes == ["line-endings: 4 line end(s) written: 2 CRLF, 2 CR; 2 blank line(s) after a bare CR end "
                          "in CRLF, not LF"]
    assert apply([{"line-endings": {"eol": "lf", "blank": "crlf"}}], stream(CHAT)).notes == [
        "line-endings: 4 line end(s) written: 2 LF, 2 CRLF"]


EOL = st.sampled_from(["lf", "crlf", "cr"])
CHOICE = st.one_of(EOL, st.just("mixed"), st.lists(EOL, min_size=1, max_size=6))


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(RECORDINGS), eol=CHOICE, blank=st.one_of(st.none(), CHOICE),
       by_field=st.dictionaries(st.sampled_from(["data", "event", "id", "x-other"]), EOL, max_size=3),
       seed=st.integers(0, 2**32))
def test_any_line_end_choice_keeps_the_events(
    name: str, eol: Any, blank: Any, by_field: dict[str, str], seed: int
) -> None:
    original = recorded(name)
    plan = Plan.of(original, seed=seed)
    Scenario.from_dict({"steps": [{"line-endings": {"eol": eol, "blank": blank, "by_field": by_field}}]}).apply(plan)
    assert events(plan.response.body) == events(original.body)
    assert httpx_sse_events(plan.response.body) == httpx_sse_events(original.body) == events(original.body)
    ends = re.findall(rb"\r\n|\r|\n", plan.response.body)
    if isinstance(eol, list) and blank is None and not by_field:  # used in turn, but for blank lines after a CR
        assert all(end == {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}[eol[i % len(eol)]] or end == b"\r\n"
                   for i, end in enumerate(ends))


# ---- field-spacing -----------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "expected", "done"), [
    ({"spaces": {"data": 2}, "only": "[DONE]"}, b'data: {"a": 1}\n\ndata:  [DONE]\n\n', " [DONE]"),
    ({"spaces": 0, "trailing": 1, "only": "[DONE]"}, b'data: {"a": 1}\n\ndata:[DONE] \n\n', "[DONE] "),
    ({"spaces": 3}, b'data:   {"a": 1}\n\ndata:   [DONE]\n\n', "  [DONE]"),
    ({"spaces": {"event": 0}}, CHAT, "[DONE]"),  # only the named fields change
])
def test_spaces_after_the_colon_and_after_the_value(args: dict[str, Any], expected: bytes, done: str) -> None:
    plan = apply([{"field-spacing": args}], stream(CHAT))
    assert plan.response.body == expected
    assert payloads(events(expected)) == [("message", {"a": 1}), ("message", done)]  # WHATWG drops one space
    assert any("gained spaces" in note for note in plan.notes) == (done != "[DONE]")
    assert [note.split(":")[0] for note in plan.notes] == ["field-spacing"]


def test_no_space_keeps_a_value_that_starts_with_a_space() -> None:
    assert sent([{"field-spacing": {"spaces": 0}}], b"data:  x\nevent: y\n\n") == b"data:  x\nevent:y\n\n"
    assert sent([{"field-spacing": {"space": False}}], b"data:  x\n\n") == b"data:  x\n\n"


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(RECORDINGS), data=st.integers(0, 16), trailing=st.integers(0, 16))
def test_any_spacing_of_data_keeps_the_json_payloads(name: str, data: int, trailing: int) -> None:
    original = recorded(name)
    plan = Scenario.from_dict({"steps": [{"field-spacing": {"spaces": {"data": data}, "trailing": trailing}}]}).apply(
        Plan.of(original))
    before, after = payloads(events(original.body)), payloads(events(plan.response.body))
    pad = " " * max(data - 1, 0)  # WHATWG removes one space after the colon; the rest stays in the value
    assert after == [(k, v if not isinstance(v, str) else pad + v + " " * trailing) for k, v in before]


# ---- empty-data --------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "expected", "seen"), [
    ({}, b'data:\ndata: {"a": 1}\n\ndata: [DONE]\n\n', [("message", '\n{"a": 1}'), ("message", "[DONE]")]),
    ({"at": "end", "space": True}, b'data: {"a": 1}\ndata: \n\ndata: [DONE]\n\n',
     [("message", '{"a": 1}\n'), ("message", "[DONE]")]),
    ({"only": "all"}, b'data:\ndata: {"a": 1}\n\ndata:\ndata: [DONE]\n\n',
     [("message", '\n{"a": 1}'), ("message", "\n[DONE]")]),
    ({"at": "alone", "space": True}, b'data: \n\ndata: {"a": 1}\n\ndata: [DONE]\n\n',
     [("message", ""), ("message", '{"a": 1}'), ("message", "[DONE]")]),
])
def test_empty_data_lines_add_a_lf_to_the_data(args: dict[str, Any], expected: bytes, seen: list[object]) -> None:
    plan = apply([{"empty-data": args}], stream(CHAT))
    assert plan.response.body == expected
    assert events(expected) == seen
    assert plan.notes == ["empty-data: an event with empty data before the first event" if args.get("at") == "alone"
                          else f"empty-data: an empty data: line at the {args.get('at', 'start')} of "
                               f"{1 + (args.get('only') == 'all')} event(s)"]


def test_empty_data_keeps_the_event_type_and_the_json_of_every_recording() -> None:
    for name in RECORDINGS:
        original = recorded(name)
        plan = apply([{"empty-data": {"at": "start"}}], original)
        assert payloads(events(plan.response.body)) == payloads(events(original.body)), name
        assert sent([{"empty-data": {"at": "start"}}], TYPED) == TYPED  # data 1 and 2 are JSON numbers, not objects


# ---- line-separators in comments -----------------------------------------------------------------
def test_separators_in_comments_keep_the_events_and_break_splitlines() -> None:
    body = sent([{"multiline-data": {"parts": 2}}, {"line-separators": {"where": "comments"}}],
                b'data: {"a": 1, "b": 2}\n\n')
    assert body == 'data: {"a": 1,\n: {"x-ssemock": "\u2028\u2029\x85"}\ndata:  "b": 2}\n\n'.encode()
    assert payloads(events(body)) == [("message", {"a": 1, "b": 2})]
    assert "" in body.decode().splitlines()[:-1]  # str.splitlines sees a blank line inside the event


# ---- validation and the journal ----------------------------------------------------------------
@pytest.mark.parametrize(("step", "field", "expected"), [
    ({"line-endings": {"eol": ["lf", "CRLF"]}}, "eol", "a non-empty list of at most 1000 of lf | crlf | cr"),
    ({"line-endings": {"eol": []}}, "eol", "one of lf | crlf | cr | mixed"),
    ({"line-endings": {"blank": "mixd"}}, "blank", "or null"),
    ({"line-endings": {"by_field": {"data": "mixed"}}}, "by_field", "to lf | crlf | cr"),
    ({"line-endings": {"by_field": {"a:b": "lf"}}}, "by_field", "no colon, CR or LF"),
    ({"field-spacing": {"spaces": 17}}, "spaces", "an integer from 0 to 16"),
    ({"field-spacing": {"spaces": {"data": True}}}, "spaces", "to integers from 0 to 16"),
    ({"field-spacing": {"trailing": -1}}, "trailing", "an integer from 0 to 16"),
    ({"empty-data": {"at": "middle"}}, "at", "one of start | end | alone"),
    ({"empty-data": {"only": "text"}}, "only", "one of json | all"),
    ({"line-separators": {"where": "ids"}}, "where", "one of values | comments"),
])
def test_bad_values_are_named(step: dict[str, Any], field: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict({"steps": [step]}, source="x.yaml")
    ((name, _),) = step.items()
    assert caught.value.field == f"steps[0].{name}.{field}" and expected in caught.value.expected


def test_the_journal_says_which_values_changed() -> None:
    scenario = Scenario.from_dict({"name": "done-spaces", "steps": [
        {"field-spacing": {"spaces": {"data": 2}, "only": "[DONE]"}}, {"line-endings": {"eol": "cr", "blank": "lf"}}]})
    with MockServer(scenarios=[scenario], timing_scale=0) as server:
        got = raw_request(server.url, "POST", "/v1/chat/completions", b"{}", {
            "X-SSEMock-Cassette": "openai-chat-tool-calls-usage", "X-SSEMock-Scenario": "done-spaces"})
        assert got.body.endswith(b"}\r\r\ndata:  [DONE]\r\r\n")
        n = len(events(recorded("openai-chat-tool-calls-usage").body))  # one data line and one blank line each
        assert server.requests[0]["injected"] == [
            "field-spacing: 1 field line(s) rewritten, 1 value(s) gained spaces",
            f"line-endings: {2 * n} line end(s) written: {n} CRLF, {n} CR; {n} blank line(s) after a bare"
            " CR end in CRLF, not LF",
        ]
