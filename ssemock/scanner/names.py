"""Which header, query parameter and JSON field names hold a credential: by the words of the name.

A name is split into lower-case words at separators (anything but a letter or a
digit) and at camelCase boundaries (``xApiKey`` → ``x api key``, ``APIKey`` →
``api key``). It names a credential when one of its words, or two adjacent words
written together, is a credential word (:data:`CREDENTIAL_WORDS`, by kind: keys
``key``, ``apikey``; tokens ``token``, ``jwt``; secrets ``secret``; ``auth``,
``authorization``; signatures ``signature``, ``sig``; passwords ``password``, ``passwd``;
passcodes ``passcode``; one-time passwords ``otp``, ``totp``, ``hotp``; ``cookie``,
``session``; ``credential``…), or, in a header name only, its last word is a header
credential word (:data:`HEADER_WORDS`: team keys, Honeycomb's ``X-Honeycomb-Team``), unless

* the next word says the field is *about* the credential, not the credential
  (:data:`DESCRIPTOR_WORDS`: ``stop_token_ids``, ``session_id``, ``key_name``,
  ``token_count``, ``auth_type``…), or
* the previous word makes it public or not a credential at all
  (:data:`PUBLIC_QUALIFIERS`: ``public_key``, ``prompt_cache_key``,
  ``idempotency-key``, ``primary_key``, Gemini's ``thoughtSignature``, MCP's
  ``progressToken``, ``nextPageToken``…).

Whole words only: ``max_tokens``, ``input_tokens``, ``tokenizer``, ``keywords``,
``monkey``, ``author`` are not credentials.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = [
    "CREDENTIAL_WORDS",
    "DESCRIPTOR_WORDS",
    "HEADER_WORDS",
    "PUBLIC_QUALIFIERS",
    "REDACTED",
    "SECRET_QUERY_PARAMS",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
    "is_credential_name",
    "name_words",
    "redact_pairs",
]

REDACTED = "REDACTED"

# Names removed although no word of theirs names a credential (the word rule catches the rest): the
# generic ones, and the providers' own (each ssemock.providers Provider's secret_request_headers and
# secret_response_headers), written out here so that a replay server, which journals every request,
# imports no provider module; tests/test_cold_start.py checks that every provider's names are here.
SECRET_REQUEST_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie",
    "x-api-key", "api-key", "x-goog-api-key", "openai-organization", "openai-project",
})
SECRET_RESPONSE_HEADERS = frozenset({
    "set-cookie",
    "anthropic-organization-id", "openai-organization", "openai-project",
})
SECRET_QUERY_PARAMS = frozenset({"key", "api_key", "access_token", "token", "code"})
"""Query parameters always removed: besides the credential words, ``code`` (an Azure Functions function
key, ``?code=…``, and an OAuth 2.0 authorization code, RFC 6749 section 4.1.2)."""

CREDENTIAL_WORDS = frozenset({
    # keys
    "key", "apikey", "accesskey", "secretkey", "privatekey", "authkey", "signingkey", "masterkey", "teamkey",
    # tokens
    "token", "apitoken", "accesstoken", "authtoken", "refreshtoken", "idtoken", "sessiontoken",
    "securitytoken", "bearertoken", "bearer", "jwt",
    # secrets
    "secret", "secrets", "clientsecret", "apisecret", "appsecret",
    "auth", "oauth", "authorization",
    "signature", "sig",
    # passwords, passcodes and one-time passwords (X-Passcode, X-Otp, totp_code)
    "password", "passwd", "pwd", "passphrase", "passcode", "passcodes",
    "otp", "otps", "totp", "hotp", "onetimepassword",
    # cookies and sessions
    "cookie", "cookies", "session", "jsessionid", "phpsessid",
    "credential", "credentials",
})
HEADER_WORDS = frozenset({"team"})
"""Words that name a credential as the last word of a *header* name only: team keys (Honeycomb's
``X-Honeycomb-Team`` carries the team's API key). A JSON field or query parameter ``team`` is data."""
DESCRIPTOR_WORDS = frozenset({
    "id", "ids", "name", "names", "type", "types", "count", "counts", "length", "len", "size", "limit",
    "limits", "file", "path", "url", "uri", "endpoint", "version", "alias", "method", "mode", "scheme",
    "enabled", "required", "provider", "expires", "expiry", "expiration", "ttl", "format", "index",
    "usage", "budget", "field", "header", "location", "policy", "algorithm", "alg",
})
PUBLIC_QUALIFIERS = frozenset({
    "public", "pub", "primary", "foreign", "sort", "partition", "cache", "idempotency", "dedup",
    "dedupe", "routing", "shard", "hash", "lookup", "map", "dict", "csrf", "xsrf", "allow",
    "thought",  # Gemini's thoughtSignature: the model's signature of its thoughts, sent back as is
    # Tokens that are positions or markers, not credentials: MCP progressToken, Google nextPageToken,
    # tokenizer eos_token / pad_token.
    "progress", "page", "next", "continuation", "cancellation", "sync", "cursor", "eos", "bos", "pad", "stop",
})

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def name_words(name: str) -> list[str]:
    """The lower-case words of a name: ``"X-Amz-Signature"`` → ``["x", "amz", "signature"]``,
    ``"xApiKey"`` → ``["x", "api", "key"]``, ``"APIKey"`` → ``["api", "key"]``."""
    return list(_words(name))


@functools.lru_cache(maxsize=4096)  # the same header names arrive with every request
def _words(name: str) -> tuple[str, ...]:
    return tuple(w.lower() for part in _NOT_ALNUM.split(name) for w in _CAMEL.findall(part))


def is_credential_name(
    name: str, *, extra_words: Iterable[str] = (), allow: Iterable[str] = (), header: bool = False,
) -> bool:
    """Whether ``name`` names a credential (see the module docstring).

    Args:
        name: a header, query parameter or JSON field name.
        extra_words: more credential words (lower case), e.g. ``{"pin"}``.
        allow: names never taken for credentials (compared case-insensitively).
        header: ``name`` is a header's (:data:`HEADER_WORDS` count too).
    """
    if name.lower() in allow:
        return False
    words = _words(name)
    if header and len(words) > 1 and words[-1] in HEADER_WORDS:
        return True
    credential = CREDENTIAL_WORDS.union(extra_words) if extra_words else CREDENTIAL_WORDS
    for i in range(len(words)):
        # One word ("token"), or two written as one ("api" "key" is also "apikey").
        for end in (i + 1, i + 2):
            if end > len(words) or "".join(words[i:end]) not in credential:
                continue
            after = words[end] if end < len(words) else ""
            before = words[i - 1] if i > 0 else ""
            if after not in DESCRIPTOR_WORDS and before not in PUBLIC_QUALIFIERS:
                return True
    return False


def redact_pairs(
    pairs: Iterable[tuple[str, str]], secret: Iterable[str], *, header: bool = False,
) -> list[tuple[str, str]]:
    """Drop the pairs named in ``secret`` (case-insensitive) or named like a credential (``header``: like a
    header's, see :func:`is_credential_name`); keep order.

    The verdicts are remembered per name and per ``secret`` set (the same header and parameter names
    arrive with every request; at most :data:`_VERDICTS` names per set, for 16 sets)."""
    dropped = _verdicts(secret if isinstance(secret, frozenset) else frozenset(secret), header)
    kept = []
    for pair in pairs:
        verdict = dropped.get(pair[0])
        if verdict is None:
            verdict = _judge(dropped, pair[0])
        if not verdict:
            kept.append(pair)
    return kept


_VERDICTS = 4096


class _Verdicts(dict[str, bool]):
    """Whether each name seen is dropped, for one set of secret names (``names``, lower case)."""

    def __init__(self, names: frozenset[str], header: bool) -> None:
        super().__init__()
        self.names = names
        self.header = header


@functools.lru_cache(maxsize=16)
def _verdicts(secret: frozenset[str], header: bool) -> _Verdicts:
    return _Verdicts(frozenset(s.lower() for s in secret), header)


def _judge(verdicts: _Verdicts, name: str) -> bool:
    """Whether ``name`` is dropped (remembered in ``verdicts`` while it holds fewer than :data:`_VERDICTS`)."""
    verdict = name.lower() in verdicts.names or is_credential_name(name, header=verdicts.header)
    if len(verdicts) < _VERDICTS:
        verdicts[name] = verdict
    return verdict
