"""Values under credential names, found in parsed JSON, form and multipart bodies, and in any text.

The name rule of :mod:`.names` applied to the *contents* of a body, whichever way
it goes (request or answer, whole or streamed):

* **JSON** (a whole body, one NDJSON line, or the data of one SSE ``data:`` line):
  parsed with every duplicate key kept, so each value under a credential name counts,
  not only the last. Under a credential name, a scalar is a secret; an object gives
  up the values at its credential names and at its value-carrying keys
  (:data:`VALUE_KEYS`: ``value``, ``default``, ``enum``, ``const``, ``example``,
  ``examples``), so OpenAI Realtime's ``client_secret: {"value": …}`` is found and a
  JSON Schema of a ``password`` parameter (``{"type": "string"}``) is not a secret,
  unless it carries a value. A name/value pair (:func:`pair_of`, its member names in any
  letter case: HAR's ``{"name": "api_key", "value": …}``, Postman's ``{"key": "Authorization",
  "value": …}``, AWS tags' and SSM's ``{"Key"/"Name": …, "Value": …}``, CloudFormation's
  ``{"ParameterKey": …, "ParameterValue": …}``) whose name is a credential name gives up its
  value; its name stays, whatever the pair names (``{"Key": "Environment", …}`` is no secret). Exempt:
  Anthropic's thinking ``signature`` (also in a ``signature_delta``) and OpenAI's logprobs
  ``token`` (a piece of the answer's text).
* **Text that is not JSON** (a broken JSON line, a log line, a path with
  ``;jsessionid=…``): ``"name": "value"`` and ``name=value`` pairs whose name has a
  credential word.
* **Form bodies** (``application/x-www-form-urlencoded``, parsed with
  :func:`urllib.parse.parse_qsl`) and **multipart bodies** (``multipart/form-data``,
  each part's headers parsed with :mod:`email`): the values of fields with a
  credential name.

Only the spans of the values are returned; the caller replaces them.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from .names import CREDENTIAL_WORDS, REDACTED, name_words
from .shapes import Hit, compile_bytes

__all__ = [
    "RULE",
    "VALUE_KEYS",
    "FieldFinder",
    "Pair",
    "Pairs",
    "credential_values",
    "form_values",
    "is_exempt",
    "is_schema",
    "json_bytes",
    "multipart_spans",
    "pair_of",
    "parse_json",
    "parse_pairs",
    "redact_all",
    "redact_path",
]

RULE = "credential name"
NAME_MEMBERS = ("name", "key")
"""The last word of the member naming the value of a name/value pair object: see :func:`pair_of`."""
VALUE_MEMBERS = ("value", "values")
"""The last word of the member holding the value of a name/value pair object."""
VALUE_KEYS = frozenset({"value", "default", "enum", "const", "example", "examples"})
_SCHEMA_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
# Stems that every credential word contains (the prefilter; the name rule decides).
_STEMS = ("key", "token", "secret", "auth", "sig", "pass", "pwd", "cookie", "session", "sessid", "credential",
          "jwt", "bearer", "otp")
IsName = Callable[[str], bool]
_TYPE = re.compile(rb'"type"\s*:\s*"([a-z_]{1,40})"')


class Pairs(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs, duplicates kept (``object_pairs_hook``)."""


def parse_pairs(data: bytes | str) -> Any:
    """``data`` parsed as JSON with objects as :class:`Pairs`; None when it is not an object or array."""
    try:
        doc = json.loads(data, object_pairs_hook=Pairs)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return doc if isinstance(doc, list) else None


def is_schema(obj: dict[str, Any]) -> bool:
    """Whether an object under a credential name is a JSON Schema (its ``type`` is a schema type)."""
    kind = obj.get("type")
    return isinstance(kind, str) and kind in _SCHEMA_TYPES


def is_exempt(obj: dict[str, Any], key: str) -> bool:
    """A credential-named field that is no credential: a thinking signature, a logprobs token."""
    if key == "signature":
        return obj.get("type") in ("thinking", "redacted_thinking", "signature_delta")
    return key == "token" and "logprob" in obj


