"""Cassette format v1: interactions (request + recorded response), YAML, lossless.

A cassette is a YAML file whose first key is the format version::

    ssemock_cassette: 1
    name: openai-chat-demo              # optional; defaults to the file name
    provenance: {source: ..., licence: ...}   # optional, free-form
    interactions:
    - request:
        method: POST
        path: /v1/chat/completions
        query: [[alt, sse]]              # optional, list of [name, value]
        headers: {content-type: application/json}
        body: {json: {model: gpt-4o-mini, stream: true}}
        # body forms: {json: VALUE} | {text: STR} | {base64: STR}
        #             | {sha256: HEX, size: BYTES}   (large bodies, matched by digest)
        # no body key: the interaction matches any request body
      response:
        status: 200
        headers: {content-type: text/event-stream}
        timing: recorded                 # or "none": imported without timing
        start: 0.412                     # seconds from request sent to headers
        chunks:                          # one item per upstream read
        - t: 0.530                       # seconds from request sent
          text: |+
            data: {"choices": []}

        - {t: 0.531, base64: ZGF0YTog4p}  # chunks that are not UTF-8 on their own
        end: {t: 0.9, how: clean}        # clean | cut | reset | timeout | client_gone

Hand-written responses may give ``events:`` instead of ``chunks:`` (see
:mod:`ssemock.cassette.read`): one chunk per event, ``interval`` seconds apart.

Times are float seconds from the moment the request was sent. Response bytes,
chunk boundaries and times round-trip exactly. Request bodies stored in the
``json`` form keep their JSON value (compared by value when matching), not their
exact bytes. Loading uses ``yaml.CSafeLoader`` when available (safe loading only).

The records are :mod:`.model`; :func:`load`, :func:`loads`, :func:`dumps`, :func:`save` and
:func:`load_cassettes` (:mod:`.io`) read and write them.
"""


from .io import atomic_write, dumps, load, load_cassettes, loads, save
from .model import (
    END_HOWS,
    FORMAT_KEY,
    FORMAT_VERSION,
    MODELINE,
    NO_CONTENT_STATUSES,
    SCHEMAS_URL,
    Cassette,
    Chunk,
    End,
    Interaction,
    Request,
    Response,
    body_digest,
    no_content,
    reason_phrase,
)

__all__ = [
    "END_HOWS",
    "FORMAT_KEY",
    "FORMAT_VERSION",
    "MODELINE",
    "NO_CONTENT_STATUSES",
    "SCHEMAS_URL",
    "Cassette",
    "Chunk",
    "End",
    "Interaction",
    "Request",
    "Response",
    "atomic_write",
    "body_digest",
    "dumps",
    "load",
    "load_cassettes",
    "loads",
    "no_content",
    "reason_phrase",
    "save",
]
