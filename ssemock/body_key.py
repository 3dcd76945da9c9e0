"""The body key of a request: what an index files a recorded body under, and looks a received one up by.

* a JSON body: a digest of its canonical text (keys sorted, no spaces, a number with an integral
  value written as an integer), so that two bodies equal as JSON values, which the ``body`` matcher
  treats as equal, have equal keys (``1`` and ``1.0`` included);
* any other body: a digest of its bytes.

A JSON body holding the filter's ``"REDACTED"`` (which matches any value) is said to (the index
then compares it one by one). The canonical text of a large body is written in pieces
(:data:`WHOLE_TEXT`, :data:`TEXT_PIECE`) so that the thread keying it never holds the interpreter long.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .body_paths import BodyPath, without
from .cassette import Request
from .cassette.model import parse_json
from .redact import REDACTED

__all__ = ["TEXT_PIECE", "WHOLE_TEXT", "body_key"]

_REDACTED_TEXT = json.dumps(REDACTED)


def _canonical_float(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


_DECODER = json.JSONDecoder(parse_float=_canonical_float)
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def body_key(
    request: Request, *, keep: bool = False, ignore: tuple[BodyPath, ...] = (),
) -> tuple[bytes | None, bool]:
    """``(key, redacted)``: the body key of ``request`` (see the module docstring) and whether
    its JSON holds ``"REDACTED"``. The key is None when the JSON is too deep to canonicalize.

    A body is JSON exactly when :meth:`Request.json_view` is not None (what the ``body``
    matcher compares as JSON): not empty, valid, not ``null``, at most
    :data:`~ssemock.limits.MAX_JSON_PARSE` bytes and :data:`~ssemock.limits.MAX_JSON_DEPTH`
    deep; any other body is keyed by its bytes. The JSON already parsed for the request is
    used (a received body is parsed once); a recorded one not yet parsed is parsed here and
    not kept. With ``keep``, the key is remembered on ``request`` (a received request's key
    computed in a thread, then used by matching on the event loop). ``ignore``: body paths
    deleted from a JSON body before it is keyed (:func:`ssemock.body_paths.without`), as the
    ``body`` matcher deletes them before comparing.
    """
    remembered = request._body_key
    if remembered is not None and remembered[0] is request.body and remembered[1] == ignore:
        return remembered[2]  # type: ignore[no-any-return]
    data = request.body or b""
    value = request.json_view() if request.is_parsed() else parse_json(data)
    found: tuple[bytes | None, bool]
    if value is None:
        found = b"r" + hashlib.blake2b(data, digest_size=20).digest(), False
    else:
        try:
            text = _canonical_text(without(value, ignore), len(data))
            if (".0" in text or "e+" in text) and _INTEGRAL_FLOAT.search(text):  # keyed as 1 and 10**16
                value = _DECODER.decode(data.decode(json.detect_encoding(data), "surrogatepass"))
                text = _canonical_text(without(value, ignore), len(data))
        except RecursionError:
            found = None, False
        else:
            found = b"j" + hashlib.blake2b(text.encode("ascii"), digest_size=20).digest(), _REDACTED_TEXT in text
    if keep:
        request._body_key = (request.body, ignore, found)
    return found


WHOLE_TEXT = 64 * 1024
"""The canonical text of a JSON body of up to this many bytes is written by one call of the C
encoder; a larger one in pieces of at most :data:`TEXT_PIECE` items of a container, so that
the thread keying it never holds the interpreter for long (the C encoder does not let go of
it: 1 MiB of tiny items takes 50-150 ms in one call)."""
TEXT_PIECE = 2048
"""Items of one container (leaves) written by one call of the encoder, for large bodies."""
_CONTAINER_TYPES = frozenset({dict, list})


def _canonical_text(value: Any, size: int) -> str:
    """``_ENCODER.encode(value)``; for a body over :data:`WHOLE_TEXT` bytes, the same text in pieces."""
    if size <= WHOLE_TEXT:
        return _ENCODER.encode(value)
    out: list[str] = []
    _pieces(value, out)
    return "".join(out)


def _pieces(value: Any, out: list[str]) -> None:
    """Append the canonical text of ``value`` to ``out``: a container holding only leaves, or
    small containers of leaves, is written by calls of at most :data:`TEXT_PIECE` items each;
    a larger child container is written the same way on its own."""
    kind = type(value)
    if kind is not dict and kind is not list:
        out.append(_ENCODER.encode(value))
        return
    keys: list[str] | None = sorted(value) if kind is dict else None  # JSON keys are str: as sort_keys sorts
    children: list[Any] = [value[k] for k in keys] if keys is not None else value
    if _CONTAINER_TYPES.isdisjoint(map(type, children)) and len(children) <= TEXT_PIECE:
        out.append(_ENCODER.encode(value))
        return
    out.append("[" if keys is None else "{")
    wrote = False
    start = weight = 0

    def flush(end: int) -> None:  # children[start:end], brackets dropped
        nonlocal wrote
        if end > start:
            piece = children[start:end] if keys is None else {k: value[k] for k in keys[start:end]}
            out.append(("," if wrote else "") + _ENCODER.encode(piece)[1:-1])
            wrote = True

    for index, child in enumerate(children):
        weight += 1
        if type(child) is dict or type(child) is list:
            grandchildren = child.values() if type(child) is dict else child
            if len(child) > TEXT_PIECE or not _CONTAINER_TYPES.isdisjoint(map(type, grandchildren)):
                flush(index)
                out.append("," if wrote else "")
                if keys is not None:
                    out.append(_ENCODER.encode(keys[index]) + ":")
                _pieces(child, out)
                wrote, start, weight = True, index + 1, 0
                continue
            weight += len(child)
        if weight > TEXT_PIECE:
            flush(index)
            start, weight = index, 1 + (len(child) if type(child) is dict or type(child) is list else 0)
    flush(len(children))
    out.append("]" if keys is None else "}")


# An integral float in canonical JSON text as Python writes it ("1.0", "-2.0", "1e+16"), before
# ",", "]", "}" or the end. Text inside strings can look alike: such a body is only canonicalized
# the slower way, by parsing it again (its 1.0 read as 1).
_INTEGRAL_FLOAT = re.compile(r"[0-9](?:\.0|e\+[0-9]+)(?=$|[,\]}])")
