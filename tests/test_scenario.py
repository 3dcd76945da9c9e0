"""The scenario engine: files and validation, order of application, composition, selection,
seeded randomness, and each step's exact effect on the wire."""

from __future__ import annotations

import itertools
import json
import re
import textwrap
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import ConfigError, MockServer, Scenario, ScenarioError, SSEMockError
from ssemock.cli import main
from ssemock.mockserver import collect_cassettes, collect_scenarios
from ssemock.plan import Plan
from ssemock.scenario import STEPS
from ssemock.sse import Comment, Event, decode

from .docs_examples import page_blocks
from .rawclient import RawResponse, raw_request

CHAT = "openai-chat-finish-length-usage"
QWEN = "alibaba-qwen-chat-emoji-split"
CASSETTES = collect_cassettes(None)
ISSUE_PRESETS = [
    "split-bytes", "split-random", "split-utf8", "split-crlf", "crlf", "cr", "mixed-eol", "bom", "keepalive",
    "multiline-data", "no-space", "extra-fields", "meta-blocks", "json-separators", "long-lines", "error-mid-stream",
    "http-401", "http-429", "http-500", "http-502-html", "wrong-content-type", "stall", "slow-first-byte", "truncate",
    "cut-mid-event", "reset-mid-event", "no-done", "no-final-blank-line", "azure-first-chunk", "tool-call-without-id",
    "no-final-line-end",
    "line-separators", "split-crlf-multiline", "torture",
    "proxy-rechunk", "buffer-4k", "buffer-16k", "gzip-buffered", "http10",
    "drop-and-resume", "split-utf8-event-end",
]
H2_PRESETS = ["h2-split-crlf", "h2-reset-mid-event", "h2-goaway-mid-stream", "h2-starve",  # HTTP/2 requests only
              "tls-split-crlf", "tls-cut-without-close-notify"]  # and TLS requests only (tests/test_tls_faults.py)


def recorded(name: str = CHAT) -> bytes:
    return CASSETTES[name].interactions[0].response.body


