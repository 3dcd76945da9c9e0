"""Which interaction answers, and pinning it: ``X-SSEMock-Interaction: N``.

Among the interactions that match a request, the replay server answers with the first one not yet
played since the play counts were last cleared, in cassette order; when all were played, they repeat
from the first (:mod:`ssemock.matching`). So with ``--match-on path`` identical requests get
interaction 0, then 1, in turn: a client asking twice for "the same" answer gets two. The journal
says which one answered and why (``choice``, :func:`choice`), and a client pins one with the header
``X-SSEMock-Interaction: N`` (the index in its cassette, from 0; with ``X-SSEMock-Cassette`` or
``/_ssemock/c/NAME/`` in a server of several cassettes). A pinned interaction must still match the
request on the matchers in use (the body only ranks when the cassette is named, as without a pin),
else the answer is 404 ``ssemock_no_match`` with how it differs; a value that is not an index is 400
``ssemock_bad_interaction``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from multidict import MultiMapping

from .cassette import Cassette, Request
from .errors import NoMatchError
from .limits import MAX_ITEMS
from .matching import Match, closest_entry, describe, differences, ignore_for, rank_closest
from .refusals import BadInteractionPinError

__all__ = ["PIN_HEADER", "choice", "pinned_interaction", "read_pin"]

PIN_HEADER = "X-SSEMock-Interaction"


def read_pin(headers: MultiMapping[str]) -> int | None:
    """The index ``X-SSEMock-Interaction`` pins (0 to ``MAX_ITEMS - 1``), or None without the header.

    Raises:
        BadInteractionPinError: the value is not such an index, or the header is given more than once
            (400 ``ssemock_bad_interaction``).
    """
    given = headers.getall(PIN_HEADER, [])
    if not given:
        return None
    if len(given) > 1:
        raise BadInteractionPinError(", ".join(given))
    text = given[0]
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or len(value) > 7 or int(value) >= MAX_ITEMS:
        raise BadInteractionPinError(text)
    return int(value)


def pinned_interaction(
    pool: Sequence[Cassette], received: Request, match_on: Sequence[str], index: int, *, explicit: bool,
    played: dict[tuple[str, int], int], ignore: Sequence[str] = (),
) -> Match:
    """Interaction ``index`` of the first cassette of ``pool`` where it matches ``received`` (on
    ``match_on``; ``explicit``: the cassette was named, the body only ranks; ``ignore``: body paths
    ignored besides the cassette's own, :func:`~ssemock.matching.ignore_for`); its play count grows.

    Raises:
        NoMatchError: no cassette has such an interaction, or it differs (the closest lists each one).
    """
    required = [m for m in match_on if not (explicit and m == "body")]
    found = []
    for cassette in pool:
        if index >= len(cassette.interactions):
            continue
        interaction = cassette.interactions[index]
        fails = differences(received, interaction.request, required, ignore_for(cassette, tuple(ignore)))
        if not fails:
            key = (cassette.name, index)
            played[key] = played.get(key, 0) + 1
            return Match(cassette, index, interaction)
        found.append((Match(cassette, index, interaction), fails))
    if not found:
        sizes = ", ".join(f"{c.name}: {len(c.interactions)}" for c in pool[:5]) or "no cassette"
        message = (f"{PIN_HEADER}: {index} pins no interaction: no cassette served here has one of that index "
                   f"(interactions, from 0: {sizes})")
        raise NoMatchError(message, describe(received), [])
    closest = [closest_entry(match, fails, received=received, ignore=ignore)
               for match, fails in rank_closest(received, found, ignore=ignore)]
    first = closest[0]
    message = (f"{PIN_HEADER}: {index} pins {first['cassette']} #{index} {first['request']}, which does not match "
               f"{describe(received)}: {'; '.join(first['differences'])}")
    if len(found) > 1:
        message += f" ({len(found)} cassettes have an interaction {index}: name one with X-SSEMock-Cassette)"
    raise NoMatchError(message, describe(received), closest)


def choice(match: Match, played: Mapping[tuple[str, int], int], pinned: bool) -> str:
    """Why ``match`` answered, for the journal's ``choice`` (its play count already counts this answer)."""
    if pinned:
        return f"pinned by {PIN_HEADER}: {match.index}"
    plays = played.get((match.cassette.name, match.index), 1)
    if plays <= 1:
        return ("the first matching interaction not yet played (matching ones answer in cassette order, then "
                f"repeat; {PIN_HEADER}: N pins one)")
    return (f"played {plays} times: every matching interaction was played since the last reset, so they repeat "
            f"from the first ({PIN_HEADER}: N pins one)")
