"""The README's core promises: its Python example runs, and CI runs its test command as written."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from ssemock import Cassette

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else len(README)]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_the_python_example_runs() -> None:
    (code,) = blocks(section("Using it from Python"), "python")
    exec(compile(code, "README.md", "exec"), {})


def test_the_cassette_examples_load() -> None:
    full, hand = blocks(section("Cassette format (version 1)"), "yaml")
    demo = Cassette.loads(full, name="demo")
    assert demo.interactions[0].response.chunks[1].data == b"data: caf\xc3"
    events = Cassette.loads(hand).interactions[0].response
    assert [c.t for c in events.chunks] == [0.05, 0.1, 0.15]
    assert yaml.safe_load(hand)["ssemock_cassette"] == 1


def test_ci_runs_the_readme_test_command_as_written() -> None:
    commands = blocks(README[: README.index("\n## ")], "sh")
    test_command = commands[1].strip()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
