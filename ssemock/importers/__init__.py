"""Importers: VCR.py cassettes, HAR files, raw body files and one-JSON-per-line chunk files.

One family: every importer is registered in :mod:`ssemock.importers.registry` (name,
options, conversion function), which ``ssemock import`` and ``tools/import_realworld.py``
read. Foreign recordings keep no chunk boundaries (and most no timing): every importer
splits a body into one chunk per SSE block with :func:`ssemock.sse.split_blocks`, the
decoder's own line-end rule (a CRLF is one line end), cut after each blank line, bytes
unchanged; a compressed body (``Content-Encoding`` other than identity) stays one chunk
of the encoded bytes. Responses without timing are marked ``timing: none`` and replayed
without delay. Secrets are removed by the recorder's rules (:mod:`ssemock.redact`).
A 204 or 304 answer has no content (RFC 9110 section 15): a body recorded with one (a
browser's HAR may hold a 304's cached body) is dropped and the provenance says how many
(:data:`NO_CONTENT_NOTE`).

:func:`save_imported` writes the cassettes of one import run: source folders stay apart
in the output (``a/x.yaml`` and ``b/x.yaml`` become ``OUT/a/x.yaml`` and ``OUT/b/x.yaml``),
and nothing is written when two inputs would land in one file or a cassette exists
already (unless ``force``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from ..cassette import Cassette, Chunk, End, Request, Response, reason_phrase, save
from ..cassette.read import NO_CONTENT_STATUSES, parse_cassette
from ..cassette.write import cassette_doc
from ..coding import ContentCodingError, decode
from ..errors import CassetteError, ConfigError, ImportFormatError
from ..redact import Credentials, Filter, Report
from ..sse import split_blocks

__all__ = [
    "NO_CONTENT_NOTE", "check_loadable", "decoded_body", "output_paths", "request_from_url", "save_imported",
    "untimed_response",
]


def request_from_url(
    method: str, url: str, headers: list[tuple[str, str]], body: bytes | None
) -> tuple[Request, Credentials]:
    """A redacted :class:`Request` from a full URL, and the credentials it sent.

    The recorder's rules (:meth:`ssemock.redact.Filter.request`): secret headers (``Authorization``,
    ``Cookie``, names with a credential word), query parameters and JSON body fields are removed;
    key-shaped strings in the path, the other headers and the body are replaced. Pass the
    credentials to :func:`untimed_response` so that an echo of them in the answer goes too.
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    redacted = _FILTER.request(parts.path or "/", query, headers, body)
    request = Request(method=method.upper(), path=redacted.path, query=redacted.query,
                      headers=redacted.headers, body=redacted.body)
    return request, redacted.credentials


NO_CONTENT_NOTE = ("{} answered 204 or 304 with a body: the body was dropped (these statuses have no "
                   "content, RFC 9110 section 15; replayed, it would be read as the next response)")
"""The provenance note ``bodies_dropped`` (``{}``: how many entries or interactions)."""


def untimed_response(
    status: int, reason: str | None, headers: list[tuple[str, str]], body: bytes,
    credentials: Credentials | None = None,
) -> Response:
    """A response recorded without timing: one chunk per SSE block (or one encoded chunk).

    A 204 or 304 response gets no chunks, whatever ``body`` holds (see :data:`NO_CONTENT_NOTE`).

    Secrets are removed by the recorder's rules: secret headers (``Set-Cookie``…) dropped,
    key shapes and the request's ``credentials`` replaced. An encoded body (e.g. gzip) stays
    as it is unless its decoded text (or its encoded bytes: a gzip header's file name) holds a
    secret; it is then stored decoded, scrubbed, without the header.
    """
    kept = _FILTER.response_headers_scrubbed(headers, credentials, Report())
    if status in NO_CONTENT_STATUSES:
        body = b""
    encoding = next((v for k, v in kept if k.lower() == "content-encoding"), "identity").lower()
    if encoding.strip() not in ("identity", ""):
        plain = decoded_body(body, encoding)
        if plain is None or not (_FILTER.scan(plain, credentials) or _FILTER.scan(body, credentials)):
            pieces = [body]
        else:
            kept = [(k, v) for k, v in kept if k.lower() not in ("content-encoding", "content-length")]
            pieces = _scrubbed(split_blocks(plain), credentials)
    else:
        pieces = _scrubbed(split_blocks(body), credentials)
    return Response(
        status=status,
        reason=reason_phrase(reason),
        headers=kept,
        chunks=[Chunk(0.0, p) for p in pieces if p],
        end=End(0.0, "clean"),
        timed=False,
    )


