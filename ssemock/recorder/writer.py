"""Writing a cassette file chunk by chunk, so memory does not grow with a stream.

The text is the same YAML that :meth:`ssemock.Cassette.dumps` produces (format v1,
loaded by :meth:`ssemock.Cassette.load`), written piece by piece to a temporary
file in the cassette's directory, fsynced, then renamed over the cassette
(atomic on POSIX). Each piece of request/response metadata is scanned once more
for key-shaped strings just before it is written (:func:`ssemock.redact.scrub_text`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..cassette import FORMAT_KEY, FORMAT_VERSION
from ..cassette.write import chunk_doc, dump_yaml, interaction_doc
from ..redact import scrub_text

if TYPE_CHECKING:
    from .store import Entry

__all__ = ["write_cassette"]

_INDENT = "    "  # the response mapping's keys sit at column 4 under "- request:" items


def write_cassette(path: Path, name: str, provenance: dict[str, Any], entries: Iterable[Entry]) -> int:
    """Write a cassette atomically from store entries (blocking; run it in a thread).

    Returns:
        The number of key-shaped strings scrubbed by the last scan (normally 0:
        everything was scrubbed when recorded).

    Raises:
        OSError: the directory or the temporary file cannot be written (the previous
            cassette file, if any, is left in place).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    hits = 0
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            head: dict[str, Any] = {FORMAT_KEY: FORMAT_VERSION, "name": name}
            if provenance:
                head["provenance"] = provenance
            hits += _put(out, _dump(head))
            items = list(entries)
            out.write("interactions:\n" if items else "interactions: []\n")
            for entry in items:
                hits += _write_entry(out, entry)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return hits


def _write_entry(out: TextIO, entry: Entry) -> int:
    inter = entry.interaction(with_chunks=False)
    doc = interaction_doc(inter)
    response = doc["response"]
    end = response.pop("end")
    response.pop("chunks")
    hits = _put(out, _dump([doc]))
    if entry.spool.count == 0:
        out.write(f"{_INDENT}chunks: []\n")
    else:
        out.write(f"{_INDENT}chunks:\n")
        for chunk in entry.spool.chunks():
            out.write(_indent(_dump([chunk_doc(chunk, entry.response.timed)])))
    out.write(_indent(_dump({"end": end})))
    return hits


def _put(out: TextIO, text: str) -> int:
    clean, hits = scrub_text(text)
    out.write(clean)
    return hits


def _dump(value: Any) -> str:
    text = dump_yaml(value)
    # A document ending in a "|+" block gets an explicit end marker; the file goes on.
    return text[:-4] if text.endswith("\n...\n") else text


def _indent(text: str) -> str:
    # Empty lines stay empty: inside a block scalar they remain (kept) empty lines.
    return "".join(_INDENT + line if line.strip("\n") else line for line in _lines(text))


def _lines(text: str) -> Iterator[str]:
    # Only LF ends a line in the emitted text (other breaks are escaped or kept in blocks).
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end