@dataclass(frozen=True)
class Pair:
    """A name/value pair object: which member names the value, that name, which member holds the value.

    Attributes:
        name_member: e.g. ``"Key"``, ``"ParameterKey"``, ``"name"``.
        name: the name it holds, e.g. ``"api_key"``.
        value_member: e.g. ``"Value"``, ``"ParameterValue"``.
        secret: ``name`` is a credential name (the value is a secret).
    """

    name_member: str
    name: str
    value_member: str
    secret: bool


def pair_of(obj: dict[str, Any], is_name: IsName) -> Pair | None:
    """The name/value pair that ``obj`` is, else None; member names compared without regard to letter case.

    A pair has a member whose last word is ``name`` or ``key`` (:data:`NAME_MEMBERS`) holding a string,
    and a member whose last word is ``value`` or ``values`` (:data:`VALUE_MEMBERS`), with the same words
    before them, or none before the value's and a naming member that is no credential name itself
    (``{"api_key": …, "value": …}`` is no pair): HAR's ``{"name", "value"}``, Postman's ``{"key", "value"}``,
    AWS ``{"Key", "Value"}`` (tags) and ``{"Name", "Value"}`` (SSM), CloudFormation's
    ``{"ParameterKey", "ParameterValue"}``, Elastic Beanstalk's ``{"OptionName", "Value"}``. When several
    members could name it, one holding a credential name (``is_name``) is taken.
    """
    if len(obj) < 2 or not any(isinstance(k, str) and k[-6:].lower().endswith(("value", "values")) for k in obj):
        return None  # the common case, without splitting names into words
    values = [(k, words) for k in obj if isinstance(k, str) and (words := name_words(k)) and words[-1] in VALUE_MEMBERS]
    if not values:
        return None
    found: Pair | None = None
    for member, name in obj.items():
        words = name_words(member) if isinstance(member, str) else []
        if not isinstance(name, str) or not words or words[-1] not in NAME_MEMBERS:
            continue
        # "OptionName" names a bare "Value"; "api_key" beside a "value" is a credential, not a pair's name.
        value = next((k for k, w in values if w[:-1] == words[:-1] or (len(w) == 1 and not is_name(member))), None)
        if value is None:
            continue
        pair = Pair(member, name, value, is_name(name))
        if pair.secret:
            return pair
        found = found or pair
    return found


def credential_values(doc: Any, is_name: IsName) -> list[Any]:
    """The scalars under credential names in a :func:`parse_pairs` document (strings and numbers)."""
    out: list[Any] = []
    _walk(doc, is_name, out)
    return out


def _walk(node: Any, is_name: IsName, out: list[Any]) -> None:
    if isinstance(node, Pairs):
        obj = dict(node)
        pair = pair_of(obj, is_name)
        for key, value in node:
            if pair is not None and pair.secret and key == pair.value_member:
                _scalars(value, out)
            elif pair is not None and key == pair.name_member and value == pair.name:
                continue  # the pair's name: not a secret
            elif is_name(key) and not is_exempt(obj, key):
                _secret(value, is_name, out)
            else:
                _walk(value, is_name, out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, is_name, out)


def _secret(value: Any, is_name: IsName, out: list[Any]) -> None:
    """The secrets in a value under a credential name (see the module docstring)."""
    if isinstance(value, Pairs):
        schema = is_schema(dict(value))
        for key, item in value:
            if key in VALUE_KEYS or (not schema and is_name(key)):
                _scalars(item, out)
            else:
                _walk(item, is_name, out)
    elif isinstance(value, list):
        for item in value:
            _secret(item, is_name, out)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        out.append(value)


def _scalars(value: Any, out: list[Any]) -> None:
    if isinstance(value, Pairs):
        for _, item in value:
            _scalars(item, out)
    elif isinstance(value, list):
        for item in value:
            _scalars(item, out)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        out.append(value)


def parse_json(body: bytes | None) -> Any:
    """``body`` parsed as JSON when it is an object or an array, else None."""
    try:
        doc = json.loads(body or b"")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return doc if isinstance(doc, (dict, list)) else None


