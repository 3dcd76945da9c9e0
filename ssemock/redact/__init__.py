"""What is secret, and the filter that removes it before anything is written down.

Used wherever a request or its answer is written down (cassettes, imports, the
journal) so that no API key, token, password or cookie is ever kept. Three kinds of
rule, all on by default:

* **Names** (:mod:`.names`): a header, query parameter or JSON body field whose name
  has a credential word in it (``key``, ``apikey``, ``token``, ``secret``, ``auth``,
  ``authorization``, ``signature``, ``sig``, ``password``, ``passwd``, ``cookie``,
  ``session``, ``credential``…, split at separators and camelCase: ``X-Amz-Signature``,
  ``client_secret``, ``anthropic-api-key``, ``xApiKey``) is removed from a request
  (headers, query) or its value becomes ``"REDACTED"`` (JSON fields); plus the names
  in :data:`SECRET_REQUEST_HEADERS`, :data:`SECRET_RESPONSE_HEADERS`,
  :data:`SECRET_QUERY_PARAMS`. ``max_tokens``, ``tokenizer``, ``keywords``, ``monkey``,
  ``session_id``, ``public_key`` are not credentials. The rule also reads the contents
  of every body, request or answer (:mod:`.fields`): form and multipart fields, JSON
  (each duplicate key, each SSE ``data:`` line, each NDJSON line) and ``name=value``
  pairs in text that is not JSON.
* **Shapes** (:mod:`.shapes`): strings shaped like provider keys, from the gitleaks
  rule catalogue (MIT, shipped in this package) and our own JSON-escape-aware forms
  (``sk-…``, ``AIza…``, ``Bearer …``, ``gsk_…``, ``xai-…``, ``hf_…``, ``AKIA…``,
  ``ghp_…``, ``ya29.…``, ``pplx-…``, ``r8_…``, JWTs), replaced by ``REDACTED``
  wherever they appear.
* **Credentials sent** (:mod:`.credentials`): the values removed from the request
  by name, the token after ``Bearer``/``Basic``, and the key shapes the request held
  are replaced wherever else they appear in that interaction (path, headers, body,
  the streamed answer), whatever their shape.

Streamed bodies are scrubbed in bulk by :class:`ChunkScrubber` (:mod:`.stream`),
which also finds a secret split across reads. Scrubbing changes the recorded bytes
on purpose: a secret is never worth keeping byte-exact.
"""

from __future__ import annotations

from collections.abc import Iterable

from .credentials import Credentials
from .filter import (
    REDACTED,
    SECRET_QUERY_PARAMS,
    SECRET_REQUEST_HEADERS,
    SECRET_RESPONSE_HEADERS,
    Filter,
    RedactedRequest,
    Report,
)
from .names import is_credential_name
from .shapes import GITLEAKS_COMMIT
from .stream import BATCH, ChunkScrubber

__all__ = [
    "BATCH",
    "GITLEAKS_COMMIT",
    "REDACTED",
    "SECRET_QUERY_PARAMS",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
    "ChunkScrubber",
    "Credentials",
    "Filter",
    "RedactedRequest",
    "Report",
    "is_credential_name",
    "redact_pairs",
    "scrub_text",
]

_DEFAULT = Filter()


def redact_pairs(pairs: Iterable[tuple[str, str]], secret: Iterable[str]) -> list[tuple[str, str]]:
    """Drop the pairs named in ``secret`` (case-insensitive) or named like a credential; keep order."""
    names = {s.lower() for s in secret}
    return [(k, v) for k, v in pairs if not _DEFAULT.is_secret_name(k, names)]


def scrub_text(text: str) -> tuple[str, int]:
    """Replace key-shaped strings (the default shapes) by ``REDACTED``.

    Returns:
        The scrubbed text and the number of replacements.
    """
    return _DEFAULT.text(text)
