"""How the test suite checks the code blocks of README.md and the pages under docs/ (through Sybil).

The convention a page follows:

* ```` ```python ```` blocks run, in order, one namespace per page: they are self-contained and assert
  the values they promise;
* ```` ```yaml ```` blocks are whole ssemock files, loaded by ssemock's own loaders: a cassette
  (``ssemock_cassette:``), a scenario file (``steps:``) or a stub file (``stubs:``); or a
  ``.pre-commit-config.yaml`` (``repos:``) whose hooks are the project's own;
* ```` ```sh ```` blocks hold commands: ``ssemock …`` lines are parsed by ssemock's own argument parser
  (not run: they would serve or record until stopped), ``curl`` lines run against a replay server of the
  bundled recordings and presets that stands in for the address they name, ``pip install`` and
  ``pytest`` lines are checked against the project (extras that exist, options pytest knows),
  ``python -m MODULE`` names a module that exists and ``sh SCRIPT`` a script of the project; a
  ``NAME=value`` before a command sets its environment;
* outputs go in ```` ```text ```` blocks, which are not checked.

Any other info string on a fenced block is an error, so that no example escapes the check.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import dropwhile
from pathlib import Path
from typing import Any

import yaml
from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("python", "yaml", "sh", "text")
# Every fenced block, with its whole info string (empty included) as the lexeme "info".
FENCES = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE))
_ENVIRONMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PROGRAMS = {"python3": "python", "python3.11": "python", "python3.12": "python", "python3.13": "python", "pip3": "pip"}
_URL = re.compile(r"https?://(?:127\.0\.0\.1|localhost)(?::\d+)?")


def evaluate_yaml(example: Example) -> None:
    """Load a ```yaml block with the loader of the ssemock file it is."""
    from ssemock import Scenario
    from ssemock.cassette import loads
    from ssemock.stubs.files import parse_stubs

    text: str = example.parsed
    source = f"{Path(example.path).name}:{example.line}"
    doc = yaml.safe_load(text)
    if isinstance(doc, dict) and "ssemock_cassette" in doc:
        loads(text, name="example", source=source)
    elif isinstance(doc, dict) and "steps" in doc:
        Scenario.from_dict(doc, name=str(doc.get("name", "example")), source=source)
    elif isinstance(doc, dict) and "stubs" in doc:
        parse_stubs(doc, source)
    elif isinstance(doc, dict) and "repos" in doc:
        _check_pre_commit_config(doc, source)
    else:
        raise AssertionError(
            f"{source}: a yaml block is a cassette (ssemock_cassette:), a scenario (steps:), "
            f"a stub file (stubs:) or a pre-commit config (repos:); this one is none of them"
        )


def _check_pre_commit_config(doc: dict[str, Any], source: str) -> None:
    """A ``.pre-commit-config.yaml`` example: every hook it names is one of ``.pre-commit-hooks.yaml``."""
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    named = {hook["id"] for repo in doc["repos"] for hook in repo["hooks"]}
    assert named and named <= hooks, f"{source}: pre-commit hooks {sorted(named - hooks)} are not in {sorted(hooks)}"


def commands(text: str) -> Iterator[list[str]]:
    """The command lines of a ```sh block, continuation lines joined, comments and blank lines left out."""
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if words:
            yield words


def evaluate_sh(example: Example) -> None:
    """Check each command line of a ```sh block (see the module's docstring)."""
    for line in commands(example.parsed):
        words = list(dropwhile(_ENVIRONMENT.match, line))  # FOO=bar ssemock …: the command is ssemock
        program = _PROGRAMS.get(Path(words[0]).name, Path(words[0]).name) if words else ""
        module = words[2] if program == "python" and words[1:2] == ["-m"] and len(words) > 2 else None
        if program == "ssemock" or module == "ssemock":
            _parse_ssemock(words[1:] if program == "ssemock" else words[3:])
        elif program == "curl":
            _run_curl(example, words)
        elif program == "pip" or module == "pip":
            _check_pip(words)
        elif program == "pytest" or module == "pytest":
            _check_pytest(words[1:] if program == "pytest" else words[3:])
        elif module is not None:
            assert importlib.util.find_spec(module), f"{shlex.join(words)}: no module {module!r}"
        elif program == "sh" and len(words) == 2:
            assert (ROOT / words[1]).is_file(), f"{shlex.join(words)}: no script {words[1]} in the project"
        else:
            raise AssertionError(
                f"{example.path}:{example.line}: a sh block runs ssemock, python -m MODULE, "
                f"curl, pip, pytest or sh SCRIPT, not {shlex.join(words)!r}"
            )


def _parse_ssemock(argv: list[str]) -> None:
    from ssemock.cli import _command, build_parser

    try:
        build_parser(_command(argv)).parse_args(argv)
    except SystemExit as exc:
        if exc.code:  # --help and --version exit 0
            raise AssertionError(f"ssemock {shlex.join(argv)}: the parser refuses it") from None


def _run_curl(example: Example, words: list[str]) -> None:
    server = example.namespace.get("_docs_server")
    if server is None:  # one server per page, stopped by _teardown
        from ssemock import MockServer

        stack = example.namespace["_docs_servers"] = ExitStack()
        server = example.namespace["_docs_server"] = stack.enter_context(MockServer(timing_scale=0))
    argv = [_URL.sub(server.url, word) for word in words]
    done = subprocess.run(
        [*argv, "--max-time", "20", "-sS", "-o", "/dev/null", "-w", "%{http_code}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, f"{shlex.join(words)}: curl failed: {done.stderr}"


def _check_pip(words: list[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    for word in words:
        if word.startswith(("ssemock[", "'ssemock[", ".[")) or ("[" in word and "ssemock" in word):
            named = word[word.index("[") + 1 : word.index("]")].split(",")
            unknown = [name for name in named if name not in extras]
            assert not unknown, f"{shlex.join(words)}: no extra {unknown} in pyproject.toml ({sorted(extras)})"


def _check_pytest(argv: list[str]) -> None:
    options = [word.split("=")[0] for word in argv if word.startswith("-")]
    if options:
        known = subprocess.run(
            [sys.executable, "-m", "pytest", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=120
        ).stdout
        unknown = [option for option in options if option not in known]
        assert not unknown, f"pytest {shlex.join(argv)}: pytest knows no {unknown}"


def refuse_unchecked(example: Example) -> None:
    raise AssertionError(
        f"{example.path}:{example.line}: a fenced block's info string is one of {CHECKED}, "
        f"so that the test suite checks it"
    )


class _Unchecked:
    """Yields every fenced block whose info string is not one of :data:`CHECKED` (an empty one included)."""

    def __call__(self, document: Document) -> Iterator[Region]:
        for region in FENCES(document):
            if region.lexemes["info"].strip() not in CHECKED:
                region.parsed = region.lexemes["info"]
                region.evaluator = refuse_unchecked
                yield region


def _teardown(namespace: dict[str, Any]) -> None:
    stack = namespace.get("_docs_servers")
    if stack is not None:
        stack.close()


def page_blocks(page: str, language: str) -> list[str]:
    """The sources of the ``language`` fenced blocks of ``page`` (a path from the project's root, e.g.
    ``docs/how-to/stubs.md``), in order, as Sybil's lexer reads them: for tests that check what an
    example promises beyond running (the bytes a step sends, say)."""
    document = Document((ROOT / page).read_text(encoding="utf-8"), str(ROOT / page))
    return [str(region.lexemes["source"]) for region in FENCES(document) if region.lexemes["info"].strip() == language]


def sybil() -> Sybil:
    """The Sybil that collects README.md and docs/**/*.md."""
    return Sybil(
        parsers=[
            PythonCodeBlockParser(),
            CodeBlockParser(language="yaml", evaluator=evaluate_yaml),
            CodeBlockParser(language="sh", evaluator=evaluate_sh),
            _Unchecked(),
        ],
        patterns=["README.md", "docs/**/*.md"],
        path=str(ROOT),
        teardown=_teardown,
    )
