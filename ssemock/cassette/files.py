"""Reading the bytes of a data file: a regular file only, bounded, its first bytes checked before the rest.

:func:`read_file` is the one way cassettes, scenarios, stubs and imported recordings are read.
A :class:`Start` says what a file's first bytes must be (:data:`YAML_START`: YAML text;
``ssemock.importers.har``: a JSON object), so that a file that is not of its kind at all, such
as 600 MB of NUL bytes, is refused after reading :data:`HEAD` bytes of it, not all of them.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import CassetteError, Described, ScenarioError, StubError
from ..limits import show_size

__all__ = ["HEAD", "YAML_START", "FileError", "Start", "read_file"]

FileError = type[CassetteError] | type[ScenarioError] | type[StubError]

HEAD = 4096
"""Bytes of a file a :class:`Start` reads, in bytes."""


@dataclass(frozen=True)
class Start:
    """What the first bytes of a file must be, checked before the rest is read.

    Attributes:
        expected: what the file must be, as errors say it (``"a HAR file (JSON), ..."``).
        problem: given the first :data:`HEAD` bytes (fewer in a shorter file), what is wrong with
            them (the error's ``got``: a text, quoted, or a :class:`~ssemock.errors.Described`), or None.
    """

    expected: str
    problem: Callable[[bytes], str | Described | None]


# What YAML 1.1 (PyYAML's Reader) and libyaml take as characters of a stream: no control character
# but tab, line feed, carriage return and NEL, no surrogate, no U+FFFE or U+FFFF.
_NOT_YAML = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _yaml_problem(head: bytes) -> str | Described | None:
    try:  # a character cut at the end of the head is left for the whole read
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        return str(exc)  # what decoding the whole file says of it
    found = _NOT_YAML.search(text)
    if found is None:
        return None
    return Described(None, f"{found.group()!r} at character {found.start()}, not a character of YAML text")


YAML_START = Start("a readable UTF-8 YAML file", _yaml_problem)
"""The start of a YAML file: UTF-8 text with no character YAML refuses."""

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_file(
    path: Path, source: str, *, limit: int, error: FileError = CassetteError, follow_symlinks: bool = True,
    start: Start | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, of at most ``limit`` bytes.

    Anything else (``/dev/zero``, a FIFO, a directory, a socket) is refused without reading
    it: opened without blocking, checked, closed. Without ``follow_symlinks``, a symbolic
    link is refused too (``O_NOFOLLOW``). With ``start``, the first :data:`HEAD` bytes are
    checked before the rest is read.

    Raises:
        FileNotFoundError: the file does not exist.
        CassetteError (or ``error``): not a regular file, larger than ``limit``, unreadable, or
            its first bytes not what ``start`` expects.
    """
    try:
        nofollow = 0 if follow_symlinks else os.O_NOFOLLOW
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow)  # a FIFO must not block the open
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(source, "", "a readable regular file", exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise error(source, "", "a regular file", kind)
        if info.st_size > limit:
            raise error(source, "", f"a file of at most {show_size(limit)} bytes", info.st_size)
        if start is not None and (problem := start.problem(os.pread(fd, HEAD, 0))) is not None:
            raise error(source, "", start.expected, problem)
        data = _read_at_most(fd, limit + 1, info.st_size)  # bounded even if the file grows meanwhile
    except OSError as exc:
        raise error(source, "", "a readable regular file", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(source, "", f"a file of at most {show_size(limit)} bytes", len(data))
    return data


def _read_at_most(fd: int, most: int, expected: int) -> bytes:
    """The bytes of ``fd`` up to its end or ``most`` bytes, in as few reads as its ``expected`` size allows
    (no file object: a start reads dozens of small files)."""
    parts = []
    size = 0
    while size < most:
        part = os.read(fd, min(most - size, max(expected + 1 - size, 1 << 16)))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)
