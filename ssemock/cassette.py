"""Cassette format v1: interactions (request + recorded response), YAML, lossless.

A cassette is a YAML file whose first key is the format version::

    ssemock_cassette: 1
    name: openai-chat-demo              # optional; defaults to the file name
    provenance: {source: ..., licence: ...}   # optional, free-form
    interactions:
    - request:
        method: POST
        path: /v1/chat/completions
        query: [[alt, sse]]              # optional, list of [name, value]
        headers: {content-type: application/json}
        body: {json: {model: gpt-4o-mini, stream: true}}
        # body forms: {json: VALUE} | {text: STR} | {base64: STR}
        #             | {sha256: HEX, size: BYTES}   (large bodies, matched by digest)
        # no body key: the interaction matches any request body
      response:
        status: 200
        headers: {content-type: text/event-stream}
        timing: recorded                 # or "none": imported without timing
        start: 0.412                     # seconds from request sent to headers
        chunks:                          # one item per upstream read
        - t: 0.530                       # seconds from request sent
          text: |+
            data: {"choices": []}

        - {t: 0.531, base64: ZGF0YTog4p}  # chunks that are not UTF-8 on their own
        end: {t: 0.9, how: clean}        # clean | cut | reset | timeout | client_gone

Hand-written responses may give ``events:`` instead of ``chunks:`` (see
:func:`_events_to_chunks`): one chunk per event, ``interval`` seconds apart.

Times are float seconds from the moment the request was sent. Response bytes,
chunk boundaries and times round-trip exactly. Request bodies stored in the
``json`` form keep their JSON value (compared by value when matching), not their
exact bytes. Loading uses ``yaml.CSafeLoader`` when available (safe loading only).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import CassetteError, CassetteNotFoundError
from .sse import encode

__all__ = [
    "END_HOWS",
    "FORMAT_KEY",
    "FORMAT_VERSION",
    "Cassette",
    "Chunk",
    "End",
    "Interaction",
    "Request",
    "Response",
    "load_cassettes",
]

FORMAT_KEY = "ssemock_cassette"
FORMAT_VERSION = 1
END_HOWS = ("clean", "cut", "reset", "timeout", "client_gone")
"""How a recorded stream ended: ``clean`` (complete body), ``cut`` (connection closed
before the body was complete), ``reset`` (TCP reset), ``timeout`` (the recorder gave up),
``client_gone`` (the recording client disconnected first)."""

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(slots=True)
class Chunk:
    """One upstream read: ``data`` bytes that arrived ``t`` seconds after the request was sent."""

    t: float
    data: bytes


@dataclass(slots=True)
class End:
    """The end of a recorded response: time in seconds and how it ended (one of :data:`END_HOWS`)."""

    t: float = 0.0
    how: str = "clean"


@dataclass(slots=True)
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

    def json(self) -> Any:
        """The body parsed as JSON, or None when it is absent or not JSON."""
        return _parse_json(self.body)


@dataclass(slots=True)
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

    @property
    def body(self) -> bytes:
        """All chunk bytes joined."""
        return b"".join(c.data for c in self.chunks)

    def header(self, name: str, default: str | None = None) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``default``."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), default)


@dataclass(slots=True)
class Interaction:
    """One request and its recorded response."""

    request: Request
    response: Response


@dataclass
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

    # ---- loading -------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str], *, name: str | None = None) -> Cassette:
        """Read a cassette file.

        Args:
            path: the YAML file.
            name: the cassette name; default: ``name:`` in the file, else the file stem.

        Raises:
            CassetteNotFoundError: the file does not exist.
            CassetteError: the file is unreadable or malformed (names file and field).
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CassetteNotFoundError(str(p)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(p, "", "a readable UTF-8 YAML file", str(exc)) from None
        cassette = cls.loads(text, name=name or p.stem, source=str(p))
        cassette.path = p
        return cassette

    @classmethod
    def loads(cls, text: str, *, name: str = "cassette", source: str = "<string>") -> Cassette:
        """Parse cassette YAML text; ``source`` names it in errors. Raises :class:`CassetteError`."""
        try:
            doc = yaml.load(text, Loader=_Loader)  # noqa: S506 - safe loader
        except yaml.YAMLError as exc:
            raise CassetteError(source, "", "valid YAML", str(exc).replace("\n", " ")) from None
        return cls.from_dict(doc, name=name, source=source)

    @classmethod
    def from_dict(cls, doc: Any, *, name: str = "cassette", source: str = "<memory>") -> Cassette:
        """Build a cassette from parsed YAML. Raises :class:`CassetteError` naming the field."""
        v = _Validator(source)
        doc = v.mapping(doc, "")
        version = doc.get(FORMAT_KEY)
        if version != FORMAT_VERSION:
            raise CassetteError(
                source, FORMAT_KEY, f"format version {FORMAT_VERSION} (is this an ssemock cassette?"
                " VCR.py files are converted with 'ssemock import vcr')", version,
            )
        v.known(doc, "", {FORMAT_KEY, "name", "provenance", "interactions"})
        items = v.typed(doc.get("interactions", []), "interactions", list, "a list of interactions")
        return cls(
            name=v.typed(doc.get("name", name), "name", str, "a string"),
            interactions=[_interaction(v, item, f"interactions[{i}]") for i, item in enumerate(items)],
            provenance=dict(v.mapping(doc.get("provenance", {}), "provenance")),
        )

    # ---- saving --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The YAML document as plain data (format version key first)."""
        doc: dict[str, Any] = {FORMAT_KEY: FORMAT_VERSION, "name": self.name}
        if self.provenance:
            doc["provenance"] = self.provenance
        doc["interactions"] = [_interaction_doc(i) for i in self.interactions]
        return doc

    def dumps(self) -> str:
        """The cassette as YAML text; UTF-8 bodies appear as readable text blocks."""
        return yaml.dump(
            self.to_dict(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
        )

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
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_cassettes(directory: str | os.PathLike[str]) -> dict[str, Cassette]:
    """Load every ``*.yaml`` / ``*.yml`` cassette under ``directory`` (recursively).

    Returns:
        Cassettes by name: the path relative to ``directory`` without suffix, ``/``-separated.

    Raises:
        CassetteNotFoundError: the directory does not exist.
        CassetteError: a file is malformed (the first one found, named in the message).
    """
    root = Path(directory)
    if not root.is_dir():
        raise CassetteNotFoundError(str(root))
    found: dict[str, Cassette] = {}
    for file in sorted(_yaml_files(root)):
        key = file.relative_to(root).with_suffix("").as_posix()
        found[key] = Cassette.load(file, name=key)
        found[key].name = key
    return found


def _yaml_files(root: Path) -> Iterator[Path]:
    for pattern in ("*.yaml", "*.yml"):
        yield from (p for p in root.rglob(pattern) if not p.name.startswith("."))


# ---- YAML emitting: readable text blocks ------------------------------------------
class _Dumper(_BaseDumper):  # type: ignore[misc]
    pass


# Characters a literal block cannot carry unchanged: YAML folds CR and NEL into LF,
# LS/PS are line breaks too, and BOM/controls need escapes.
_BLOCK_UNSAFE = frozenset("\r\x85\u2028\u2029\ufeff") | frozenset(map(chr, range(0x20))) - {"\n"}


def _represent_str(dumper: Any, value: str) -> Any:
    style = None
    if "\n" in value and not (_BLOCK_UNSAFE & set(value)):
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


# ---- parsing helpers ----------------------------------------------------------------
class _Validator:
    """Type checks that raise :class:`CassetteError` naming the file and the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, expected: str, got: Any) -> CassetteError:
        return CassetteError(self.source, where, expected, got)

    def typed(self, value: Any, where: str, kind: type | tuple[type, ...], expected: str) -> Any:
        if not isinstance(value, kind) or (kind in (int, float, (int, float)) and isinstance(value, bool)):
            raise self.fail(where, expected, value)
        return value

    def mapping(self, value: Any, where: str) -> dict[str, Any]:
        return self.typed(value, where or "(top level)", dict, "a mapping")  # type: ignore[no-any-return]

    def known(self, doc: dict[str, Any], where: str, keys: set[str]) -> None:
        extra = sorted(set(map(str, doc)) - keys)
        if extra:
            path = f"{where}.{extra[0]}" if where else extra[0]
            raise CassetteError(self.source, path, f"one of the keys {', '.join(sorted(keys))}", None)

    def seconds(self, value: Any, where: str) -> float:
        self.typed(value, where, (int, float), "a number of seconds >= 0")
        if not math.isfinite(value) or value < 0:
            raise self.fail(where, "a number of seconds >= 0", value)
        return float(value)

    def pairs(self, value: Any, where: str) -> list[tuple[str, str]]:
        """Headers: a mapping name -> value or list of values, or a list of [name, value]."""
        out: list[tuple[str, str]] = []
        if isinstance(value, dict):
            for name, val in value.items():
                vals = val if isinstance(val, list) else [val]
                for j, one in enumerate(vals):
                    sub = f"{where}.{name}" + (f"[{j}]" if isinstance(val, list) else "")
                    out.append((str(name), _scalar_text(self, one, sub)))
            return out
        for i, pair in enumerate(self.typed(value, where, list, "a mapping or a list of [name, value]")):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise self.fail(f"{where}[{i}]", "a [name, value] pair", pair)
            out.append((str(pair[0]), _scalar_text(self, pair[1], f"{where}[{i}][1]")))
        return out


def _scalar_text(v: _Validator, value: Any, where: str) -> str:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise v.fail(where, "a string", value)


def _interaction(v: _Validator, item: Any, where: str) -> Interaction:
    doc = v.mapping(item, where)
    v.known(doc, where, {"request", "response"})
    if "response" not in doc:
        raise v.fail(f"{where}.response", "a response mapping", None)
    return Interaction(
        _request(v, doc.get("request", {}), f"{where}.request"),
        _response(v, doc["response"], f"{where}.response"),
    )


def _request(v: _Validator, item: Any, where: str) -> Request:
    doc = v.mapping(item, where)
    v.known(doc, where, {"method", "path", "query", "headers", "body"})
    method = v.typed(doc.get("method", "GET"), f"{where}.method", str, "an HTTP method").upper()
    path = v.typed(doc.get("path", "/"), f"{where}.path", str, "a URL path starting with /")
    if not path.startswith("/"):
        raise v.fail(f"{where}.path", "a URL path starting with /", path)
    req = Request(
        method=method,
        path=path,
        query=v.pairs(doc.get("query", []), f"{where}.query"),
        headers=v.pairs(doc.get("headers", {}), f"{where}.headers"),
    )
    if "body" in doc:
        _body(v, doc["body"], f"{where}.body", req)
    return req


def _body(v: _Validator, item: Any, where: str, req: Request) -> None:
    forms = "one of {json: VALUE}, {text: STR}, {base64: STR}, {sha256: HEX, size: BYTES}"
    doc = v.typed(item, where, dict, forms)
    if set(doc) == {"json"}:
        req.body = json.dumps(doc["json"], separators=(",", ":"), ensure_ascii=False).encode()
    elif set(doc) == {"text"}:
        req.body = v.typed(doc["text"], f"{where}.text", str, "a string").encode("utf-8")
    elif set(doc) == {"base64"}:
        req.body = _b64(v, doc["base64"], f"{where}.base64")
    elif set(doc) == {"sha256", "size"}:
        digest = v.typed(doc["sha256"], f"{where}.sha256", str, "64 hex digits")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise v.fail(f"{where}.sha256", "64 lower-case hex digits", digest)
        req.body_sha256 = digest
        req.body_size = v.typed(doc["size"], f"{where}.size", int, "a size in bytes")
    else:
        raise v.fail(where, forms, doc)


def _b64(v: _Validator, value: Any, where: str) -> bytes:
    text = v.typed(value, where, str, "base64 text")
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise v.fail(where, "valid base64", text) from None


def _response(v: _Validator, item: Any, where: str) -> Response:
    doc = v.mapping(item, where)
    v.known(
        doc, where,
        {"status", "reason", "headers", "timing", "start", "chunks", "events", "interval", "eol", "end"},
    )
    status = v.typed(doc.get("status", 200), f"{where}.status", int, "an HTTP status code 100-599")
    if not 100 <= status <= 599:
        raise v.fail(f"{where}.status", "an HTTP status code 100-599", status)
    timing = doc.get("timing", "recorded")
    if timing not in ("recorded", "none"):
        raise v.fail(f"{where}.timing", "'recorded' or 'none'", timing)
    resp = Response(
        status=status,
        reason=v.typed(doc["reason"], f"{where}.reason", str, "a string") if "reason" in doc else None,
        headers=v.pairs(doc.get("headers", {}), f"{where}.headers"),
        start=v.seconds(doc.get("start", 0.0), f"{where}.start"),
        timed=timing == "recorded",
    )
    if "chunks" in doc and "events" in doc:
        raise v.fail(where, "either 'chunks' or 'events', not both", None)
    if "events" in doc:
        resp.chunks = _events_to_chunks(v, doc, where, resp.start)
    else:
        resp.chunks = _chunks(v, doc.get("chunks", []), f"{where}.chunks")
    last = resp.chunks[-1].t if resp.chunks else resp.start
    end_doc = v.mapping(doc.get("end", {}), f"{where}.end")
    v.known(end_doc, f"{where}.end", {"t", "how"})
    how = end_doc.get("how", "clean")
    if how not in END_HOWS:
        raise v.fail(f"{where}.end.how", f"one of {', '.join(END_HOWS)}", how)
    resp.end = End(v.seconds(end_doc.get("t", last), f"{where}.end.t"), how)
    return resp


def _chunks(v: _Validator, items: Any, where: str) -> list[Chunk]:
    out: list[Chunk] = []
    for i, item in enumerate(v.typed(items, where, list, "a list of chunks")):
        at = f"{where}[{i}]"
        doc = v.mapping(item, at)
        v.known(doc, at, {"t", "text", "base64"})
        t = v.seconds(doc.get("t", 0.0), f"{at}.t")
        if ("text" in doc) == ("base64" in doc):
            raise v.fail(at, "exactly one of 'text' or 'base64'", sorted(doc))
        if "text" in doc:
            data = v.typed(doc["text"], f"{at}.text", str, "a string").encode("utf-8")
        else:
            data = _b64(v, doc["base64"], f"{at}.base64")
        out.append(Chunk(t, data))
    return out


_EVENT_KEYS = {"data", "event", "id", "retry", "comment"}


def _events_to_chunks(v: _Validator, doc: dict[str, Any], where: str, start: float) -> list[Chunk]:
    """Hand-written events: one chunk per event, ``interval`` seconds apart after ``start``.

    Each event is a mapping with any of ``data`` (string, or any other YAML value,
    written as compact JSON), ``event``, ``id``, ``retry`` (milliseconds) and
    ``comment``; ``eol`` (``lf``, ``crlf``, ``cr``) picks the line ending.
    """
    eols = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
    eol = doc.get("eol", "lf")
    if eol not in eols:
        raise v.fail(f"{where}.eol", "one of lf, crlf, cr", eol)
    interval = v.seconds(doc.get("interval", 0.0), f"{where}.interval")
    chunks = []
    for i, item in enumerate(v.typed(doc["events"], f"{where}.events", list, "a list of events")):
        at = f"{where}.events[{i}]"
        ev = v.mapping(item, at)
        v.known(ev, at, _EVENT_KEYS)
        data = ev.get("data")
        if data is not None and not isinstance(data, str):
            data = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        retry = ev.get("retry")
        if retry is not None:
            v.typed(retry, f"{at}.retry", int, "milliseconds (an integer >= 0)")
        try:
            block = encode(
                data,
                event=_opt_str(v, ev, "event", at),
                id=_opt_str(v, ev, "id", at),
                retry=retry,
                comment=_opt_str(v, ev, "comment", at),
                eol=eols[eol],
            )
        except ValueError as exc:
            raise v.fail(at, "an encodable event", str(exc)) from None
        chunks.append(Chunk(round(start + interval * (i + 1), 9) if interval else start, block))
    return chunks


def _opt_str(v: _Validator, ev: dict[str, Any], key: str, at: str) -> str | None:
    if ev.get(key) is None:
        return None
    return _scalar_text(v, ev[key], f"{at}.{key}")


# ---- dumping helpers ----------------------------------------------------------------
def _headers_doc(pairs: list[tuple[str, str]]) -> dict[str, Any] | list[list[str]]:
    """A mapping (repeated names as lists) when that keeps the order, else ``[name, value]`` pairs."""
    names = [name for i, (name, _) in enumerate(pairs) if i == 0 or pairs[i - 1][0] != name]
    if len(names) != len(set(names)):
        return [[name, value] for name, value in pairs]
    doc: dict[str, Any] = {}
    for name, value in pairs:
        if name in doc:
            doc[name] = (doc[name] if isinstance(doc[name], list) else [doc[name]]) + [value]
        else:
            doc[name] = value
    return doc


def _interaction_doc(inter: Interaction) -> dict[str, Any]:
    req, resp = inter.request, inter.response
    rdoc: dict[str, Any] = {"method": req.method, "path": req.path}
    if req.query:
        rdoc["query"] = [list(p) for p in req.query]
    if req.headers:
        rdoc["headers"] = _headers_doc(req.headers)
    if req.body_sha256 is not None:
        rdoc["body"] = {"sha256": req.body_sha256, "size": req.body_size}
    elif req.body is not None:
        rdoc["body"] = _body_doc(req.body)
    sdoc: dict[str, Any] = {"status": resp.status}
    if resp.reason is not None:
        sdoc["reason"] = resp.reason
    sdoc["headers"] = _headers_doc(resp.headers)
    sdoc["timing"] = "recorded" if resp.timed else "none"
    if resp.timed:
        sdoc["start"] = resp.start
    sdoc["chunks"] = [_chunk_doc(c, resp.timed) for c in resp.chunks]
    sdoc["end"] = {"t": resp.end.t, "how": resp.end.how} if resp.timed else {"how": resp.end.how}
    return {"request": rdoc, "response": sdoc}


def _body_doc(body: bytes) -> dict[str, Any]:
    parsed = _parse_json(body)
    if isinstance(parsed, (dict, list)):
        return {"json": parsed}
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii")}


def _chunk_doc(chunk: Chunk, timed: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"t": chunk.t} if timed else {}
    try:
        doc["text"] = chunk.data.decode("utf-8")
    except UnicodeDecodeError:
        doc["base64"] = base64.b64encode(chunk.data).decode("ascii")
    return doc


def _parse_json(body: bytes | None) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def body_digest(body: bytes) -> str:
    """Hex SHA-256 of a request body, as stored in ``body: {sha256: ...}``."""
    return hashlib.sha256(body).hexdigest()
