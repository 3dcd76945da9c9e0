"""What is secret, and the filter that removes it before anything is written down.

Used wherever a request or its answer is written down (cassettes, imports, the
journal) so that no API key, token, password or cookie is ever kept. Three kinds of
rule, all on by default:

* **Names** (:mod:`ssemock.scanner.names`): a header, query parameter or JSON body field whose name
  has a credential word in it (``key``, ``apikey``, ``token``, ``secret``, ``auth``,
  ``authorization``, ``signature``, ``sig``, ``password``, ``passwd``, ``cookie``,
  ``session``, ``credential``…, split at separators and camelCase: ``X-Amz-Signature``,
  ``client_secret``, ``anthropic-api-key``, ``xApiKey``) is removed from a request
  (headers, query) or its value becomes ``"REDACTED"`` (JSON fields); plus the names
  in :data:`SECRET_REQUEST_HEADERS`, :data:`SECRET_RESPONSE_HEADERS`,
  :data:`SECRET_QUERY_PARAMS`. ``max_tokens``, ``tokenizer``, ``keywords``, ``monkey``,
  ``session_id``, ``public_key`` are not credentials. The rule also reads the contents
  of every body, request or answer (:mod:`ssemock.scanner.fields`): form and multipart fields, JSON
  (each duplicate key, each SSE ``data:`` line, each NDJSON line) and ``name=value``
  pairs in text that is not JSON.
* **Shapes** (:mod:`ssemock.scanner.shapes`): strings shaped like provider keys, from the gitleaks
  rule catalogue (MIT, shipped in :mod:`ssemock.scanner`) and our own JSON-escape-aware forms
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

The default rules (names, shapes, fields) are the secret scanner, :mod:`ssemock.scanner`, which
error messages use too; this package adds the user's rules, the credentials sent and the streams.
"""

from __future__ import annotations

from ..scanner.names import (
    REDACTED,
    SECRET_QUERY_PARAMS,
    SECRET_REQUEST_HEADERS,
    SECRET_RESPONSE_HEADERS,
    is_credential_name,
    redact_pairs,
)
from ..scanner.scrub import scrub_text
from ..scanner.shapes import GITLEAKS_COMMIT
from .credentials import Credentials
from .filter import Filter, RedactedRequest, Report
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

