"""HTTP content codings: the one decoder of a ``Content-Encoding`` body (RFC 9110 §8.4).

Every part of ssemock that reads a compressed body decodes it here: the recorder's secret scan
(incrementally, read by read), the replay steps that edit a recorded body, ``ssemock check``,
``inspect``, ``diff`` and the importers.

What is decoded:

* ``gzip`` (and ``x-gzip``, RFC 9110 §8.4.1.3): **every member** of the body (RFC 1952 §2.2: a
  gzip file is a series of members; ``curl`` and :func:`gzip.decompress` decode them all), NUL
  padding between or after members skipped as :mod:`gzip` does;
* ``deflate`` (RFC 9110 §8.4.1.2): a zlib stream (RFC 1950) as the RFC says, or a raw deflate
  stream (RFC 1951) as many servers send: a body whose first two bytes are a valid zlib header
  is read as zlib (and as raw deflate if that fails before any byte came out), else as raw;
* ``identity`` and an empty value: the bytes as they are;
* stacked codings (``Content-Encoding: gzip, deflate``): undone in the reverse order of the
  list (RFC 9110 §8.4: they are listed in the order they were applied), at most
  :data:`MAX_CODINGS` of them.

Anything else raises :class:`ContentCodingError`: an unknown coding (``br``, ``zstd``,
``compress``), corrupt data, bytes after the last member that are not another member, or a
body that ends inside a member when it was complete (see :meth:`Decoder.close`).

Output is bounded: :class:`Decoder` gives the decoded bytes in pieces of at most ``piece``
bytes (1 MiB by default), however much one read inflates, so a caller counts (or scans) them as
they come and memory stays within a few pieces per coding.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

from .errors import ContentCodingError

__all__ = ["CODINGS", "MAX_CODINGS", "PIECE", "ContentCodingError", "Decoder", "decode", "decode_lenient",
           "parse_codings"]

CODINGS = ("gzip", "x-gzip", "deflate", "identity")
"""The content codings decoded (letter case ignored)."""
MAX_CODINGS = 5
"""Most codings stacked in one ``Content-Encoding`` (urllib3 allows as many): more is an error,
as each one may multiply the size by about a thousand."""
PIECE = 1024 * 1024
"""Most bytes :class:`Decoder` gives at a time by default."""
_GZIP_MAGIC = b"\x1f\x8b"


def parse_codings(header: str | None) -> list[str]:
    """The codings of a ``Content-Encoding`` value in the order they were applied, lower case,
    ``identity`` left out (``"gzip, GZIP"`` → ``["gzip", "gzip"]``; None or ``""`` → ``[]``).

    Raises:
        ContentCodingError: a coding that is not decoded (:data:`CODINGS`), or more than
            :data:`MAX_CODINGS` of them.
    """
    names = [name.strip().lower() for name in (header or "").split(",")]
    names = [name for name in names if name and name != "identity"]
    for name in names:
        if name not in CODINGS:
            raise ContentCodingError(header or "", f"unknown content coding {name[:40]!r} "
                                     f"(decoded: {', '.join(CODINGS)})")
    if len(names) > MAX_CODINGS:
        raise ContentCodingError(header or "", f"{len(names)} codings stacked (at most {MAX_CODINGS})")
    return names


class _Layer:
    """One coding undone incrementally: :meth:`feed` and :meth:`close` yield pieces of at most ``piece`` bytes."""

    def __init__(self, header: str, piece: int) -> None:
        self.header, self.piece = header, piece

    def feed(self, data: bytes) -> Iterator[bytes]:
        raise NotImplementedError

    def close(self, complete: bool) -> Iterator[bytes]:
        raise NotImplementedError

    def _inflate(self, inflater: zlib._Decompress, data: bytes) -> Iterator[bytes]:
        """Decompress ``data`` in pieces (a full piece: more may be waiting inside ``inflater``)."""
        while True:
            out = inflater.decompress(data, self.piece)
            if out:
                yield out
            if inflater.eof:  # what follows is in unused_data (CPython also leaves it in unconsumed_tail)
                return
            data = inflater.unconsumed_tail
            if not data and len(out) < self.piece:
                return

    def _drain(self, inflater: zlib._Decompress, complete: bool, coding: str, stream: str) -> Iterator[bytes]:
        """What ``inflater`` still holds at the end of the body; raises :class:`ContentCodingError` when the
        data is corrupt, or when a ``complete`` body ends inside ``stream`` (the one ``inflater`` reads)."""
        try:
            yield from self._inflate(inflater, b"")
            tail = inflater.flush()
        except zlib.error as exc:
            raise ContentCodingError(self.header, f"corrupt {coding} data ({exc})") from None
        if tail:
            yield tail
        if complete and not inflater.eof:
            raise ContentCodingError(self.header, f"the body ends inside {stream}")


class _Gzip(_Layer):
    """``gzip``: every member (RFC 1952 §2.2), NUL padding between members skipped."""

    def __init__(self, header: str, piece: int) -> None:
        super().__init__(header, piece)
        self._inflater: zlib._Decompress | None = None
        self._pending = b""  # bytes after a member, before the next one is known to start
        self._members = 0

    def feed(self, data: bytes) -> Iterator[bytes]:
        data = self._pending + data
        self._pending = b""
        while data:
            if self._inflater is None:
                data = data.lstrip(b"\x00")
                if not data:
                    return
                if len(data) < 2 and _GZIP_MAGIC.startswith(data):
                    self._pending = data
                    return
                if not data.startswith(_GZIP_MAGIC):
                    raise ContentCodingError(self.header, "bytes after the last gzip member are not a gzip member "
                                             "(RFC 1952)" if self._members else "not gzip data (RFC 1952)")
                self._members += 1
                self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                yield from self._inflate(self._inflater, data)
            except zlib.error as exc:
                raise ContentCodingError(self.header, f"corrupt gzip data ({exc})") from None
            if not self._inflater.eof:
                return
            data, self._inflater = self._inflater.unused_data, None

    def close(self, complete: bool) -> Iterator[bytes]:
        if self._pending and complete:
            raise ContentCodingError(self.header, "the body ends inside a gzip member header")
        if self._inflater is not None:
            yield from self._drain(self._inflater, complete, "gzip", "a gzip member")


class _Deflate(_Layer):
    """``deflate``: a zlib stream (RFC 1950), else raw deflate (RFC 1951)."""

    def __init__(self, header: str, piece: int) -> None:
        super().__init__(header, piece)
        self._inflater: zlib._Decompress | None = None
        self._seen = b""  # input read as zlib while nothing came out: read again as raw if zlib fails
        self._out = 0
        self._raw = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._inflater is None:
            self._seen += data
            if len(self._seen) < 2:
                return
            data, self._seen = self._seen, b""
            self._start(_looks_zlib(data))
        assert self._inflater is not None
        if self._inflater.eof:
            if data:
                raise ContentCodingError(self.header, "bytes after the end of the deflate stream")
            return
        if not self._raw and not self._out:
            self._seen += data
        try:
            for out in self._inflate(self._inflater, data):
                self._out += len(out)
                self._seen = b""
                yield out
        except zlib.error as exc:
            if self._raw or self._out:
                raise ContentCodingError(self.header, f"corrupt deflate data ({exc})") from None
            seen, self._seen = self._seen, b""  # a zlib-looking header on raw deflate (RFC 1951)
            self._start(zlib_header=False)
            yield from self.feed(seen)
            return
        if self._inflater.eof and self._inflater.unused_data:
            raise ContentCodingError(self.header, "bytes after the end of the deflate stream")

    def _start(self, zlib_header: bool) -> None:
        self._raw = not zlib_header
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)

    def close(self, complete: bool) -> Iterator[bytes]:
        if self._inflater is None:
            if self._seen and complete:
                raise ContentCodingError(self.header, "the body ends inside the deflate stream")
            return
        yield from self._drain(self._inflater, complete, "deflate", "the deflate stream")


def _looks_zlib(data: bytes) -> bool:
    """Whether two bytes are a zlib header (RFC 1950 §2.2: method 8, window ≤ 32 KiB, FCHECK)."""
    cmf, flg = data[0], data[1]
    return cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf * 256 + flg) % 31 == 0


class Decoder:
    """Decodes a body given read by read (any split, member boundaries included).

    Args:
        header: the ``Content-Encoding`` value (None or ``""``: identity).
        piece: most bytes given at a time (1 MiB by default), whatever one read inflates to.

    Raises:
        ContentCodingError: an unknown coding or too many (:func:`parse_codings`).

    :meth:`feed` and :meth:`close` are generators: iterate them to the end (they decode as they
    are iterated); both raise :class:`ContentCodingError` for data that does not decode. After an
    error the decoder is broken: the bytes given before it stay valid output.
    """

    def __init__(self, header: str | None, *, piece: int = PIECE) -> None:
        self.header = header or ""
        self.codings = parse_codings(header)
        kinds = {"gzip": _Gzip, "x-gzip": _Gzip, "deflate": _Deflate}
        self._layers: list[_Layer] = [kinds[name](self.header, piece) for name in reversed(self.codings)]

    @property
    def identity(self) -> bool:
        """True when no coding is to be undone (the bytes come out as they go in)."""
        return not self._layers

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes of the next read, in pieces of at most ``piece`` bytes (none empty)."""
        return self._through(0, data)

    def close(self, *, complete: bool = True) -> Iterator[bytes]:
        """The decoded bytes still held, after the last read.

        Args:
            complete: the body was complete; False for one cut short (a recording that ended
                ``cut`` or ``timeout``), whose last member may then stop anywhere.

        Raises:
            ContentCodingError: with ``complete``, the body ends inside a member or a stream.
        """
        for index, layer in enumerate(self._layers):
            for out in layer.close(complete):
                yield from self._through(index + 1, out)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._layers):
            if data:
                yield data
            return
        for out in self._layers[index].feed(data):
            yield from self._through(index + 1, out)


