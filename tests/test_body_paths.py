"""Body paths (``metadata.trace_id``, ``messages[*].id``): the syntax, its bounds, and the property that
ignoring a path is deleting it on both sides before comparing, whichever way a request is matched."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import MockServer
from ssemock.body_paths import EVERY, check_paths, compile_paths, parse_path, without
from ssemock.cassette import Cassette, Interaction, Request, Response, loads
from ssemock.cli import main
from ssemock.errors import CassetteError, ConfigError, NoMatchError
from ssemock.limits import MAX_BODY_PATH_CHARS, MAX_BODY_PATH_STEPS, MAX_BODY_PATHS
from ssemock.match_index import IndexCache
from ssemock.matching import differences, find_interaction
from ssemock.schemas import validate

KEYS = ("a", "b", "id", "metadata", "trace_id")
leaves = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["x", "y", ""])
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
steps = st.lists(st.sampled_from(KEYS) | st.integers(0, 2) | st.just(EVERY), min_size=1, max_size=4)


@st.composite
def path_texts(draw: st.DrawFn) -> tuple[str, tuple[Any, ...]]:
    """A path's text, written in any of the syntax's spellings, and its steps."""
    chosen = draw(steps)
    text = ""
    for step in chosen:
        if isinstance(step, int):
            text += f"[{step}]"
        elif step is EVERY and (not text or draw(st.booleans())):
            text += "[*]" if not text and draw(st.booleans()) else ("." if text else "") + "*"
        elif step is EVERY:
            text += "[*]"
        else:
            text += ("." if text else "") + step
    return text, tuple(chosen)


def deleted(value: Any, path_steps: tuple[Any, ...]) -> Any:
    """The oracle: a deep copy of ``value`` with the path's fields deleted in place, the plain way."""
    out = copy.deepcopy(value)

    def walk(node: Any, rest: tuple[Any, ...]) -> None:
        step, more = rest[0], rest[1:]
        if isinstance(node, dict) and not isinstance(step, int):
            for key in [k for k in node if step is EVERY or k == step]:
                if more:
                    walk(node[key], more)
                else:
                    del node[key]
        elif isinstance(node, list) and not isinstance(step, str):
            places = list(range(len(node))) if step is EVERY else [step] if step < len(node) else []
            for i in sorted(places, reverse=True):
                if more:
                    walk(node[i], more)
                else:
                    del node[i]

    walk(out, path_steps)
    return out


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def request(value: Any) -> Request:
    return Request("POST", "/v1/chat/completions", body=json.dumps(value).encode())


@given(path_texts())
def test_a_path_reads_as_the_steps_it_is_written_with(written: tuple[str, tuple[Any, ...]]) -> None:
    text, path_steps = written
    parsed = parse_path(text)
    assert parsed.text == text and parsed.steps == path_steps


@given(json_values, st.lists(path_texts(), max_size=3, unique_by=lambda p: p[0]))
def test_deleting_paths_is_what_a_plain_deletion_gives_and_leaves_the_value_alone(
    value: Any,
    paths: list[tuple[str, tuple[Any, ...]]],
) -> None:
    before = copy.deepcopy(value)
    want = value
    for _, path_steps in paths:
        want = deleted(want, path_steps)
    assert without(value, compile_paths(tuple(text for text, _ in paths))) == want
    assert value == before


@st.composite
def near_bodies(draw: st.DrawFn) -> tuple[Any, Any, list[str]]:
    """Two JSON bodies that often differ only where some paths point (and sometimes elsewhere), and the paths."""
    received = draw(json_values)
    paths = draw(st.lists(path_texts(), min_size=1, max_size=3, unique_by=lambda p: p[0]))
    recorded = copy.deepcopy(received)
    for text, _ in paths:
        if draw(st.booleans()):
            recorded = put(recorded, parse_path(text).steps, draw(leaves))
    if draw(st.integers(0, 4)) == 0:
        recorded = draw(json_values)  # unrelated
    return received, recorded, [text for text, _ in paths]


def put(value: Any, path_steps: tuple[Any, ...], leaf: Any) -> Any:
    """``value`` with ``leaf`` written wherever the path points to something (a missing key is added)."""
    step, more = path_steps[0], path_steps[1:]
    if isinstance(value, dict) and not isinstance(step, int):
        keys = list(value) if step is EVERY else [step]
        return {**value, **{k: put(value.get(k, {}), more, leaf) if more else leaf for k in keys}}
    if isinstance(value, list) and not isinstance(step, str):
        places = range(len(value)) if step is EVERY else [step] if step < len(value) else []
        return [(put(item, more, leaf) if more else leaf) if i in places else item for i, item in enumerate(value)]
    return value


@settings(max_examples=300)
@given(near_bodies())
def test_ignoring_paths_is_deleting_them_on_both_sides_before_comparing(case: tuple[Any, Any, list[str]]) -> None:
    received, recorded, texts = case
    if received is None or recorded is None:  # a JSON null body is compared as bytes
        return
    paths = compile_paths(tuple(texts))
    want_a, want_b = received, recorded
    for path in paths:
        want_a, want_b = deleted(want_a, path.steps), deleted(want_b, path.steps)
    matches = not differences(request(received), request(recorded), ["body"], paths)
    assert matches == (canonical(want_a) == canonical(want_b))


