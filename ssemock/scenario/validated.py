"""A record of the scenario files already validated, keyed by their content, so that starting a
server does not import the step modules nor parse YAML for files that have not changed.

A file's key is the SHA-256 of its bytes and its fallback name (the file's stem); the record is
only trusted under the same ssemock version and the same step definitions (the size and
modification time of every module of :mod:`ssemock.scenario` and :mod:`ssemock.providers`, whose
rules the steps check). Any change to a file changes its key: a changed file is parsed and
validated again, and its errors are raised at once, as without the record.

What a record keeps per file: the scenario's name, description, ``preserves`` and its steps as
plain YAML data; the steps are built (and their modules imported) on first use
(:class:`~ssemock.scenario.model.DeferredScenario`).

Where: ``validated-scenarios.bin`` (MessagePack) in the directory of the cassette cache
(:func:`ssemock.cassette.cache.cache_dir`; disabled with it). At most :data:`MAX_ENTRIES`
files are remembered, the oldest forgotten first. A record that cannot be read or written
only costs the time it would have saved.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

__all__ = ["MAX_ENTRIES", "Known", "batch", "forget", "lookup", "store"]

MAX_ENTRIES = 1000
"""Scenario files remembered at most (the oldest are forgotten first)."""
_FILE = "validated-scenarios.bin"
_RULES = ("scenario", "providers")  # packages whose modules define what a valid step is


# The functional form takes the types themselves: the class form's annotations, text under
# ``from __future__ import annotations``, would each be compiled at import.
Known = TypedDict("Known", {"name": str, "description": str, "preserves": str, "steps": list[Any]})  # noqa: UP013
"""A validated scenario file: its scenario's fields, steps as plain YAML data."""


_memo: dict[str, Any] = {}


def _fingerprint() -> str:
    """The ssemock version and the size and mtime of each module defining the steps' rules."""
    from ..version import __version__

    root = Path(__file__).resolve().parent.parent
    parts = [__version__]
    for package in _RULES:
        with os.scandir(root / package) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    parts.append(f"{package}/{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts)


def _path() -> Path | None:
    """The record's file, from the cache directory's variables (worked out again when they change, but
    not within a :func:`batch`)."""
    if "pinned" in _memo:
        pinned: Path | None = _memo["pinned"]
        return pinned
    env = tuple(os.environ.get(name) for name in ("SSEMOCK_CACHE_DIR", "XDG_CACHE_HOME", "HOME"))
    if _memo.get("env") != env:
        from ..cassette.cache import cache_dir

        directory = cache_dir()
        _memo["env"], _memo["file"] = env, None if directory is None else directory / _FILE
    path: Path | None = _memo["file"]
    return path


def _records() -> dict[str, Any]:
    """The records of this fingerprint (read once per process and cache directory); empty if none or
    unreadable."""
    path = _path()
    if "records" not in _memo or _memo.get("path") != path:
        import msgpack

        records: dict[str, Any] = {}
        _memo["path"] = path
        if path is not None:
            with contextlib.suppress(OSError, ValueError, msgpack.UnpackException, TypeError):
                doc = msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)
                if isinstance(doc, dict) and doc.get("fingerprint") == _fingerprint():
                    found = doc.get("records")
                    records = found if isinstance(found, dict) else {}
        _memo["records"] = records
    records = _memo["records"]
    return records


def forget() -> None:
    """Drop what this process has read of the record: the next :func:`lookup` reads the file again."""
    _memo.clear()


def _key(data: bytes, stem: str) -> str:
    return hashlib.sha256(data).hexdigest() + ":" + stem


def lookup(data: bytes, stem: str) -> Known | None:
    """The record of a scenario file of content ``data`` named ``stem``, or None if it was not validated."""
    found = _records().get(_key(data, stem))
    if not (isinstance(found, dict) and isinstance(found.get("steps"), list)
            and all(isinstance(found.get(k), str) for k in ("name", "description", "preserves"))):
        return None
    return Known(name=found["name"], description=found["description"], preserves=found["preserves"],
                 steps=found["steps"])


def store(data: bytes, stem: str, known: Known) -> None:
    """Remember that the file of content ``data`` named ``stem`` is valid and holds ``known``
    (written at once, or at the end of the :func:`batch` it is in).

    Steps that MessagePack cannot hold (e.g. YAML timestamps) are not remembered; a directory
    that cannot be written is ignored.
    """
    path = _path()
    if path is None:
        return
    records = _records()
    records[_key(data, stem)] = dict(known)
    while len(records) > MAX_ENTRIES:
        del records[next(iter(records))]
    _memo["dirty"] = True
    if not _memo.get("batch"):
        _write(path)


@contextlib.contextmanager
def batch() -> Iterator[None]:
    """Within it, :func:`store` only remembers; the record is written once at its end (a directory
    of scenario files costs one write, not one per file)."""
    if not _memo.get("batch"):
        _memo["pinned"] = _path()  # one directory of files: the variables are read once
    _memo["batch"] = _memo.get("batch", 0) + 1
    try:
        yield
    finally:
        _memo["batch"] -= 1
        path = _path()
        if not _memo["batch"]:
            _memo.pop("pinned", None)
            if _memo.get("dirty") and path is not None:
                _write(path)


def _write(path: Path) -> None:
    import msgpack

    from ..cassette.append import atomic_write_bytes

    _memo["dirty"] = False
    records = _records()
    try:
        payload = msgpack.packb({"fingerprint": _fingerprint(), "records": records}, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):  # a step value MessagePack cannot hold: keep the others
        for key in [k for k, v in records.items() if not _packable(v)]:
            del records[key]
        payload = msgpack.packb({"fingerprint": _fingerprint(), "records": records}, use_bin_type=True)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, payload)


def _packable(value: Any) -> bool:
    import msgpack

    try:
        msgpack.packb(value, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return False
    return True
