"""The README's core promises: CI runs its test command as written, and what the docs say of the bundled files.

The code blocks of README.md and docs/ run through Sybil (tests/docs_examples.py)."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

from .docs_examples import page_blocks

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command_as_written() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    lines = [line.strip() for block in page_blocks("README.md", "sh") for line in block.splitlines()]
    [test_command] = [line for line in lines if line.endswith("-m pytest")]
    assert test_command in ci


def test_the_readme_is_one_screen_of_short_sections() -> None:
    """Issue 23: at most 150 lines, no section over 40; the rest is in docs/, which the README links."""
    lines = README.splitlines()
    assert len(lines) <= 150
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")] + [len(lines)]
    longest = max(pairwise(starts), key=lambda span: span[1] - span[0])
    assert longest[1] - longest[0] <= 40, lines[longest[0]]
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert "docs/how-to/record-production-prompts.md" in links  # one click from the README to recording
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_docs_name_the_mcp_recording_s_protocol_version() -> None:
    """The version the docs' home page says MCP clients must accept is the one the bundled recording's server answered,
    and the installed ``mcp`` SDK negotiates it (``tests/test_resume.py`` runs that client on the recording)."""
    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

    cassette = collect_cassettes(None)["mcp-deepwiki-ping-comments-crlf"]
    answers = [json.loads(e.data) for i in cassette.interactions for e in decode(i.response.body)
               if isinstance(e, Event) and e.data.startswith("{")]
    versions = {a["result"]["protocolVersion"] for a in answers if "protocolVersion" in a.get("result", {})}
    assert versions == {"2025-11-25"}
    home = " ".join((ROOT / "docs" / "index.md").read_text(encoding="utf-8").split())
    said = re.search(r"MCP recording's `initialize` answer is protocol version `([^`]+)`", home)
    assert said is not None and {said.group(1)} == versions
    assert said.group(1) in HANDSHAKE_PROTOCOL_VERSIONS