_FILTER = Filter()


def _scrubbed(pieces: list[bytes], credentials: Credentials | None) -> list[bytes]:
    """The pieces with secrets replaced (one split over two pieces included)."""
    scrubber = _FILTER.scrubber(credentials)
    out = [data for piece in pieces for _, data in scrubber.feed(0.0, piece)]
    return out + [data for _, data in scrubber.close()]


def decoded_body(body: bytes, encoding: str) -> bytes | None:
    """``body`` decoded from its ``Content-Encoding`` value by :func:`ssemock.coding.decode` (every
    gzip member, zlib or raw deflate, stacked codings; any letter case), or None for a coding it
    does not decode or a body that does not decode."""
    try:
        return decode(body, encoding)
    except ContentCodingError:
        return None


def output_paths(sources: Sequence[Path], cassettes: Sequence[Cassette], output: Path) -> list[Path]:
    """Where each imported cassette goes: ``output / <folder of its source, relative to the
    sources' common folder> / <cassette name>.yaml`` (one input folder: straight under ``output``)."""
    folders = [Path(os.path.abspath(source)).parent for source in sources]
    root = Path(os.path.commonpath(folders)) if folders else Path()
    return [output / folder.relative_to(root) / f"{c.name}.yaml" for folder, c in zip(folders, cassettes)]


def check_loadable(source: Path, cassette: Cassette) -> None:
    """Check ``cassette`` with the loader's rules (:func:`~ssemock.cassette.read.parse_cassette` of what it writes).

    Raises:
        ImportFormatError: names ``source``, the field (as in the cassette written) and what was expected.
    """
    try:
        parse_cassette(cassette_doc(cassette), name=cassette.name, source=str(source))
    except CassetteError as exc:
        raise ImportFormatError(source, exc.field, f"{exc.expected} (in the cassette it would write)",
                                exc.got) from None


def save_imported(
    sources: Sequence[Path], cassettes: Sequence[Cassette], output: Path, *, force: bool = False
) -> list[Path]:
    """Write the cassettes imported from ``sources`` under ``output`` (see :func:`output_paths`).

    All or nothing: every cassette is checked with the cassette loader's rules (what
    ``serve`` and ``inspect`` will require of the file), and every target, before the first
    one is written.

    Returns:
        The files written, in the order of ``sources``.

    Raises:
        ImportFormatError: a cassette breaks a loader rule (e.g. a method that is not an HTTP
            token, a status outside 100-599); names the source file and the field.
        ConfigError: two sources would be written to one file (both named), or a target
            exists and ``force`` is False (named; it may hold hand edits).
        OSError: a file cannot be written.
    """
    for source, cassette in zip(sources, cassettes):
        check_loadable(source, cassette)
    targets = output_paths(sources, cassettes, output)
    seen: dict[Path, Path] = {}
    for source, target in zip(sources, targets):
        if target in seen:
            raise ConfigError(f"{seen[target]} and {source} would both be written to {target}; "
                              "import them into different -o directories")
        seen[target] = source
    existing = [t for t in targets if t.exists() or t.is_symlink()]
    if existing and not force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise ConfigError(f"{existing[0]}{more} exists and may hold hand edits; nothing written "
                          "(--force overwrites)")
    for cassette, target in zip(cassettes, targets):
        save(cassette, target)
    return targets
