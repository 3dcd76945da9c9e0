"""The editing steps (insert, edit, drop, replace), their predicates and JSON paths, the endings, and
``ssemock scenarios check``: exact effects on the wire, on recordings of several providers."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock import MockServer, Scenario, ScenarioError
from ssemock.bundled import bundled_scenarios
from ssemock.cli import main
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.plan import Plan
from ssemock.scenario.predicates import MISSING, assign, lookup, parse_path, remove
from ssemock.sse import Event, decode

from .docs_examples import page_blocks
from .rawclient import RawResponse, raw_request

CASSETTES = collect_cassettes(None)
CHAT = "openai-chat-finish-length-usage"
GEMINI = "gemini-streamgeneratecontent-crlf"
RESPONSES = "openai-responses-function-call"
OPENROUTER = "openrouter-chat-keepalive-midstream-error"
ANTHROPIC = "anthropic-messages-thinking"
PATHS = {CHAT: "/v1/chat/completions", GEMINI: "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent",
         RESPONSES: "/v1/responses", OPENROUTER: "/api/v1/chat/completions", ANTHROPIC: "/v1/messages"}


def recorded(name: str) -> bytes:
    response = CASSETTES[name].interactions[0].response
    return gzip.decompress(response.body) if response.header("content-encoding") == "gzip" else response.body


def events(body: bytes) -> list[tuple[str, str]]:
    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


def blocks(body: bytes, eol: bytes = b"\n") -> list[bytes]:
    """The recorded body cut after each blank line (the bundled streams have no comments but OpenRouter's)."""
    parts = body.split(eol + eol)
    return [p + eol + eol for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


STEPS: dict[str, list[dict[str, Any]]] = {
    "insert-0": [{"insert": {"at": 0, "type": "ping", "id": "7", "data": "a\nb"}}],
    "insert-end": [{"insert": {"json": {"x": "é"}}}],
    "insert-after-terminal": [{"insert": {"at": "after-terminal", "data": "tail"}}],
    "insert-before": [{"insert": {"before": {"type": "response.output_item.done"}, "data": "{}", "type": "t"}}],
    "insert-after": [{"insert": {"after": {"path": "choices[0].finish_reason", "equals": "length"}, "data": "x"}}],
    "insert-none": [{"insert": {"after": {"contains": "no such text"}, "data": "x"}}],
    "insert-minus-1": [{"insert": {"at": -1, "data": "x"}}],
    "edit-set": [{"edit": {"where": {"index": [1, 2]}, "set": {"choices[0].delta.content": "!", "model": None}}}],
    "edit-first": [{"edit": {"first": 1, "delete": ["id", "choices[-1].index"]}}],
    "edit-missing": [{"edit": {"set": {"nope.deeper": 1}, "delete": ["choices[5]"]}}],
    "drop": [{"drop": {"where": {"type": "response.function_call_arguments.delta"}, "first": 2}}],
    "drop-terminal": [{"drop": {"where": {"terminal": True}}}],
    "replace": [{"replace": {"where": {"index": -2}, "json": {"usage": None}}}],
    "replace-typed": [{"replace": {"where": {"type": "message_stop"}, "type": "done", "id": "9", "data": "bye"}}],
    "from-end": [{"disconnect": {"from_end": 7, "how": "reset"}}],
    "from-end-clean": [{"disconnect": {"from_end": 7, "how": "clean"}}],
    "from-end-past": [{"disconnect": {"from_end": 10**6, "how": "cut"}}],
    "comment": [{"end-after-comment": {}}],
    "comment-after-2": [{"end-after-comment": {"after_events": 2, "text": "", "line_ends": 1}}],
    "comment-bare": [{"end-after-comment": {"after_events": -1, "line_ends": 0}}],
    "no-line-end": [{"drop-final-blank-line": {"line_end": False}}],
}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    scenarios = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in STEPS.items()]
    with MockServer(scenarios=scenarios, timing_scale=0) as running:
        yield running


def wire(server: MockServer, scenario: str, cassette: str = CHAT) -> RawResponse:
    server.reset()
    return raw_request(server.url, "POST", PATHS[cassette], b"{}", {"X-SSEMock-Cassette": cassette,
                                                                    "X-SSEMock-Scenario": scenario})


def injected(server: MockServer) -> list[str]:
    return list(server.requests[-1]["injected"])


# ---- JSON paths -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "steps"), [
    ("choices[0].delta.tool_calls[0].id", ("choices", 0, "delta", "tool_calls", 0, "id")),
    ("[0].name", (0, "name")),
    ("candidates[-1]", ("candidates", -1)),
    ("a-b c.$x", ("a-b c", "$x")),
    ("a[0][1]", ("a", 0, 1)),
])
def test_paths_of_the_documented_grammar(text: str, steps: tuple[str | int, ...]) -> None:
    assert parse_path(text) == steps


