"""A cache of parsed cassettes, keyed by the content of the file, so that a large cassette
loads in a fraction of the time of parsing its YAML again.

An entry is written the first time a cassette file of at least :data:`MIN_CACHED_SIZE`
bytes (64 KiB) is loaded; a later load of a file with the same bytes (and the same
fallback name, and the same ssemock version) reads the entry instead of the YAML. Any change
to the file changes its SHA-256 and so its key: a changed file is never answered from the
cache. Entries are MessagePack (``msgpack``), written atomically
(:func:`~ssemock.cassette.append.atomic_write_bytes`), and never trusted blindly: a decoded
entry goes through the same checks as a YAML load (:func:`~ssemock.cassette.read.check_cassette`:
status range, header names and values, finite ordered times, ...), and an entry whose
checksum, shape or content is wrong is ignored (and removed), and the YAML is parsed as if
there were no cache.

A directory of cassettes (:func:`~ssemock.cassette.load_cassettes`) is also kept as one entry
(``set-….msgpack``, whatever its files' sizes), keyed by every file's name and bytes: a server
starting on unchanged cassettes reads one entry and imports no YAML parser; any change to any
file of it is a new key, and the directory is loaded file by file again.

Threat model: the entry's BLAKE2b checksum catches damage (a torn write, a flipped bit), not
tampering, since anyone can recompute it. Against someone who can write entries (a shared
cache directory, a CI cache restored from another branch), the defences are that
:data:`SUBDIR` is only used when it is the user's own directory, closed to group and others,
and that every entry read is checked with the cassette loader's own rules, so a forged entry
can at most replace one cassette's answers with other *valid* answers for a cassette whose
bytes the forger knows. The checksum is not keyed with a per-user secret: such a key would sit
in the same directory and be restored or shared along with the entries in exactly the cases
above, so it would add no protection there.

Where and how much, from the environment:

* ``SSEMOCK_CACHE_DIR``: the directory (default ``$XDG_CACHE_HOME/ssemock/cassettes``,
  else ``~/.cache/ssemock/cassettes``); empty or ``off``: no cache. The entries live in a
  subdirectory of their own, :data:`SUBDIR` (created with mode 0700), and are named 64 hex
  digits + ``.msgpack``: reading and pruning touch nothing else, so a cache variable
  pointed at a project or data folder never removes a user's file.
* ``SSEMOCK_CACHE_MAX_BYTES``: the entries' total size, bytes (default
  :data:`DEFAULT_MAX_BYTES`, 256 MiB); the least recently used entries are removed first;
  ``0``: no cache. Anything but an integer >= 0 raises :class:`~ssemock.ConfigError`.

A cache that cannot be written (read-only directory, full disk) only costs the time it
would have saved; so does a :data:`SUBDIR` that is not a directory owned by the user and
closed to group and others (it is then not used at all).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgpack

from ..errors import CassetteError, ConfigError
from ..version import __version__
from .model import Cassette, Chunk, End, Interaction, Request, Response
from .read import check_cassette, read_file

__all__ = ["DEFAULT_MAX_BYTES", "MIN_CACHED_SIZE", "SUBDIR", "cache_dir", "cache_key", "lookup", "lookup_set",
           "max_bytes", "store", "store_set"]

T = TypeVar("T")
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""Default bound of the cache's total size, bytes (``SSEMOCK_CACHE_MAX_BYTES``)."""
MIN_CACHED_SIZE = 64 * 1024
"""Smaller cassette files are parsed every time (parsing them takes about a millisecond)."""
CACHE_FORMAT = 2
_MAGIC = b"SSEMOCK-CASSETTE-CACHE\x00" + bytes([CACHE_FORMAT])
_DIGEST = 16  # bytes of the BLAKE2b checksum of the payload
SUBDIR = "ssemock-cassettes-v1"
"""The subdirectory of ``SSEMOCK_CACHE_DIR`` holding the entries, and nothing but them."""
_SUFFIX = ".msgpack"
_ENTRY_NAME = r"(set-)?[0-9a-f]{64}\.msgpack\Z"  # compiled on first use (re's cache), not at every start


def cache_dir() -> Path | None:
    """The cache directory from ``SSEMOCK_CACHE_DIR`` / ``XDG_CACHE_HOME``, or None when disabled."""
    chosen = os.environ.get("SSEMOCK_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ssemock" / "cassettes"


def max_bytes() -> int:
    """``SSEMOCK_CACHE_MAX_BYTES`` (default :data:`DEFAULT_MAX_BYTES`).

    Raises:
        ConfigError: the variable is not an integer >= 0.
    """
    text = os.environ.get("SSEMOCK_CACHE_MAX_BYTES")
    if text is None or not text.strip():
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"SSEMOCK_CACHE_MAX_BYTES: expected a size in bytes (an integer >= 0), got {text!r}")
    return value


