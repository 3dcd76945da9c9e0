"""Key *shapes*: the gitleaks rule catalogue plus ssemock's own JSON-escape-aware forms.

**The catalogue** is ``gitleaks.toml`` beside this module: the default rule set of
gitleaks (https://github.com/gitleaks/gitleaks, MIT licence in ``gitleaks-LICENSE``,
commit in :data:`GITLEAKS_COMMIT`), shipped unchanged. Its regular expressions are
RE2 syntax and run as they are with google-re2 (Latin-1 mode: any byte is a
character, ``\\w`` and ``\\b`` are ASCII). Each rule is applied as gitleaks does:
only when one of its ``keywords`` occurs (case-insensitive); the secret is the
``secretGroup``, else the first non-empty group, else the match; a secret below the
rule's Shannon ``entropy``, containing a stop word, matched by an allow-list regex
(targets ``secret`` and ``match``; ``line`` targets are read as ``match``) or that is
exactly the filter's own placeholder ``REDACTED`` (what a scrubbed recording holds) is
skipped. Rules bound to file paths (``path = …``: Terraform, Kubernetes YAML, NuGet,
PHP, PKCS#12 files) are left out: a recording has no file path.

**Where a key ends** (:mod:`.bounds`): at any character that is not a letter or a digit
(``npm_….``, ``/v1/files/npm_…/content``), not only where source code ends one; a secret never
ends nor starts inside a UTF-8 character (:func:`utf8_safe`).

**Our own forms** (:mod:`ssemock.scanner.own_rules`, run with the catalogue by its
:func:`~ssemock.scanner.own_rules.default_scanner`; the provider-specific ones are the key shapes of
:mod:`ssemock.providers`) catch provider keys that the catalogue misses or
only matches at exact lengths (``sk-``, ``sk-proj-``, ``sk-ant-``, ``AIza``,
``Bearer …``, ``gsk_``, ``xai-``, ``hf_``, ``AKIA``/``ASIA``, ``ghp_``/``gho_``/
``github_pat_``, ``ya29.``, ``pplx-``, ``r8_``, ``bedrock-api-key-``, JWTs), also when a JSON string escapes
some of their characters as ``\\u00XX`` (``sk\\u002dproj-…``) or ``/`` as ``\\/``, also
escaped twice (``sk\\\\u002dproj-…``, a JSON body echoed inside a JSON string).
Escapes beyond ASCII (``\\u0441`` for a look-alike letter) and keys built from pieces
are not caught.

**JSON escapes** (:func:`json_view`): every rule reads a copy of the bytes of the same
length where each JSON string escape that is not a key character (``\\n``, ``\\t``,
``\\"``, ``\\\\``, ``\\u2028``, …, with any number of backslashes) is blanked to spaces
(the quote of ``\\"`` kept; ``\\/`` reads ``//`` for our forms, where it may be part of a
key, and `` /`` for the catalogue's), so a key right after or before an escape starts or
ends a word, for the catalogue's rules as for ours. A secret found
never ends nor starts inside an escape (:func:`escape_safe`): replacing it keeps a JSON
string valid.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Any

import re2  # type: ignore[import-untyped]

from .bounds import KEY_END, bounded, repeated_group
from .names import REDACTED

__all__ = [
    "GITLEAKS_COMMIT", "KEY_END", "Hit", "Rule", "Scanner", "bounded", "char_class", "compile_bytes", "disjoint",
    "escape_aware", "escape_safe", "json_view", "key_run", "load_gitleaks", "utf8_safe",
]

GITLEAKS_COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"

_OPTIONS = re2.Options()
_OPTIONS.encoding = re2.Options.Encoding.LATIN1
# The characters a key may hold; their JSON \u00XX escapes are kept in the view, other escapes blanked.
_KEY_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-")
# One JSON string escape, however often its backslash was escaped again (a JSON body inside a JSON string).
_ESCAPE_RUN = re.compile(rb"\\+(?:u[0-9A-Fa-f]{4}|.)", re.DOTALL)
_ESCAPE = re.compile(rb"\\(?:u[0-9A-Fa-f]{4}|.)", re.DOTALL)  # one JSON escape, read from the left


def _blank(m: re.Match[bytes]) -> bytes:
    escape = m.group()
    return _blanked(escape, b"/") if len(escape) <= 16 else _blanked.__wrapped__(escape, b"/")  # cache short ones


def _blank_slash(m: re.Match[bytes]) -> bytes:
    escape = m.group()
    return _blanked(escape, b" ") if len(escape) <= 16 else _blanked.__wrapped__(escape, b" ")


@functools.lru_cache(maxsize=1024)
def _blanked(escape: bytes, slash: bytes) -> bytes:
    size = len(escape)
    tail = escape.lstrip(b"\\")
    if tail == b'"':
        return b" " * (size - 1) + tail
    if tail == b"/":
        return slash * (size - 1) + tail
    if len(tail) == 5:  # uXXXX
        return escape if int(tail[1:], 16) in _KEY_BYTES else b" " * size  # a key character: read as one
    if tail in (b"b", b"f", b"n", b"r", b"t") and size % 2 == 0:  # odd backslashes: "\\n", "\\\\\\n"
        return b" " * size
    # Backslashes before an ordinary character, or an even run before b f n r t: a backslash then a letter, or
    # (a JSON text inside a JSON string) an escape escaped again; the letter is kept, see _BOUND.
    return b" " * (size - 1) + tail


def json_view(data: bytes, *, slash_in_key: bool = True) -> bytes:
    """``data`` with its JSON escapes blanked (see the module docstring); same length, same offsets.

    Args:
        slash_in_key: ``\\/`` reads ``//`` (a ``/`` inside a key); else `` /`` (a key ends before it).
    """
    if b"\\" not in data:
        return data
    if b"\\\\" not in data:  # every backslash starts one escape: the common ones by plain replacement (faster)
        for letter in b'bfnrt"/':
            escape = b"\\" + bytes([letter])
            data = data.replace(escape, _blanked(escape, b"/" if slash_in_key else b" "))
        if b"\\" not in data:
            return data
    return _ESCAPE_RUN.sub(_blank if slash_in_key else _blank_slash, data)


def escape_safe(data: bytes, hits: list[Hit]) -> list[Hit]:
    """``hits`` (sorted or not) with each start or end that falls inside a JSON escape moved out of it, the start
    after it and the end before it; a hit left empty is dropped. Offsets in bytes."""
    if b"\\" not in data or not hits:
        return hits
    spans = [m.span() for m in _ESCAPE.finditer(data)]
    starts = [a for a, _ in spans]
    out = []
    for hit in hits:
        start, end = hit.start, hit.end
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and spans[i][0] < start < spans[i][1]:
            start = spans[i][1]
        j = bisect.bisect_right(starts, end) - 1
        if j >= 0 and spans[j][0] < end < spans[j][1]:
            end = spans[j][0]
        if end > start:
            out.append(Hit(start, end, hit.rule))
    return out


def utf8_safe(data: bytes, hits: list[Hit]) -> list[Hit]:
    """``hits`` with each end or start that falls inside a UTF-8 character (a non-ASCII byte, then a continuation
    byte) moved out of it, the end before it and the start after it: a key ends before a non-ASCII character
    that a rule's end took (``npm_…é``), and replacing it keeps the text UTF-8. A hit left empty is dropped."""
    out = []
    size = len(data)
    for hit in hits:
        start, end = hit.start, hit.end
        while start < end < size and data[end - 1] >= 0x80 and 0x80 <= data[end] < 0xC0:
            end -= 1
        while 0 < start < end and data[start - 1] >= 0x80 and 0x80 <= data[start] < 0xC0:
            start += 1
        if (start, end) == (hit.start, hit.end):
            out.append(hit)
        elif end > start:
            out.append(Hit(start, end, hit.rule))
    return out


