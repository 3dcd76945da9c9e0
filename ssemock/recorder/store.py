"""Where recorded interactions live until (and after) their cassette is written.

Memory stays flat however long a stream is: each interaction's chunks go to a
:class:`Spool` (in memory up to 1 MiB, then an unnamed temporary file that
disappears with the process), and the cassette file is written by streaming the
spools into YAML (:mod:`.writer`). Only request/response metadata stays in memory.

A :class:`CassetteStore` is one cassette: the interactions it had on disk when
first used (``loaded``) plus the ones recorded since. Every completed interaction
is appended and the whole file is rewritten atomically (temporary file, fsync,
rename) by a single writer task per cassette, so concurrent recordings are all
kept, writes coalesce, and a recorder killed at any moment leaves the last
complete file in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import struct
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..cassette import Cassette, Chunk, Interaction, Request, Response
from ..errors import RecorderConfigError, RecorderError
from ..redact import Filter
from .writer import write_cassette

__all__ = ["CassetteStore", "Entry", "Spool", "cassette_name_for", "check_cassette_name"]

_RECORD = struct.Struct("<dI")  # t seconds (float64), data length (uint32)
_SPOOL_MEMORY = 1 << 20
_PART_MAX = 200  # "<part>.yaml" and its temporary file's name stay under the usual 255-byte limit
_NAME_MAX = 1000
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._\-]*(/[A-Za-z0-9_][A-Za-z0-9._\-]*)*$")


class Spool:
    """The chunks of one response, ``(t seconds, bytes)`` in order, off the heap past 1 MiB.

    Chunks collect in a memory buffer; each time it passes 1 MiB it is appended to
    an unnamed temporary file in one write (few system calls on the streaming path).
    Safe to read from one thread while another reads (each read holds a lock).
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._file: IO[bytes] | None = None
        self._lock = threading.Lock()
        self.count = 0
        self.size = 0

    def add(self, t: float, data: bytes) -> None:
        """Append a chunk received ``t`` seconds after the request was sent."""
        with self._lock:
            self._buffer += _RECORD.pack(t, len(data))
            self._buffer += data
            if len(self._buffer) >= _SPOOL_MEMORY:
                self._spill()
        self.count += 1
        self.size += len(data)

    def _spill(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._file.seek(0, 2)
        self._file.write(self._buffer)
        self._buffer.clear()

    def chunks(self) -> Iterator[Chunk]:
        """The chunks in order (read back one at a time)."""
        pos = 0
        for _ in range(self.count):
            with self._lock:
                if self._file is not None and self._buffer:
                    self._spill()
                if self._file is None:
                    t, length = _RECORD.unpack_from(self._buffer, pos)
                    data = bytes(self._buffer[pos + _RECORD.size : pos + _RECORD.size + length])
                else:
                    self._file.seek(pos)
                    t, length = _RECORD.unpack(self._file.read(_RECORD.size))
                    data = self._file.read(length)
            pos += _RECORD.size + length
            yield Chunk(t, data)

    def close(self) -> None:
        """Free the memory or temporary file."""
        self._buffer = bytearray()
        if self._file is not None:
            self._file.close()


@dataclass
class Entry:
    """One interaction of a store: metadata in memory, chunks in a spool.

    Attributes:
        request: the redacted request (body possibly by digest).
        response: status, headers, start, end; ``chunks`` empty (they are in ``spool``).
        spool: the response chunks.
        loaded: True when it came from the cassette file on disk (it may be replayed).
    """

    request: Request
    response: Response
    spool: Spool
    loaded: bool = False

    def interaction(self, *, with_chunks: bool) -> Interaction:
        """An :class:`Interaction` (chunks read back from the spool when ``with_chunks``)."""
        r = self.response
        chunks = list(self.spool.chunks()) if with_chunks else []
        return Interaction(self.request, Response(r.status, r.reason, r.headers, chunks, r.start, r.end, r.timed))


@dataclass
class CassetteStore:
    """One cassette being recorded: its entries, file and single writer task.

    Attributes:
        name: the cassette name (relative path without ``.yaml``).
        path: the file.
        existed: the file existed when the store was opened.
        entries: loaded then recorded interactions, in order.
        played: indexes of loaded entries already replayed.
        provenance: written into the file (``recorded_by``, ``target``, ``filtered``).
    """

    name: str
    path: Path
    existed: bool = False
    entries: list[Entry] = field(default_factory=list)
    played: dict[tuple[str, int], int] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    _dirty: bool = False
    _writer: asyncio.Task[None] | None = None
    _error: BaseException | None = None

    @classmethod
    def open(cls, directory: Path, name: str, provenance: dict[str, Any]) -> CassetteStore:
        """Open cassette ``name`` under ``directory`` (loads it when the file exists; blocking).

        Raises:
            CassetteError: the existing file is malformed (it is left untouched).
        """
        path = directory / f"{name}.yaml"
        store = cls(name=name, path=path, provenance=dict(provenance))
        if path.exists():
            cassette = Cassette.load(path, name=name)
            store.existed = True
            store.provenance = {**cassette.provenance, **provenance}
            for inter in cassette.interactions:
                spool = Spool()
                for chunk in inter.response.chunks:
                    spool.add(chunk.t, chunk.data)
                inter.response.chunks = []
                store.entries.append(Entry(inter.request, inter.response, spool, loaded=True))
        return store

    def cassette(self, *, replayable_only: bool) -> tuple[Cassette, list[int]]:
        """A chunk-less :class:`Cassette` for matching, and the entry index of each interaction."""
        indexes = [i for i, e in enumerate(self.entries) if e.loaded or not replayable_only]
        inters = [self.entries[i].interaction(with_chunks=False) for i in indexes]
        return Cassette(self.name, inters, self.provenance, self.path), indexes

    def add(self, entry: Entry, filtered: list[str]) -> None:
        """Append a recorded interaction and schedule a write (returns at once)."""
        self.entries.append(entry)
        if filtered:
            known = self.provenance.setdefault("filtered", [])
            known.extend(f for f in dict.fromkeys(filtered) if f not in known)
        self._dirty = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_loop())

    async def _write_loop(self) -> None:
        while self._dirty:
            self._dirty = False
            snapshot = list(self.entries)
            try:
                await asyncio.to_thread(write_cassette, self.path, self.name, self.provenance, snapshot)
            except Exception as exc:  # kept and raised by flush(); the previous file stays in place
                self._error = RecorderError(f"cannot write cassette {self.path}: {exc}")

    async def flush(self) -> None:
        """Wait until every added interaction is on disk.

        Raises:
            RecorderError: the last write failed (the previous file is left in place).
        """
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def close(self) -> None:
        """Free the spools."""
        for entry in self.entries:
            entry.spool.close()