@pytest.mark.parametrize("text", ["", "a..b", ".a", "a.", "a[x]", "a[0]b", "a[", "a]", "a[1.5]", 3, None,
                                  "a" * 257, ".".join("a" * 33)])
def test_paths_outside_the_grammar_are_refused(text: Any) -> None:
    with pytest.raises(ValueError, match=r"a non-empty string|at most|a key or"):
        parse_path(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text("abc.[]", max_size=3), inner, max_size=4),
    max_leaves=20,
)


def walks(value: Any) -> list[tuple[tuple[str | int, ...], Any]]:
    """Every (path, value) inside ``value``, reached by keys without '.', '[' or ']'."""
    out: list[tuple[tuple[str | int, ...], Any]] = []
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        children = [(k, v) for k, v in value.items() if k and not set(k) & set(".[]")]
    elif isinstance(value, list):
        children = [*enumerate(value), *((i - len(value), v) for i, v in enumerate(value))]
    for step, child in children:
        out.append(((step,), child))
        out += [((step, *rest), found) for rest, found in walks(child)]
    return out


def render(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else (s if i == 0 else f".{s}") for i, s in enumerate(path))


@settings(max_examples=150, deadline=None)
@given(json_values, st.data())
def test_a_rendered_path_reads_sets_and_deletes_what_it_names(value: Any, data: st.DataObject) -> None:
    found = walks(value)
    if not found:
        assert lookup(value, ("x",)) is MISSING
        return
    path, inside = data.draw(st.sampled_from(found))
    assert parse_path(render(path)) == path
    assert lookup(value, path) == inside
    copy = json.loads(json.dumps(value))
    assert assign(copy, path, "new") and lookup(copy, path) == "new"
    copy = json.loads(json.dumps(value))
    assert remove(copy, path)
    if isinstance(path[-1], str):
        assert lookup(copy, path) is MISSING
    else:
        assert len(lookup(copy, path[:-1])) == len(lookup(value, path[:-1])) - 1


