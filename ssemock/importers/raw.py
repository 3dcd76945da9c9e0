"""Import raw response bodies (``.sse.txt``, ``.sse.bin``): the bytes exactly as received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..cassette import Cassette, Interaction, Request
from ..cassette.files import Start, read_file
from ..errors import ImportFormatError
from ..limits import MAX_CASSETTE_FILE
from . import untimed_response

__all__ = ["import_raw", "stem"]

SSE_HEADERS = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]


def stem(p: Path) -> str:
    """The file name without its recording suffixes (``x.sse.bin`` → ``x``)."""
    name = p.name
    for suffix in (".sse.txt", ".sse.bin", ".chunks.txt", ".txt", ".bin"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return p.stem


def read_bytes(p: Path, limit: int = MAX_CASSETTE_FILE, *, start: Start | None = None) -> bytes:
    """The bytes of the regular file ``p``, at most ``limit`` bytes (default
    :data:`~ssemock.limits.MAX_CASSETTE_FILE`, 512 MiB); with ``start``, its first bytes checked
    before the rest is read.

    Raises:
        ImportFormatError: missing, not a regular file (a FIFO, ``/dev/zero``), too large, unreadable,
            or not starting as ``start`` expects.
    """
    try:
        return read_file(p, str(p), limit=limit, error=ImportFormatError, start=start)
    except FileNotFoundError as exc:
        raise ImportFormatError(p, "", "a readable file", exc.strerror) from None


def import_raw(
    path: str | Path,
    *,
    method: str = "POST",
    request_path: str,
    name: str | None = None,
    provenance: dict[str, Any] | None = None,
) -> Cassette:
    """One interaction serving the file's bytes unchanged as ``text/event-stream``.

    The request is recorded without a body, so it matches any body sent to
    ``method request_path``.

    Args:
        path: the body file.
        method: HTTP method to answer.
        request_path: URL path to answer (e.g. ``/v1/chat/completions``).
        name: cassette name (default: file name without ``.sse.txt`` / ``.sse.bin``).
        provenance: extra provenance fields.

    Raises:
        ImportFormatError: unreadable file or a path not starting with ``/``.
    """
    p = Path(path)
    if not request_path.startswith("/"):
        raise ImportFormatError(p, "--path", "a URL path starting with /", request_path)
    body = read_bytes(p)
    meta = {"imported_from": p.name, "importer": "raw", "timing": "none (raw body files keep no timing)"}
    meta.update(provenance or {})
    response = untimed_response(200, None, list(SSE_HEADERS), body)
    return Cassette(name or stem(p), [Interaction(Request(method.upper(), request_path), response)], meta)