def compile_bytes(pattern: bytes, *, max_mem: int | None = None) -> Any:
    """An RE2 pattern over bytes in Latin-1 mode (every byte is one character); ``max_mem``: RE2's memory budget
    for it in bytes (default RE2's, 8 MiB)."""
    if max_mem is None:
        return re2.compile(pattern, _OPTIONS)
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = max_mem
    return re2.compile(pattern, options)


def _hex(code: int) -> bytes:
    """The four hex digits of a JSON ``\\uXXXX`` escape of ``code`` (< 0x100), in either case."""
    return f"00{code >> 4:x}[{code & 15:x}{code & 15:X}]".encode()


def escape_aware(word: bytes, *, any_case: bool = False) -> bytes:
    """An RE2 pattern for ``word`` where each ASCII character may also be its JSON ``\\u00XX`` escape (and ``/``
    ``\\/``), its backslash escaped any number of times."""
    out = []
    for byte in word:
        char = chr(byte)
        codes = sorted({ord(char.lower()), ord(char.upper())}) if any_case else [byte]
        forms = [re.escape(c).encode("latin-1") for c in sorted({chr(c) for c in codes})]
        if 0x20 <= byte < 0x80:
            forms += [rb"\\+u" + _hex(n) for n in codes]
        if char == "/":
            forms.append(rb"\\+/")
        out.append(b"(?:" + b"|".join(forms) + b")")
    return b"".join(out)