# ---- validation: file, step, field and what is expected ---------------------------------------------------
@pytest.mark.parametrize(("step", "field", "expected"), [
    ({"edit": {"delete": ["a[x]"]}}, "steps[0].edit.delete[0]", "a JSON path like choices[0]"),
    ({"edit": {"set": {"a..b": 1}}}, "steps[0].edit.set.a..b", "a JSON path like"),
    ({"edit": {}}, "steps[0].edit", "set (paths and values) or delete (paths)"),
    ({"edit": {"delete": ["a"] * 65}}, "steps[0].edit.delete", "a list of at most 64 JSON paths"),
    ({"edit": {"set": {"a": float("nan")}}}, "steps[0].edit.set.a", "a JSON value"),
    ({"edit": {"where": {"paht": "a"}, "delete": ["a"]}}, "steps[0].edit.where.paht", "a condition: one of index"),
    ({"edit": {"where": {"equals": 1}, "delete": ["a"]}}, "steps[0].edit.where.equals", "a path next to equals"),
    ({"edit": {"where": {"index": [1]}, "delete": ["a"]}}, "steps[0].edit.where.index", "an event index, or [first"),
    ({"edit": {"where": {"index": True}, "delete": ["a"]}}, "steps[0].edit.where.index", "an event index"),
    ({"edit": {"where": {"index": [5, 2]}, "delete": ["a"]}}, "steps[0].edit.where.index", "first <= last"),
    ({"drop": {"where": {"index": [-1, -3]}}}, "steps[0].drop.where.index", "first <= last"),
    ({"edit": {"where": {"terminal": "yes"}, "delete": ["a"]}}, "steps[0].edit.where.terminal", "true or false"),
    ({"edit": {"where": {"contains": ""}, "delete": ["a"]}}, "steps[0].edit.where.contains", "a non-empty string"),
    ({"edit": {"where": [1], "delete": ["a"]}}, "steps[0].edit.where", "a mapping of conditions"),
    ({"edit": {"first": 0, "delete": ["a"]}}, "steps[0].edit.first", "an integer from 1 to 1000000"),
    ({"insert": {"data": "a", "json": 1}}, "steps[0].insert.json", "either data or json"),
    ({"insert": {"type": "x"}}, "steps[0].insert", "data (a string) or json"),
    ({"insert": {"data": "a\rb"}}, "steps[0].insert.data", "without CR"),
    ({"insert": {"data": "a" * (1024 * 1024 + 1)}}, "steps[0].insert.data", "at most 1048576 bytes"),
    # 1 MiB counts bytes: 262,145 emoji are 1,048,580 bytes of UTF-8
    ({"insert": {"data": "\U0001F600" * (256 * 1024 + 1)}}, "steps[0].insert.data", "at most 1048576 bytes"),
    ({"insert": {"json": ["a" * 1024 * 1024]}}, "steps[0].insert.json", "at most 1048576 bytes (1 MiB)"),
    ({"insert": {"json": {"when": __import__("datetime").date(2024, 1, 1)}}}, "steps[0].insert.json", "a JSON value"),
    ({"insert": {"data": "a", "at": 0, "before": {"index": 1}}}, "steps[0].insert", "at most one of at, before"),
    ({"insert": {"data": "a", "at": "start"}}, "steps[0].insert.at", "or one of end | after-terminal"),
    ({"insert": {"data": "a", "type": "a\nb"}}, "steps[0].insert.type", "without CR, LF"),
    ({"insert": {"data": "a", "before": {"path": "x["}}}, "steps[0].insert.before.path", "a JSON path"),
    ({"drop": {}}, "steps[0].drop.where", "a predicate choosing the events to drop"),
    ({"replace": {"where": {"index": 0}}}, "steps[0].replace", "data (a string) or json"),
    ({"replace": {"data": "x"}}, "steps[0].replace.where", "a predicate choosing the events to replace"),
    ({"disconnect": {"from_end": -1}}, "steps[0].disconnect.from_end", "an integer from 0 to 67108864"),
    ({"disconnect": {"from_end": 1, "after_bytes": 1}}, "steps[0].disconnect", "exactly one of after_events"),
    ({"drop-final-blank-line": {"line_end": 0}}, "steps[0].drop-final-blank-line.line_end", "true or false"),
    ({"end-after-comment": {"line_ends": 3}}, "steps[0].end-after-comment.line_ends", "an integer from 0 to 2"),
    ({"end-after-comment": {"text": "a\nb"}}, "steps[0].end-after-comment.text", "without CR, LF"),
])
def test_bad_fields_name_the_file_the_step_and_the_field(step: dict[str, Any], field: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict({"steps": [step]}, source="mine.yaml")
    assert caught.value.file == "mine.yaml" and caught.value.field == field
    assert expected in caught.value.expected, caught.value.expected


# ---- insert -------------------------------------------------------------------------------------------
def test_insert_at_0_writes_type_id_and_one_data_line_per_lf(server: MockServer) -> None:
    got = wire(server, "insert-0")
    assert got.body == b"event: ping\nid: 7\ndata: a\ndata: b\n\n" + recorded(CHAT)
    assert events(got.body) == [("ping", "a\nb"), *events(recorded(CHAT))]
    assert injected(server) == ["insert: event ping at index 0 of 5"]


@pytest.mark.parametrize(("cassette", "before"), [(CHAT, 4), (ANTHROPIC, 117), (RESPONSES, 16), (GEMINI, 3)])
def test_insert_at_the_end_goes_before_the_terminal_event(server: MockServer, cassette: str, before: int) -> None:
    truth = events(recorded(cassette))
    got = events(wire(server, "insert-end", cassette).body)
    assert got == [*truth[:before], ("message", '{"x":"é"}'), *truth[before:]]
    assert len(truth) - before == (0 if cassette == GEMINI else 1)  # Gemini has no terminal event


def test_insert_keeps_the_streams_line_ends(server: MockServer) -> None:
    body = wire(server, "insert-end", GEMINI).body
    assert body == recorded(GEMINI) + 'data: {"x":"é"}\r\n\r\n'.encode()


def test_insert_after_terminal_before_after_and_no_match(server: MockServer) -> None:
    truth = events(recorded(CHAT))
    assert events(wire(server, "insert-after-terminal").body) == [*truth, ("message", "tail")]
    assert events(wire(server, "insert-after").body) == [*truth[:3], ("message", "x"), *truth[3:]]
    assert json.loads(truth[2][1])["choices"][0]["finish_reason"] == "length"
    assert events(wire(server, "insert-minus-1").body) == [*truth[:4], ("message", "x"), truth[4]]
    responses = events(recorded(RESPONSES))
    first = [t for t, _ in responses].index("response.output_item.done")
    got = events(wire(server, "insert-before", RESPONSES).body)
    assert got == [*responses[:first], ("t", "{}"), *responses[first:]]
    assert wire(server, "insert-none").body == recorded(CHAT)
    assert injected(server) == ["insert: no event matched; nothing inserted"]


def test_insert_at_0_goes_after_leading_comments() -> None:
    body = recorded(OPENROUTER)
    assert body.startswith(b":")  # OpenRouter's processing comments come first
    plan = Scenario.from_dict({"steps": STEPS["insert-0"]}).apply(Plan.of(CASSETTES[OPENROUTER].interactions[0]
                                                                          .response))
    first_event = body.index(b"data:")
    assert plan.response.body == body[:first_event] + b"event: ping\nid: 7\ndata: a\ndata: b\n\n" + body[first_event:]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cassette=st.sampled_from([CHAT, GEMINI, RESPONSES, OPENROUTER, ANTHROPIC]), at=st.integers(-30, 30),
       data=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=20))
