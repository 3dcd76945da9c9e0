"""The cassette data model: Cassette, Interaction, Request, Response, Chunk, End.

Loading and validation live in :mod:`ssemock.cassette.read`, YAML writing in
:mod:`ssemock.cassette.write`; the format itself is described in :mod:`ssemock.cassette`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CassetteError, CassetteNotFoundError, JSONTooDeepError
from ..limits import MAX_CASSETTE_FILE, MAX_JSON_DEPTH, NOT_JSON, claim_name, json_depth_exceeds, load_json

FORMAT_KEY = "ssemock_cassette"
FORMAT_VERSION = 1
END_HOWS = ("clean", "cut", "reset", "timeout", "client_gone")
"""How a recorded stream ended: ``clean`` (complete body), ``cut`` (connection closed
before the body was complete), ``reset`` (TCP reset), ``timeout`` (the recorder gave up),
``client_gone`` (the recording client disconnected first)."""


MAX_REASON = 512
"""Characters a response's reason phrase may hold."""

NO_CONTENT_STATUSES = frozenset({204, 304})
"""Final statuses whose responses have no content (RFC 9110 sections 15.3.5 and 15.4.5, RFC 9112
section 6.3): a body after them would be read as the start of the next response."""


def no_content(method: str, status: int) -> bool:
    """Whether an answer has no content: to a HEAD, or with status 1xx, 204 or 304 (RFC 9110 section 15)."""
    return method == "HEAD" or status < 200 or status in NO_CONTENT_STATUSES


_REASON = r"[\t\x20-\x7e]*"  # compiled on first use (re's cache), not at every start


def reason_phrase(text: str | None) -> str | None:
    """``text`` when it can be sent as a status line's reason phrase (RFC 9112 section 4: tabs,
    spaces and visible ASCII, here at most :data:`MAX_REASON` characters), else None (the
    standard phrase is sent)."""
    if text is None or len(text) > MAX_REASON or not re.fullmatch(_REASON, text):
        return None
    return text


@dataclass(slots=True, init=False, repr=False, eq=False)  # methods written out: none generated at import
class Chunk:
    """One upstream read: ``data`` bytes that arrived ``t`` seconds after the request was sent."""

    t: float
    data: bytes

    def __init__(self, t: float, data: bytes) -> None:
        self.t = t
        self.data = data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.t, self.data) == (other.t, other.data)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(t={self.t!r}, data={self.data!r})"


@dataclass(slots=True, init=False, repr=False, eq=False)  # methods written out: none generated at import
class End:
    """The end of a recorded response: time in seconds and how it ended (one of :data:`END_HOWS`)."""

    t: float = 0.0
    how: str = "clean"

    def __init__(self, t: float = 0.0, how: str = "clean") -> None:
        self.t = t
        self.how = how

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, End) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.t, self.how) == (other.t, other.how)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(t={self.t!r}, how={self.how!r})"