def char_class(chars: bytes) -> bytes:
    """One of ``chars`` (a class body) or its JSON ``\\u00XX`` escape (any backslashes)."""
    members = [c for c in sorted(_KEY_BYTES) if re.fullmatch(b"[" + chars + b"]", bytes([c]))]
    escapes = rb"\\+u(?:" + b"|".join(_hex(c) for c in members) + b")"
    return b"(?:[" + chars + b"]|" + escapes + b")"


def key_run(chars: bytes, least: int) -> bytes:
    """At least ``least`` of ``chars`` (a class body) or their JSON ``\\u00XX`` escapes (any backslashes)."""
    return char_class(chars) + b"{" + str(least).encode() + b",}"


@dataclass(frozen=True)
class Rule:
    """One shape: where it comes from, when it runs, and how its secret is picked.

    Attributes:
        id: the rule's name (gitleaks' ``id``, or ``ssemock-…`` for ours).
        source: ``"gitleaks"`` or ``"ssemock"``.
        regex: the compiled RE2 pattern (bytes).
        keywords: lower-case bytes; the rule runs only when one occurs (empty: always).
        group: the capture group holding the secret (0: first non-empty group, or the match; -1: the match).
        entropy: minimum Shannon entropy of the secret in bits per byte (0: none).
        allow: compiled allow-list patterns and their target (``"secret"`` or ``"match"``).
        stopwords: lower-case bytes; a secret containing one is skipped.
    """

    id: str
    source: str
    regex: Any
    keywords: tuple[bytes, ...]
    group: int = 0
    entropy: float = 0.0
    allow: tuple[tuple[Any, str], ...] = ()
    stopwords: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class Hit:
    """A secret found: byte offsets ``[start, end)`` and the rule's id."""

    start: int
    end: int
    rule: str


def _entropy(data: bytes) -> float:
    counts = Counter(data)
    total = len(data)
    return -sum(n / total * math.log2(n / total) for n in counts.values()) if total else 0.0


def load_gitleaks() -> tuple[Rule, ...]:
    """The rules of the shipped gitleaks catalogue that apply to a recording (see module docstring)."""
    text = resources.files(__package__).joinpath("gitleaks.toml").read_text(encoding="utf-8")
    config = tomllib.loads(text)
    glob = config.get("allowlist", {})
    global_allow = tuple((compile_bytes(p.encode()), "secret") for p in glob.get("regexes", []))  # shared
    global_stop = tuple(s.lower().encode() for s in glob.get("stopwords", []))
    rules = []
    for raw in config["rules"]:
        if "regex" not in raw or "path" in raw:
            continue
        allow: list[tuple[Any, str]] = list(global_allow)
        stop: list[bytes] = list(global_stop)
        for entry in raw.get("allowlists", []):
            if entry.get("paths") and entry.get("condition", "OR") == "AND":
                continue  # needs a file path too: never true for a recording
            target = "secret" if entry.get("regexTarget", "secret") == "secret" else "match"
            allow += [(compile_bytes(p.encode()), target) for p in entry.get("regexes", [])]
            stop += [s.lower().encode() for s in entry.get("stopwords", [])]
        regex = compile_bytes(bounded(raw["regex"]).encode())
        group = int(raw.get("secretGroup", 0))
        if not group and regex.groups and (len(regex.groupindex) == regex.groups or repeated_group(raw["regex"])):
            # Its groups only label (jwt-base64's header names) or repeat (a Teams webhook's "([a-z0-9]{4}-){3}")
            # a piece of the key: the match is the key, not that piece.
            group = -1
        rules.append(Rule(
            raw["id"], "gitleaks", regex, tuple(k.lower().encode() for k in raw.get("keywords", [])), group,
            float(raw.get("entropy", 0.0)), tuple(allow), tuple(stop),
        ))
    return tuple(rules)


