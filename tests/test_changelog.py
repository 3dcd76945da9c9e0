"""CHANGELOG.md keeps the form of Keep a Changelog 1.1.0 (https://keepachangelog.com/en/1.1.0/).

A first heading `# Changelog`, a release section per version (`## [Unreleased]` first, then
`## [X.Y.Z] - YYYY-MM-DD`), under each only the six kinds of change the format names, in its
order, and each change one line `- …` of at most 200 characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

CHANGELOG = Path(__file__).parent.parent / "CHANGELOG.md"

# The format's kinds of change, in the order its example lists them.
KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
RELEASE = re.compile(r"\[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?")
MAX_ENTRY = 200


@dataclass
class Release:
    """One `## ` section: its title, the prose before its first kind, its kinds' entries."""

    title: str
    line: int
    prose: list[str] = field(default_factory=list)
    kinds: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


def releases(lines: list[str]) -> list[Release]:
    """The `## ` sections after the header; raises AssertionError on a line out of form."""
    found: list[Release] = []
    kind: str | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            found.append(Release(line[3:], number))
            kind = None
        elif line.startswith("### "):
            assert found, f"line {number}: {line!r} before any release section"
            kind = line[4:]
            assert kind in KINDS, f"line {number}: {kind!r} is not one of {KINDS}"
            assert kind not in found[-1].kinds, f"line {number}: a second {kind!r}"
            found[-1].kinds[kind] = []
        elif line.startswith("#"):
            assert number == 1, f"line {number}: heading {line!r} is not ## or ###"
        elif found and kind is not None and line.strip():
            assert line.startswith("- "), f"line {number}: not one line '- …': {line!r}"
            found[-1].kinds[kind].append((number, line))
        elif found and line.strip():
            found[-1].prose.append(line)
    return found


def test_the_header_names_the_format_and_semantic_versioning() -> None:
    lines = CHANGELOG.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# Changelog"
    header = "\n".join(lines[: next(i for i, s in enumerate(lines) if s.startswith("## "))])
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in header
    assert "[Semantic Versioning](https://semver.org/spec/v2.0.0.html)" in header


def test_releases_start_with_unreleased_and_hold_only_the_kinds_of_change() -> None:
    found = releases(CHANGELOG.read_text(encoding="utf-8").splitlines())
    assert found, "no ## release section"
    assert found[0].title == "[Unreleased]"
    for release in found:
        assert RELEASE.fullmatch(release.title), f"line {release.line}: {release.title!r}"
        assert release.kinds, f"line {release.line}: {release.title} has no ### Added/…"
        order = [kind for kind in KINDS if kind in release.kinds]
        assert list(release.kinds) == order, f"{release.title}: kinds out of order"
        for kind, entries in release.kinds.items():
            assert entries, f"{release.title}: ### {kind} is empty"
        assert len(release.prose) <= 2, f"{release.title}: prose belongs in the entries"


def test_every_entry_is_one_short_line() -> None:
    found = releases(CHANGELOG.read_text(encoding="utf-8").splitlines())
    entries = [entry for release in found for kind in release.kinds.values() for entry in kind]
    assert entries
    for number, line in entries:
        assert len(line) <= MAX_ENTRY, f"line {number}: {len(line)} characters"
        assert len(line) > len("- ") + 10, f"line {number}: says nothing"
    texts = [line for _, line in entries]
    assert len(set(texts)) == len(texts), "an entry is listed twice"
