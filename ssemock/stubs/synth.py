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
from collections.abc import Callable
from dataclasses import replace
from itertools import accumulate, repeat
from operator import attrgetter, mul, truediv
from typing import Any

from ..cassette import Chunk, End, Response
from ..providers import ErrorSpec, Provider, provider_named
from ..providers.synthesis import BATCH, Piece, Script, Synthesis, dumps, event_count
from ..providers.tokens import count_tokens, split_tokens
from .conversation import Conversation
from .model import Reply, Stub, Timing

__all__ = ["build_script", "encode_pieces", "piece_times", "synthesize", "within_limit"]

_EVENT = attrgetter("event")


def _synthesis(provider: Provider) -> Synthesis:
    found = provider.synthesize
    if not isinstance(found, Synthesis):
        raise LookupError(f"provider {provider.name} has no synthesis")
    return found


def within_limit(reply: Reply, max_tokens: int | None,
                 tokens: Callable[[str], list[str]] = split_tokens) -> Reply:
    """``reply`` as a provider sends it under the request's ``max_tokens``: a text longer than that
    many tokens (:func:`~ssemock.providers.tokens.split_tokens`) is cut there, without the tool calls
    that would follow it, and ends with the ``length`` finish reason (each provider's word:
    ``max_tokens``, ``MAX_TOKENS``, Responses ``incomplete``). A reply that names its finish reason,
    or answers with an error, is sent as it is."""
    if max_tokens is None or reply.finish_reason is not None or reply.error is not None or not reply.text \
            or len(reply.text) <= max_tokens:  # a token holds at least one character
        return reply
    pieces = tokens(reply.text)
    if len(pieces) <= max_tokens:
        return reply
    return replace(reply, text="".join(pieces[:max_tokens]), tool_calls=(), finish_reason="length")


def build_script(stub: Stub, conv: Conversation, seed: int) -> Script:
    """The :class:`Script` for one answer of ``stub`` to ``conv`` (the reply :func:`within_limit`)."""
    reply = stub.reply
    fmt = _synthesis(provider_named(conv.provider))
    rng = random.Random(f"{seed}/{stub.name}/{stub.used}")  # noqa: S311 - test data
    script = Script(conv, reply, reply.model or conv.model or "ssemock-model", rng, int(time.time()))
    script.reply = reply = within_limit(reply, conv.max_tokens, script.tokens)  # the text is cut into tokens once
    script.calls = [(call.id or fmt.call_id(script), call) for call in reply.tool_calls]
    usage = reply.usage
    script.input_tokens = usage.input_tokens if usage.input_tokens is not None else conv.prompt_tokens
    counted = sum(len(script.tokens(t)) for t in (reply.text, reply.refusal) if t)
    counted += sum(count_tokens(c.name) + len(script.tokens(c.arguments_json)) for _, c in script.calls)
    reasoning = len(script.tokens(reply.reasoning)) if reply.reasoning else 0
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
    times = piece_times(pieces, stub.timing, script.rng)
    chunks = list(map(Chunk, times, encode_pieces(pieces, fmt.eol)))
    return Response(headers=fmt.headers(script, True), chunks=chunks, end=End(times[-1] if times else 0.0),
                    timed=True)


def encode_pieces(pieces: list[Piece], eol: str) -> list[bytes]:
    """The SSE bytes of each event of ``pieces`` (``event:`` line if named, one ``data:`` line, or a
    comment; a run gives one per event), lines ending in ``eol``: written as one text split on NUL,
    which JSON text and the providers' constant lines never hold (checked: a piece with a NUL is
    written alone), about :data:`~ssemock.providers.synthesis.BATCH` events at a time."""
    heads = {e: _head(e, eol) for e in set(map(_EVENT, pieces))}
    out: list[bytes] = []
    group: list[Piece] = []
    size = 0
    for piece in pieces:
        group.append(piece)
        size += piece.count
        if size >= BATCH:
            out += _encode_group(group, heads, eol)
            group, size = [], 0
    return out + _encode_group(group, heads, eol) if group else out


def _encode_group(pieces: list[Piece], heads: dict[str | None, str], eol: str) -> list[bytes]:
    end = eol + eol + "\x00"
    glue = [""] * (3 * len(pieces))
    glue[0::3] = [": " if p.comment else heads[p.event] for p in pieces]
    glue[1::3] = [p.data.replace("\x00", end + heads[p.event]) if p.count > 1 else p.data for p in pieces]
    glue[2::3] = [end] * len(pieces)
    out = "".join(glue).encode().split(b"\x00")
    out.pop()  # after the last separator
    if len(out) != event_count(pieces):
        return [f"{': ' if p.comment else heads[p.event]}{data}{eol}{eol}".encode()
                for p in pieces for data in p.datas()]
    return out


def _head(event: str | None, eol: str) -> str:
    return f"event: {event}{eol}data: " if event else "data: "


def _json_array(script: Script, fmt: Synthesis, pieces: list[Piece], timing: Timing) -> Response:
    """Gemini without ``alt=sse``: the same payloads as one JSON array, one element per chunk."""
    times = piece_times(pieces, timing, script.rng)
    chunks = []
    datas = [data for piece in pieces for data in piece.datas()]
    for index, (data, t) in enumerate(zip(datas, times)):
        text = json.dumps(json.loads(data), indent=2, ensure_ascii=False)
        chunks.append(Chunk(t, (("[" if index == 0 else "\n,\r\n") + text).encode()))
    end = times[-1] if times else 0.0
    chunks.append(Chunk(end, b"\n]"))
    headers = [(k, "application/json; charset=UTF-8" if k.lower() == "content-type" else v)
               for k, v in fmt.headers(script, True)]
    return Response(headers=headers, chunks=chunks, end=End(end), timed=True)


def piece_times(pieces: list[Piece], timing: Timing, rng: random.Random) -> list[float]:
    """Seconds from the request for each piece: content pieces ``tokens / rate`` (or
    ``chunk_gap``) apart, each gap times ``1 ± jitter``; the first content at ``first_token``.
    The events before the first content arrive with it (comments before any event: at 0)."""
    tokens: list[int] = []
    for piece in pieces:
        tokens += [piece.tokens] * piece.count
    first = next((i for i, n in enumerate(tokens) if n), len(tokens))
    times: list[float] = []
    t = 0.0
    for piece in pieces:  # the pieces before the first content (none is a run: a run carries tokens)
        if len(times) >= first:
            break
        if not piece.comment:
            t = timing.first_token
        times += [round(t, 6)] * min(piece.count, first - len(times))
    if first == len(tokens):
        return times
    rate, gap, jitter = timing.tokens_per_second, timing.chunk_gap, timing.jitter
    rest = tokens[first + 1:]
    # n / rate is 0.0 for a structural piece (n = 0); bool(n) * gap likewise
    gaps = list(map(truediv, rest, repeat(rate)) if rate else map(mul, map(bool, rest), repeat(gap)))
    if jitter:
        draw = rng.random
        gaps = [g * (1 + jitter * (2 * draw() - 1)) if n else g for g, n in zip(gaps, tokens[first + 1:])]
    at = timing.first_token
    times.append(round(at, 6))
    if not (rate or gap):  # every event with the first content (the default: at once)
        return times + [times[-1]] * len(gaps)
    for start in range(0, len(gaps), BATCH):  # the event loop may run between batches
        sums = list(accumulate(gaps[start:start + BATCH], initial=at))
        at = sums[-1]
        times += map(round, sums[1:], repeat(6))
    return times