def test_insert_then_drop_of_that_event_gives_back_the_recorded_bytes(cassette: str, at: int, data: str) -> None:
    marker = "ssemock-inserted"
    response = CASSETTES[cassette].interactions[0].response
    scenario = Scenario.from_dict({"steps": [{"insert": {"at": at, "type": marker, "data": data}},
                                             {"drop": {"where": {"type": marker}}}]})
    plan = scenario.apply(Plan.of(response))
    assert plan.response.body == recorded(cassette)
    inserted = Scenario.from_dict({"steps": [{"insert": {"at": at, "type": marker, "data": data}}]})
    seen = events(inserted.apply(Plan.of(response)).response.body)
    truth = events(recorded(cassette))
    spot = max(0, min(len(truth), at if at >= 0 else len(truth) + at))
    assert seen == [*truth[:spot], (marker, data), *truth[spot:]]


# ---- edit, drop, replace ------------------------------------------------------------------------------
def test_edit_sets_paths_in_the_matching_events_only(server: MockServer) -> None:
    truth = events(recorded(CHAT))
    got = events(wire(server, "edit-set").body)
    for index, ((_, data), (_, was)) in enumerate(zip(got, truth)):
        if index in (1, 2):
            want = json.loads(was)
            want["choices"][0]["delta"]["content"] = "!"
            want["model"] = None
            assert json.loads(data) == want and data == json.dumps(want, separators=(",", ":"), ensure_ascii=False)
        else:
            assert data == was
    assert injected(server) == ["edit: 2 event(s) changed of 2 matched"]


def test_edit_first_deletes_keys_and_items(server: MockServer) -> None:
    truth = events(recorded(CHAT))
    got = events(wire(server, "edit-first").body)
    want = json.loads(truth[0][1])
    del want["id"], want["choices"][-1]["index"]
    assert json.loads(got[0][1]) == want and got[1:] == truth[1:]
    assert wire(server, "edit-missing").body == recorded(CHAT)  # no parent, no item 5: nothing changes
    assert injected(server) == ["edit: 0 event(s) changed of 4 matched"]  # [DONE] is not JSON


