"""The event-built YAML load gives exactly what PyYAML's safe loader gives, or steps aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock.bundled import bundled_cassettes
from ssemock.cassette.fastyaml import Unsupported, fast_safe_load
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
        "a: &x 1\nb: *x\n",                      # anchors and aliases
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


def test_every_bundled_cassette_loads_the_same() -> None:
    files = sorted(Path(bundled_cassettes()).glob("*.yaml"))
    assert len(files) == 14
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert fast_safe_load(text) == yaml.load(text, Loader=SAFE), file.name


def test_invalid_yaml_still_raises_a_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError):
        fast_safe_load("a: [1\n")
