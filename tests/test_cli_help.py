"""Help that teaches: ``ssemock --help`` names the three jobs, and every sub-command's ``--help`` has a
paragraph and examples that the parser takes. The real ``ssemock`` process and its parser."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from ssemock.cli import build_parser
from ssemock.commands import COMMANDS, EXAMPLES


def _help(*argv: str) -> str:
    done = subprocess.run([sys.executable, "-m", "ssemock", *argv, "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_the_top_help_names_the_three_jobs_and_shows_examples() -> None:
    text = _help()
    block = text.split("as a provider would, offline:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[0] for line in block.splitlines()] == ["test", "develop", "record"]
    assert "examples:\n" + "".join(f"  {e}\n" for e in EXAMPLES) in text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_sub_command_help_has_a_paragraph_and_examples_the_parser_takes(name: str) -> None:
    text = _help(name)
    entry = COMMANDS[name]
    paragraph = text.split("\n\n")[1]  # after the usage
    assert " ".join(paragraph.split()) == " ".join(entry.description.split()) and len(entry.description) > 120
    assert text.rstrip("\n").endswith("examples:\n" + "\n".join(f"  {e}" for e in entry.examples))
    for example in entry.examples:
        argv = shlex.split(example)
        assert argv[:2] == ["ssemock", name], example
        args = build_parser(name).parse_args(argv[1:])  # raises SystemExit (exit 2) if the parser refuses it
        assert args.command == name