@settings(max_examples=150)
@given(st.lists(near_bodies(), min_size=1, max_size=4), st.booleans())
def test_the_indexes_choose_what_comparing_every_interaction_chooses(
    cases: list[tuple[Any, Any, list[str]]],
    per_cassette: bool,
) -> None:
    """Bodies keyed with the ignored paths deleted find the interaction a linear scan finds."""
    texts = tuple(cases[0][2])
    interactions = [Interaction(request(recorded), Response()) for _, recorded, _ in cases if recorded is not None]
    cassette = Cassette("c", interactions, ignore_body=texts if per_cassette else ())
    server = () if per_cassette else texts
    for received, _, _ in cases:
        if received is None:
            continue
        found = []
        for indexes in (None, IndexCache()):
            try:
                match = find_interaction([cassette], request(received), played={}, indexes=indexes, ignore=server)
                found.append(match.index)
            except NoMatchError:
                found.append(None)
        assert found[0] == found[1]


def test_the_bounds_are_stated_and_refused_beyond() -> None:
    assert check_paths(["a", "a", "b"]) == ("a", "b")  # each once
    assert len(check_paths([f"k{i}" for i in range(MAX_BODY_PATHS)])) == MAX_BODY_PATHS
    with pytest.raises(ConfigError, match=f"ignore_body: expected at most {MAX_BODY_PATHS} body paths, got 65"):
        check_paths([f"k{i}" for i in range(MAX_BODY_PATHS + 1)], "ignore_body")
    parse_path("k" * MAX_BODY_PATH_CHARS)
    with pytest.raises(
        ConfigError,
        match=f"expected a body path of at most {MAX_BODY_PATH_CHARS} characters "
        r"\(this one has 257\)",
    ):
        parse_path("k" * (MAX_BODY_PATH_CHARS + 1))
    parse_path(".".join(["k"] * MAX_BODY_PATH_STEPS))
    with pytest.raises(
        ConfigError,
        match=f"expected a body path of at most {MAX_BODY_PATH_STEPS} steps "
        r"\(this one has 33\)",
    ):
        parse_path("k" + "[0]" * MAX_BODY_PATH_STEPS)
    for bad in ("", "a..b", ".a", "a.", "a[", "a[x]", "a[-1]", "a]", 7):
        with pytest.raises(ConfigError, match="body path"):
            parse_path(bad)


def test_a_cassette_file_with_a_bad_body_path_is_refused_naming_the_file_and_field() -> None:
    text = "ssemock_cassette: 1\nmatch:\n  dropped_body: [user, 'messages[*']\ninteractions: []\n"
    with pytest.raises(CassetteError, match=r"chat\.yaml: match\.dropped_body\[1\]: expected keys separated by '\.'"):
        loads(text, source="chat.yaml")
    with pytest.raises(CassetteError, match=r"match\.ignore_body: expected a list of body paths"):
        loads("ssemock_cassette: 1\nmatch: {ignore_body: user}\n", source="chat.yaml")
    with pytest.raises(CassetteError, match=r"match\.ignore_body: expected a list of at most 64 body paths"):
        loads(f"ssemock_cassette: 1\nmatch: {{ignore_body: [{', '.join(f'k{i}' for i in range(65))}]}}\n")


def test_a_cassette_built_in_code_with_a_bad_body_path_is_refused_by_the_server() -> None:
    with pytest.raises(CassetteError, match=r"<cassette c>: match\.ignore_body\[0\]: expected a non-empty string"):
        MockServer([Cassette("c", ignore_body=("",))])


def test_the_command_line_refuses_a_bad_body_path_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["serve", "--ignore-body-field", "messages[*"], ["record", "--drop-body-field", "a..b"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert "body path" in err and "expected keys separated by '.'" in err


@given(path_texts())
def test_the_cassette_schema_and_the_loader_agree_on_body_paths(written: tuple[str, tuple[Any, ...]]) -> None:
    text = written[0]
    doc = {"ssemock_cassette": 1, "match": {"ignore_body": [text]}, "interactions": []}
    validate(doc, "cassette")
    assert loads(json.dumps(doc)).ignore_body == (text,)


@pytest.mark.parametrize("bad", ["a..b", "a[", "", "k" * (MAX_BODY_PATH_CHARS + 1)])
def test_the_cassette_schema_refuses_what_the_loader_refuses(bad: str) -> None:
    doc = {"ssemock_cassette": 1, "match": {"dropped_body": [bad]}, "interactions": []}
    with pytest.raises(CassetteError, match=r"match\.dropped_body\[0\]"):
        validate(doc, "cassette")
    with pytest.raises(CassetteError, match=r"match\.dropped_body\[0\]"):
        loads(json.dumps(doc))
