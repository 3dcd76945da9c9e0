"""The event-built YAML load gives exactly what PyYAML's safe loader gives, or steps aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import CassetteError
from ssemock.bundled import bundled_cassettes
from ssemock.cassette.fastyaml import (
    MAX_NESTING,
    ItemBuilder,
    Refused,
    Unsupported,
    fast_safe_load,
    strict_load,
)
from ssemock.cassette.read import load_yaml
from ssemock.cassette.write import Dumper

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
    st.sampled_from(["1", "1.0", "true", "yes", "off", "~", "null", "0x1F", "1_000", "0o17", ".inf", "-.inf",
                     "2001-12-14", "=", "<<", "1e3", "+1", "0b101", "1:20", " lead", "trail ", "a: b", "#x"]),
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.integers(), inner,
                                                               max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(documents, st.sampled_from([Dumper, yaml.SafeDumper]), st.booleans())
def test_same_data_as_the_safe_loader(doc: Any, dumper: Any, flow: bool) -> None:
    text = yaml.dump(doc, Dumper=dumper, allow_unicode=True, default_flow_style=flow)
    want = yaml.load(text, Loader=SAFE)
    try:
        got = fast_safe_load(text)
    except Unsupported:
        got = load_yaml(text, "<test>")
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {x: 1}\nderived:\n  <<: *b\n",  # merge key
        "when: 2001-12-14\n",                    # timestamp
        "v: !!binary aGk=\n",                    # explicit tag
        "--- 1\n--- 2\n",                        # several documents
        "? [a, b]\n: 1\n",                       # complex key
    ],
)
def test_outside_the_subset_it_steps_aside(text: str) -> None:
    with pytest.raises(Unsupported):
        fast_safe_load(text)


@settings(max_examples=200)
@given(st.lists(documents, max_size=6), st.integers(0, 6), st.sampled_from([Dumper, yaml.SafeDumper]),
       st.booleans())
def test_a_builder_builds_each_item_of_its_list_as_parsed_until_it_fails(
    items: list[Any], fails_at: int, dumper: Any, flow: bool
) -> None:
    """The builder's list holds ``build(index, item)`` for each item the safe loader gives, up to the
    first whose build raises: from it on, the items as parsed; the rest of the document as parsed."""
    text = yaml.dump({"version": 1, "items": items, "after": items[:1]}, Dumper=dumper, allow_unicode=True,
                     default_flow_style=flow)
    want = yaml.load(text, Loader=SAFE)
    heads: list[list[Any]] = []

    def begin(head: list[Any]) -> Any:
        heads.append(head)

        def build(index: int, item: Any) -> Any:
            if index >= fails_at:
                raise ValueError(index)
            return ("built", index, item)

        return build

    try:
        got = fast_safe_load(text, build=ItemBuilder("items", begin))
    except Unsupported:
        return  # the full loader builds nothing
    assert heads == [["after", want["after"]]]  # the keys before the list (yaml.dump sorts them)
    expected = [("built", i, item) if i < fails_at else item for i, item in enumerate(want["items"])]
    assert got == {**want, "items": expected}


def test_every_bundled_cassette_loads_the_same() -> None:
    files = sorted(Path(bundled_cassettes()).glob("*.yaml"))
    assert len(files) == 14
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert fast_safe_load(text) == yaml.load(text, Loader=SAFE), file.name


def test_invalid_yaml_still_raises_a_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError):
        fast_safe_load("a: [1\n")


# ---- refused whatever the loader: anchors and aliases, duplicate keys, deep nesting ----------
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n"
FALLBACKS = ["", "when: 2001-12-14\n", "v: !!binary aGk=\n", "? [a, b]\n: 1\n", "t: !!str x\n"]


@pytest.mark.parametrize("before", FALLBACKS)
def test_aliases_are_refused_even_after_the_fast_path_steps_aside(before: str) -> None:
    text = "ssemock_cassette: 1\n" + before + BOMB
    line = text.splitlines().index(BOMB.splitlines()[0]) + 1
    with pytest.raises(Refused) as caught:
        strict_load(text)
    assert caught.value.line == line
    with pytest.raises(CassetteError) as error:
        load_yaml(text, "f.yaml")
    assert error.value.file == "f.yaml" and error.value.field == f"line {line}"
    assert "anchors or aliases" in error.value.expected


@pytest.mark.parametrize("before", FALLBACKS)
def test_duplicate_keys_are_refused_with_their_line(before: str) -> None:
    text = "ssemock_cassette: 1\n" + before + "name: a\nother: 1\nname: b\n"
    with pytest.raises(Refused) as caught:
        strict_load(text)
    assert caught.value.line == text.count("\n") and caught.value.got == "name"


@settings(max_examples=100)
@given(st.dictionaries(st.from_regex(r"k[a-z_]{0,7}", fullmatch=True),
                       st.integers() | st.booleans() | st.none() | st.from_regex(r"[a-z][a-z ]{0,9}", fullmatch=True),
                       min_size=1, max_size=6),
       st.data(), st.sampled_from(FALLBACKS))
def test_any_duplicated_key_is_refused(doc: dict[str, Any], data: st.DataObject, before: str) -> None:
    lines = yaml.safe_dump(doc, default_flow_style=False).splitlines(keepends=True)
    assert len(lines) == len(doc)  # one "key: value" line each
    index = data.draw(st.integers(0, len(lines) - 1))
    with pytest.raises(Refused) as caught:
        strict_load(before + "".join(lines) + lines[index])
    assert caught.value.line == before.count("\n") + len(lines) + 1


def test_nesting_past_the_bound_is_refused_in_both_paths() -> None:
    deep = "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1)
    for text in (f"x: {deep}\n", f"d: 2001-01-01\nx: {deep}\n"):
        with pytest.raises(Refused, match=f"nested at most {MAX_NESTING} deep"):
            strict_load(text)
    ok = "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)
    assert strict_load(f"x: {ok}\n") == yaml.load(f"x: {ok}\n", Loader=SAFE)


@settings(max_examples=100)
@given(documents, st.lists(scalars, min_size=1, max_size=3), st.sampled_from(FALLBACKS))
def test_any_shared_value_is_refused_as_an_alias(doc: Any, shared: list[Any], before: str) -> None:
    # PyYAML's dumper writes a value referenced twice as an anchor and an alias.
    text = before + yaml.dump({"k_one": shared, "k_doc": doc, "k_two": shared}, Dumper=yaml.SafeDumper)
    assert "&id" in text and "*id" in text
    with pytest.raises(Refused) as caught:
        strict_load(text)
    assert caught.value.line == next(i for i, line in enumerate(text.splitlines(), 1) if "&id" in line)
