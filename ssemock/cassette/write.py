"""Writing cassettes: plain data for YAML, and a dumper that keeps UTF-8 bodies readable.

A chunk that decodes as UTF-8 is written as ``text`` (a literal block when it has line
breaks and no character a block would change), any other chunk as ``base64``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import yaml

from .model import FORMAT_KEY, FORMAT_VERSION, Cassette, Chunk, Interaction, parse_json

__all__ = ["Dumper", "cassette_doc", "chunk_doc", "dump_yaml", "interaction_doc", "match_doc"]

_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

class Dumper(_BaseDumper):  # type: ignore[misc]
    pass


# Characters a literal block cannot carry unchanged: YAML folds CR and NEL into LF,
# LS/PS are line breaks too, and BOM/controls need escapes.
_BLOCK_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x85\u2028\u2029\ufeff]")


def _represent_str(dumper: Any, value: str) -> Any:
    style = None
    if "\n" in value and not _BLOCK_UNSAFE.search(value):
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


Dumper.add_representer(str, _represent_str)


def dump_yaml(doc: Any) -> str:
    """YAML text of ``doc`` with :class:`Dumper` (key order kept, Unicode as is)."""
    return yaml.dump(doc, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)


def cassette_doc(cassette: Cassette) -> dict[str, Any]:
    """The YAML document of a cassette as plain data (format version key first)."""
    doc: dict[str, Any] = {FORMAT_KEY: FORMAT_VERSION, "name": cassette.name}
    if cassette.provenance:
        doc["provenance"] = cassette.provenance
    match = match_doc(cassette.ignore_body, cassette.dropped_body)
    if match:
        doc["match"] = match
    doc["interactions"] = [interaction_doc(i) for i in cassette.interactions]
    return doc


def match_doc(ignore_body: tuple[str, ...], dropped_body: tuple[str, ...]) -> dict[str, Any]:
    """The ``match:`` mapping of a cassette (``{}``: none): the body paths ignored and dropped."""
    doc: dict[str, Any] = {}
    if ignore_body:
        doc["ignore_body"] = list(ignore_body)
    if dropped_body:
        doc["dropped_body"] = list(dropped_body)
    return doc


def headers_doc(pairs: list[tuple[str, str]]) -> dict[str, Any] | list[list[str]]:
    """A mapping (repeated names as lists) when that keeps the order, else ``[name, value]`` pairs."""
    names = [name for i, (name, _) in enumerate(pairs) if i == 0 or pairs[i - 1][0] != name]
    if len(names) != len(set(names)):
        return [[name, value] for name, value in pairs]
    doc: dict[str, Any] = {}
    for name, value in pairs:
        if name in doc:
            doc[name] = (doc[name] if isinstance(doc[name], list) else [doc[name]]) + [value]
        else:
            doc[name] = value
    return doc


def interaction_doc(inter: Interaction) -> dict[str, Any]:
    req, resp = inter.request, inter.response
    rdoc: dict[str, Any] = {"method": req.method, "path": req.path}
    if req.query:
        rdoc["query"] = [list(p) for p in req.query]
    if req.headers:
        rdoc["headers"] = headers_doc(req.headers)
    if req.body_sha256 is not None:
        rdoc["body"] = {"sha256": req.body_sha256, "size": req.body_size}
    elif req.body is not None:
        rdoc["body"] = body_doc(req.body)
    sdoc: dict[str, Any] = {"status": resp.status}
    if resp.reason is not None:
        sdoc["reason"] = resp.reason
    sdoc["headers"] = headers_doc(resp.headers)
    sdoc["timing"] = "recorded" if resp.timed else "none"
    if resp.timed:
        sdoc["start"] = resp.start
    if resp.body_not_recorded is not None:
        sdoc["body_not_recorded"] = resp.body_not_recorded
    sdoc["chunks"] = [chunk_doc(c, resp.timed) for c in resp.chunks]
    # A file's times are ordered (the reader checks): an end given before the last chunk
    # (e.g. ``End()`` left at 0 in code) is written at the last chunk, which replays the same.
    end_t = max(resp.end.t, resp.chunks[-1].t if resp.chunks else resp.start)
    sdoc["end"] = {"t": end_t, "how": resp.end.how} if resp.timed else {"how": resp.end.how}
    return {"request": rdoc, "response": sdoc}


# A JSON escape of a UTF-16 surrogate (``\ud800``): alone, it parses to text that UTF-8 cannot carry.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def body_doc(body: bytes) -> dict[str, Any]:
    """A request body as written: ``json`` (parsed JSON), else ``text`` (UTF-8), else ``base64``.

    JSON holding a lone surrogate escape (``"\\ud800"``) is written as its text, escape and all:
    parsed, it would be a string no YAML file (nor UTF-8) can hold.
    """
    parsed = parse_json(body)
    if isinstance(parsed, (dict, list)) and not (_SURROGATE_ESCAPE.search(body) and _lone_surrogate(parsed)):
        return {"json": parsed}
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii")}


def _lone_surrogate(parsed: Any) -> bool:
    try:
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def chunk_doc(chunk: Chunk, timed: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {"t": chunk.t} if timed else {}
    try:
        doc["text"] = chunk.data.decode("utf-8")
    except UnicodeDecodeError:
        doc["base64"] = base64.b64encode(chunk.data).decode("ascii")
    return doc
