"""The importer family: each importer registered once, with its options; the CLI and tools read this.

An :class:`Importer` names a conversion function (``"module:function"``, imported on first
use, so listing importers costs no import) taking ``(path, *, provenance=..., **options)``
and returning a :class:`~ssemock.cassette.Cassette`, and the :class:`Option` s that
``ssemock import NAME`` offers for it. Every importer splits SSE bodies with
:func:`ssemock.sse.split_blocks` and redacts with :mod:`ssemock.redact` (see
:mod:`ssemock.importers`).

Example::

    >>> from ssemock.importers.registry import importer
    >>> importer("raw").convert("body.sse.txt", request_path="/v1/messages")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from ..cassette import Cassette
from ..errors import ConfigError
from ..limits import MAX_CASSETTE_FILE, MAX_HAR_ENTRIES

__all__ = ["IMPORTERS", "Importer", "Option", "importer", "register"]


@dataclass(frozen=True)
class Option:
    """One command-line option of an importer.

    Attributes:
        flag: the option as typed, e.g. ``"--path"``.
        dest: the keyword argument of the conversion function it fills, e.g. ``"request_path"``.
        help: one line for ``--help``.
        required: the option must be given.
        default: the value when it is not given.
        switch: a flag without a value (``True`` when given).
        kind: how the value is read: ``"str"``, ``"int"`` (an integer >= 1) or ``"bytes"`` (a size >= 1,
            a unit may follow the digits: ``120MB``, ``1GiB``).
        metavar: the value's name in ``--help`` (e.g. ``"BYTES"``).
    """

    flag: str
    dest: str
    help: str
    required: bool = False
    default: Any = None
    switch: bool = False
    kind: str = "str"
    metavar: str | None = None


@dataclass(frozen=True)
class Importer:
    """A registered importer.

    Attributes:
        name: its name in ``ssemock import NAME``.
        help: one line for ``--help``.
        target: ``"module:function"`` of the conversion function.
        options: its own options (the shared ``-o``, ``--force``, ``--licence``, ``--source``
            are the CLI's).
    """

    name: str
    help: str
    target: str
    options: tuple[Option, ...] = ()

    def function(self) -> Callable[..., Cassette]:
        """The conversion function, imported now."""
        module, _, attr = self.target.partition(":")
        return cast("Callable[..., Cassette]", getattr(importlib.import_module(module), attr))

    def convert(
        self, path: str | os.PathLike[str], *, provenance: Mapping[str, Any] | None = None, **options: Any
    ) -> Cassette:
        """Import one file.

        Args:
            path: the recording.
            provenance: extra provenance fields written into the cassette.
            options: values of :attr:`options`, by ``dest``.

        Raises:
            ConfigError: an option this importer does not have.
            ImportFormatError: the file cannot be imported (names the file and field).
        """
        known = {o.dest for o in self.options}
        if unknown := sorted(set(options) - known):
            raise ConfigError(f"importer {self.name!r} has no option {unknown[0]!r}; "
                              f"it has: {', '.join(sorted(known)) or '(none)'}")
        return self.function()(path, provenance=dict(provenance or {}), **options)


IMPORTERS: dict[str, Importer] = {}
"""The registered importers by name, in registration order."""


def register(entry: Importer) -> Importer:
    """Add ``entry`` to :data:`IMPORTERS` and return it.

    Raises:
        ConfigError: the name is taken.
    """
    if entry.name in IMPORTERS:
        raise ConfigError(f"an importer named {entry.name!r} is registered already")
    IMPORTERS[entry.name] = entry
    return entry


def importer(name: str) -> Importer:
    """The importer named ``name``.

    Raises:
        ConfigError: no such importer (the known names are listed).
    """
    try:
        return IMPORTERS[name]
    except KeyError:
        raise ConfigError(f"no importer named {name!r}; known: {', '.join(IMPORTERS)}") from None


_PATH = Option("--path", "request_path", "URL path to answer, e.g. /v1/chat/completions", required=True,
               metavar="PATH")
_METHOD = Option("--method", "method", "HTTP method to answer (default POST)", default="POST", metavar="METHOD")

register(Importer("vcr", "VCR.py / pytest-recording cassettes", "ssemock.importers.vcr:import_vcr"))
register(Importer("har", "HAR 1.2 files (browser devtools, Charles, Proxyman, mitmproxy)",
                  "ssemock.importers.har:import_har", (
                      Option("--streams-only", "streams_only",
                             "import only the entries answered with text/event-stream", switch=True),
                      Option("--max-entries", "max_entries",
                             f"refuse files with more entries (default {MAX_HAR_ENTRIES})",
                             default=MAX_HAR_ENTRIES, kind="int", metavar="N"),
                      Option("--max-size", "max_size", f"refuse larger files, in bytes (default {MAX_CASSETTE_FILE}; "
                             "a unit may follow: 120MB, 1GiB)", default=MAX_CASSETTE_FILE, kind="bytes",
                             metavar="BYTES"),
                  )))
register(Importer("raw", "raw response bodies (.sse.txt, .sse.bin)", "ssemock.importers.raw:import_raw",
                  (_PATH, _METHOD)))
register(Importer("chunks", "one JSON payload per line (.chunks.txt)", "ssemock.importers.chunks:import_chunks", (
    _PATH, _METHOD,
    Option("--done", "done", "append 'data: [DONE]' (OpenAI chat style)", switch=True),
    Option("--event-from-type", "event_from_type", "write 'event: <payload type>' lines (OpenAI Responses style)",
           switch=True),
)))