def _decoded(decoder: Decoder, reads: Iterable[bytes | bytearray | memoryview], complete: bool) -> Iterator[bytes]:
    """Every piece ``decoder`` gives for ``reads``, then for the end of the body."""
    for read in reads:
        yield from decoder.feed(bytes(read))
    yield from decoder.close(complete=complete)


def decode(body: bytes | Iterable[bytes], header: str | None, *, limit: int | None = None,
           complete: bool = True) -> bytes:
    """``body`` (bytes or reads) decoded from its ``Content-Encoding`` ``header``.

    Args:
        limit: most decoded bytes (None: no bound); more raises :class:`ContentCodingError`.
        complete: see :meth:`Decoder.close`.

    Raises:
        ContentCodingError: an unknown coding, data that does not decode, or more than ``limit`` bytes.
    """
    decoder = Decoder(header)
    out: list[bytes] = []
    size = 0
    for piece in _decoded(decoder, [body] if isinstance(body, bytes | bytearray | memoryview) else body, complete):
        size += len(piece)
        if limit is not None and size > limit:
            raise ContentCodingError(decoder.header, f"it decodes to more than {limit} bytes")
        out.append(piece)
    return b"".join(out)


def decode_lenient(
    body: bytes, header: str | None, *, complete: bool = True,
) -> tuple[bytes, ContentCodingError | None]:
    """What of ``body`` decodes, and the error that stopped decoding (None: all of it did).

    For readers that show or check what they can (``check``): the bytes decoded before the
    error are returned with it (none for an unknown coding). ``complete``: see :meth:`Decoder.close`.
    """
    out: list[bytes] = []
    try:
        out.extend(_decoded(Decoder(header), [body], complete))
    except ContentCodingError as exc:
        return b"".join(out), exc
    return b"".join(out), None
