"""Import one-JSON-payload-per-line chunk files (Vercel AI SDK ``*.chunks.txt`` fixtures).

Each non-empty line becomes ``data: <line>\\n\\n``, bytes unchanged. The files
keep no SSE framing, so two reconstructions are offered, both recorded in the
provenance: ``event_from_type`` writes ``event: <payload.type>`` before each
payload (the OpenAI Responses API names every event after its ``type``), and
``done`` appends ``data: [DONE]`` (OpenAI Chat Completions style).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..cassette import Cassette, Interaction, Request
from ..errors import ImportFormatError
from . import untimed_response
from .raw import SSE_HEADERS, read_bytes, stem

__all__ = ["import_chunks"]


def import_chunks(
    path: str | Path,
    *,
    method: str = "POST",
    request_path: str,
    done: bool = False,
    event_from_type: bool = False,
    name: str | None = None,
    provenance: dict[str, Any] | None = None,
) -> Cassette:
    """Convert a chunks file into a one-interaction cassette (request body: any).

    Raises:
        ImportFormatError: a line is not JSON (names the line), or the file is unreadable.
    """
    p = Path(path)
    if not request_path.startswith("/"):
        raise ImportFormatError(p, "--path", "a URL path starting with /", request_path)
    blocks = []
    for number, line in enumerate(read_bytes(p).split(b"\n"), start=1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            payload = json.loads(line)
        except ValueError:
            raise ImportFormatError(p, f"line {number}", "one JSON value per line", line[:60]) from None
        head = b""
        if event_from_type and isinstance(payload, dict) and isinstance(payload.get("type"), str):
            head = b"event: " + payload["type"].encode() + b"\n"
        blocks.append(head + b"data: " + line + b"\n\n")
    if done:
        blocks.append(b"data: [DONE]\n\n")
    notes = ["SSE framing rebuilt: each line wrapped as 'data: <line>' + blank line"]
    if event_from_type:
        notes.append("'event:' lines rebuilt from each payload's type field")
    if done:
        notes.append("'data: [DONE]' appended")
    meta: dict[str, Any] = {
        "imported_from": p.name, "importer": "chunks", "timing": "none (chunks files keep no timing)",
        "reconstruction": "; ".join(notes),
    }
    meta.update(provenance or {})
    response = untimed_response(200, None, list(SSE_HEADERS), b"".join(blocks))
    return Cassette(name or stem(p), [Interaction(Request(method.upper(), request_path), response)], meta)