def check_cassette_name(name: str) -> str:
    """``name`` if it is a safe relative cassette name (``a-z0-9._-``, ``/`` for folders).

    Raises:
        RecorderConfigError: absolute, ``..``, empty, other characters, or too long
            (a part over 200 characters, or over 1000 in all: file names have limits).
    """
    if not _NAME.match(name) or any(part in ("..", ".") for part in name.split("/")):
        raise RecorderConfigError(
            f"cassette name {name!r} must be a relative name of letters, digits, '.', '_', '-' and '/'"
        )
    if len(name) > _NAME_MAX or any(len(part) > _PART_MAX for part in name.split("/")):
        raise RecorderConfigError(
            f"cassette name {name[:40]!r}... is too long: at most {_PART_MAX} characters between '/', "
            f"{_NAME_MAX} in all"
        )
    return name


def cassette_name_for(request: Request, filter: Filter) -> str:  # noqa: A002 - VCR's word
    """The cassette name of a request by fingerprint: ``<method>-<path words>-<12 hex digits>``.

    Built from the scrubbed request (no key-shaped string in any letter case): the
    digest covers method, path, the non-secret query and the body (JSON bodies by
    value, so key order and spacing do not matter).
    """
    path = filter.name(request.path)
    digest = hashlib.sha256()
    digest.update(f"{request.method} {path}\n".encode())
    for k, v in sorted(p for p in request.query if not filter.is_secret_name(p[0], filter.secret_query_params)):
        digest.update(f"{k}={filter.text(v)[0]}\n".encode())
    body = request.body or b""
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        body = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    digest.update(body)
    words = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")[:60] or "root"
    return f"{request.method.lower()}-{filter.name(words)}-{digest.hexdigest()[:12]}"
