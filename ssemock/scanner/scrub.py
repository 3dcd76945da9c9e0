"""The default rules applied: key shapes and values under credential names replaced by ``REDACTED``."""

from __future__ import annotations

import functools
from collections import Counter

from .fields import FieldFinder
from .names import REDACTED, is_credential_name
from .own_rules import default_scanner
from .shapes import Hit, disjoint

__all__ = ["default_fields", "replaced", "scrub_bytes", "scrub_text"]


@functools.cache
def default_fields() -> FieldFinder:
    """The finder of values under credential names, with the default words (one, shared)."""
    return FieldFinder(is_credential_name)


def replaced(data: bytes, hits: list[Hit]) -> tuple[bytes, Counter[str]]:
    """``data`` with each of ``hits`` (sorted, disjoint) replaced by ``REDACTED``; and the count by rule."""
    if not hits:
        return data, Counter()
    pieces, pos = [], 0
    marker = REDACTED.encode()
    for hit in hits:
        pieces += [data[pos : hit.start], marker]
        pos = hit.end
    pieces.append(data[pos:])
    return b"".join(pieces), Counter(h.rule for h in hits)


def scrub_bytes(data: bytes) -> bytes:
    """``data`` with key shapes and values under credential names (the default rules) replaced by ``REDACTED``."""
    return replaced(data, disjoint(default_scanner().find(data) + default_fields().find(data)))[0]


def scrub_text(text: str) -> tuple[str, int]:
    """Replace key-shaped strings and values under credential names (the default rules) by ``REDACTED``.

    The same as the default :class:`ssemock.redact.Filter`'s ``text``, without the filter.

    Returns:
        The scrubbed text and the number of replacements.
    """
    data = text.encode("utf-8", "surrogatepass")
    clean, rules = replaced(data, disjoint(default_scanner().find(data) + default_fields().find(data)))
    if not rules:
        return text, 0
    return clean.decode("utf-8", "surrogatepass"), sum(rules.values())
