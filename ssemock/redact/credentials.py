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

__all__ = ["DEFAULT_MIN_LENGTH", "Credentials", "values_of_header"]

DEFAULT_MIN_LENGTH = 8
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
        self._pattern: Any = None
        self._forms: tuple[bytes, ...] = ()
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        """Add values (those too short or too common are ignored)."""
        new = {v for v in values if self._searchable(v)} - self.values
        if not new:
            return
        self.values |= new
        forms: set[bytes] = set()
        for value in self.values:
            for form in (value, json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1],
                         quote(value, safe=""), quote_plus(value, safe="")):
                forms.add(form.encode("utf-8"))
        self._forms = tuple(forms)
        # Longest first: a value that contains another is replaced whole.
        alternatives = [escape_aware(f) for f in sorted(forms, key=lambda f: (-len(f), f))]
        self._pattern = compile_bytes(b"|".join(alternatives))

    def _searchable(self, value: str) -> bool:
        return len(value) >= self.min_length and not _WORD.fullmatch(value) and value != "REDACTED"

    def __bool__(self) -> bool:
        return bool(self.values)

    @property
    def longest(self) -> int:
        """The longest searched form in bytes (0 when empty): what a stream must hold back."""
        return max((len(v.encode("utf-8")) * 6 for v in self.values), default=0)

    def find(self, data: bytes) -> list[Hit]:
        """Every occurrence in ``data`` (rule ``"credential sent"``)."""
        if self._pattern is None:
            return []
        # Fast path: without a backslash in ``data`` (memchr), only the forms as they are can occur.
        if data.find(b"\\") < 0 and not any(f in data for f in self._forms):
            return []
        return [Hit(m.start(), m.end(), "credential sent") for m in self._pattern.finditer(data)]