@dataclass(slots=True, init=False, repr=False, eq=False)  # methods written out: none generated at import
class Request:
    """A recorded request, after redaction.

    Attributes:
        method: upper-case HTTP method.
        path: URL path, starting with ``/``.
        query: query parameters as ``(name, value)`` pairs, in order.
        headers: ``(name, value)`` pairs, names as recorded.
        body: the body bytes; None when the interaction matches any body.
        body_sha256: hex SHA-256 of a body stored by digest (then ``body`` is None).
        body_size: size in bytes of a body stored by digest.
    """

    method: str = "GET"
    path: str = "/"
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | None = None
    body_sha256: str | None = None
    body_size: int | None = None
    # (body it was parsed from, value or NOT_JSON or _TOO_DEEP, depth bound it was parsed with):
    # matching asks every candidate for its JSON on every request; a received body is parsed
    # once for the depth check, the journal, stubs and matching alike.
    _parsed: tuple[bytes | None, Any, int] | None = field(default=None, init=False, repr=False, compare=False)
    # (body it was keyed from, key): see :func:`ssemock.match_index.body_key` (``keep=True``).
    _body_key: tuple[bytes | None, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __init__(
        self,
        method: str = "GET",
        path: str = "/",
        query: list[tuple[str, str]] | None = None,
        headers: list[tuple[str, str]] | None = None,
        body: bytes | None = None,
        body_sha256: str | None = None,
        body_size: int | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.query = [] if query is None else query
        self.headers = [] if headers is None else headers
        self.body = body
        self.body_sha256 = body_sha256
        self.body_size = body_size
        self._parsed = None
        self._body_key = None

    def _compared(self) -> tuple[Any, ...]:
        return (self.method, self.path, self.query, self.headers, self.body, self.body_sha256, self.body_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(method={self.method!r}, path={self.path!r}, query={self.query!r}, "
                f"headers={self.headers!r}, body={self.body!r}, body_sha256={self.body_sha256!r}, "
                f"body_size={self.body_size!r})")

    def json(self) -> Any:
        """The body parsed as JSON (a new value each call), or None when it is absent or not JSON."""
        return parse_json(self.body)

    def json_view(self, *, strict: bool = False, max_depth: int = MAX_JSON_DEPTH) -> Any:
        """Like :meth:`json`, but parsed once per body and shared: read it, never change it.

        The body is parsed on the first call only, whatever ``strict`` and ``max_depth`` (a
        later call with a smaller ``max_depth`` checks the depth of the value already parsed).

        Raises:
            JSONTooDeepError: with ``strict``, the body is JSON nested deeper than ``max_depth``
                (default :data:`~ssemock.limits.MAX_JSON_DEPTH`; else such a body reads as None).
        """
        cached = self._parsed
        if cached is not None and cached[0] is self.body:
            value, bound = cached[1], cached[2]
            if value is _TOO_DEEP and max_depth > bound:
                value = self._parse(max_depth)  # deeper than the former bound: may be within this one
            elif value is not _TOO_DEEP and value is not NOT_JSON and max_depth < bound \
                    and json_depth_exceeds(value, max_depth):
                value = _TOO_DEEP
        else:
            value = self._parse(max_depth)
        if value is _TOO_DEEP:
            if strict:
                raise JSONTooDeepError(max_depth)
            return None
        return None if value is NOT_JSON else value

    def is_parsed(self) -> bool:
        """Whether :meth:`json_view` has parsed the current body already (then it costs nothing)."""
        return self._parsed is not None and self._parsed[0] is self.body

    def _parse(self, max_depth: int) -> Any:
        try:
            value = load_json(self.body, max_depth=max_depth)
        except JSONTooDeepError:
            value = _TOO_DEEP
        self._parsed = (self.body, value, max_depth)
        return value


_TOO_DEEP = object()  # json_view's note: the body is JSON nested deeper than the bound it was parsed with


@dataclass(slots=True, init=False, repr=False, eq=False)  # methods written out: none generated at import
class Response:
    """A recorded response.

    Attributes:
        status: HTTP status code.
        reason: reason phrase, or None for the standard one.
        headers: ``(name, value)`` pairs as recorded (``Content-Encoding`` kept: the
            chunks are the bytes on the wire, still encoded).
        chunks: the body as it was read, with times.
        start: seconds from request sent to response headers.
        end: when and how the body ended.
        timed: False when the recording kept no timing (e.g. imported from VCR.py):
            every ``t`` is then 0 and replay sends the chunks without delay.
    """

    status: int = 200
    reason: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    start: float = 0.0
    end: End = field(default_factory=End)
    timed: bool = True

    def __init__(
        self,
        status: int = 200,
        reason: str | None = None,
        headers: list[tuple[str, str]] | None = None,
        chunks: list[Chunk] | None = None,
        start: float = 0.0,
        end: End | None = None,
        timed: bool = True,
    ) -> None:
        self.status = status
        self.reason = reason
        self.headers = [] if headers is None else headers
        self.chunks = [] if chunks is None else chunks
        self.start = start
        self.end = End() if end is None else end
        self.timed = timed

    def _compared(self) -> tuple[Any, ...]:
        return (self.status, self.reason, self.headers, self.chunks, self.start, self.end, self.timed)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Response) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(status={self.status!r}, reason={self.reason!r}, "
                f"headers={self.headers!r}, chunks={self.chunks!r}, start={self.start!r}, end={self.end!r}, "
                f"timed={self.timed!r})")

    @property
    def body(self) -> bytes:
        """All chunk bytes joined."""
        return b"".join(c.data for c in self.chunks)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``default``."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), default)


@dataclass(slots=True, init=False, repr=False, eq=False)  # methods written out: none generated at import
class Interaction:
    """One request and its recorded response."""

    request: Request
    response: Response

    def __init__(self, request: Request, response: Response) -> None:
        self.request = request
        self.response = response

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Interaction) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.request, self.response) == (other.request, other.response)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(request={self.request!r}, response={self.response!r})"


