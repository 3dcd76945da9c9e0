"""Choose, the replay pipeline's second stage: an :class:`~ssemock.receive.Exchange` gets its
:class:`Answer`, from the first of

1. a stream sent earlier, when a ``GET`` reconnects with the ``Last-Event-ID`` of one of its events
   (:mod:`ssemock.resume`);
2. a stub (:mod:`ssemock.stubs`), unless the request named its cassette;
3. a recorded interaction that matches it (:mod:`ssemock.matching`; the indexes live there).

It notes in the journal entry what answers (``cassette`` and ``interaction`` with the ``choice`` that
picked it, or ``stub``); ``X-SSEMock-Interaction: N`` pins the interaction (:mod:`ssemock.pinning`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from .cassette import Request, Response
from .edge import stopping
from .errors import NoMatchError
from .intake import THREAD_PARSE
from .matching import find_interaction, indexes_ready, key_request, prepare_indexes
from .pinning import choice, pinned_interaction, read_pin
from .receive import Exchange
from .refusals import BodyNotRecordedError, InvalidTextError, UnknownCassetteError
from .resume import Stream
from .state import ServerState, off_loop

__all__ = ["Answer", "choose"]


@dataclass(frozen=True)
class Answer:
    """What answers an exchange.

    Attributes:
        response: the response to shape and send (the cassette's own: shaping copies it).
        request: the recorded request it answers (the received one for a stub), which tells the
            provider; None for a resumed stream.
        resumed: the stream a ``Last-Event-ID`` reconnect continues, or None.
        remember: ``(path, cassette, interaction)`` of a recorded answer, kept for reconnects; None
            for stubs and resumed streams.
    """

    response: Response
    request: Request | None = None
    resumed: Stream | None = None
    remember: tuple[str, str, int] | None = None


async def choose(exchange: Exchange, state: ServerState) -> Answer:
    """The answer to ``exchange`` (see the module docstring).

    Raises:
        InvalidTextError: a stub would have to echo text that is not valid Unicode.
        UnknownCassetteError: the cassette named is not served.
        NoMatchError: no interaction matches (with the closest ones, and the closest stub).
    """
    return _resumed(exchange, state) or await _stubbed(exchange, state) or await _matched(exchange, state)


def _resumed(exchange: Exchange, state: ServerState) -> Answer | None:
    last_id = exchange.route.last_event_id
    earlier = None if last_id is None else state.streams.find(last_id, exchange.route.path)
    if earlier is None:
        return None
    exchange.entry.cassette, exchange.entry.interaction = earlier.cassette, earlier.interaction
    return Answer(earlier.response, resumed=earlier)


async def _stubbed(exchange: Exchange, state: ServerState) -> Answer | None:
    book, received, entry = state.stubs, exchange.received, exchange.entry
    if not len(book) or exchange.route.named:
        return None
    try:
        # A large reply takes a while to synthesize: off the loop, which goes on answering meanwhile;
        # a thread would cost more than a short answer.
        hit = book.answer(received, state.seed) if book.quick(received) else await off_loop(
            exchange.request.app, lambda _: book.answer(received, state.seed))
    except asyncio.CancelledError:
        entry.outcome = "stopped" if stopping(exchange.request) else "client_gone"
        raise
    except UnicodeEncodeError as exc:  # a lone surrogate (valid JSON) echoed into the answer
        raise InvalidTextError(exc) from None
    if hit is None:
        return None
    entry.stub = hit.stub.name
    return Answer(hit.response, request=received)


async def _matched(exchange: Exchange, state: ServerState) -> Answer:
    name, received = exchange.route.cassette, exchange.received
    if name is not None and name not in state.cassettes:
        raise UnknownCassetteError(name, state.cassettes)
    pool = [state.cassettes[name]] if name else list(state.cassettes.values())
    ignore = state.ignore_body
    if not indexes_ready(state.indexes, pool, state.match_on, ignore):
        # A cassette given after start-up (a test's own): indexed in a thread (seconds for 100,000
        # interactions), so the server goes on answering meanwhile.
        await asyncio.to_thread(prepare_indexes, state.indexes, pool, state.match_on, ignore)
    if pool and len(received.body or b"") > THREAD_PARSE:  # its canonical JSON text: off the loop
        await asyncio.to_thread(key_request, received, state.match_on, ignore)
    pin = read_pin(exchange.request.headers)
    explicit = name is not None and not state.strict
    try:
        match = find_interaction(pool, received, state.match_on, played=state.played, indexes=state.indexes,
                                 explicit=explicit, ignore=ignore) if pin is None else pinned_interaction(
            pool, received, state.match_on, pin, explicit=explicit, played=state.played, ignore=ignore)
    except NoMatchError as exc:
        if pin is not None:
            raise
        # scoring thousands of stubs takes a while: off the loop
        stub = await off_loop(exchange.request.app, lambda _: state.stubs.closest(received)) if len(
            state.stubs) else None
        raise _with_stub(exc, stub) from None
    exchange.entry.cassette, exchange.entry.interaction = match.cassette.name, match.index
    exchange.entry.choice = choice(match, state.played, pin is not None)
    missing = match.interaction.response.body_not_recorded
    if missing is not None:  # an empty answer would pretend to be the recorded one
        raise BodyNotRecordedError(match.cassette.name, match.index, missing)
    return Answer(match.interaction.response, request=match.interaction.request,
                  remember=(exchange.route.path, match.cassette.name, match.index))


def _with_stub(exc: NoMatchError, stub: dict[str, Any] | None) -> NoMatchError:
    """The 404 for a request nothing answers: the closest interactions, and the closest stub."""
    if stub is None:
        return exc
    message = f"{exc}\nclosest stub: {stub['stub']} ({stub['match']}): {'; '.join(stub['differences'])}"
    return NoMatchError(message, exc.request, exc.closest, closest_stub=stub)