def events(body: bytes) -> list[tuple[str, str]]:
    return [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    extra = [Scenario.from_dict({"name": name, "steps": steps}) for name, steps in {
        "gzip-bytes": [{"content-encoding": {"coding": "gzip"}}, {"fragment": {"mode": "random", "max": 40}}],
        "length": [{"framing": {"mode": "length"}}],
        "close": [{"framing": {"mode": "close"}}],
        "no-content-type": [{"content-type": {"value": None}}],
        "separators": [{"line-separators": {}}],
        "cr-then-lf": [{"line-endings": {"eol": "cr"}}, {"line-endings": {"eol": "lf"}}],
    }.items()]
    with MockServer(scenarios=[*collect_scenarios(None).values(), *extra], timing_scale=0) as running:
        yield running


def wire(server: MockServer, scenario: str | None, cassette: str = CHAT, path: str = "/v1/chat/completions",
         prefix: str = "") -> RawResponse:
    server.reset()
    headers = {"X-SSEMock-Cassette": cassette}
    if scenario is not None:
        headers["X-SSEMock-Scenario"] = scenario
    return raw_request(server.url, "POST", prefix + path, b"{}", headers)


# ---- files, validation, listing -------------------------------------------------------------
def test_the_bundled_presets_have_the_names_of_the_issue(capsys: pytest.CaptureFixture[str]) -> None:
    assert sorted(collect_scenarios(None)) == sorted(ISSUE_PRESETS + H2_PRESETS)
    assert main(["scenarios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(ISSUE_PRESETS + H2_PRESETS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines), "each preset has a one-line description"


def yaml_example(cls: type) -> list[object]:
    """The steps of the indented ``YAML::`` block of a step's docstring."""
    block = (cls.__doc__ or "").split("YAML::\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line.strip() and not line.startswith(" " * 8):
            break
        lines.append(line)
    return list(yaml.safe_load(textwrap.dedent("\n".join(lines))))


@pytest.mark.parametrize("name", sorted(STEPS))
def test_every_step_is_documented_with_yaml_examples_that_load(name: str) -> None:
    cls = STEPS[name]
    assert cls.stage in ("event", "byte", "chunk", "transport")
    assert "Fields" in (cls.__doc__ or "") or not cls.fields
    examples = yaml_example(cls)
    scenario = Scenario.from_dict({"steps": examples}, source=f"{name} docstring")
    assert scenario.steps and all(type(step) is cls for step in scenario.steps)


@pytest.mark.parametrize(("steps", "field", "expected"), [
    ([{"fragmnt": {}}], "steps[0]", "a step name: one of bom, content-encoding, content-type"),
    ([{"fragment": {"mode": "halves"}}], "steps[0].fragment.mode", "one of bytes | random | utf8 | crlf"),
    ([{"fragment": {"size": 0}}], "steps[0].fragment.size", "an integer from 1 to 67108864 (64 MiB)"),
    ([{"fragment": {"mode": "random", "min": 9, "max": 2}}], "steps[0].fragment.max", "a size >= min (9)"),
    ([{"stall": {"secs": 1}}], "steps[0].stall.secs", "a field of stall: after_events, seconds"),
    ([{"line-endings": {"eol": "CRLF"}}], "steps[0].line-endings.eol", "one of lf | crlf | cr | mixed"),
    ([{"disconnect": {"after_events": 1, "after_bytes": 3}}], "steps[0].disconnect", "exactly one of"),
    ([{"http-error": {"status": 700}}], "steps[0].http-error.status", "an HTTP status code 200-599"),
    # A 1xx answer is interim (RFC 9110 section 15.2): the client would wait for a final one forever.
    ([{"http-error": {"status": 101}}], "steps[0].http-error.status", "an HTTP status code 200-599"),
    ([{"error-mid-stream": {"status": 700}}], "steps[0].error-mid-stream.status", "an HTTP status code 100-599"),
    ([{"keepalive": {"text": "a\nb"}}], "steps[0].keepalive.text", "a string of at most 256 characters without CR, LF"),
    ([{"bom": {}}, "crlf"], "steps[1]", "a one-key mapping naming a step"),
])
def test_validation_names_the_file_step_field_and_choices(
    tmp_path: Path, steps: list[object], field: str, expected: str
) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(yaml.safe_dump({"ssemock_scenario": 1, "steps": steps}))
    with pytest.raises(ScenarioError) as caught:
        Scenario.load(file)
    assert caught.value.file == str(file) and caught.value.field == field
    assert expected in caught.value.expected and str(file) in str(caught.value)
    assert isinstance(caught.value, SSEMockError) and isinstance(caught.value, ValueError)


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("steps: [")
    with pytest.raises(ScenarioError, match=r"a\.yaml: line 2, column 1: expected valid YAML, got 'while parsing"):
        Scenario.load(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text("ssemock_scenario: 2\nsteps: []\n")
    with pytest.raises(ScenarioError, match="ssemock_scenario: expected scenario format version 1"):
        Scenario.load(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text("ssemock_scenario: 1\npreserves: all\n")
    with pytest.raises(ScenarioError, match=r"preserves: expected one of events \| payloads \| nothing"):
        Scenario.load(tmp_path / "a.yaml")


# ---- selection, composition, order ---------------------------------------------------------
def test_selection_by_header_path_prefix_and_server_default(server: MockServer) -> None:
    by_header = wire(server, "crlf,split-bytes")
    assert server.requests[0]["scenario"] == "crlf,split-bytes"
    by_prefix = wire(server, None, prefix="/_ssemock/s/crlf,split-bytes")
    assert server.requests[0]["scenario"] == "crlf,split-bytes"
    assert by_header.chunks == by_prefix.chunks
    assert b"".join(by_header.chunks) == recorded().replace(b"\n", b"\r\n")
    assert not any(b"\r\n" in c for c in by_header.chunks), "split-bytes within its budget still splits every CRLF"
    with MockServer(scenario="crlf", timing_scale=0) as default:
        r = raw_request(default.url, "POST", "/v1/chat/completions", b"{}", {"X-SSEMock-Cassette": CHAT})
        assert r.body == recorded().replace(b"\n", b"\r\n") and default.requests[0]["scenario"] == "crlf"
    with MockServer(scenario=("crlf", "split-bytes"), timing_scale=0) as default:  # names: a tuple in Python
        r = raw_request(default.url, "POST", "/v1/chat/completions", b"{}", {"X-SSEMock-Cassette": CHAT})
        assert r.chunks == by_header.chunks and default.requests[0]["scenario"] == "crlf,split-bytes"


@pytest.mark.parametrize("names", [("crlf", ""), "crlf,", ",", " ", [""]])
def test_an_empty_default_scenario_name_is_a_config_error(names: str | tuple[str, ...]) -> None:
    with pytest.raises(ConfigError, match=r"^scenario: an empty name in "):
        MockServer(scenario=names)


def test_an_empty_name_in_the_header_is_refused_not_skipped(server: MockServer) -> None:
    for names in ("crlf,", "crlf,,split-bytes", ","):
        r = wire(server, names)
        error = json.loads(r.body)["error"]
        assert (r.status, error["type"]) == (400, "ssemock_unknown_scenario")
        assert error["message"] == f"no scenario named in {names!r}: expected scenario names, comma-separated"


def test_steps_run_by_stage_then_in_the_order_written(server: MockServer) -> None:
    # stage order: the same bytes whichever order the scenarios are composed in
    assert wire(server, "split-bytes,crlf").chunks == wire(server, "crlf,split-bytes").chunks
    # within a stage, in the order written: the last line-endings step wins
    assert wire(server, "cr-then-lf").body == recorded()
    assert wire(server, "crlf,cr").body == recorded().replace(b"\n", b"\r")


def test_unknown_scenario_is_refused_with_the_known_names(server: MockServer) -> None:
    r = wire(server, "crlf,nope")
    assert r.status == 400 and json.loads(r.body)["error"]["type"] == "ssemock_unknown_scenario"


# ---- seeded randomness -------------------------------------------------------------------------
def test_the_same_seed_gives_the_same_bytes_and_chunks_and_is_journaled(server: MockServer) -> None:
    first = wire(server, "split-random,mixed-eol")
    assert server.requests[0]["seed"] == server.state.seed
    again = wire(server, "split-random,mixed-eol")
    assert first.chunks == again.chunks and len(first.chunks) > 100
    assert all(1 <= len(c) <= 16 for c in first.chunks)
    with MockServer(seed=12345, timing_scale=0) as seeded:
        other = raw_request(seeded.url, "POST", "/v1/chat/completions", b"{}",
                            {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "split-random,mixed-eol"})
        assert seeded.requests[0]["seed"] == 12345 and other.chunks != first.chunks
    assert events(other.body) == events(first.body) == events(recorded())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["split-random", "mixed-eol", "split-crlf", "keepalive"]),
       cassette=st.sampled_from(sorted(n for n in CASSETTES if n != "anthropic-messages-tool-use-gzip")))
def test_any_seed_keeps_the_events_of_every_recording(seed: int, name: str, cassette: str) -> None:
    scenario = collect_scenarios(None)[name]
    for inter in CASSETTES[cassette].interactions:
        plan = scenario.apply(Plan.of(inter.response, seed=seed, request=inter.request))
        assert [c for c in plan.response.chunks if not c.data] == []
        assert events(plan.response.body) == events(inter.response.body)


@settings(max_examples=60, deadline=None)
@given(offsets=st.lists(st.integers(1, 1200), max_size=30))
def test_explicit_offsets_split_exactly_there(offsets: list[int]) -> None:
    inter = CASSETTES[CHAT].interactions[0]
    step = {"fragment": {"mode": "offsets", "offsets": offsets or [1]}}
    plan = Scenario.from_dict({"steps": [step]}).apply(Plan.of(inter.response))
    ends, pos = set(), 0
    for chunk in plan.response.chunks:
        pos += len(chunk.data)
        ends.add(pos)
    assert plan.response.body == recorded() and {o for o in offsets or [1] if o < len(recorded())} <= ends


# ---- byte-level effects on the wire --------------------------------------------------------
def test_fragments_are_http_chunks(server: MockServer) -> None:
    utf8 = wire(server, "split-utf8", QWEN, "/compatible-mode/v1/chat/completions")
    assert utf8.body == recorded(QWEN)
    assert sum(1 for c in utf8.chunks if 0x80 <= c[0] < 0xC0) > 10
    for c in utf8.chunks:  # no chunk holds two bytes of one character: a continuation byte starts each chunk
        assert not any((a >= 0xC0 and 0x80 <= b < 0xC0) or (0x80 <= a < 0xC0 and 0x80 <= b < 0xC0)
                       for a, b in itertools.pairwise(c)), c
    crlf = wire(server, "split-crlf")
    assert crlf.body == recorded().replace(b"\n", b"\r\n")
    assert not any(b"\r\n" in c for c in crlf.chunks) and sum(c.endswith(b"\r") for c in crlf.chunks) == 10


def test_line_level_presets_on_the_wire(server: MockServer) -> None:
    body = recorded()
    assert wire(server, "cr").body == body.replace(b"\n", b"\r")
    assert wire(server, "bom").body == b"\xef\xbb\xbf" + body
    assert wire(server, "no-space").body == body.replace(b"data: ", b"data:")
    keep = wire(server, "keepalive").body
    assert keep.startswith(b": OPENROUTER PROCESSING\n\n" * 3) and keep.count(b": OPENROUTER PROCESSING\n\n") == 5
    extra = wire(server, "extra-fields").body
    assert extra.startswith(BLOCK0 := body.split(b"\n\n")[0] + b"\nid: 1\nretry: 3000\nx-ssemock: 1\n\n")
    assert len(BLOCK0) > 100
    meta = wire(server, "meta-blocks").body
    assert meta.count(b"retry: 3000\n\nid: 7\n\n") == 5 and meta.replace(b"retry: 3000\n\nid: 7\n\n", b"") == body
    decoded = decode(meta, comments=True)
    assert [e.last_event_id for e in decoded if isinstance(e, Event)] == ["7"] * 5  # WHATWG dispatch step 1


def test_payload_presets_on_the_wire(server: MockServer) -> None:
    body = recorded()
    lines = [ln for ln in wire(server, "long-lines").body.split(b"\n") if ln.startswith(b"data:")]
    assert [len(ln) for ln in lines[:3]] == [65537, 131073, 1048577]
    assert [json.loads(ln[6:]) for ln in lines[:3]] == [json.loads(ln[6:]) for ln in body.split(b"\n")[0:6:2]]
    multi = wire(server, "multiline-data").body
    first = multi.split(b"\n\n")[0].split(b"\n")
    assert len(first) == 3 and all(ln.startswith(b"data: ") for ln in first)
    seps = wire(server, "json-separators").body
    assert b'{"id" : "chatcmpl-' in seps and b" , " in seps and events(seps)[-1] == ("message", "[DONE]")


def test_framing_content_type_and_gzip(server: MockServer) -> None:
    length = wire(server, "length")
    assert length.header("content-length") == str(len(recorded())) and length.header("transfer-encoding") is None
    assert length.body == recorded() and length.ending == "complete"
    close = wire(server, "close")
    assert close.body == recorded() and close.header("transfer-encoding") is None
    assert close.header("content-length") is None and close.header("connection") == "close"
    assert wire(server, "no-content-type").header("content-type") is None
    gz = wire(server, "gzip-bytes")
    assert gz.header("content-encoding") == "gzip" and len(gz.chunks) > 20
    inflater = zlib.decompressobj(wbits=47)
    pieces = [inflater.decompress(c) for c in gz.chunks]
    assert b"".join(pieces) == recorded() and all(pieces[:-1]), "each HTTP chunk inflates on arrival (flushed)"


def test_recorded_gzip_stays_gzip_and_split(server: MockServer) -> None:
    gz = wire(server, "split-random", "anthropic-messages-tool-use-gzip", "/v1/messages")
    plain = zlib.decompressobj(wbits=47).decompress(gz.body)
    recorded_plain = zlib.decompress(recorded("anthropic-messages-tool-use-gzip"), 47)
    assert gz.header("content-encoding") == "gzip" and plain == recorded_plain and len(gz.chunks) > 50


def test_line_separators_reach_the_text_raw(server: MockServer) -> None:
    body = wire(server, "separators").body
    assert "\u2028\u2029\x85".encode() in body
    first = json.loads(events(body)[1][1])["choices"][0]["delta"]["content"]
    assert first == '{"\u2028\u2029\x85'  # the recorded content '{"' plus the three characters
    assert len(body.decode().splitlines()) > len(re.split(r"\r\n|\r|\n", body.decode()))


def test_comments_and_events_of_keepalive_are_what_a_whatwg_parser_sees(server: MockServer) -> None:
    items = decode(wire(server, "keepalive").body, comments=True)
    assert [i.text for i in items if isinstance(i, Comment)] == ["OPENROUTER PROCESSING"] * 5


# ---- the docs' examples -----------------------------------------------------------------------------
def test_the_scenario_how_to_shows_a_bundled_preset_and_one_example_of_every_step() -> None:
    """docs/how-to/write-a-scenario.md: its first file is the bundled ``split-crlf``; its *Every step at a
    glance* file has one example of each registered step (the presets are listed by the generated reference)."""
    file_example, steps_example = page_blocks("docs/how-to/write-a-scenario.md", "yaml")[:2]
    assert Scenario.from_dict(yaml.safe_load(file_example)).describe() == \
        collect_scenarios(None)["split-crlf"].describe()
    steps = Scenario.from_dict(yaml.safe_load(steps_example), source="write-a-scenario.md").steps
    assert {s.name for s in steps} == set(STEPS), "one example per step"
    assert set(ISSUE_PRESETS) <= set(collect_scenarios(None))


def test_done_without_space_bytes_disconnect_and_content_types() -> None:
    steps: dict[str, list[dict[str, object]]] = {
        "done": [{"field-spacing": {"space": False, "only": "[DONE]"}}],
        "bytes": [{"disconnect": {"after_bytes": 100, "how": "cut"}}],
        "charset": [{"content-type": {"value": "text/event-stream; charset=utf-8"}}],
    }
    with MockServer(scenarios=[Scenario.from_dict({"name": n, "steps": s}) for n, s in steps.items()],
                    timing_scale=0) as server:
        done = wire(server, "done")
        assert done.body == recorded().replace(b"data: [DONE]", b"data:[DONE]")
        assert done.body.endswith(b"\n\ndata:[DONE]\n\n")
        cut = wire(server, "bytes")
        assert cut.body == recorded()[:100] and cut.ending == "cut"
        assert server.requests[0]["injected"] == ["disconnect: cut at byte 100, after 100 bytes"]
        assert wire(server, "charset").header("content-type") == "text/event-stream; charset=utf-8"


def test_timing_steps_shape_the_recorded_times() -> None:
    inter = CASSETTES[CHAT].interactions[0]
    jitter = Scenario.from_dict({"steps": [{"timing": {"mode": "jitter", "interval": 0.05}}]})
    times = [c.t for c in jitter.apply(Plan.of(inter.response, seed=3)).response.chunks]
    assert times == [c.t for c in jitter.apply(Plan.of(inter.response, seed=3)).response.chunks]
    gaps = [b - a for a, b in zip([0.0, *times], times)]
    assert all(0 <= g <= 0.05 for g in gaps) and len(set(gaps)) == len(gaps)
    fixed = Scenario.from_dict({"steps": [{"timing": {"mode": "fixed", "interval": 0.05, "first_byte": 0.5}}]})
    plan = fixed.apply(Plan.of(inter.response))
    assert plan.response.start == 0.5
    assert [round(c.t, 6) for c in plan.response.chunks] == [0.55, 0.6, 0.65, 0.7, 0.75]


# ---- the journal's injected names every step ----------------------------------------------------
@pytest.mark.parametrize("preset", ISSUE_PRESETS)
def test_every_preset_names_each_of_its_steps_in_the_journal(server: MockServer, preset: str) -> None:
    wire(server, preset)
    notes = server.requests[-1]["injected"]
    steps = collect_scenarios(None)[preset].steps
    assert notes, preset
    for step in steps:
        assert any(note.startswith(f"{step.name}: ") for note in notes), (preset, step.name, notes)


def test_the_line_ends_noted_are_the_ones_sent(server: MockServer) -> None:
    body = wire(server, "mixed-eol").body
    crlf = body.count(b"\r\n")
    cr, lf = body.count(b"\r") - crlf, body.count(b"\n") - crlf
    assert crlf and cr and lf  # mixed: all three
    shown = ", ".join(f"{n} {name}" for n, name in ((lf, "LF"), (crlf, "CRLF"), (cr, "CR")))
    assert server.requests[-1]["injected"] == [f"line-endings: {crlf + cr + lf} line end(s) written: {shown} (seeded)"]


def test_a_custom_scenario_notes_line_ends_spacing_and_empty_data_framing_and_gzip() -> None:
    scenario = Scenario.from_dict({"name": "mix", "steps": [
        {"line-endings": {"eol": "lf", "blank": "crlf"}}, {"field-spacing": {"space": False}},
        {"empty-data": {}}, {"framing": {"mode": "close"}}, {"content-encoding": {"coding": "deflate"}}]})
    with MockServer(scenarios=[scenario], timing_scale=0) as running:
        got = raw_request(running.url, "POST", "/v1/chat/completions", b"{}",
                          {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": "mix"})
        notes = running.requests[-1]["injected"]
    body = zlib.decompress(got.body)
    blanks = body.count(b"\r\n")
    assert blanks == 5 and body.count(b"\n") - blanks == 9  # 5 events: 5 data lines + 4 empty data: lines
    # line-endings runs first: the empty data: lines come after it, with the end of the line they follow
    assert [n.split(":")[0] for n in notes] == ["line-endings", "field-spacing", "empty-data", "framing",
                                                "content-encoding"]
    assert notes[0] == "line-endings: 10 line end(s) written: 5 LF, 5 CRLF"
    assert notes[2] == "empty-data: an empty data: line at the start of 4 event(s)"
    assert notes[1] == "field-spacing: 5 field line(s) rewritten, no value changed"
    assert notes[3].startswith("framing: close") and notes[4].startswith("content-encoding: deflate")


@pytest.mark.parametrize(
    ("step", "field", "expected"),
    [
        ({"tls-records": {"mode": "crlf", "size": 7}}, "tls-records.size",
         "a field mode crlf reads: none (size is for mode size)"),
        ({"h2-frames": {"mode": "random", "offsets": [3]}}, "h2-frames.offsets",
         "a field mode random reads: min, max (offsets is for mode offsets)"),
        ({"fragment": {"mode": "utf8", "size": 3}}, "fragment.size",
         "a field mode utf8 reads: pace, budget (size is for mode bytes or buffer)"),
        ({"fragment": {"min": 2}}, "fragment.min",
         "a field mode bytes reads: size, pace, budget (min is for mode random)"),
        ({"timing": {"mode": "scale", "interval": 0.1}}, "timing.interval",
         "a field mode scale reads: factor, first_byte (interval is for mode fixed or jitter)"),
    ],
)
def test_a_field_its_mode_does_not_read_is_refused(step: dict[str, object], field: str, expected: str) -> None:
    """``tls-records: {mode: crlf, size: 7}`` made no 7-byte records: the size was ignored, silently."""
    with pytest.raises(ScenarioError) as refused:
        Scenario.from_dict({"name": "x", "steps": [step]}, source="x.yaml")
    assert (refused.value.field, refused.value.expected) == (f"steps[0].{field}", expected)


def test_a_default_of_another_mode_is_taken_and_a_step_describes_its_modes_fields() -> None:
    """A field at its default changes nothing in any mode (an editor's completion from the schema adds them)."""
    steps = [{"tls-records": {"mode": "crlf", "size": 1}}, {"timing": {"factor": 1.0}},
             {"fragment": {"mode": "random", "min": 2, "max": 5, "pace": 0}}]
    scenario = Scenario.from_dict({"name": "x", "steps": steps}, source="x.yaml")
    assert scenario.describe()["steps"] == [
        {"tls-records": {"mode": "crlf"}}, {"timing": {"mode": "recorded", "first_byte": None}},
        {"fragment": {"mode": "random", "min": 2, "max": 5, "pace": 0, "budget": 2.0}}]
    assert Scenario.from_dict({"name": "x", "steps": scenario.describe()["steps"]}).describe() == scenario.describe()