class Scanner:
    """Finds secrets in bytes with a set of :class:`Rule`; keyword prefilter in one RE2 pass.

    Args:
        rules: the rules (default: :func:`load_gitleaks` then :data:`~ssemock.scanner.own_rules.OWN_RULES`).
    """

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        keywords = sorted({k for r in rules for k in r.keywords})
        self._always = tuple(r for r in rules if not r.keywords)
        self._by_keyword = [tuple(r for r in rules if k in r.keywords) for k in keywords]
        self._set = re2.Set.SearchSet(_OPTIONS)
        for keyword in keywords:
            self._set.Add(b"(?i)" + re.escape(keyword.decode("latin-1")).encode("latin-1"))
        self._set.Compile()

    def find(self, data: bytes) -> list[Hit]:
        """Every secret in ``data``, sorted by start, overlaps removed (the earlier, longer one wins); rules read
        :func:`json_view` of ``data``, a secret never cuts a JSON escape (:func:`escape_safe`)."""
        view = json_view(data)
        found = self._set.Match(view) or []
        if not found and not self._always:
            return []
        catalogue_view: bytes | None = None  # made when a catalogue rule runs (a body full of "\\/": ~10 ms/MiB)
        seen: set[str] = set()
        hits: list[Hit] = []
        for rule in [*self._always, *(r for i in found for r in self._by_keyword[i])]:
            if rule.id not in seen:
                seen.add(rule.id)
                if rule.source == "ssemock":
                    hits += _rule_hits(rule, view)
                    continue
                if catalogue_view is None:
                    catalogue_view = json_view(data, slash_in_key=False) if b"\\/" in data else view
                hits += _rule_hits(rule, catalogue_view)
        return disjoint(utf8_safe(data, escape_safe(data, hits)))


_PLACED = REDACTED.encode("ascii")


def _rule_hits(rule: Rule, data: bytes) -> list[Hit]:
    out = []
    for m in rule.regex.finditer(data):
        if rule.group > 0:
            start, end = m.span(rule.group)
        elif rule.group < 0:
            start, end = m.span()
        else:
            start, end = next((m.span(g) for g in range(1, (rule.regex.groups or 0) + 1)
                               if m.span(g)[0] >= 0 and m.span(g)[1] > m.span(g)[0]), m.span())
        if start < 0 or end <= start:
            continue
        secret = data[start:end]
        if secret == _PLACED:  # what the filter wrote in place of a secret (https://bob:REDACTED@host/)
            continue
        if rule.entropy and _entropy(secret) < rule.entropy:
            continue
        low = secret.lower()
        if any(s in low for s in rule.stopwords):
            continue
        if any(p.search(secret if target == "secret" else m.group()) for p, target in rule.allow):
            continue
        out.append(Hit(start, end, rule.id))
    return out


def disjoint(hits: list[Hit]) -> list[Hit]:
    """``hits`` sorted by start, each overlap merged into one span (named by the earlier, longer one)."""
    out: list[Hit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if out and hit.start < out[-1].end:
            if hit.end > out[-1].end:  # overlapping: merge into one span
                out[-1] = Hit(out[-1].start, hit.end, out[-1].rule)
            continue
        out.append(hit)
    return out
