"""Writing recorded interactions into cassette files, chunk by chunk (memory stays flat).

The text is format-v1 YAML, as :func:`ssemock.cassette.dumps` writes it, with each
interaction between the marks of :mod:`ssemock.cassette.append`:

* :func:`append_entries` adds interactions to the end of an existing file (``flock``
  held, one fsync; a failed write is truncated away), never rewriting it;
* :func:`write_cassette` writes a whole file atomically (temporary file, fsync, rename,
  or link when the file must not exist yet): a new cassette, or the one-time conversion
  of a file that cannot be appended to.

Each piece of request/response metadata is scanned once more for key-shaped strings just
before it is written (:func:`ssemock.redact.scrub_text`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from ..cassette import FORMAT_KEY, FORMAT_VERSION, MODELINE, Chunk
from ..cassette.append import BEGIN_MARK, DOCUMENT_END, atomic_file, end_mark, locked
from ..cassette.write import chunk_doc, dump_yaml, interaction_doc
from ..redact import scrub_text
from .spool import Entry

__all__ = ["append_entries", "write_cassette"]

_INDENT = "    "  # the response mapping's keys sit at column 4 under "- request:" items
_BUFFER = 1 << 16
_LINE_START = re.compile(r"^(?=[^\n])", re.M)
_BLOCK_INDENT = _INDENT + "    "  # a chunk's literal block under "    - t:" / "      text: |"
# Characters a literal block carries unchanged (YAML printable, minus tab, CR, NEL, LS, PS, BOM).
_LITERAL_OK = re.compile("[\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*")
# One YAML dump per group of chunks (half the cost of one per chunk), memory bounded.
_CHUNKS_PER_DUMP = 256
_BYTES_PER_DUMP = 1 << 20


def write_cassette(
    path: Path, name: str, provenance: dict[str, Any], entries: Iterable[Entry], *, exclusive: bool = False,
    match: dict[str, Any] | None = None,
) -> int:
    """Write a whole cassette atomically from store entries (blocking; run it in a thread).

    Args:
        path: the cassette file.
        name: written as ``name:``.
        provenance: written as ``provenance:`` (when not empty).
        entries: the interactions, each between the append marks.
        exclusive: fail instead of replacing an existing file.
        match: written as ``match:`` (when not empty): the body paths ignored and dropped
            (:func:`ssemock.cassette.write.match_doc`).

    Returns:
        The number of key-shaped strings scrubbed by the last scan (normally 0:
        everything was scrubbed when recorded).

    Raises:
        FileExistsError: ``exclusive`` and the file exists (it is left untouched).
        OSError: the directory or the temporary file cannot be written (the previous
            cassette file, if any, is left in place).
    """
    hits = 0
    with atomic_file(path, exclusive=exclusive) as out:
        out.write(MODELINE + "\n")
        head: dict[str, Any] = {FORMAT_KEY: FORMAT_VERSION, "name": name}
        if provenance:
            head["provenance"] = provenance
        if match:
            head["match"] = match
        hits += _put(out, _dump(head))
        items = list(entries)
        out.write("interactions:\n" if items else "interactions: []\n")
        for entry in items:
            hits += _write_entry(out, entry)
    return hits


def append_entries(path: Path, entries: Iterable[Entry]) -> int:
    """Append interactions to the end of an existing cassette file, then fsync it (blocking).

    The file must end with its ``interactions:`` items at column 0
    (:func:`ssemock.cassette.append.appendable`). An exclusive ``flock`` is held while
    writing, so two processes never interleave their items. A final document end marker
    (``...``) is removed first. If writing fails, the file is cut back to its previous length.

    Returns:
        The number of key-shaped strings scrubbed by the last scan.

    Raises:
        FileNotFoundError: the file does not exist.
        OSError: it cannot be written (it is left as it was when possible).
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        with locked(fd):
            size = os.fstat(fd).st_size
            end = DOCUMENT_END.encode()
            if size >= len(end) and os.pread(fd, len(end), size - len(end)) == end:
                size -= len(end) - 1  # keep its line break
                os.ftruncate(fd, size)
            try:
                with os.fdopen(os.dup(fd), "a", encoding="utf-8", newline="", buffering=_BUFFER) as out:
                    hits = sum(_write_entry(out, entry) for entry in entries)
                    out.flush()
                    os.fsync(out.fileno())
            except BaseException:
                os.ftruncate(fd, size)
                raise
    finally:
        os.close(fd)
    return hits


def _write_entry(out: TextIO, entry: Entry) -> int:
    inter = entry.interaction(with_chunks=False)
    doc = interaction_doc(inter)
    response = doc["response"]
    end = response.pop("end")
    response.pop("chunks")
    out.write(BEGIN_MARK + "\n")
    hits = _put(out, _dump([doc]))
    if entry.spool.count == 0:
        out.write(f"{_INDENT}chunks: []\n")
    else:
        out.write(f"{_INDENT}chunks:\n")
        docs: list[dict[str, Any]] = []
        size = 0
        for chunk in entry.spool.chunks():
            if entry.observe is not None:
                entry.observe(chunk.data)
            literal = _literal_chunk(chunk, entry.response.timed)
            if literal is not None:
                if docs:
                    out.write(_indent(_dump(docs)))
                    docs.clear()
                    size = 0
                out.write(literal)
                continue
            docs.append(chunk_doc(chunk, entry.response.timed))
            size += len(chunk.data)
            if len(docs) == _CHUNKS_PER_DUMP or size >= _BYTES_PER_DUMP:
                out.write(_indent(_dump(docs)))
                docs.clear()
                size = 0
        if docs:
            out.write(_indent(_dump(docs)))
    out.write(_indent(_dump({"end": end})))
    return hits + _put(out, end_mark(entry.filtered))


def _literal_chunk(chunk: Chunk, timed: bool) -> str | None:
    """The YAML item of a chunk that is UTF-8 text with a line break, as a literal block,
    written without PyYAML (most SSE reads; ~50x faster); None for any other chunk.

    Only text a literal block carries unchanged: printable characters, no tab, CR, NEL,
    LS, PS or BOM, and no leading space or line break (which would need an indentation
    indicator). The chomping indicator keeps the final line breaks exactly.
    """
    try:
        text = chunk.data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\n" not in text or text[0] in " \n" or not _LITERAL_OK.fullmatch(text):
        return None
    body = text.rstrip("\n")
    breaks = len(text) - len(body)
    chomp = "-" if breaks == 0 else "" if breaks == 1 else "+"
    if timed:
        t = repr(chunk.t)
        if "." not in t or "e" in t or "n" in t:  # 1e-05, inf: left to PyYAML's spelling
            return None
        head = f"{_INDENT}- t: {t}\n{_INDENT}  text: |{chomp}\n"
    else:
        head = f"{_INDENT}- text: |{chomp}\n"
    content = _LINE_START.sub(_BLOCK_INDENT, body) + "\n" * max(breaks, 1)
    return head + content


def _put(out: TextIO, text: str) -> int:
    clean, hits = scrub_text(text)
    out.write(clean)
    return hits


def _dump(value: Any) -> str:
    text = dump_yaml(value)
    # A document ending in a "|+" block gets an explicit end marker; the file goes on.
    return text[:-4] if text.endswith("\n...\n") else text


def _indent(text: str) -> str:
    # Empty lines stay empty: inside a block scalar they remain (kept) empty lines. Only LF
    # ends a line in the emitted text (other breaks are escaped or kept in blocks).
    return _LINE_START.sub(_INDENT, text)
