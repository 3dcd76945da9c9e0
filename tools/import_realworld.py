"""Rebuild the bundled cassettes from the real recorded streams and their provenance.

Usage: python tools/import_realworld.py SOURCE_DIR [-o cassettes] [--force]

SOURCE_DIR holds the third-party recordings and their SOURCES.md. Every file is
imported with ssemock's own importers; its provenance (repository, path, commit,
licence, what the file shows) is written into the cassette.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from ssemock.cassette import Cassette
from ssemock.errors import SSEMockError
from ssemock.importers import save_imported
from ssemock.importers.registry import importer

# file -> (registered importer, its options by name); VCR files carry their own request.
PLAN: dict[str, tuple[str, dict[str, Any]]] = {
    "openai-chat-tool-calls-usage.vcr.yaml": ("vcr", {}),
    "openai-chat-finish-length-usage.sse.bin": ("raw", {"request_path": "/v1/chat/completions"}),
    "openai-responses-function-call.vcr.yaml": ("vcr", {}),
    "openai-responses-error-insufficient-quota.chunks.txt": (
        "chunks", {"request_path": "/v1/responses", "event_from_type": True},
    ),
    "anthropic-messages-tool-use-gzip.vcr.yaml": ("vcr", {}),
    "anthropic-messages-thinking.vcr.yaml": ("vcr", {}),
    "anthropic-messages-max-tokens-partial-json.sse.txt": ("raw", {"request_path": "/v1/messages"}),
    "gemini-streamgeneratecontent-crlf.vcr.yaml": ("vcr", {}),
    "gemini-streamgeneratecontent-tool-call-thought-signature.vcr.yaml": ("vcr", {}),
    "gemini-vertex-error-mid-stream.sse.txt": (
        "raw",
        {"request_path": "/v1/projects/ssemock/locations/us-central1/publishers/google/models/"
         "gemini-2.0-flash:streamGenerateContent"},
    ),
    "openrouter-chat-keepalive-midstream-error.vcr.yaml": ("vcr", {}),
    "openrouter-responses-empty-comment-tool-calls.vcr.yaml": ("vcr", {}),
    "alibaba-qwen-chat-emoji-split.chunks.txt": (
        "chunks", {"request_path": "/compatible-mode/v1/chat/completions", "done": True},
    ),
    "mcp-deepwiki-ping-comments-crlf.vcr.yaml": ("vcr", {}),
}

_SECTION = re.compile(r"^### \d+\. `([^`]+)` — (.+)$", re.M)


def provenance_from_sources(text: str) -> dict[str, dict[str, Any]]:
    """Per file: title, source repository and path, commits and licence, as SOURCES.md states them."""
    found: dict[str, dict[str, Any]] = {}
    matches = list(_SECTION.finditer(text))
    for m, nxt in zip(matches, [*matches[1:], None]):
        body = text[m.end() : nxt.start() if nxt else len(text)]
        entry: dict[str, Any] = {"title": m.group(2).strip()}
        if src := re.search(r"Source: `([^`]+)`, `([^`]+)`", body):
            entry["source_repository"] = src.group(1)
            entry["source_path"] = src.group(2)
        if snap := re.search(r"Snapshot commit `([0-9a-f]{40})`", body):
            entry["source_commit"] = snap.group(1)
        if changed := re.search(r"last changed in `([0-9a-f]{40})`", body):
            entry["file_last_changed"] = changed.group(1)
        if lic := re.search(r"Licence: ([^\s.]+(?:\.\d+)?)", body):
            entry["licence"] = lic.group(1)
        if red := re.search(r"\* Redacted: (.+)", body):
            entry["redacted_before_import"] = red.group(1).strip()
        found[m.group(1)] = entry
    return found


def import_one(source_dir: Path, file: str, provenance: dict[str, Any]) -> Cassette:
    """Import one real recording with the registered importer the plan names."""
    kind, options = PLAN[file]
    meta = {"recorded_by": "third party (see source_repository)", **provenance}
    return importer(kind).convert(source_dir / file, provenance=meta, **options)


def import_all(source_dir: Path) -> list[Cassette]:
    """Every planned file of ``source_dir`` as a cassette, in plan order."""
    sources = provenance_from_sources((source_dir / "SOURCES.md").read_text(encoding="utf-8"))
    return [import_one(source_dir, file, sources.get(file, {})) for file in PLAN]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("cassettes"))
    parser.add_argument("--force", action="store_true", help="overwrite cassettes that exist (the bundled ones)")
    args = parser.parse_args(argv)
    cassettes = import_all(args.source_dir)
    try:
        targets = save_imported([args.source_dir / f for f in PLAN], cassettes, args.output, force=args.force)
    except SSEMockError as exc:
        print(f"import_realworld: error: {exc}", file=sys.stderr)
        return 2
    for cassette, target in zip(cassettes, targets):
        print(f"{target}: {len(cassette.interactions)} interaction(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