def test_drop_the_first_two_matching_and_the_terminal_event(server: MockServer) -> None:
    truth = events(recorded(RESPONSES))
    deltas = [i for i, (t, _) in enumerate(truth) if t == "response.function_call_arguments.delta"]
    got = events(wire(server, "drop", RESPONSES).body)
    assert got == [e for i, e in enumerate(truth) if i not in deltas[:2]] and len(deltas) >= 2
    assert wire(server, "drop-terminal").body == recorded(CHAT).removesuffix(b"data: [DONE]\n\n")
    anthropic = wire(server, "drop-terminal", ANTHROPIC).body
    assert events(anthropic) == events(recorded(ANTHROPIC))[:-1]


def test_replace_keeps_or_sets_type_and_id(server: MockServer) -> None:
    truth = events(recorded(CHAT))
    assert events(wire(server, "replace").body) == [*truth[:3], ("message", '{"usage":null}'), truth[4]]
    body = wire(server, "replace-typed", ANTHROPIC).body
    assert body.endswith(b"event: done\nid: 9\ndata: bye\n\n")
    assert events(body) == [*events(recorded(ANTHROPIC))[:-1], ("done", "bye")]
    assert injected(server) == ["replace: 1 event(s) [117]"]


# ---- endings ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cassette", [CHAT, GEMINI, ANTHROPIC])
def test_disconnect_from_end_ends_the_body_n_bytes_short(server: MockServer, cassette: str) -> None:
    got = wire(server, "from-end-clean", cassette)
    assert got.body == recorded(cassette)[:-7] and got.ending == "complete"
    size = len(recorded(cassette))
    assert injected(server) == [f"disconnect: clean at byte {size - 7}, 7 bytes before the end"]
    reset = wire(server, "from-end", cassette)
    assert reset.ending == "reset" and recorded(cassette)[:-7].startswith(reset.body)
    cut = wire(server, "from-end-past", cassette)
    assert cut.body == b"" and cut.ending == "cut"


@pytest.mark.parametrize("cassette", [CHAT, GEMINI, ANTHROPIC])
def test_drop_final_blank_line_without_its_line_end(server: MockServer, cassette: str) -> None:
    body = recorded(cassette)
    eol = b"\r\n" if cassette == GEMINI else b"\n"
    got = wire(server, "no-line-end", cassette).body
    assert got == body.removesuffix(eol + eol)
    assert events(got) == events(body)[:-1]


@pytest.mark.parametrize("cassette", [CHAT, GEMINI])
def test_end_after_a_comment(server: MockServer, cassette: str) -> None:
    body = recorded(cassette)
    eol = b"\r\n" if cassette == GEMINI else b"\n"
    assert wire(server, "comment", cassette).body == body + b": ping" + eol + eol
    two = b"".join(blocks(body, eol)[:2])
    assert wire(server, "comment-after-2", cassette).body == two + b":" + eol
    assert injected(server) == ["end-after-comment: ':' after 2 event(s)"]
    all_but_last = b"".join(blocks(body, eol)[:-1])
    assert wire(server, "comment-bare", cassette).body == all_but_last + b": ping"
    assert events(wire(server, "comment-bare", cassette).body) == events(body)[:-1]


def test_end_after_a_comment_gives_an_unended_last_line_its_line_end() -> None:
    name = "anthropic-messages-max-tokens-partial-json"
    body = CASSETTES[name].interactions[0].response.body
    assert not body.endswith(b"\n")
    plan = Scenario.from_dict({"steps": STEPS["comment"]}).apply(Plan.of(CASSETTES[name].interactions[0].response))
    assert plan.response.body == body + b"\n: ping\n\n"


def test_edits_and_endings_compose_in_stage_order(server: MockServer) -> None:
    steps = [{"disconnect": {"from_end": 3}}, {"drop": {"where": {"terminal": True}}},
             {"insert": {"at": 0, "data": "first"}}]
    with MockServer(scenarios=[Scenario.from_dict({"name": "all", "steps": steps})], timing_scale=0) as running:
        got = raw_request(running.url, "POST", PATHS[CHAT], b"{}", {"X-SSEMock-Cassette": CHAT,
                                                                      "X-SSEMock-Scenario": "all"})
        notes = running.requests[-1]["injected"]
    want = b"data: first\n\n" + recorded(CHAT).removesuffix(b"data: [DONE]\n\n")
    assert got.body == want[:-3] and got.ending == "cut"
    assert [n.split(":")[0] for n in notes] == ["drop", "insert", "disconnect"]


