"""Loading and saving cassettes: a file, YAML text, a directory; the cache of parsed cassettes behind the loader.

The data model (:mod:`.model`) imports none of this. Parsing and validation are :mod:`.read`, YAML
writing is :mod:`.write`, the cache is :mod:`.cache`; this module joins them::

    cassette = load("cassettes/chat.yaml")      # or loads(text), load_cassettes(directory)
    cassette.interactions[0].response.status = 500
    save(cassette, "cassettes/chat-500.yaml")   # dumps(cassette): the YAML text
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import CassetteError, CassetteNotFoundError
from ..limits import MAX_CASSETTE_FILE, claim_name
from . import cache
from .files import YAML_START, read_file
from .model import MODELINE, Cassette
from .read import interaction_builder, parse_cassette
from .yamltext import cassette_items, load_yaml, utf8_text

__all__ = ["atomic_write", "dumps", "load", "load_cassettes", "load_file", "loads", "save"]


def load(path: str | os.PathLike[str], *, name: str | None = None, limit: int | None = None) -> Cassette:
    """Read a cassette file.

    Args:
        path: the YAML file.
        name: the cassette name; default: ``name:`` in the file, else the file stem.
        limit: the largest file read, in bytes; default (None) :data:`~ssemock.limits.MAX_CASSETTE_FILE`, 512 MiB.

    Raises:
        CassetteNotFoundError: the file does not exist.
        CassetteError: the file is unreadable, larger than ``limit``, not YAML text from its first
            bytes on, or malformed (names file and field).
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid (see :mod:`ssemock.cassette.cache`).

    A file of 64 KiB or more is answered from the cache of parsed cassettes when its
    bytes have been loaded before (see :mod:`ssemock.cassette.cache`).
    """
    p = Path(path)
    cassette = load_file(p, name=name or p.stem, limit=MAX_CASSETTE_FILE if limit is None else limit)
    cassette.path = p
    return cassette


def loads(text: str, *, name: str = "cassette", source: str = "<string>") -> Cassette:
    """Parse cassette YAML text; ``source`` names it in errors. Raises :class:`CassetteError`.

    An interaction torn by a recorder killed while appending it is left out
    (see :mod:`ssemock.cassette.append`).
    """
    from .append import complete_text

    return parse_cassette(_yaml(complete_text(text), source), name=name, source=source)


def dumps(cassette: Cassette) -> str:
    """The cassette as YAML text; UTF-8 bodies appear as readable text blocks. The first line is a
    comment naming the cassette schema for editors (:data:`~ssemock.cassette.model.MODELINE`)."""
    from .write import cassette_doc, dump_yaml  # only writing needs the YAML emitter

    return f"{MODELINE}\n{dump_yaml(cassette_doc(cassette))}"


def save(cassette: Cassette, path: str | os.PathLike[str] | None = None) -> Path:
    """Write the cassette atomically (temporary file in the same directory, then rename); its
    :attr:`~Cassette.path` becomes the file written.

    Args:
        cassette: what to write.
        path: target file; default: the cassette's :attr:`~Cassette.path`.

    Returns:
        The path written.

    Raises:
        ValueError: no path given and none known.
    """
    target = Path(path) if path is not None else cassette.path
    if target is None:
        raise ValueError("saving a cassette needs a path")
    atomic_write(target, dumps(cassette))
    cassette.path = target
    return target


def atomic_write(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` via a temporary file and ``os.replace`` (atomic on POSIX)."""
    from .append import atomic_file

    with atomic_file(target) as out:
        out.write(text)


def load_file(path: Path, *, name: str, limit: int = MAX_CASSETTE_FILE) -> Cassette:
    """The cassette in file ``path`` (``name`` unless the file names it), from the cache of parsed
    cassettes when these bytes were parsed before (:mod:`.cache`), else parsed and cached.

    An interaction torn by a recorder killed while appending it is left out. A file not in the cache
    is read twice: whole, to be checked (size, start, UTF-8) and looked up in the cache; then parsed
    as it is read again (:class:`_Reread`), each interaction built as soon as it is parsed, so that
    memory holds the cassette and little else, never the file's bytes beside it. A file that changed
    in between is parsed again from its new bytes, and not cached.

    Raises:
        CassetteNotFoundError: the file does not exist.
        CassetteError: unreadable, larger than ``limit`` bytes (default
            :data:`~ssemock.limits.MAX_CASSETTE_FILE`, 512 MiB), or malformed.
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid.
    """
    source = str(path)
    found = _checked(path, source, name, limit)
    if isinstance(found, Cassette):
        return found
    if found.text is not None:  # a torn first interaction left an empty list: the text edited
        doc = _yaml(found.text, source)
    else:
        file = _reopened(path)
        if file is not None:
            with file:
                reread = _Reread(file, found.size)
                doc = _yaml(reread, source)
        if file is None or not reread.same(found.digest):  # changed since it was checked: checked again
            unchanged = _checked(path, source, name, limit)
            if isinstance(unchanged, Cassette):
                return unchanged
            again = unchanged.text if unchanged.text is not None else read_file(
                path, source, limit=limit, start=YAML_START)[: unchanged.size]
            return parse_cassette(_yaml(again, source), name=name, source=source)
    cassette = parse_cassette(doc, name=name, source=source)
    cache.store_entry(found.entry, cassette)
    return cassette


