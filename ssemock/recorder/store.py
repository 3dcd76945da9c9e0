"""Where recorded interactions live until their cassette file has them.

Memory stays flat however long a stream is: each interaction's chunks go to a
:class:`~.spool.Spool` (in memory up to 1 MiB, then an unnamed temporary file that
disappears with the process), and the cassette file is written by streaming the
spools into YAML (:mod:`.writer`). Only request/response metadata stays in memory,
and a recorded interaction leaves memory once it is on disk.

A :class:`CassetteStore` is one cassette: the interactions it had on disk when first
used (``entries``, which may be replayed) plus the ones recorded since. Each finished
interaction is **appended** to the file and fsynced before :meth:`CassetteStore.append`
returns (the recorder sends the client its last byte only then); appends are made by one
writer task per cassette, which writes everything that finished meanwhile in one go
(one fsync), so concurrent recordings are all kept. A recorder killed at any moment
leaves every appended interaction complete, and at most one torn one after them, marked
and ignored by the loader and cut off when the cassette is next opened for recording.
A new cassette is created atomically with its first interactions; a file that cannot be
appended to (hand-written, ``interactions: []``) is rewritten once, atomically.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cassette import Cassette, Request, loads
from ..cassette.append import appendable, locked, remove_stale_temporaries, torn_start
from ..cassette.write import match_doc
from ..cassette.yamltext import read_text
from ..errors import RecorderConfigError, RecorderError
from ..limits import MAX_CASSETTE_FILE
from ..redact import Filter
from .spool import Entry, Spool
from .writer import append_entries, write_cassette

__all__ = ["CassetteStore", "cassette_name_for", "check_cassette_name"]

_PART_MAX = 200  # "<part>.yaml" and its temporary file's name stay under the usual 255-byte limit
_NAME_MAX = 1000
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._\-]*(/[A-Za-z0-9_][A-Za-z0-9._\-]*)*$")


@dataclass
class _Pending:
    entry: Entry
    done: asyncio.Future[None]


@dataclass
class CassetteStore:
    """One cassette being recorded: its loaded entries, file and single writer task.

    Attributes:
        name: the cassette name (relative path without ``.yaml``).
        path: the file.
        existed: the file existed when the store was opened.
        entries: the interactions loaded from the file, in order (they may be replayed).
        played: indexes of loaded entries already replayed.
        provenance: written into the head of a new file (``recorded_by``, ``target``,
            ``recorded_at``; an existing file keeps its own ``recorded_at``).
        ignore_body: the body paths the file's ``match:`` ignores (kept when the file is written again).
        dropped_body: the body paths dropped from the stored request bodies: the file's and this
            recorder's (``--drop-body-field``), written in its ``match:``.
        recorded: interactions appended to the file since the store was opened.
        repaired: bytes of a torn last interaction cut off the file when it was opened
            (a recorder was killed while appending it), 0 when none.
    """

    name: str
    path: Path
    existed: bool = False
    entries: list[Entry] = field(default_factory=list)
    played: dict[tuple[str, int], int] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    ignore_body: tuple[str, ...] = ()
    dropped_body: tuple[str, ...] = ()
    recorded: int = 0
    repaired: int = 0
    _on_disk: bool = False
    _appendable: bool = False
    _queue: list[_Pending] = field(default_factory=list)
    _failed: list[Entry] = field(default_factory=list)
    _writer: asyncio.Task[None] | None = None

    @classmethod
    def open(
        cls, directory: Path, name: str, provenance: dict[str, Any], dropped_body: tuple[str, ...] = (),
    ) -> CassetteStore:
        """Open cassette ``name`` under ``directory`` (blocking).

        Loads the file when it exists, after cutting off a torn last interaction (see
        :attr:`repaired`); removes stale temporary files of this cassette. ``dropped_body``: the body
        paths this recorder drops; an existing file that does not list them all yet is written again
        whole at the next recording, its ``match:`` saying so (its earlier interactions are kept as
        they are; matching ignores those paths in all of them).

        Raises:
            CassetteError: the existing file is malformed (it is left untouched).
            OSError: the existing file cannot be read or repaired.
        """
        path = directory / f"{name}.yaml"
        store = cls(name=name, path=path, provenance=dict(provenance), dropped_body=dropped_body)
        remove_stale_temporaries(path.parent, pattern=f".{path.name}.*.tmp", recursive=False)
        sizes: list[int] = []  # the file's size, then where its torn tail starts

        def keep(data: bytes) -> int:
            sizes.extend((len(data), torn_start(data)))
            return sizes[1]

        try:
            text = read_text(path, str(path), limit=MAX_CASSETTE_FILE, keep=keep)
        except FileNotFoundError:
            return store
        cassette = loads(text, name=name, source=str(path))  # raises before anything is changed
        size, cut = sizes
        if cut < size:
            store._cut(cut)
            store.repaired = size - cut
        store.existed = store._on_disk = True
        store.ignore_body = cassette.ignore_body
        store.dropped_body = tuple(dict.fromkeys((*cassette.dropped_body, *dropped_body)))
        store._appendable = appendable(text) and set(dropped_body) <= set(cassette.dropped_body)
        store.provenance = {**cassette.provenance, **provenance}
        if "recorded_at" in cassette.provenance:  # it dates the oldest recordings, which stay in the file
            store.provenance["recorded_at"] = cassette.provenance["recorded_at"]
        for inter in cassette.interactions:
            spool = Spool()
            for chunk in inter.response.chunks:
                spool.add(chunk.t, chunk.data)
            inter.response.chunks = []
            store.entries.append(Entry(inter.request, inter.response, spool, loaded=True))
        return store

    def _cut(self, size: int) -> None:
        fd = os.open(self.path, os.O_WRONLY)
        try:
            with locked(fd):
                os.ftruncate(fd, size)
                os.fsync(fd)
        finally:
            os.close(fd)

    def cassette(self) -> tuple[Cassette, list[int]]:
        """A chunk-less :class:`Cassette` of the loaded entries for matching, and the entry index of each."""
        indexes = list(range(len(self.entries)))
        inters = [self.entries[i].interaction(with_chunks=False) for i in indexes]
        return Cassette(self.name, inters, self.provenance, self.path, ignore_body=self.ignore_body,
                        dropped_body=self.dropped_body), indexes

    async def append(self, entry: Entry) -> None:
        """Append a recorded interaction to the file; returns once it is written and fsynced.

        Interactions appended meanwhile by other requests are written in the same go.
        Cancelling the caller does not cancel the write.

        Raises:
            RecorderError: the file could not be written; the interaction is kept and
                tried again by :meth:`flush`.
        """
        await asyncio.shield(self.submit(entry))

    def submit(self, entry: Entry) -> asyncio.Future[None]:
        """Queue a recorded interaction for writing and return at once (see :meth:`append`).

        Returns:
            A future done once it is on disk; a failure is also kept for :meth:`flush`.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        done.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved: flush() reports it
        self._queue.append(_Pending(entry, done))
        if self._writer is None or self._writer.done():
            self._writer = loop.create_task(self._write_loop())
        return done

    async def _write_loop(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            entries = [p.entry for p in batch]
            try:
                await asyncio.to_thread(self._write, entries)
            except Exception as exc:  # any failure: the callers get it, named
                error = RecorderError(f"cannot write cassette {self.path}: {exc}")
                self._failed.extend(entries)
                for pending in batch:
                    pending.done.set_exception(error)
                continue
            self.recorded += len(entries)
            for pending in batch:
                pending.entry.spool.close()  # on disk now; recorded entries are never replayed
                pending.done.set_result(None)

    def _write(self, entries: list[Entry]) -> None:
        """Put ``entries`` into the file (blocking): append, create, or convert once."""
        if self._appendable:
            try:
                append_entries(self.path, entries)
                return
            except FileNotFoundError:  # removed while recording: start a new file
                self._on_disk = self._appendable = False
        if not self._on_disk:
            try:
                write_cassette(self.path, self.name, self.provenance, entries, exclusive=True, match=self._match())
            except FileExistsError:
                raise RecorderError(f"{self.path} appeared while recording (another recorder?); "
                                    "not overwritten") from None
        else:
            write_cassette(self.path, self.name, self.provenance, [*self.entries, *entries], match=self._match())
        self._on_disk = self._appendable = True

    def _match(self) -> dict[str, Any]:
        """The file's ``match:`` mapping."""
        return match_doc(self.ignore_body, self.dropped_body)

    async def flush(self) -> None:
        """Wait until every appended interaction is on disk, trying failed ones once more.

        Raises:
            RecorderError: some interactions could not be written (names the file and how many).
        """
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)
        if not self._failed:
            return
        failed, self._failed = self._failed, []
        results = await asyncio.gather(*(self.append(e) for e in failed), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise RecorderError(f"{len(errors)} interaction(s) not written: {errors[0]}")

    def close(self) -> None:
        """Free the spools."""
        for entry in self.entries:
            entry.spool.close()
        for entry in self._failed:
            entry.spool.close()


def check_cassette_name(name: str) -> str:
    """``name`` if it is a safe relative cassette name (``a-z0-9._-``, ``/`` for folders).

    Raises:
        RecorderConfigError: absolute, ``..``, an empty part (``a//b``), other characters, ending in
            ``.yaml``/``.yml`` (the file gets that suffix), or too long (a part over 200 characters,
            or over 1000 in all: file names have limits). The message says which.
    """
    if not _NAME.match(name) or any(part in ("..", ".") for part in name.split("/")):
        raise RecorderConfigError(
            f"cassette name {name[:80]!r} must be a relative name of letters, digits, '.', '_', '-' and '/'"
            f" ({_name_problem(name)})"
        )
    if name.endswith((".yaml", ".yml")):
        raise RecorderConfigError(f"cassette name {name[:80]!r} must not end in .yaml or .yml: the file is "
                                  f"NAME.yaml, so use {name.rsplit('.', 1)[0][:80]!r}")
    if len(name) > _NAME_MAX or any(len(part) > _PART_MAX for part in name.split("/")):
        raise RecorderConfigError(
            f"cassette name {name[:40]!r}... is too long: at most {_PART_MAX} characters between '/', "
            f"{_NAME_MAX} in all"
        )
    return name


def _name_problem(name: str) -> str:
    """What makes ``name`` fail :data:`_NAME` or the ``.``/``..`` rule, in a few words."""
    if not name:
        return "it is empty"
    parts = name.split("/")
    for index, part in enumerate(parts):
        if not part:
            return f"part {index + 1} of {len(parts)} between '/' is empty"
        if part in (".", ".."):
            return f"part {part!r} is not allowed"
        if not re.match(r"[A-Za-z0-9_]", part):
            return f"part {part[:40]!r} must start with a letter, digit or '_'"
    bad = sorted({c for c in name if not re.match(r"[A-Za-z0-9._\-/]", c)})
    return "it holds " + ", ".join(repr(c) for c in bad[:5])


def cassette_name_for(request: Request, filter: Filter) -> str:  # noqa: A002 - VCR's word
    """The cassette name of a request by fingerprint: ``<method>-<path words>-<12 hex digits>``.

    Built from the scrubbed request, as the cassette holds it (``request``: path, query and
    body with secrets removed; a body the cassette keeps by digest, over ``max_body_size``,
    is the one it digests), so that requests differing only in a secret get one name and
    no name is a hash of a secret; no key-shaped string in any letter case reaches the
    name. The digest covers method, path, the non-secret query and the body: JSON bodies by
    value (key order and spacing do not matter) up to
    :data:`~ssemock.limits.MAX_JSON_PARSE` (1 MiB) and
    :data:`~ssemock.limits.MAX_JSON_DEPTH` (128 levels); larger, deeper or other bodies
    by their bytes (never parsed: the event loop is not held).
    """
    path = filter.name(request.path)
    digest = hashlib.sha256()
    digest.update(f"{request.method} {path}\n".encode())
    for k, v in sorted(p for p in request.query if not filter.is_secret_name(p[0], filter.secret_query_params)):
        digest.update(f"{k}={filter.text(v)[0]}\n".encode())
    body = request.body or b""
    value = request.json_view()  # bounded: None for bodies too large, too deep or not JSON
    if value is not None:
        body = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    digest.update(body)
    words = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")[:60] or "root"
    return f"{request.method.lower()}-{filter.name(words)}-{digest.hexdigest()[:12]}"
