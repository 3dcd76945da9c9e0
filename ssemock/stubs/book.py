"""Choosing a stub for a request, and naming the closest one when none answers.

Stubs are tried in the order they were given (files in name order, then inline stubs in
the order the test added them), after the stubs added at run time (``POST /_ssemock/stubs``,
:meth:`StubBook.add_at_run_time`: the latest addition first, each in its file's order); the first
whose every condition holds and that is not used up answers. The server consults stubs before cassettes.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..cassette import Request, Response
from .conversation import Conversation, read_conversation
from .model import Hit, Match, Stub
from .synth import synthesize

__all__ = ["MAX_REMEMBERED", "QUICK_BODY", "QUICK_REPLY", "QUICK_STUBS", "StubBook", "differences",
           "matches"]

MAX_REMEMBERED = 1024
"""OpenAI Responses answers a server keeps for ``previous_response_id`` follow-ups (oldest dropped)."""
QUICK_BODY = 16 * 1024
"""Request bodies up to this many bytes are read quickly (see :meth:`StubBook.quick`)."""
QUICK_REPLY = 256
"""Replies of up to this many characters (text, reasoning, refusal, tool arguments, error body)
are synthesized in well under a millisecond (see :meth:`StubBook.quick`)."""
QUICK_STUBS = 64
"""Books of up to this many stubs are searched quickly (see :meth:`StubBook.quick`)."""
_RESPONSE_ID = rb"resp_[0-9a-f]{50}"  # compiled on first use (re's cache), not at every start


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "none"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _failures(match: Match, conv: Conversation) -> Iterator[Callable[[], str]]:
    """Each condition of ``match`` that ``conv`` fails, as a function phrasing it (phrased only
    when asked: matching and scoring thousands of stubs build no text)."""
    if match.provider is not None and match.provider != conv.provider:
        yield lambda: f"provider {conv.provider} is not {match.provider}"
    if match.path is not None and match.path != conv.path:
        yield lambda: f"path {conv.path} is not {match.path}"
    if match.model is not None and match.model != conv.model:
        yield lambda: f"model {conv.model!r} is not {match.model!r}"
    user = conv.last_user
    if match.equals is not None and user != match.equals:
        yield lambda: f"last user message {_short(user)} does not equal {_short(match.equals)}"
    if match.contains is not None and (user is None or match.contains not in user):
        yield lambda: f"last user message {_short(user)} does not contain {_short(match.contains)}"
    if match.regex is not None and (user is None or not match.searches(user)):
        yield lambda: f"last user message {_short(user)} has no match of /{match.regex}/"
    if match.tool_result is not None and match.tool_result != conv.tool_result:
        yield lambda: ("the conversation ends with a tool result" if conv.tool_result
                       else "the conversation does not end with a tool result")
    if match.turn is not None and match.turn != conv.turn:
        yield lambda: f"turn {conv.turn} is not {match.turn}"
    if match.step is not None and match.step != conv.step:
        yield lambda: f"{conv.step} assistant message(s) after the last user message, not {match.step}"


def _weight(stub: Stub) -> int:
    """How many characters ``stub``'s reply holds (what synthesis takes time over), counted until
    it is more than :data:`QUICK_REPLY`."""
    reply = stub.reply
    size = sum(len(part) for part in (reply.text, reply.reasoning, reply.refusal, reply.model) if part)
    for call in reply.tool_calls:
        if size > QUICK_REPLY:
            break
        size += len(call.name) + (len(call.arguments) if len(call.arguments) > QUICK_REPLY
                                  else len(repr(call.arguments)))
    if reply.error is not None and size <= QUICK_REPLY:
        size += len(repr(reply.error.body)) + len(reply.error.message)
    return size


def _heaviest(stubs: list[Stub], count: int) -> int:
    """The largest :func:`_weight` of ``stubs``, or more than :data:`QUICK_REPLY` when the book
    will hold ``count`` stubs, more than :data:`QUICK_STUBS` (then no answer is quick anyway)."""
    return QUICK_REPLY + 1 if count > QUICK_STUBS else max(map(_weight, stubs), default=0)


def differences(match: Match, conv: Conversation) -> list[str]:
    """What in ``conv`` fails ``match``, one phrase per condition (empty: it matches)."""
    return [phrase() for phrase in _failures(match, conv)]


def matches(match: Match, conv: Conversation) -> bool:
    """True when ``conv`` meets every condition of ``match``."""
    return next(_failures(match, conv), None) is None


class StubBook:
    """The stubs one server answers with, in priority order; safe to change from another thread.

    Args:
        stubs: the stubs, first tried first (after those added at run time).
    """

    def __init__(self, stubs: Iterable[Stub] = ()) -> None:
        self._stubs = list(stubs)
        self._added: list[Stub] = []  # added at run time: tried first, the latest addition first
        self._heaviest = _heaviest(self._stubs, len(self._stubs))
        self._lock = threading.Lock()
        self._answers: OrderedDict[str, list[Any]] = OrderedDict()  # Responses id -> its conversation

    def _earlier(self, response_id: str) -> list[Any] | None:
        with self._lock:
            return self._answers.get(response_id)

    def _remember(self, conv: Conversation, response: Response, tools: bool) -> None:
        """Keep a Responses answer's conversation (the last :data:`MAX_REMEMBERED`), for follow-ups
        naming it in ``previous_response_id``."""
        if conv.provider != "openai-responses" or not response.chunks:
            return
        found = re.search(_RESPONSE_ID, response.chunks[0].data[:4096])
        if found is None:
            return
        step = {"type": "function_call"} if tools else {"role": "assistant", "content": ""}
        with self._lock:
            self._answers[found.group().decode()] = [*conv.history, step]
            while len(self._answers) > MAX_REMEMBERED:
                self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._added) + len(self._stubs)

    @property
    def stubs(self) -> list[Stub]:
        """A copy of the list of stubs, in the order they are tried (those added at run time first)."""
        with self._lock:
            return [*self._added, *self._stubs]

    @property
    def added(self) -> list[Stub]:
        """A copy of the stubs added at run time (:meth:`add_at_run_time`), in the order they are tried."""
        with self._lock:
            return list(self._added)

    def add_at_run_time(self, stubs: Iterable[Stub]) -> None:
        """Try ``stubs`` before every stub already there (in their own order): a stub added while the
        server runs answers the next request it matches, even where a stub file holds a catch-all.
        :meth:`clear_added` removes them again."""
        stubs = list(stubs)
        heaviest = _heaviest(stubs, len(self) + len(stubs))
        with self._lock:
            self._added[:0] = stubs
            self._heaviest = max(self._heaviest, heaviest)

    def clear_added(self) -> int:
        """Remove the stubs added at run time (not those the book was made with, nor :meth:`add`'s);
        returns how many were removed."""
        with self._lock:
            count, self._added = len(self._added), []
            self._heaviest = _heaviest(self._stubs, len(self._stubs))
        return count

    def add(self, *stubs: Stub) -> None:
        """Append ``stubs`` (tried after the ones already there)."""
        heaviest = _heaviest(list(stubs), len(self) + len(stubs))
        with self._lock:
            self._stubs.extend(stubs)
            self._heaviest = max(self._heaviest, heaviest)

    def replace(self, stubs: Iterable[Stub]) -> None:
        """Serve ``stubs`` instead (those added at run time stay, tried first)."""
        stubs = list(stubs)
        with self._lock:
            self._stubs = stubs
            self._heaviest = max(_heaviest(stubs, len(self)), _heaviest(self._added, len(self)))

    def quick(self, request: Request) -> bool:
        """True when :meth:`answer` takes ``request`` in well under a millisecond: a body of at most
        :data:`QUICK_BODY` bytes, at most :data:`QUICK_STUBS` stubs, none of whose replies holds more
        than :data:`QUICK_REPLY` characters. A server answers such a request on its event loop; any
        other in a thread, so that the loop goes on answering meanwhile."""
        return (len(request.body or b"") <= QUICK_BODY and len(self) <= QUICK_STUBS
                and self._heaviest <= QUICK_REPLY)

    def answer(self, request: Request, seed: int = 0) -> Hit | None:
        """The first available stub matching ``request`` and its response (its use counted),
        or None (no stub matches, or ``request`` is not a chat request)."""
        conv = read_conversation(request, self._earlier)
        if conv is None:
            return None
        with self._lock:
            stub = next((s for s in itertools.chain(self._added, self._stubs)
                         if s.available and matches(s.match, conv)), None)
            if stub is None:
                return None
            response = synthesize(stub, conv, seed)
            stub.used += 1
        self._remember(conv, response, bool(stub.reply.tool_calls))
        return Hit(stub, conv, response)

    def closest(self, request: Request) -> dict[str, Any] | None:
        """The stub nearest to answering ``request``: ``{"stub", "match", "differences"}``
        (fewest failed conditions; a used-up stub says so), or None without stubs."""
        conv = read_conversation(request, self._earlier)
        stubs = self.stubs
        if not stubs:
            return None

        best, fewest = stubs[0], 1 << 30
        for stub in stubs:  # the first of the fewest failures; counting stops at the best so far
            missed = int(not stub.available) + (1 if conv is None else 0)
            if conv is not None:
                for _ in _failures(stub.match, conv):
                    missed += 1
                    if missed >= fewest:
                        break
            if missed < fewest:
                best, fewest = stub, missed
        if conv is None:
            found = [f"{request.method} {request.path} is not a chat request of a known provider"]
        else:
            found = differences(best.match, conv)
        if not best.available:
            found.append(f"used up (answered {best.used} of {best.times} time(s))")
        return {"stub": best.name, "match": best.match.describe(), "differences": found}
