"""One recorded interaction on its way to the cassette file: its metadata (:class:`Entry`) and its
chunks in a :class:`Spool` (in memory up to 1 MiB, then an unnamed temporary file).

A module of its own: the handler (:mod:`.proxy`) fills entries, the store (:mod:`.store`) keeps
them and the writer (:mod:`.writer`) streams them into YAML.
"""

from __future__ import annotations

import struct
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import IO

from ..cassette import Chunk, Interaction, Request, Response

__all__ = ["Entry", "Spool"]

_RECORD = struct.Struct("<dI")  # t seconds (float64), data length (uint32)
_SPOOL_MEMORY = 1 << 20


class Spool:
    """The chunks of one response, ``(t seconds, bytes)`` in order, off the heap past 1 MiB.

    Chunks collect in a memory buffer until it would pass 1 MiB; then it goes to an
    unnamed temporary file, and every later chunk is written there from its own bytes
    (no copy of a read on the streaming path).
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
            if self._file is None and len(self._buffer) + len(data) < _SPOOL_MEMORY:
                self._buffer += data
            else:  # to the file, a read without a copy into the buffer
                self._spill()
                assert self._file is not None
                self._file.write(data)
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
        filtered: what was removed before writing (names only), shown after the item.
        observe: called with each chunk's bytes as the chunk is written (e.g. to count events).
    """

    request: Request
    response: Response
    spool: Spool
    loaded: bool = False
    filtered: list[str] = field(default_factory=list)
    observe: Callable[[bytes], object] | None = None

    def interaction(self, *, with_chunks: bool) -> Interaction:
        """An :class:`Interaction` (chunks read back from the spool when ``with_chunks``)."""
        r = self.response
        chunks = list(self.spool.chunks()) if with_chunks else []
        return Interaction(self.request, replace(r, chunks=chunks))