def json_bytes(doc: Any) -> bytes:
    """``doc`` as compact JSON in UTF-8; ASCII-escaped when it holds a lone surrogate (no UTF-8 form)."""
    try:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(doc, separators=(",", ":")).encode("ascii")


def redact_all(value: Any, found: list[str]) -> Any:
    """Every scalar under a credential's name becomes ``REDACTED`` (null and booleans stay)."""
    if isinstance(value, dict):
        return {k: redact_all(v, found) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_all(v, found) for v in value]
    if value is None or isinstance(value, bool):
        return value
    found.append(str(value))
    return REDACTED


def redact_path(doc: Any, keys: list[str], found: list[str]) -> bool:
    """Replace the value at ``keys`` (``*``: any key or item) of ``doc`` in place by ``REDACTED`` (its value is
    added to ``found``); whether anything was replaced."""
    if not keys:
        return False
    head, rest = keys[0], keys[1:]
    if isinstance(doc, dict):
        targets: list[Any] = list(doc) if head == "*" else [head] if head in doc else []
    elif isinstance(doc, list):
        indexes = range(len(doc))
        targets = list(indexes) if head == "*" else [int(head)] if head.isdigit() and int(head) in indexes else []
    else:
        return False
    changed = False
    for key in targets:
        if rest:
            changed |= redact_path(doc[key], rest, found)
        else:
            if isinstance(doc[key], (str, int, float)) and not isinstance(doc[key], bool):
                found.append(str(doc[key]))
            doc[key] = REDACTED
            changed = True
    return changed


def form_values(body: bytes, is_name: IsName) -> tuple[list[tuple[str, str]], list[str], list[str]] | None:
    """A form body's fields with credential values replaced by ``REDACTED``, the names and the values removed.

    Returns None when ``body`` is not a form (not ASCII, or a field without ``=``).
    """
    try:
        text = body.decode("ascii")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, max_num_fields=10_000)
    except (UnicodeDecodeError, ValueError):
        return None
    kept, names, values = [], [], []
    for key, value in pairs:
        if is_name(key) and value:
            names.append(key)
            values.append(value)
            value = "REDACTED"
        kept.append((key, value))
    return kept, names, values


def multipart_spans(body: bytes, content_type: str, is_name: IsName) -> list[tuple[str, int, int]]:
    """The (field name, start, end) of each multipart part whose field name is a credential name."""
    header = email.parser.Parser(policy=email.policy.HTTP).parsestr(f"Content-Type: {content_type}\r\n\r\n")
    boundary = header.get_param("boundary")
    if not isinstance(boundary, str) or not boundary:
        return []
    delimiter = b"--" + boundary.encode("latin-1")
    out = []
    pos = body.find(delimiter)
    while pos >= 0:
        start = body.find(b"\r\n", pos + len(delimiter)) + 2  # after the delimiter line
        if start < 2:
            break
        nxt = body.find(b"\r\n" + delimiter, start)
        if nxt < 0:
            break
        head_end = body.find(b"\r\n\r\n", start, nxt)
        if head_end >= 0:
            part = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(body[start:head_end + 4],
                                                                                  headersonly=True)
            name = part.get_param("name", header="content-disposition")
            if isinstance(name, str) and is_name(name) and nxt > head_end + 4:
                out.append((name, head_end + 4, nxt))
        pos = nxt + 2
    return out


