"""From a stub's reply to a recorded-like :class:`~ssemock.cassette.Response`.

:func:`synthesize` builds the provider's events (``SYNTHESIS`` of each provider module in
:mod:`ssemock.providers`, its ``Provider.synthesize``), times them (:class:`~ssemock.stubs.model.Timing`) and
writes one chunk per event, as the bundled recordings of these providers show. The result
is then served like a recorded response: the scenario engine, the journal and the
verification helpers see no difference.

Identifiers (``chatcmpl-…``, ``msg_01…``, ``call_…``), padding, header values and jitter
are drawn from a generator seeded by the server's seed, the stub's name and its use count,
so the same test draws the same ones; ``created`` and ``Date`` are the current time.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from ..cassette import Chunk, End, Response
from ..providers import ErrorSpec, Provider, provider_named
from ..providers.synthesis import Piece, Script, Synthesis, dumps
from ..providers.tokens import count_tokens
from .conversation import Conversation
from .model import Stub, Timing

__all__ = ["build_script", "synthesize"]


def _synthesis(provider: Provider) -> Synthesis:
    found = provider.synthesize
    if not isinstance(found, Synthesis):
        raise LookupError(f"provider {provider.name} has no synthesis")
    return found


def build_script(stub: Stub, conv: Conversation, seed: int) -> Script:
    """The :class:`Script` for one answer of ``stub`` to ``conv``."""
    reply = stub.reply
    fmt = _synthesis(provider_named(conv.provider))
    rng = random.Random(f"{seed}/{stub.name}/{stub.used}")  # noqa: S311 - test data
    script = Script(conv, reply, reply.model or conv.model or "ssemock-model", rng, int(time.time()))
    script.calls = [(call.id or fmt.call_id(script), call) for call in reply.tool_calls]
    usage = reply.usage
    script.input_tokens = usage.input_tokens if usage.input_tokens is not None else conv.prompt_tokens
    counted = sum(count_tokens(t) for t in (reply.text, reply.refusal) if t)
    counted += sum(count_tokens(c.name) + count_tokens(c.arguments_json) for _, c in script.calls)
    reasoning = count_tokens(reply.reasoning) if reply.reasoning else 0
    script.reasoning_tokens = usage.reasoning_tokens if usage.reasoning_tokens is not None else reasoning
    script.output_tokens = usage.output_tokens if usage.output_tokens is not None else counted + reasoning
    return script


def synthesize(stub: Stub, conv: Conversation, seed: int = 0) -> Response:
    """The response ``stub`` gives to ``conv``: streamed events or one JSON answer, or its error.

    Times are in seconds (see :class:`~ssemock.stubs.model.Timing`); the response is marked
    ``timed`` so the server's ``timing_scale`` applies.
    """
    provider = provider_named(conv.provider)
    fmt = _synthesis(provider)
    script = build_script(stub, conv, seed)
    reply = stub.reply
    if reply.error is not None:
        error = reply.error
        spec = ErrorSpec(error.message, status=error.status)
        body: Any = error.body if error.body is not None else provider.http_error(spec, error.status)
        data = body.encode() if isinstance(body, str) else dumps(body).encode()
        kind = "text/plain; charset=utf-8" if isinstance(body, str) else "application/json"
        headers = [(k, v) for k, v in fmt.headers(script, False) if k.lower() != "content-type"]
        return Response(status=error.status, headers=[*headers, ("content-type", kind)],
                        chunks=[Chunk(stub.timing.first_token, data)], end=End(stub.timing.first_token), timed=True)
    if not conv.stream:
        data = dumps(fmt.answer(script)).encode()
        t = stub.timing.first_token
        return Response(headers=fmt.headers(script, False), chunks=[Chunk(t, data)], end=End(t), timed=True)
    pieces = fmt.events(script)
    if conv.provider == "gemini" and not conv.sse:
        return _json_array(script, fmt, pieces, stub.timing)
    times = _times(pieces, stub.timing, script.rng)
    chunks = [Chunk(t, _encode(p, fmt.eol)) for p, t in zip(pieces, times)]
    return Response(headers=fmt.headers(script, True), chunks=chunks, end=End(times[-1] if times else 0.0),
                    timed=True)


def _encode(piece: Piece, eol: str) -> bytes:
    if piece.comment:
        return f": {piece.data}{eol}{eol}".encode()
    head = f"event: {piece.event}{eol}" if piece.event else ""
    return f"{head}data: {piece.data}{eol}{eol}".encode()


def _json_array(script: Script, fmt: Synthesis, pieces: list[Piece], timing: Timing) -> Response:
    """Gemini without ``alt=sse``: the same payloads as one JSON array, one element per chunk."""
    times = _times(pieces, timing, script.rng)
    chunks = []
    for index, (piece, t) in enumerate(zip(pieces, times)):
        text = json.dumps(json.loads(piece.data), indent=2, ensure_ascii=False)
        chunks.append(Chunk(t, (("[" if index == 0 else "\n,\r\n") + text).encode()))
    end = times[-1] if times else 0.0
    chunks.append(Chunk(end, b"\n]"))
    headers = [(k, "application/json; charset=UTF-8" if k.lower() == "content-type" else v)
               for k, v in fmt.headers(script, True)]
    return Response(headers=headers, chunks=chunks, end=End(end), timed=True)


def _times(pieces: list[Piece], timing: Timing, rng: random.Random) -> list[float]:
    """Seconds from the request for each piece: content pieces ``tokens / rate`` (or
    ``chunk_gap``) apart, each gap times ``1 ± jitter``; the first content at ``first_token``."""
    times: list[float] = []
    t = 0.0
    started = False
    for piece in pieces:
        if piece.tokens:
            if not started:
                t, started = timing.first_token, True
            else:
                gap = piece.tokens / timing.tokens_per_second if timing.tokens_per_second else timing.chunk_gap
                if timing.jitter:
                    gap *= 1 + timing.jitter * (2 * rng.random() - 1)
                t += gap
        elif not started and not piece.comment:
            t = timing.first_token  # the events before the first token arrive with it
        times.append(round(t, 6))
    return times