def cache_key(data: bytes, name: str) -> str:
    """The entry's name for a file of content ``data`` loaded under the fallback ``name``: hex SHA-256."""
    digest = hashlib.sha256(f"ssemock {__version__} cache {CACHE_FORMAT} {name}\0".encode())
    digest.update(data)
    return digest.hexdigest()


def _own_dir(*, create: bool) -> Path | None:
    """:data:`SUBDIR` of the cache directory (made when ``create``), or None when there is no usable cache."""
    directory = cache_dir()
    if directory is None or max_bytes() == 0:
        return None
    own = directory / SUBDIR
    try:
        if create:
            own.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(own)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None  # a symlink, or a directory someone else could write: not ours to trust
    return own


def _entry(data: bytes, name: str, *, create: bool) -> Path | None:
    """The entry's path in :data:`SUBDIR` (made when ``create``), or None when there is no usable cache."""
    if len(data) < MIN_CACHED_SIZE:
        return None
    own = _own_dir(create=create)
    return None if own is None else own / f"{cache_key(data, name)}{_SUFFIX}"


def lookup(data: bytes, name: str) -> Cassette | None:
    """The cassette cached for a file of content ``data`` (fallback ``name``), or None.

    A missing, unreadable or damaged entry gives None (a damaged one is removed). The entry is
    read only when it is a regular file (not a symlink, FIFO or device) of at most
    ``SSEMOCK_CACHE_MAX_BYTES``: anything else is damage, so a load never blocks on it.

    Raises:
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid.
    """
    entry = _entry(data, name, create=False)
    return None if entry is None else _read(entry, lambda raw: _checked(_decode(raw), entry))


def _checked(cassette: Cassette, entry: Path) -> Cassette:
    check_cassette(cassette, str(entry))  # the loader's rules, not only Python types
    return cassette


def _read(entry: Path, decode: Callable[[bytes], T]) -> T | None:
    """``decode`` of the entry's bytes; None when it is missing, or damaged (then removed): not a
    regular file of at most ``SSEMOCK_CACHE_MAX_BYTES`` (a symlink, FIFO or device is damage, so a
    load never blocks on it), or refused by ``decode``."""
    try:
        raw = read_file(entry, str(entry), limit=max_bytes(), follow_symlinks=False)
    except FileNotFoundError:
        return None
    except CassetteError:
        _remove(entry)
        return None
    try:
        value = decode(raw)
    except (ValueError, TypeError, KeyError, IndexError, msgpack.UnpackException, CassetteError):
        _remove(entry)
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # recently used: pruned last
    return value


def _remove(entry: Path) -> None:
    """Remove a damaged entry (a symlink itself, not what it points to)."""
    with contextlib.suppress(OSError):
        entry.unlink()


def store(data: bytes, name: str, cassette: Cassette) -> Path | None:
    """Cache ``cassette``, parsed from a file of content ``data`` (fallback ``name``); returns the entry.

    Nothing is written (None) for a small file, a disabled cache, a cassette holding values
    MessagePack cannot keep (e.g. dates in its provenance), an entry larger than the bound,
    or a directory that cannot be written. Older entries are removed beyond the bound.

    Raises:
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid.
    """
    entry = _entry(data, name, create=True)
    if entry is None:
        return None
    try:
        raw = _encode(cassette)
    except (TypeError, ValueError, OverflowError):
        return None
    return _write(entry, raw)


def _write(entry: Path, raw: bytes) -> Path | None:
    """Write ``raw`` as ``entry`` (atomically) and prune the cache to its bound; None when the entry
    is larger than the bound or cannot be written."""
    limit = max_bytes()
    if len(raw) > limit:
        return None
    from .append import atomic_write_bytes  # only writing needs it

    try:
        atomic_write_bytes(entry, raw)
        _prune(entry.parent, limit, keep=entry)
    except OSError:
        return None
    return entry


def _set_entry(files: Sequence[tuple[str, str]], *, create: bool) -> Path | None:
    directory = _own_dir(create=create) if files else None
    if directory is None:
        return None
    digest = hashlib.sha256(f"ssemock {__version__} cache {CACHE_FORMAT} set {len(files)}\0".encode())
    for file_digest, name in files:
        digest.update(f"{name}\0{file_digest}\0".encode())
    return directory / f"set-{digest.hexdigest()}{_SUFFIX}"


