"""What is secret, and the filter that removes it before anything is written down.

Used wherever a request or response is written down (cassettes, imports, the
journal) so that no API key, token or cookie is ever kept:

* secret **headers** and **query parameters** are dropped (by case-insensitive name);
* values at user-given **JSON body paths** become ``"REDACTED"``;
* **key-shaped strings** (:data:`KEY_PATTERN`: ``sk-…``, ``sk-ant-…``, ``AIza…``,
  ``Bearer …``) and user-given regular expressions are replaced by ``REDACTED``
  wherever they appear: header values, query values, bodies, streamed chunks;
  also when a JSON string escapes some of their characters as ``\\u00XX`` (or ``/``
  as ``\\/``), e.g. ``sk\\u002dproj-…``, ``AIza\\u0053y…``. Escapes beyond ASCII
  (``\\u0441`` for a look-alike letter) and keys built up from pieces are not caught.

Streamed response bodies are scrubbed by :class:`ChunkScrubber`, which also finds a
secret split across two reads (it holds back the last bytes of a read until the
next one shows whether the secret goes on). Scrubbing changes the recorded bytes
on purpose: a secret is never worth keeping byte-exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import RecorderConfigError

__all__ = [
    "KEY_PATTERN",
    "REDACTED",
    "SECRET_QUERY_PARAMS",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
    "ChunkScrubber",
    "Filter",
    "redact_pairs",
    "scrub_text",
]

REDACTED = "REDACTED"

SECRET_REQUEST_HEADERS = frozenset(
    {
        "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
        "cookie", "openai-organization", "openai-project",
    }
)
SECRET_RESPONSE_HEADERS = frozenset(
    {"set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"}
)
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "access_token", "token"})

_ESCAPE = r"\\u00[2-7][0-9A-Fa-f]"  # a JSON \uXXXX escape of a printable ASCII character
_SLASH = r"|\\/"  # JSON may escape "/" as "\/"


def _lit(word: str, *, any_case: bool = False) -> str:
    """``word``, each character also matched as its JSON ``\\u00XX`` escape (of either case)."""
    return "".join(f"(?:{re.escape(c)}|{_escape_of(c, any_case)})" for c in word)


def _escape_of(char: str, any_case: bool) -> str:
    codes = {ord(char.lower()), ord(char.upper())} if any_case else {ord(char)}
    return "|".join(rf"\\u00{n >> 4:x}[{''.join(sorted({f'{n & 15:x}', f'{n & 15:X}'}))}]" for n in sorted(codes))


def _run(chars: str, least: int, extra: str = "") -> str:
    """At least ``least`` of ``chars`` (a character class body) or their JSON escapes."""
    return f"(?:[{chars}]|{_ESCAPE}{extra}){{{least},}}"


# Key-shaped strings: OpenAI / Anthropic keys, Google API keys, bearer tokens; also when a
# JSON string escapes some of their characters (``sk\u002dproj-…``, ``AIza\u0053y…``).
KEY_PATTERN = re.compile(
    f"{_lit('sk-ant-')}{_run('A-Za-z0-9_-', 8)}"
    f"|{_lit('sk-')}(?:proj-|svcacct-)?{_run('A-Za-z0-9_-', 16)}"
    f"|{_lit('AIza')}{_run('0-9A-Za-z_-', 30)}"
    f"|(?i:{_lit('bearer', any_case=True)})\\s+{_run('A-Za-z0-9._~+/=-', 12, _SLASH)}"
)

# Bytes a key-shaped string may continue with: a read ending in them is held back.
_KEY_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-\\"
# Lower case; each KEY_PATTERN match holds one: its start as is, or an escape of a character of it.
_KEY_WORDS = (b"sk-", b"aiza", b"bearer")
_ESCAPE_WORDS = tuple(sorted({f"\\u{ord(c):04x}".encode() for c in "sk-AIzabearBER"}))
# Proper beginnings of the words: a read ending in one is held back.
_WORD_STARTS = frozenset(w[:k] for w in (*_KEY_WORDS, *_ESCAPE_WORDS) for k in range(1, len(w)))
_HOLD_MIN = 64  # bytes always held back (covers "Bearer " and short user patterns)
_HOLD_MAX = 4096  # a secret longer than this that is split across reads is scrubbed in pieces


def redact_pairs(pairs: Iterable[tuple[str, str]], secret: Iterable[str]) -> list[tuple[str, str]]:
    """Drop the pairs whose (case-insensitive) name is in ``secret``; keep order of the rest."""
    names = {s.lower() for s in secret}
    return [(k, v) for k, v in pairs if k.lower() not in names]


def scrub_text(text: str) -> tuple[str, int]:
    """Replace key-shaped strings by ``REDACTED``.

    Returns:
        The scrubbed text and the number of replacements.
    """
    return KEY_PATTERN.subn(REDACTED, text)


@dataclass(frozen=True)
class Filter:
    """What is removed from a recording before it is written (VCR.py's "filter").

    The defaults are always applied; the arguments add to them.

    Args:
        request_headers: extra request header names to drop (case-insensitive).
        response_headers: extra response header names to drop.
        query_params: extra query parameter names to drop.
        json_paths: request body JSON paths whose value becomes ``"REDACTED"``: dotted
            keys, ``*`` for any key or list item, e.g. ``"user"``, ``"metadata.user_id"``,
            ``"messages.*.name"``.
        patterns: extra regular expressions; every match is replaced by ``REDACTED``.

    Raises:
        RecorderConfigError: a pattern is not a valid regular expression, or matches
            the empty string; a name or a JSON path (or one of its keys) is empty.
    """

    request_headers: frozenset[str] = frozenset()
    response_headers: frozenset[str] = frozenset()
    query_params: frozenset[str] = frozenset()
    json_paths: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    _text: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _bytes: re.Pattern[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lower = {n: frozenset(s.lower() for s in getattr(self, n))
                 for n in ("request_headers", "response_headers", "query_params")}
        for name, value in lower.items():
            if "" in value:
                raise RecorderConfigError(f"filter {name.replace('_', ' ')}: a name must not be empty")
            object.__setattr__(self, name, value)
        for path in self.json_paths:
            if "" in path.split("."):
                raise RecorderConfigError(f"filter JSON path {path!r} must be keys separated by '.', none empty")
        sources = [KEY_PATTERN.pattern]
        for pattern in self.patterns:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise RecorderConfigError(f"filter pattern {pattern!r} is not a regular expression: {exc}") from None
            if compiled.fullmatch(""):
                raise RecorderConfigError(f"filter pattern {pattern!r} matches the empty string")
            sources.append(pattern)
        joined = "|".join(f"(?:{s})" for s in sources)
        object.__setattr__(self, "_text", re.compile(joined))
        object.__setattr__(self, "_bytes", re.compile(joined.encode("utf-8")))

    @property
    def secret_request_headers(self) -> frozenset[str]:
        """Default plus extra request header names (lower case)."""
        return SECRET_REQUEST_HEADERS | self.request_headers

    @property
    def secret_response_headers(self) -> frozenset[str]:
        """Default plus extra response header names (lower case)."""
        return SECRET_RESPONSE_HEADERS | self.response_headers

    @property
    def secret_query_params(self) -> frozenset[str]:
        """Default plus extra query parameter names (lower case)."""
        return SECRET_QUERY_PARAMS | self.query_params

    def text(self, text: str) -> tuple[str, int]:
        """``text`` with every key-shaped string and pattern match replaced; and the count."""
        return self._text.subn(REDACTED, text)

    def name(self, text: str) -> str:
        """:meth:`text` for file names: also replaces what is key-shaped once lower-cased."""
        text, _ = self.text(text)
        lowered = text.lower()
        if len(lowered) != len(text):  # non-ASCII case mapping: offsets would not line up
            return text
        for m in reversed(list(self._text.finditer(lowered))):
            text = text[: m.start()] + REDACTED + text[m.end() :]
        return text

    def value(self, value: Any) -> tuple[Any, int]:
        """A JSON-like value (dicts, lists, strings) with :meth:`text` applied to every string."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            pairs = [self.value(v) for v in value]
            return [v for v, _ in pairs], sum(n for _, n in pairs)
        if isinstance(value, dict):
            hits, out = 0, {}
            for k, v in value.items():
                out[k], n = self.value(v)
                hits += n
            return out, hits
        return value, 0

    def pairs(self, pairs: Iterable[tuple[str, str]], secret: Iterable[str]) -> tuple[list[tuple[str, str]], list[str]]:
        """Drop pairs named in ``secret``, scrub the rest; returns the pairs and what was removed.

        The report lists the dropped names and ``"<name> (key-shaped value)"`` for scrubbed values.
        """
        names = {s.lower() for s in secret}
        kept, report = [], []
        for k, v in pairs:
            if k.lower() in names:
                report.append(k)
                continue
            clean, hits = self.text(v)
            if hits:
                report.append(f"{k} (key-shaped value)")
            kept.append((k, clean))
        return kept, report

    def body(self, body: bytes) -> tuple[bytes, list[str]]:
        """A request body with JSON paths redacted and key-shaped strings scrubbed.

        A JSON body is re-serialised compactly only when something changed (it is
        stored and matched by JSON value). A body that is not UTF-8 is returned unchanged.
        """
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            doc = None
        report: list[str] = []
        if isinstance(doc, (dict, list)):
            for path in self.json_paths:
                if _redact_path(doc, path.split(".")):
                    report.append(f"body {path}")
            doc, hits = self.value(doc)
            if hits:
                report.append(f"body: {hits} key-shaped string(s)")
            if report:
                return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), report
            return body, report
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body, report
        clean, hits = self.text(text)
        if hits:
            report.append(f"body: {hits} key-shaped string(s)")
            return clean.encode("utf-8"), report
        return body, report

    def scrubber(self) -> ChunkScrubber:
        """A new :class:`ChunkScrubber` for one streamed body."""
        return ChunkScrubber(self._bytes, custom=bool(self.patterns))


