"""The filter: what is removed from a request and its answer before anything is written down."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import re2  # type: ignore[import-untyped]

from ..errors import RecorderConfigError
from ..scanner.fields import (
    VALUE_KEYS,
    FieldFinder,
    credential_values,
    form_values,
    is_exempt,
    is_schema,
    json_bytes,
    multipart_spans,
    pair_of,
    parse_json,
    parse_pairs,
    redact_all,
    redact_path,
)
from ..scanner.names import (
    REDACTED,
    SECRET_QUERY_PARAMS,
    SECRET_REQUEST_HEADERS,
    SECRET_RESPONSE_HEADERS,
    is_credential_name,
)
from ..scanner.own_rules import default_scanner
from ..scanner.scrub import replaced
from ..scanner.shapes import Hit, disjoint, escape_safe
from .credentials import DEFAULT_MIN_LENGTH, Credentials, values_of_header
from .stream import ChunkScrubber

__all__ = [
    "REDACTED",
    "SECRET_QUERY_PARAMS",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
    "Filter",
    "RedactedRequest",
    "Report",
]



@dataclass
class Report:
    """What was removed from one interaction: names and counts, never values.

    Attributes:
        names: what was removed by name, e.g. ``"request header authorization"``,
            ``"query sig"``, ``"body api_key"``.
        replaced: ``(place, rule id)`` → number of values replaced there, e.g.
            ``("response body", "credential sent")`` or ``("request body", "jwt")``.
    """

    names: list[str] = field(default_factory=list)
    replaced: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, place: str, rules: Counter[str]) -> None:
        """Count replacements made in ``place`` by rule."""
        for rule, n in rules.items():
            self.replaced[(place, rule)] += n

    def lines(self) -> list[str]:
        """One line per name removed, then one per place where values were replaced."""
        out = list(dict.fromkeys(self.names))
        places: dict[str, Counter[str]] = {}
        for (place, rule), n in self.replaced.items():
            places.setdefault(place, Counter())[rule] += n
        for place, rules in places.items():
            total = sum(rules.values())
            detail = ", ".join(f"{rule} x{n}" if n > 1 else rule for rule, n in sorted(rules.items()))
            out.append(f"{place}: {total} secret(s) replaced ({detail})")
        return out


@dataclass
class RedactedRequest:
    """A request as it may be written down, with what was removed and the credentials it sent.

    Attributes:
        path, query, headers, body: the request with secrets removed (``body`` None when
            the caller keeps it by digest).
        report: what was removed.
        credentials: the credentials sent (to replace in the answer too).
    """

    path: str
    query: list[tuple[str, str]]
    headers: list[tuple[str, str]]
    body: bytes | None
    report: Report
    credentials: Credentials


@dataclass(frozen=True)
class Filter:
    """What is removed from a recording before it is written (VCR.py's "filter").

    The defaults always apply (see :mod:`ssemock.redact`); the arguments add to them.

    Args:
        request_headers: extra request header names to drop (case-insensitive).
        response_headers: extra response header names to drop.
        query_params: extra query parameter names to drop.
        json_paths: request body JSON paths whose value becomes ``"REDACTED"``: dotted
            keys, ``*`` for any key or list item, e.g. ``"user"``, ``"metadata.user_id"``.
        patterns: extra regular expressions in RE2 syntax (Python's without backreferences and
            look-around), matched on the UTF-8 text of each body, header and path in linear
            time; every match is replaced by ``REDACTED``.
        secret_words: extra credential words for the name rule (e.g. ``{"pin"}``).
        allow_names: names the word rule must leave alone (e.g. ``{"x-session-hint"}``);
            exact names listed above or in the defaults are still dropped.
        credential_min_length: the shortest credential value (characters) replaced
            wherever it appears in the interaction (default 8).

    Raises:
        RecorderConfigError: a pattern is not a regular expression RE2 accepts (e.g. one with
            a backreference), or matches the empty string; a name, word or JSON path (or one of its keys) is empty;
            ``credential_min_length`` is not an integer >= 4.
    """

    request_headers: frozenset[str] = frozenset()
    response_headers: frozenset[str] = frozenset()
    query_params: frozenset[str] = frozenset()
    json_paths: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    secret_words: frozenset[str] = frozenset()
    allow_names: frozenset[str] = frozenset()
    credential_min_length: int = DEFAULT_MIN_LENGTH
    _user: tuple[Any, ...] = field(init=False, repr=False, compare=False)  # compiled RE2 patterns
    _fields: FieldFinder = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("request_headers", "response_headers", "query_params", "secret_words", "allow_names"):
            value = frozenset(s.lower() for s in getattr(self, name))
            if "" in value:
                raise RecorderConfigError(f"filter {name.replace('_', ' ')}: a name must not be empty")
            object.__setattr__(self, name, value)
        for path in self.json_paths:
            if "" in path.split("."):
                raise RecorderConfigError(f"filter JSON path {path!r} must be keys separated by '.', none empty")
        n = self.credential_min_length
        if isinstance(n, bool) or not isinstance(n, int) or n < 4:
            raise RecorderConfigError(f"filter credential min length must be an integer >= 4, got {n!r}")
        object.__setattr__(self, "_user", tuple(_user_pattern(p) for p in self.patterns))
        object.__setattr__(self, "_fields", FieldFinder(self.is_secret_name, self.secret_words))

    @property
    def secret_request_headers(self) -> frozenset[str]:
        """Default plus extra request header names dropped whatever their words (lower case)."""
        return SECRET_REQUEST_HEADERS | self.request_headers

    @property
    def secret_response_headers(self) -> frozenset[str]:
        """Default plus extra response header names dropped whatever their words."""
        return SECRET_RESPONSE_HEADERS | self.response_headers

    @property
    def secret_query_params(self) -> frozenset[str]:
        """Default plus extra query parameter names dropped whatever their words."""
        return SECRET_QUERY_PARAMS | self.query_params

    def is_secret_name(self, name: str, listed: Iterable[str] = (), *, header: bool = False) -> bool:
        """Whether ``name`` is dropped: in ``listed`` (lower case), or a credential by its words (``header``: a
        header's name, see :func:`~ssemock.redact.names.is_credential_name`)."""
        return name.lower() in listed or is_credential_name(
            name, extra_words=self.secret_words, allow=self.allow_names, header=header,
        )

    def prepare(self) -> None:
        """Build the key-shape scanner now (blocking, about 0.3 s; else done on first use)."""
        default_scanner()

    # ---- values ------------------------------------------------------------------
    def scan(self, data: bytes, credentials: Credentials | None = None) -> list[Hit]:
        """The secrets in ``data``: key shapes, values under credential names (JSON, SSE data lines,
        ``name=value`` text), user patterns, credentials sent; sorted, disjoint."""
        hits = default_scanner().find(data) + self._fields.find(data)
        if credentials:
            hits += escape_safe(data, credentials.find(data))
        for regex in self._user:
            hits += escape_safe(data, [Hit(m.start(), m.end(), "pattern") for m in regex.finditer(data)])
        return hits if len(hits) < 2 else disjoint(hits)

    def scrub(self, data: bytes, credentials: Credentials | None = None) -> tuple[bytes, Counter[str]]:
        """``data`` with every secret replaced by ``REDACTED``; and the count by rule."""
        return replaced(data, self.scan(data, credentials))

    def text(self, text: str, credentials: Credentials | None = None) -> tuple[str, int]:
        """``text`` with every secret replaced; and the number of replacements."""
        clean, rules = self.scrub(text.encode("utf-8", "surrogatepass"), credentials)
        if not rules:
            return text, 0
        return clean.decode("utf-8", "surrogatepass"), sum(rules.values())

    def name(self, text: str) -> str:
        """:meth:`text` for file names: also replaces what is key-shaped once lower-cased."""
        text, _ = self.text(text)
        lowered = text.lower()
        if len(lowered) != len(text) or not text.isascii():  # offsets would not line up
            return text
        for hit in reversed(self.scan(lowered.encode("ascii"))):
            text = text[: hit.start] + REDACTED + text[hit.end :]
        return text

    def value(self, value: Any, credentials: Credentials | None = None) -> tuple[Any, Counter[str]]:
        """A JSON-like value (dicts, lists, strings) with every string scrubbed; and the count by rule."""
        if isinstance(value, str):
            clean, rules = self.scrub(value.encode("utf-8", "surrogatepass"), credentials)
            return (clean.decode("utf-8", "surrogatepass") if rules else value), rules
        total: Counter[str] = Counter()
        if isinstance(value, list):
            out_list = []
            for item in value:
                clean_item, rules = self.value(item, credentials)
                out_list.append(clean_item)
                total += rules
            return out_list, total
        if isinstance(value, dict):
            out_dict = {}
            for k, v in value.items():
                out_dict[k], rules = self.value(v, credentials)
                total += rules
            return out_dict, total
        return value, total

    def pairs(
        self, pairs: Iterable[tuple[str, str]], secret: Iterable[str], credentials: Credentials | None = None,
    ) -> tuple[list[tuple[str, str]], list[str]]:
        """Drop secret pairs (named in ``secret`` or credentials by their words), scrub the rest.

        Returns:
            The kept pairs, and a report: the dropped names, and ``"<name> (secret value)"``
            for each kept pair whose value was scrubbed.
        """
        names = {s.lower() for s in secret}
        kept, report = [], []
        for k, v in pairs:
            if self.is_secret_name(k, names):
                report.append(k)
                continue
            clean, hits = self.text(v, credentials)
            if hits:
                report.append(f"{k} (secret value)")
            kept.append((k, clean))
        return kept, report

    def scrubber(self, credentials: Credentials | None = None) -> ChunkScrubber:
        """A new :class:`ChunkScrubber` for one streamed body (``credentials``: those sent)."""
        hold = credentials.longest if credentials else 0
        return ChunkScrubber(lambda data: self.scan(data, credentials), hold_min=hold)

    # ---- requests ----------------------------------------------------------------
    def request(
        self, path: str, query: Iterable[tuple[str, str]], headers: Iterable[tuple[str, str]],
        body: bytes | None, *, keep_body: bool = True,
    ) -> RedactedRequest:
        """Remove every secret from a request, and gather the credentials it sent.

        Headers, query parameters and JSON body fields named like credentials are removed
        (their values become credentials); then key shapes, user patterns and those
        credentials are replaced in the path, the values left and the body.
        ``keep_body=False``: the body is not kept (stored by digest), nor read.
        """
        report, found = Report(), []
        kept_headers = []
        for k, v in headers:
            if self.is_secret_name(k, self.secret_request_headers, header=True):
                report.names.append(f"request header {k.lower()}")
                found += values_of_header(k, v)
            else:
                kept_headers.append((k, v))
        kept_query = []
        for k, v in query:
            if self.is_secret_name(k, self.secret_query_params):
                report.names.append(f"query {k}")
                found.append(v)
            else:
                kept_query.append((k, v))
        doc = parse_json(body) if keep_body and body else None
        if doc is not None:
            # Every value under a credential name, also those of a duplicate key that json.loads drops.
            found += [str(v) for v in credential_values(parse_pairs(body or b""), self.is_secret_name)]
            doc = self._drop_fields(doc, "", found, report)
            for json_path in self.json_paths:
                if redact_path(doc, json_path.split("."), found):
                    report.names.append(f"body {json_path}")
        elif keep_body and body:
            body = self._form_fields(body, kept_headers, found, report)
        credentials = Credentials(found, min_length=self.credential_min_length)
        # Key shapes and values under credential names found in the request are credentials sent too.
        for text in [path, *(v for _, v in kept_query), *(v for _, v in kept_headers)]:
            credentials.add(self._sent(text.encode("utf-8", "surrogatepass")))
        raw = json.dumps(doc).encode() if doc is not None else (body or b"") if keep_body else b""
        credentials.add(self._sent(raw, by_name=doc is None))  # a JSON body's names are done above
        clean_path, rules = self.scrub(path.encode("utf-8", "surrogatepass"), credentials)
        report.add("request path", rules)
        out_query = [(k, self._place(v, f"query {k}", credentials, report)) for k, v in kept_query]
        out_headers = [(k, self._place(v, f"request header {k.lower()}", credentials, report))
                       for k, v in kept_headers]
        out_body = self._body(body, doc, credentials, report) if keep_body else None
        return RedactedRequest(clean_path.decode("utf-8", "surrogatepass"), out_query, out_headers, out_body,
                               report, credentials)

    def response_headers_scrubbed(
        self, headers: Iterable[tuple[str, str]], credentials: Credentials | None, report: Report,
    ) -> list[tuple[str, str]]:
        """Response headers without the secret ones, the rest scrubbed; ``report`` is added to."""
        out = []
        for k, v in headers:
            if self.is_secret_name(k, self.secret_response_headers, header=True):
                report.names.append(f"response header {k.lower()}")
            else:
                out.append((k, self._place(v, f"response header {k.lower()}", credentials, report)))
        return out

    def body(self, body: bytes) -> tuple[bytes, list[str]]:
        """A request body with secret fields removed and secrets replaced; and the report lines."""
        redacted = self.request("/", [], [], body)
        return redacted.body or b"", redacted.report.lines()

    def _sent(self, data: bytes, *, by_name: bool = True) -> list[str]:
        """The key-shaped strings (and values under credential names) in ``data``, as text."""
        if not data:
            return []
        hits = default_scanner().find(data) + (self._fields.find(data) if by_name else [])
        return [data[h.start : h.end].decode("utf-8", "replace") for h in hits]

    def _form_fields(self, body: bytes, headers: list[tuple[str, str]], found: list[str], report: Report) -> bytes:
        """A form or multipart body with the values of credential-named fields replaced (added to ``found``)."""
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        kind = content_type.partition(";")[0].strip().lower()
        if kind == "application/x-www-form-urlencoded":
            return self._form(body, found, report)
        if kind == "multipart/form-data":
            spans = multipart_spans(body, content_type, self.is_secret_name)
            for name, start, end in reversed(spans):
                found.append(body[start:end].decode("utf-8", "replace"))
                report.names.append(f"body {name}")
                body = body[:start] + REDACTED.encode() + body[end:]
        return body

    def _form(self, body: bytes, found: list[str], report: Report) -> bytes:
        """A form body without the values of credential-named fields nor the secrets in any value, read decoded
        (``https%3A%2F%2F…`` is a URL; each is added to ``found``); re-encoded when anything was replaced."""
        if (form := form_values(body, self.is_secret_name)) is None:
            return body
        found += form[2]
        report.names += [f"body {n}" for n in form[1]]
        out, rules = [], Counter[str]()
        for name, value in form[0]:
            clean, hits = self.scrub(raw := value.encode("utf-8", "surrogatepass"))
            if hits:
                found += self._sent(raw)
                rules += hits
            out.append((name, clean.decode("utf-8", "surrogatepass") if hits else value))
        report.add("request body", rules)
        return urlencode(out).encode("ascii") if form[1] or rules else body

    def _place(self, value: str, place: str, credentials: Credentials | None, report: Report) -> str:
        clean, rules = self.scrub(value.encode("utf-8", "surrogatepass"), credentials)
        report.add(place, rules)
        return clean.decode("utf-8", "surrogatepass") if rules else value

    def _body(self, body: bytes | None, doc: Any, credentials: Credentials, report: Report) -> bytes | None:
        if not body:
            return body
        if doc is not None:
            clean_doc, rules = self.value(doc, credentials)
            report.add("request body", rules)
            if rules or (report.names and any(n.startswith("body ") for n in report.names)):
                return json_bytes(clean_doc)
            return body
        clean, rules = self.scrub(body, credentials)
        report.add("request body", rules)
        return clean

    def _drop_fields(self, doc: Any, path: str, found: list[str], report: Report) -> Any:
        if isinstance(doc, list):
            return [self._drop_fields(item, path + "*.", found, report) for item in doc]
        if not isinstance(doc, dict):
            return doc
        out = {}
        pair = pair_of(doc, self.is_secret_name)  # {"Name": "api_key", "Value": SECRET}
        for k, v in doc.items():
            if pair is not None and pair.secret and k == pair.value_member:
                out[k] = redact_all(v, found)
                report.names.append(f"body {path}{k} ({pair.name_member} {pair.name})")
            elif pair is not None and k == pair.name_member:
                out[k] = v  # the pair's name: not a secret
            elif self.is_secret_name(k) and not is_exempt(doc, k):
                if isinstance(v, dict) and is_schema(v):  # a tool's ``password`` parameter: only its values
                    out[k] = {kk: redact_all(vv, found) if kk in VALUE_KEYS else self._drop_fields(
                        vv, f"{path}{k}.{kk}.", found, report) for kk, vv in v.items()}
                    if not any(kk in VALUE_KEYS for kk in v):
                        continue
                else:
                    out[k] = redact_all(v, found)
                report.names.append(f"body {path}{k}")
            else:
                out[k] = self._drop_fields(v, f"{path}{k}.", found, report)
        return out


_PATTERN_OPTION = "--filter-regex / Filter(patterns=)"
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # the error is raised as a RecorderConfigError instead


def _user_pattern(pattern: str) -> Any:
    """A user pattern compiled by RE2 (UTF-8 text, linear time: no input can hold the recorder up).

    Raises:
        RecorderConfigError: RE2 does not take it, or it matches the empty string.
    """
    try:
        regex = re2.compile(pattern.encode("utf-8", "surrogatepass"), _RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise RecorderConfigError(
            f"filter pattern {pattern!r} ({_PATTERN_OPTION}) is not a regular expression RE2 accepts: {reason} "
            "(RE2 runs in linear time: no backreferences, look-ahead or look-behind)") from None
    if regex.fullmatch(b""):
        raise RecorderConfigError(f"filter pattern {pattern!r} ({_PATTERN_OPTION}) matches the empty string")
    return regex