def lookup_set(files: Sequence[tuple[str, str]]) -> list[Cassette] | None:
    """The cassettes cached for a set of files (a directory), given as ``(SHA-256 of the file's
    bytes in hex, name)`` in a fixed order, in that order; None when this set of names and bytes
    was not cached (whatever the files' sizes: one entry spares parsing, and importing the YAML
    parser for, many small files).

    A damaged entry gives None (and is removed).

    Raises:
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid.
    """
    entry = _set_entry(files, create=False)
    if entry is None:
        return None
    source = entry

    def decode(raw: bytes) -> list[Cassette]:
        cassettes = [_checked(_decode(item), source) for item in _check(msgpack.unpackb(raw, raw=False), list)]
        if len(cassettes) != len(files):
            raise ValueError("not this set")
        return cassettes

    return _read(entry, decode)


def store_set(files: Sequence[tuple[str, str]], cassettes: Sequence[Cassette]) -> Path | None:
    """Cache ``cassettes``, parsed from ``files`` (``(SHA-256 hex, name)``, same order); returns the entry,
    or None when nothing is written (as for :func:`store`, whatever the files' sizes).

    Raises:
        ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid.
    """
    entry = _set_entry(files, create=True)
    if entry is None:
        return None
    try:
        raw = msgpack.packb([_encode(c) for c in cassettes], use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return None
    return _write(entry, raw)


def _prune(directory: Path, limit: int, keep: Path) -> None:
    """Remove the least recently used entries until their total size is at most ``limit`` bytes.

    Only files named like an entry (64 hex digits, or ``set-`` and 64 hex digits, + ``.msgpack``) are
    counted and removed."""
    entries = []
    with os.scandir(directory) as found:
        for item in found:
            if re.match(_ENTRY_NAME, item.name) and item.is_file(follow_symlinks=False):
                info = item.stat(follow_symlinks=False)
                entries.append((info.st_mtime, info.st_size, item.path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        if path != str(keep):
            with contextlib.suppress(OSError):
                os.unlink(path)
            total -= size


# ---- the entry's format ------------------------------------------------------------------
def _encode(cassette: Cassette) -> bytes:
    interactions = []
    for inter in cassette.interactions:
        req, resp = inter.request, inter.response
        interactions.append([
            req.method, req.path, [list(p) for p in req.query], [list(p) for p in req.headers],
            req.body, req.body_sha256, req.body_size,
            resp.status, resp.reason, [list(p) for p in resp.headers], resp.start, resp.end.t, resp.end.how,
            resp.timed, [c.t for c in resp.chunks], [c.data for c in resp.chunks],
        ])
    payload: bytes = msgpack.packb([cassette.name, cassette.provenance, interactions, list(cassette.ignore_body),
                                    list(cassette.dropped_body)], use_bin_type=True)
    return _MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload


def _decode(raw: bytes) -> Cassette:
    """Rebuild the cassette; ValueError/TypeError/KeyError/IndexError for any damage."""
    head = len(_MAGIC) + _DIGEST
    if raw[: len(_MAGIC)] != _MAGIC:
        raise ValueError("not a cache entry of this format")
    payload = memoryview(raw)[head:]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != raw[len(_MAGIC):head]:
        raise ValueError("checksum")
    name, provenance, items, ignore_body, dropped_body = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    _check(name, str)
    _check(provenance, dict)
    return Cassette(name=name, interactions=[_interaction(item) for item in _check(items, list)],
                    provenance=provenance, ignore_body=_texts(ignore_body), dropped_body=_texts(dropped_body))


def _texts(value: Any) -> tuple[str, ...]:
    if not (isinstance(value, list) and all(isinstance(text, str) for text in value)):
        raise TypeError("expected a list of strings")
    return tuple(value)


def _interaction(item: Any) -> Interaction:
    (method, path, query, headers, body, body_sha256, body_size,
     status, reason, rheaders, start, end_t, end_how, timed, times, datas) = _check(item, list)
    if not (all(type(t) is float for t in _check(times, list))
            and all(type(d) is bytes for d in _check(datas, list)) and len(times) == len(datas)):
        raise TypeError("chunks")
    request = Request(
        method=_check(method, str), path=_check(path, str), query=_pairs(query), headers=_pairs(headers),
        body=_check(body, (bytes, type(None))), body_sha256=_check(body_sha256, (str, type(None))),
        body_size=_check(body_size, (int, type(None))),
    )
    response = Response(
        status=_check(status, int), reason=_check(reason, (str, type(None))), headers=_pairs(rheaders),
        chunks=list(map(Chunk, times, datas)), start=_check(start, float),
        end=End(_check(end_t, float), _check(end_how, str)), timed=_check(timed, bool),
    )
    return Interaction(request, response)


def _pairs(value: Any) -> list[tuple[str, str]]:
    pairs = _check(value, list)
    if not all(type(p) is list and len(p) == 2 and type(p[0]) is str and type(p[1]) is str for p in pairs):
        raise TypeError("expected [name, value] pairs of strings")
    return [(name, text) for name, text in pairs]


def _check(value: Any, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind):
        raise TypeError(f"expected {kind}, got {type(value).__name__}")
    return value