def _has_key_word(data: bytes) -> bool:
    low = data.lower()
    if any(word in low for word in _KEY_WORDS):
        return True
    return b"\\u00" in low and any(word in low for word in _ESCAPE_WORDS)


def _redact_path(doc: Any, keys: list[str]) -> bool:
    if not keys:
        return False
    head, rest = keys[0], keys[1:]
    if isinstance(doc, dict):
        targets = list(doc) if head == "*" else [head] if head in doc else []
    elif isinstance(doc, list):
        indexes = range(len(doc))
        targets = list(indexes) if head == "*" else [int(head)] if head.isdigit() and int(head) in indexes else []
    else:
        return False
    changed = False
    for key in targets:
        if rest:
            changed |= _redact_path(doc[key], rest)
        else:
            doc[key] = REDACTED
            changed = True
    return changed


class ChunkScrubber:
    """Scrubs a body that arrives in reads, keeping each read's time (sans I/O).

    :meth:`feed` takes one read and returns the reads that are now safe to keep,
    each scrubbed; the end of a read that a secret could continue in is held back
    (at least 64 bytes, at most 4096) until the next read or :meth:`close`. A
    secret split across reads is replaced in the read where it starts; the read
    holding only its remainder loses those bytes (and is dropped if empty).

    Attributes:
        hits: the number of replacements so far.
    """

    def __init__(self, pattern: re.Pattern[bytes], *, custom: bool = True) -> None:
        self._pattern = pattern
        self._custom = custom
        self._marker = REDACTED.encode("ascii")
        self._pending: list[tuple[float, bytes]] = []
        self._dirty = False  # held-back bytes may hold a key word
        self._tail = b""  # the last 8 bytes fed
        self.hits = 0

    def feed(self, t: float, data: bytes) -> list[tuple[float, bytes]]:
        """Add one read (``data`` that arrived at ``t`` seconds); returns the reads now final."""
        # The last bytes fed, whatever the reads: a key word may be split over several.
        window = self._tail + data
        self._tail = window[-8:]
        if not self._custom and not self._dirty and not _has_key_word(window):
            return self._release_clean(t, data, window)  # fast path: no default pattern can match
        self._dirty = True
        self._pending.append((t, data))
        return self._release(final=False)

    def _release_clean(self, t: float, data: bytes, window: bytes) -> list[tuple[float, bytes]]:
        # No key word in what is pending nor in ``data``, and every default match starts
        # with one: only a key word begun at the very end of the bytes fed could follow.
        tail = window[-8:].lower()
        if not any(tail[-k:] in _WORD_STARTS for k in range(1, 6)):
            out, self._pending = [*self._pending, (t, data)], []
            return out
        self._pending.append((t, data))
        return self._release(final=False)

    def close(self) -> list[tuple[float, bytes]]:
        """The end of the body: returns every read still held back, scrubbed."""
        return self._release(final=True)

    def _release(self, *, final: bool) -> list[tuple[float, bytes]]:
        joined = b"".join(d for _, d in self._pending)
        size = len(joined)
        hold = size
        if not final:
            run_start = len(joined.rstrip(_KEY_CHARS))
            hold = max(size - _HOLD_MAX, min(size - _HOLD_MIN, run_start), 0)
        spans: list[tuple[int, int]] = []
        for m in self._matches(joined):
            if m.end() > hold or m.start() >= hold:
                hold = min(hold, m.start())
                break
            spans.append(m.span())
        self.hits += len(spans)
        out: list[tuple[float, bytes]] = []
        keep: list[tuple[float, bytes]] = []
        start = 0
        for t, data in self._pending:
            end = start + len(data)
            piece = self._apply(data, start, spans)
            if end <= hold:
                if piece:
                    out.append((t, piece))
            else:
                keep.append((t, piece))
            start = end
        # Spans already applied to kept reads must not be applied again.
        self._pending = keep
        self._dirty = _has_key_word(b"".join(d for _, d in keep))
        return out

    def _matches(self, joined: bytes) -> Iterator[re.Match[bytes]]:
        if not self._custom and not _has_key_word(joined):  # every default pattern holds a key word
            return iter(())
        return self._pattern.finditer(joined)

    def _apply(self, data: bytes, offset: int, spans: list[tuple[int, int]]) -> bytes:
        end = offset + len(data)
        pieces, pos = [], offset
        for s, e in spans:
            if e <= offset or s >= end:
                continue
            pieces.append(data[pos - offset : max(s, pos) - offset])
            if s >= offset:
                pieces.append(self._marker)
            pos = min(e, end)
        pieces.append(data[pos - offset :])
        return b"".join(pieces)