@dataclass(init=False, repr=False, eq=False)  # methods written out: none generated at import
class Cassette:
    """A named list of interactions, with its provenance.

    Attributes:
        name: the cassette name (file name without ``.yaml`` by default).
        interactions: recorded interactions, in recording order.
        provenance: free-form mapping: source repository, path, licence, importer, notes.
        path: the file it was loaded from or saved to, if any.
    """

    name: str
    interactions: list[Interaction] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def __init__(
        self,
        name: str,
        interactions: list[Interaction] | None = None,
        provenance: dict[str, Any] | None = None,
        path: Path | None = None,
    ) -> None:
        self.name = name
        self.interactions = [] if interactions is None else interactions
        self.provenance = {} if provenance is None else provenance
        self.path = path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cassette) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.interactions, self.provenance, self.path) == (
            other.name, other.interactions, other.provenance, other.path)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(name={self.name!r}, interactions={self.interactions!r}, "
                f"provenance={self.provenance!r}, path={self.path!r})")

    # ---- loading -------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str], *, name: str | None = None) -> Cassette:
        """Read a cassette file.

        Args:
            path: the YAML file.
            name: the cassette name; default: ``name:`` in the file, else the file stem.

        Raises:
            CassetteNotFoundError: the file does not exist.
            CassetteError: the file is unreadable, larger than
                :data:`~ssemock.limits.MAX_CASSETTE_FILE` (512 MiB) or malformed (names file and field).
            ConfigError: ``SSEMOCK_CACHE_MAX_BYTES`` is invalid (see :mod:`ssemock.cassette.cache`).

        A file of 64 KiB or more is answered from the cache of parsed cassettes when its
        bytes have been loaded before (see :mod:`ssemock.cassette.cache`).
        """
        from .read import load_file

        p = Path(path)
        cassette = load_file(p, name=name or p.stem, limit=MAX_CASSETTE_FILE)
        cassette.path = p
        return cassette

    @classmethod
    def loads(cls, text: str, *, name: str = "cassette", source: str = "<string>") -> Cassette:
        """Parse cassette YAML text; ``source`` names it in errors. Raises :class:`CassetteError`.

        An interaction torn by a recorder killed while appending it is left out
        (see :mod:`ssemock.cassette.append`).
        """
        from .append import complete_text
        from .read import cassette_items, load_yaml

        return cls.from_dict(load_yaml(complete_text(text), source, items=cassette_items()), name=name, source=source)

    @classmethod
    def from_dict(cls, doc: Any, *, name: str = "cassette", source: str = "<memory>") -> Cassette:
        """Build a cassette from parsed YAML. Raises :class:`CassetteError` naming the field."""
        from .read import parse_cassette

        return parse_cassette(doc, name=name, source=source)

    # ---- saving --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The YAML document as plain data (format version key first)."""
        from .write import cassette_doc

        return cassette_doc(self)

    def dumps(self) -> str:
        """The cassette as YAML text; UTF-8 bodies appear as readable text blocks."""
        from .write import dump_yaml

        return dump_yaml(self.to_dict())

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the cassette atomically (temporary file in the same directory, then rename).

        Args:
            path: target file; default: :attr:`path`.

        Returns:
            The path written.

        Raises:
            ValueError: no path given and none known.
        """
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("Cassette.save() needs a path")
        atomic_write(target, self.dumps())
        self.path = target
        return target


def atomic_write(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` via a temporary file and ``os.replace`` (atomic on POSIX)."""
    from .append import atomic_file

    with atomic_file(target) as out:
        out.write(text)


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
    from . import cache
    from .read import read_file

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
        found[key] = Cassette.load(file, name=key)
        found[key].name = key
    if contents:
        cache.store_set(contents, list(found.values()))
    return found


def _yaml_files(root: Path) -> Iterator[Path]:
    for pattern in ("*.yaml", "*.yml"):
        yield from (p for p in root.rglob(pattern) if not p.name.startswith("."))


def parse_json(body: bytes | None) -> Any:
    """``body`` as JSON, or None when it is empty, not JSON, larger than
    :data:`~ssemock.limits.MAX_JSON_PARSE` (1 MiB) or nested deeper than
    :data:`~ssemock.limits.MAX_JSON_DEPTH` (such bodies are compared as bytes)."""
    try:
        value = load_json(body)
    except JSONTooDeepError:
        return None
    return None if value is NOT_JSON else value


def body_digest(body: bytes) -> str:
    """Hex SHA-256 of a request body, as stored in ``body: {sha256: ...}``."""
    return hashlib.sha256(body).hexdigest()
