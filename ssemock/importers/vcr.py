"""Import VCR.py / pytest-recording cassettes holding SSE (or any) response bodies.

Handles the variants seen in real files: request bodies as ``body`` (string or
``{string: ...}``) or pydantic-ai's ``parsed_body`` (YAML data); response bodies
as text (``|+`` blocks, double-quoted strings with ``\\r\\n`` escapes),
``!!binary`` (e.g. gzip with ``Content-Encoding: gzip``, kept encoded, so the
client receives exactly what the provider sent) or ``parsed_body`` (a JSON answer, written
back as pydantic-ai's ``json_body_serializer.deserialize`` does: ``json.dumps`` with its
defaults, the length its ``content-length`` header was set to). Secret headers and query
parameters are dropped (see :mod:`ssemock.redact`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..cassette import Cassette, Interaction
from ..cassette.read import NO_CONTENT_STATUSES, read_yaml
from ..errors import ImportFormatError
from ..limits import MAX_CASSETTE_FILE
from . import NO_CONTENT_NOTE, request_from_url, untimed_response

__all__ = ["import_vcr"]



def import_vcr(path: str | Path, *, name: str | None = None, provenance: dict[str, Any] | None = None) -> Cassette:
    """Convert one VCR.py cassette file.

    Args:
        path: the ``.yaml`` file written by VCR.py or pytest-recording.
        name: cassette name (default: the file name without ``.vcr.yaml`` / ``.yaml``).
        provenance: extra provenance fields (source repository, licence, ...).

    Returns:
        A cassette with ``timing: none`` responses (see :mod:`ssemock.importers`).

    Raises:
        ImportFormatError: the file is not a VCR cassette (names the file and field), is over
            512 MiB, or uses YAML anchors, aliases or duplicate keys (names the line).

    A 204 or 304 answer's body is dropped (provenance ``bodies_dropped``); a 1xx status, which
    is never a final answer, is refused when the cassette is checked (:func:`check_loadable`).
    """
    p = Path(path)
    try:
        # The one safe reading of every YAML file: no anchors, aliases or duplicate keys, bounded size.
        doc = read_yaml(p, str(p), limit=MAX_CASSETTE_FILE, error=ImportFormatError)
    except FileNotFoundError as exc:
        raise ImportFormatError(p, "", "a readable VCR.py YAML cassette", str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise ImportFormatError(p, "interactions", "a VCR.py cassette with a list of interactions", None)
    dropped: list[int] = []
    interactions = [_interaction(p, item, i, dropped) for i, item in enumerate(doc["interactions"])]
    meta = {"imported_from": p.name, "importer": "vcr", "timing": "none (VCR.py keeps no chunk timing)"}
    if dropped:
        meta["bodies_dropped"] = NO_CONTENT_NOTE.format(f"{len(dropped)} interactions")
    meta.update(provenance or {})
    return Cassette(name or _stem(p), interactions, meta)


def _stem(p: Path) -> str:
    name = p.name
    for suffix in (".vcr.yaml", ".vcr.yml", ".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return p.stem


def _interaction(p: Path, item: Any, i: int, dropped: list[int]) -> Interaction:
    """Interaction ``i``; its index goes into ``dropped`` when its 204 or 304 answer's body is dropped."""
    where = f"interactions[{i}]"
    if not isinstance(item, dict) or not isinstance(item.get("request"), dict) or not isinstance(
        item.get("response"), dict
    ):
        raise ImportFormatError(p, where, "a mapping with 'request' and 'response'", item)
    req, resp = item["request"], item["response"]
    for key in ("method", "uri"):
        if not isinstance(req.get(key), str):
            raise ImportFormatError(p, f"{where}.request.{key}", "a string", req.get(key))
    status = resp.get("status", {})
    code = status.get("code") if isinstance(status, dict) else None
    if not isinstance(code, int):
        raise ImportFormatError(p, f"{where}.response.status.code", "an HTTP status code", code)
    request, sent = request_from_url(req["method"], req["uri"], _headers(req.get("headers")), _request_body(req))
    body = _response_body(p, resp, f"{where}.response")
    if code in NO_CONTENT_STATUSES and body:
        dropped.append(i)
    response = untimed_response(code, status.get("message"), _headers(resp.get("headers")), body, sent)
    return Interaction(request, response)


def _headers(doc: Any) -> list[tuple[str, str]]:
    if not isinstance(doc, dict):
        return []
    out = []
    for name, values in doc.items():
        for value in values if isinstance(values, list) else [values]:
            out.append((str(name), str(value)))
    return out


def _request_body(req: dict[str, Any]) -> bytes | None:
    if "parsed_body" in req:  # pydantic-ai's serializer: JSON body kept as YAML data
        return json.dumps(req["parsed_body"], separators=(",", ":"), ensure_ascii=False).encode()
    body = req.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    if body is None or body in ("", b""):
        return None if body is None else b""
    return body if isinstance(body, bytes) else str(body).encode("utf-8")


def _response_body(p: Path, resp: dict[str, Any], where: str) -> bytes:
    if "parsed_body" in resp:  # pydantic-ai's serializer: a JSON answer kept as YAML data, ``body`` removed
        return json.dumps(resp["parsed_body"]).encode("utf-8")
    return _bytes(p, resp.get("body"), f"{where}.body")


def _bytes(p: Path, body: Any, where: str) -> bytes:
    if isinstance(body, dict):
        body = body.get("string", b"")
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    raise ImportFormatError(p, where, "a string or !!binary body", body)