class FieldFinder:
    """Finds the values under credential names in bytes (see the module docstring).

    Args:
        is_name: the name rule (a filter's, with its extra words and allowed names).
        extra_words: the extra credential words (they join the prefilter).
    """

    def __init__(self, is_name: IsName, extra_words: frozenset[str] = frozenset()) -> None:
        self._is_name = is_name
        stems = sorted({*_STEMS, *(w.lower() for w in extra_words)})
        assert all(any(s in w for s in _STEMS) for w in CREDENTIAL_WORDS)  # the prefilter misses none
        words = b"|".join(re.escape(s).encode("latin-1") for s in stems)
        self._key = compile_bytes(  # a credential-named key, or a pair's credential name ("Name": "api_key")
            rb'(?i)(?:"[^"\\\r\n]{0,64}(?:' + words + rb')[^"\\\r\n]{0,64}"\s*:'
            rb'|"[^"\\\r\n]{0,32}(?:name|key)"\s*:\s*"[^"\\\r\n]{0,64}(?:' + words + rb'))'
        )
        self._json_pair = compile_bytes(
            rb'"([^"\\\r\n]{0,64}(?i:' + words + rb')[^"\\\r\n]{0,64})"\s*:\s*"((?:[^"\\\r\n]|\\[^\r\n])+)"'
        )
        self._text_pair = compile_bytes(
            rb"(?:^|[^A-Za-z0-9_.\-])([A-Za-z0-9_.\-]{0,64}(?i:" + words + rb")[A-Za-z0-9_.\-]{0,64})="
            rb"([^\s&;\"'<>,?#\\=][^\s&;\"'<>,?#\\]*)"  # not "=": base64 padding (``…Pwd0gA==``) is no pair
        )
        self._any = compile_bytes(rb"(?i)(?:" + words + rb")")

    def find(self, data: bytes) -> list[Hit]:
        """The spans of values under credential names in ``data`` (rule :data:`RULE`), sorted."""
        first = self._any.search(data)
        if first is None:  # the common case, one RE2 pass: about 4 ms per MiB
            return []
        stripped = data.strip()
        if stripped[:1] in (b"{", b"[") and self._key.search(data):
            doc = parse_pairs(data)
            if doc is not None:
                return self._values(data, 0, len(data), doc)
        hits: list[Hit] = []
        for start, end in self._lines(data, first.start()):
            hits += self._line(data, start, end)
        return sorted(set(hits), key=lambda h: (h.start, h.end))

    def _lines(self, data: bytes, pos: int) -> Iterator[tuple[int, int]]:
        """The lines (start, end) holding a credential word from ``pos`` on, each once."""
        last = -1
        for m in self._any.finditer(data, pos):
            if m.start() < last:
                continue
            start = max(data.rfind(b"\n", 0, m.start()), data.rfind(b"\r", 0, m.start())) + 1
            ends = [e for e in (data.find(b"\n", m.end()), data.find(b"\r", m.end())) if e >= 0]
            last = min(ends) if ends else len(data)
            yield start, last

    def _line(self, data: bytes, start: int, end: int) -> list[Hit]:
        line = data[start:end]
        body = line.lstrip(b" \t")  # indented: a line of a YAML block
        body = body[5:] if body.startswith(b"data:") else body  # an SSE data line holds JSON
        skip = len(line) - len(body)
        if body.lstrip()[:1] in (b"{", b"[") and self._key.search(body):
            doc = parse_pairs(body)
            if doc is not None:
                return self._values(data, start + skip, end, doc)
        hits = []
        # What the line says of its object, for the exemptions (a piece of a thinking or logprobs event).
        contexts: list[dict[str, Any]] = [{"type": t.decode("latin-1")} for t in _TYPE.findall(line)]
        if b'"logprob"' in line:
            contexts.append({"logprob": 0})
        for regex in (self._json_pair, self._text_pair):
            for m in regex.finditer(line):
                name = m.group(1).decode("latin-1")
                if self._is_name(name) and m.group(2) != b"REDACTED" and not any(
                        is_exempt(c, name) for c in contexts):
                    hits.append(Hit(start + m.start(2), start + m.end(2), RULE))
        return hits

    def _values(self, data: bytes, start: int, end: int, doc: Any) -> list[Hit]:
        """The spans of the credential values of ``doc`` (parsed from ``data[start:end]``)."""
        hits = []
        for value in credential_values(doc, self._is_name):
            if value == "REDACTED" or value == "":
                continue
            if not isinstance(value, str):
                continue  # a number is found where it is, as a piece of nothing else: left to the request rule
            for form in {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}:
                raw = form.encode("utf-8", "surrogatepass")
                needle = b'"' + raw + b'"'  # a whole JSON string, never a piece of another
                pos = data.find(needle, start, end)
                while pos >= 0:
                    hits.append(Hit(pos + 1, pos + 1 + len(raw), RULE))
                    pos = data.find(needle, pos + len(needle), end)
        return sorted(set(hits), key=lambda h: (h.start, h.end))
