"""Cassette files that grow one interaction at a time, and writes that a crash cannot half-do.

**Appended interactions.** The recorder adds each finished interaction to the end of its
cassette file (never rewriting what is there), between two comment lines::

    interactions:
    # ssemock: begin interaction
    - request:
        ...
        end: {t: 0.9, how: clean}
    # ssemock: end interaction (filtered: request header authorization)

The file stays plain format-v1 YAML (comments are invisible to YAML), readable and
diffable: a new recording is a block of added lines. A process killed while appending
leaves a *begin* line with no *end* line after it: :func:`complete_text` cuts that torn
tail off, so every loader sees only complete interactions, and the recorder removes it
from the file before it appends again. Items without marks (written by hand, or by
:func:`ssemock.cassette.save`) are ordinary content.

**Temporary files.** :func:`atomic_file` writes a whole file under a temporary name
(``.NAME.yaml.XXXX.tmp``, locked with ``flock`` while it is written), fsyncs it, then
renames it over (or, ``exclusive``, links it to) the target. A temporary file whose
writer died keeps no lock: :func:`remove_stale_temporaries` deletes it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = [
    "BEGIN_MARK",
    "DOCUMENT_END",
    "END_MARK",
    "appendable",
    "atomic_file",
    "atomic_write_bytes",
    "complete_text",
    "end_mark",
    "fsync_directory",
    "locked",
    "remove_stale_temporaries",
    "torn_start",
]

DOCUMENT_END = "\n...\n"
BEGIN_MARK = "# ssemock: begin interaction"
END_MARK = "# ssemock: end interaction"
_INTERACTIONS_KEY = re.compile(r"^interactions:[ \t\r]*(#[^\n]*)?$", re.M)
_ONLY_COMMENTS = re.compile(r"(?:[ \t\r]*(?:#[^\n]*)?\n)*[ \t\r]*(?:#[^\n]*)?")
_TOP_LEVEL_LINE = re.compile(r"^[^\s]", re.M)
_TEMPORARY = ".*.yaml.*.tmp"


def torn_start(data: str | bytes) -> int:
    """Where a torn last interaction starts in ``data`` (text or the file's bytes); ``len(data)``: none.

    Torn: the last :data:`BEGIN_MARK` line has no :data:`END_MARK` line after it.
    """
    begin_mark, end_mark_ = (
        (BEGIN_MARK, END_MARK) if isinstance(data, str) else (BEGIN_MARK.encode(), END_MARK.encode())
    )
    nl = "\n" if isinstance(data, str) else b"\n"
    begin = data.rfind(nl + begin_mark) + 1  # type: ignore[operator, arg-type]  # marks start a line
    if begin == 0 and not data.startswith(begin_mark):  # type: ignore[arg-type]
        return len(data)
    if data.find(nl + end_mark_, begin) >= 0:  # type: ignore[operator, arg-type]
        return len(data)
    return begin


def complete_text(text: str) -> str:
    """``text`` without a torn last interaction (see :func:`torn_start`).

    When nothing is left of the ``interactions:`` list (a crash while its first item was
    written), the list is empty rather than null.
    """
    text = text[: torn_start(text)]
    key = text.rfind("\ninteractions:")
    if key < 0 or text[key + 14 : key + 15] not in ("", " ", "\t", "\r", "\n", "#"):
        return text
    rest = _ONLY_COMMENTS.match(text, key + 14)  # blank and comment lines (the pattern matches "" too)
    if rest is not None and rest.end() == len(text):
        return text[:key] + "\ninteractions: []\n"
    return text


def appendable(text: str) -> bool:
    """Whether block-sequence items written at column 0 can be appended to ``text``.

    True when ``interactions:`` is the last top-level key, its items start at column 0
    (``- ``), and the text ends with a line break. A final document end marker (``...``,
    which PyYAML writes after a ``|+`` block) is allowed: the appender removes it.
    """
    if text.endswith(DOCUMENT_END):
        text = text[: 1 - len(DOCUMENT_END)]  # the marker's line goes, the line break before it stays
    key = None
    for key in _INTERACTIONS_KEY.finditer(text):  # noqa: B007 - the last one is wanted
        pass
    if key is None or not text.endswith("\n"):
        return False
    tops = [m.group() for m in _TOP_LEVEL_LINE.finditer(text, key.end())]
    return bool(tops) and tops[0] == "-" and all(t in "-#" for t in tops)


def end_mark(notes: list[str]) -> str:
    """The :data:`END_MARK` line (with its line break), naming ``notes`` (e.g. what was filtered)."""
    if not notes:
        return END_MARK + "\n"
    text = ", ".join(notes)
    text = "".join(c if c.isprintable() else "?" for c in text)  # a comment is one line of printable text
    return f"{END_MARK} (filtered: {text})\n"


@contextlib.contextmanager
def locked(fd: int) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``fd`` (blocking) for the ``with`` block."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def atomic_file(target: Path, *, exclusive: bool = False) -> Iterator[TextIO]:
    """A text file (UTF-8, ``\\n`` kept) that becomes ``target`` only when the block succeeds.

    It is written under a locked temporary name in ``target``'s directory (created when
    needed), flushed and fsynced, then renamed over ``target`` (atomic on POSIX), or with
    ``exclusive`` linked to it (then an existing ``target`` is never replaced). The
    directory is fsynced so that the new name survives a crash. On any error the
    temporary file is removed and ``target`` is left as it was.

    Raises:
        FileExistsError: ``exclusive`` and ``target`` exists.
        OSError: the directory or file cannot be written.
    """
    with (
        _replacing(target, exclusive) as fd,
        os.fdopen(os.dup(fd), "w", encoding="utf-8", newline="", buffering=1 << 16) as out,
    ):
        yield out
        out.flush()
        os.fsync(out.fileno())


def atomic_write_bytes(target: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``target`` atomically, as :func:`atomic_file` does for text; ``mode``: the file's
    permissions from its creation on (``0o600`` for a private key: never readable by others, not even for
    a moment), default the usual ``0o666`` less the umask.

    Raises:
        OSError: the directory or file cannot be written.
    """
    with _replacing(target, False, mode) as fd, os.fdopen(os.dup(fd), "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


@contextlib.contextmanager
def _replacing(target: Path, exclusive: bool, mode: int | None = None) -> Iterator[int]:
    """A locked temporary file's descriptor (of ``mode``, default 0666 less the umask); renamed (or linked) to
    ``target`` when the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)  # mode 0600
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # tells remove_stale_temporaries that its writer is alive
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # the usual file mode
        os.fchmod(fd, mode)
        yield fd
        if exclusive:
            os.link(tmp, target)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        os.close(fd)
    fsync_directory(target.parent)


def fsync_directory(directory: Path) -> None:
    """fsync a directory, so that names created or renamed in it are durable (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_temporaries(
    directory: Path, *, pattern: str = _TEMPORARY, recursive: bool = True, min_age: float = 1.0
) -> list[Path]:
    """Delete temporary cassette files (``.NAME.yaml.XXXX.tmp``) whose writer is gone.

    A file is stale when no process holds its ``flock`` (see :func:`atomic_file`) and it
    was last changed at least ``min_age`` seconds ago (a writer locks its file just after
    creating it), so a write in progress in another process is never touched.

    Args:
        directory: where to look (missing: nothing to do).
        pattern: glob of the temporary names.
        recursive: also look in sub-directories.
        min_age: seconds since the file's last change before it may be removed.

    Returns:
        The files removed.
    """
    if not directory.is_dir():
        return []
    removed = []
    for path in directory.rglob(pattern) if recursive else directory.glob(pattern):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if time.time() - os.fstat(fd).st_mtime < min_age:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            continue  # its writer is still at work
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
        finally:
            os.close(fd)
    return removed
