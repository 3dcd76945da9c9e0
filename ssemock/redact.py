"""What is secret: header names, query parameter names, and key-shaped strings.

Used wherever a request is written down (cassettes, imports, the journal) so
that no API key, token or cookie is ever kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "REDACTED",
    "SECRET_QUERY_PARAMS",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
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

# Key-shaped strings: OpenAI / Anthropic keys, Google API keys, bearer tokens.
KEY_PATTERN = re.compile(
    r"sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{12,}"
)


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