# ---- scenarios check -----------------------------------------------------------------------------------
def test_scenarios_check_prints_one_line_per_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(bundled_scenarios().glob("*.yaml"))
    mine = tmp_path / "azure.yaml"
    mine.write_text("name: azure-first\nsteps:\n- insert: {at: 0, json: {choices: []}}\n", encoding="utf-8")
    assert main(["scenarios", "check", *map(str, files), str(mine)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = [x for x in out.splitlines() if ": note: " not in x]  # notes follow their file's line
    assert len(lines) == len(files) + 1
    assert lines[-1] == f"{mine}: ok, azure-first, 1 step(s), preserves nothing"
    assert all(re.fullmatch(r".+\.yaml: ok, [\w.-]+, \d+ step\(s\), preserves (events|payloads|nothing)", x)
               for x in lines)


@pytest.mark.parametrize(("text", "message"), [
    ('steps:\n- edit: {delete: ["a[x]"]}\n', "bad.yaml: steps[0].edit.delete[0]: expected a JSON path like"),
    ("steps:\n- insert: {at: 0}\n", "bad.yaml: steps[0].insert: expected data (a string) or json"),
    ("steps:\n- stall: {seconds: 7200}\n", "bad.yaml: steps[0].stall.seconds: expected a number from 0 to 3600"),
    ("steps: [\n", "bad.yaml: "),
    ("name: a b\n", "bad.yaml: name: expected a scenario name"),
    ("steps:\n- edit: {where: {index: [5, 2]}, delete: [id]}\n",
     "bad.yaml: steps[0].edit.where.index: expected [first, last] with first <= last"),
])
def test_scenarios_check_names_the_file_step_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("steps: []\n", encoding="utf-8")
    bad.write_text(text, encoding="utf-8")
    assert main(["scenarios", "check", str(bad), str(good)]) == 2
    out, err = capsys.readouterr()
    assert out == f"{good}: ok, good, 0 step(s), preserves nothing\n"
    (line,) = err.splitlines()
    assert line.startswith(f"ssemock: error: {tmp_path}/{message}"), line


def test_scenarios_check_refuses_missing_files_and_names_given_twice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text("name: same\nsteps: []\n", encoding="utf-8")
    assert main(["scenarios", "check", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml"),
                 str(tmp_path / "nope.yaml")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert f"{tmp_path}/b.yaml: name: expected a scenario name used by one file only" in err[0]
    assert f"{tmp_path}/nope.yaml: expected a readable YAML scenario file" in err[1]
    with pytest.raises(SystemExit) as caught:
        main(["scenarios", "check"])
    assert caught.value.code == 2


# ---- the docs' examples, run ---------------------------------------------------------------------------
def readme_examples() -> dict[str, list[dict[str, Any]]]:
    """docs/how-to/write-a-scenario.md's one-line examples of the steps, by step name (several per name)."""
    (block,) = [b for b in page_blocks("docs/how-to/write-a-scenario.md", "yaml") if "name: every-step" in b]
    steps = yaml.safe_load(block)["steps"]
    out: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        ((name, args),) = step.items()
        out.setdefault(name, []).append(args)
    return out


def test_the_readme_examples_of_the_editing_steps_and_endings_do_what_they_say() -> None:
    examples = readme_examples()
    chosen = {f"{name}-{i}": [{name: args}] for name in ("insert", "edit", "drop", "replace", "end-after-comment",
                                                         "drop-final-blank-line", "disconnect")
              for i, args in enumerate(examples[name])}
    tools = "openai-chat-tool-calls-usage"
    paths = {**PATHS, tools: "/v1/chat/completions"}
    with MockServer(scenarios=[Scenario.from_dict({"name": n, "steps": s}) for n, s in chosen.items()],
                    timing_scale=0) as running:
        def body(scenario: str, cassette: str = CHAT) -> bytes:
            sent = CASSETTES[cassette].interactions[0].request.body or b"{}"
            return raw_request(running.url, "POST", paths[cassette], sent,
                               {"X-SSEMock-Cassette": cassette, "X-SSEMock-Scenario": scenario}).body

        truth = events(recorded(CHAT))
        first = json.loads(events(body("insert-0"))[0][1])
        assert first["choices"] == [] and first["prompt_filter_results"] == [{"prompt_index": 0}]
        assert events(body("insert-0"))[1:] == truth
        edited = [json.loads(d) for _, d in events(body("edit-0", tools)) if d.startswith("{")]
        calls = [c for p in edited for ch in p["choices"] for c in ch["delta"].get("tool_calls") or []]
        assert calls and all("id" not in c and "index" in c for c in calls)
        with_ping = Scenario.from_dict({"steps": [{"insert": {"at": 1, "type": "ping", "data": "{}"}},
                                                  {"drop": examples["drop"][0]}]})
        assert with_ping.apply(Plan.of(CASSETTES[CHAT].interactions[0].response)).response.body == recorded(CHAT)
        assert body("replace-0") == recorded(CHAT).replace(b"data: [DONE]\n\n", b"data: [DONE] \n\n")
        assert events(body("replace-0"))[-1] == ("message", "[DONE] ")
        assert body("end-after-comment-0") == recorded(CHAT) + b": ping"
        assert body("drop-final-blank-line-1") == recorded(CHAT)[:-2]
        assert body(f"disconnect-{len(examples['disconnect']) - 1}") == recorded(CHAT)[:-5]


def test_without_its_line_end_the_last_event_is_the_end_of_the_body() -> None:
    response = CASSETTES[CHAT].interactions[0].response
    steps = [{"end-after-comment": {}}, {"drop-final-blank-line": {"line_end": False}}]
    trailing = Scenario.from_dict({"steps": steps})
    body = trailing.apply(Plan.of(response)).response.body
    assert body == recorded(CHAT).removesuffix(b"\n\n")  # the comment after [DONE] goes too


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cassette=st.sampled_from([CHAT, GEMINI, RESPONSES, OPENROUTER, ANTHROPIC]), data=st.data())
def test_drop_leaves_exactly_the_events_the_predicate_does_not_match(cassette: str, data: st.DataObject) -> None:
    truth = events(recorded(cassette))
    n = len(truth)
    where: dict[str, Any] = {}
    if data.draw(st.booleans()):
        where["index"] = data.draw(st.lists(st.integers(-n - 2, n + 2), min_size=2, max_size=2).filter(
            lambda v: (v[0] < 0) != (v[1] < 0) or v[0] <= v[1]))  # a reversed range is refused (tested above)
    if data.draw(st.booleans()):
        where["type"] = data.draw(st.sampled_from(sorted({t for t, _ in truth})))
    if data.draw(st.booleans()) or not where:
        sample = data.draw(st.sampled_from(truth))[1]
        start = data.draw(st.integers(0, max(0, len(sample) - 1)))
        where["contains"] = sample[start : start + data.draw(st.integers(1, 12))] or "x"
    first = data.draw(st.none() | st.integers(1, 5))

    def matches(index: int, kind: str, text: str) -> bool:  # the documented meaning of each condition
        if "index" in where:
            low, high = (i if i >= 0 else n + i for i in where["index"])
            if not low <= index <= high:
                return False
        return where.get("type", kind) == kind and where.get("contains", "") in text

    chosen = [i for i, (kind, text) in enumerate(truth) if matches(i, kind, text)][:first]
    step = {"drop": {"where": where, **({"first": first} if first else {})}}
    plan = Scenario.from_dict({"steps": [step]}).apply(Plan.of(CASSETTES[cassette].interactions[0].response))
    assert events(plan.response.body) == [e for i, e in enumerate(truth) if i not in chosen]
    assert plan.notes[0].startswith(f"drop: {len(chosen)} event(s)")


@pytest.mark.parametrize("name", ["azure-first-chunk", "tool-call-without-id", "no-final-line-end"])
def test_the_new_presets_load_and_describe_themselves_as_written(name: str) -> None:
    preset = collect_scenarios(None)[name]
    written = yaml.safe_load((bundled_scenarios() / f"{name}.yaml").read_text(encoding="utf-8"))
    again = Scenario.from_dict(yaml.safe_load(yaml.safe_dump(preset.describe())))
    assert again.steps == preset.steps == Scenario.from_dict(written).steps  # defaults filled in, nothing lost
    assert (again.name, again.preserves, again.description) == (name, "nothing", written["description"])
