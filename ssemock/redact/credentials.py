"""The credentials one request really sent upstream, found again wherever they appear.

Whatever their shape: the values of the headers, query parameters and JSON body
fields removed by name, the token after an ``Authorization`` scheme (``Bearer``,
``Basic`` — and the password inside a Basic token), each cookie value, and the
key-shaped strings found in the request. Each is searched in its plain form, JSON-
escaped (any ASCII character also as ``\\u00XX``, ``/`` also as ``\\/``) and
percent-encoded, so an echo of the key in the answer, the URL path or a redirect is
replaced too.

A value is too common to be searched everywhere when it is shorter than
``min_length`` characters (default 8) or is one lower-case word shorter than 16
letters (``disabled``, ``required``): it is still removed where it was found by name.

**Bounded**: the forms are searched by several RE2 patterns of at most :data:`GROUP_BYTES`
bytes of forms each, each with a memory budget of :data:`BUDGET` bytes, so that a request
holding a hundred keys stays within RE2's DFA (fast, and nothing logged: an RE2 pattern over its
budget falls back to a slower matcher and writes "DFA out of memory" to stderr at every search).
Without a backslash in the bytes searched, a pattern runs only where one of its forms occurs as it is.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

from ..scanner.shapes import Hit, compile_bytes, escape_aware

__all__ = ["BUDGET", "DEFAULT_MIN_LENGTH", "GROUP_BYTES", "Credentials", "values_of_header"]

DEFAULT_MIN_LENGTH = 8
GROUP_BYTES = 4096
"""Bytes of forms (plain text, before the escapes are added) searched by one RE2 pattern."""
BUDGET = 64 << 20
"""RE2's memory budget for one pattern (``max_mem``, bytes): about four times what :data:`GROUP_BYTES` of forms
need (RE2's default, 8 MiB, holds about 2 KiB); a few MiB are used in practice."""
_WORD = re.compile(r"[a-z]{1,15}")


def values_of_header(name: str, value: str) -> list[str]:
    """The secret values in one removed header: the whole value, the token after an auth
    scheme (and a Basic token's password), the value of each cookie."""
    out = [value.strip()]
    scheme, _, token = value.strip().partition(" ")
    if token.strip() and scheme.isalpha():
        token = token.strip()
        out.append(token)
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(token, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            out += [decoded, decoded.partition(":")[2]] if ":" in decoded else []
    if "cookie" in name.lower():
        for part in value.split(";"):
            cookie = part.strip().partition("=")[2]
            if cookie:
                out.append(cookie.split(";")[0])
    return [v for v in out if v]


class Credentials:
    """A set of secret values and the pattern that finds any of them (in bytes, any encoding above).

    Args:
        values: the values (strings).
        min_length: the shortest value searched everywhere (see the module docstring).
    """

    def __init__(self, values: Iterable[str] = (), *, min_length: int = DEFAULT_MIN_LENGTH) -> None:
        self.min_length = min_length
        self.values: set[str] = set()
        self._groups: tuple[tuple[tuple[bytes, ...], Any], ...] = ()  # (forms, their pattern)
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        """Add values (those too short or too common are ignored)."""
        new = {v for v in values if self._searchable(v)} - self.values
        if not new:
            return
        self.values |= new
        forms = {text.encode("utf-8") for value in self.values for text in (
            value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1], quote(value, safe=""),
            quote_plus(value, safe=""))}
        # Longest first: a value that contains another is replaced whole (in one pattern, or where the spans
        # found by two are merged).
        groups: list[list[bytes]] = []
        size = GROUP_BYTES
        for form in sorted(forms, key=lambda f: (-len(f), f)):
            if size + len(form) > GROUP_BYTES:
                groups.append([])
                size = 0
            groups[-1].append(form)
            size += len(form)
        self._groups = tuple((tuple(group), compile_bytes(b"|".join(escape_aware(f) for f in group), max_mem=BUDGET))
                             for group in groups)

    def _searchable(self, value: str) -> bool:
        return len(value) >= self.min_length and not _WORD.fullmatch(value) and value != "REDACTED"

    def __bool__(self) -> bool:
        return bool(self.values)

    @property
    def longest(self) -> int:
        """The longest searched form in bytes (0 when empty): what a stream must hold back."""
        return max((len(v.encode("utf-8")) * 6 for v in self.values), default=0)

    def find(self, data: bytes) -> list[Hit]:
        """Every occurrence in ``data`` (rule ``"credential sent"``), sorted by start; two may overlap."""
        if not self._groups:
            return []
        # Without a backslash in ``data`` (memchr), only the forms as they are can occur.
        plain = data.find(b"\\") < 0
        hits = []
        for forms, pattern in self._groups:
            if not plain or any(f in data for f in forms):
                hits += [Hit(m.start(), m.end(), "credential sent") for m in pattern.finditer(data)]
        return sorted(hits, key=lambda h: (h.start, -h.end)) if len(self._groups) > 1 else hits