@dataclass(frozen=True)
class _Unparsed:
    """A cassette file checked but not in the cache: its cache entry, the size and SHA-256 of the bytes
    to parse (a torn last interaction left out), and the text to parse instead when it had to be edited."""

    entry: Path | None
    size: int
    digest: bytes
    text: str | None


def _checked(path: Path, source: str, name: str, limit: int) -> Cassette | _Unparsed:
    """The cassette cached for the bytes of ``path``, else what :func:`load_file` needs to parse them
    (the bytes themselves are let go when this returns)."""
    from .append import complete_text, torn_start  # only a file not in the cache is parsed

    try:
        data = read_file(path, source, limit=limit, start=YAML_START)
    except FileNotFoundError:
        raise CassetteNotFoundError(source) from None
    cassette = cache.lookup(data, name)
    if cassette is not None:
        return cassette
    kept = memoryview(data)[: torn_start(data)]
    text = utf8_text(bytes(kept) if len(kept) < len(data) else data, source, CassetteError)
    completed = complete_text(text)
    return _Unparsed(cache.entry_for(data, name), len(kept), hashlib.sha256(kept).digest(),
                     None if completed is text else completed)


def _reopened(path: Path) -> BinaryIO | None:
    """``path`` opened again for reading, or None when it is no longer a regular file (replaced by a FIFO,
    removed...): opened without blocking, as :func:`~.files.read_file` opens it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


class _Reread:
    """The first ``size`` bytes of ``file``, read by the YAML parser a piece at a time and hashed as they
    are (``seek(0)`` reads them again: the full safe loader's second pass)."""

    def __init__(self, file: BinaryIO, size: int) -> None:
        self.file = file
        self.size = size
        self.seek(0)

    def seek(self, offset: int) -> None:
        self.file.seek(offset)
        self.left = self.size
        self.hashed = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        piece = self.file.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(piece)
        self.hashed.update(piece)
        return piece

    def __len__(self) -> int:
        return self.size

    def same(self, digest: bytes) -> bool:
        """Whether the bytes read were all those of ``size`` and had SHA-256 ``digest``."""
        return not self.left and self.hashed.digest() == digest


def _yaml(text: str | bytes | _Reread, source: str) -> Any:
    return load_yaml(text, source, items=cassette_items(), build=interaction_builder(source))


def load_cassettes(directory: str | os.PathLike[str]) -> dict[str, Cassette]:
    """Load every ``*.yaml`` / ``*.yml`` cassette under ``directory`` (recursively).

    Returns:
        Cassettes by name: the path relative to ``directory`` without suffix, ``/``-separated;
        from one entry of the cache of parsed cassettes when no file changed since the directory
        was last loaded (:func:`ssemock.cassette.cache.lookup_set`).

    Raises:
        CassetteNotFoundError: the directory does not exist.
        CassetteError: a file is malformed (the first one found, named in the message), or
            two files give one name (``x.yaml`` and ``x.yml``; both named).
    """
    root = Path(directory)
    if not root.is_dir():
        raise CassetteNotFoundError(str(root))
    claimed: dict[str, str] = {}
    files = sorted(_yaml_files(root))
    keys = [file.relative_to(root).with_suffix("").as_posix() for file in files]
    for file, key in zip(files, keys):
        claim_name(claimed, key, file, CassetteError, "cassette")  # x.yaml and x.yml
    try:  # the whole directory from one cache entry when no byte of it changed (files hashed one at a time)
        contents = [(hashlib.sha256(read_file(file, str(file), limit=MAX_CASSETTE_FILE)).hexdigest(), key)
                    for file, key in zip(files, keys)]
    except (OSError, CassetteError):
        contents = []  # reported below, by the load of the file itself
    known = cache.lookup_set(contents) if contents else None
    if known is not None:
        for cassette, file in zip(known, files):
            cassette.path = file
        return dict(zip(keys, known))
    found: dict[str, Cassette] = {}
    for file, key in zip(files, keys):
        found[key] = load(file, name=key)
        found[key].name = key
    if contents:
        cache.store_set(contents, list(found.values()))
    return found


def _yaml_files(root: Path) -> Iterator[Path]:
    for pattern in ("*.yaml", "*.yml"):
        yield from (p for p in root.rglob(pattern) if not p.name.startswith("."))
