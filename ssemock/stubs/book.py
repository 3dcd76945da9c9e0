"""Choosing a stub for a request, and naming the closest one when none answers.

Stubs are tried in the order they were given (files in name order, then inline stubs in
the order the test added them); the first whose every condition holds and that is not used
up answers. The server consults stubs before cassettes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..cassette import Request, Response
from .conversation import Conversation, read_conversation
from .model import Match, Stub
from .synth import synthesize

__all__ = ["Hit", "StubBook", "differences"]


def _short(text: str | None, limit: int = 60) -> str:
    if text is None:
        return "none"
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def differences(match: Match, conv: Conversation) -> list[str]:
    """What in ``conv`` fails ``match``, one phrase per condition (empty: it matches)."""
    found: list[str] = []
    if match.provider is not None and match.provider != conv.provider:
        found.append(f"provider {conv.provider} is not {match.provider}")
    if match.path is not None and match.path != conv.path:
        found.append(f"path {conv.path} is not {match.path}")
    if match.model is not None and match.model != conv.model:
        found.append(f"model {conv.model!r} is not {match.model!r}")
    user = conv.last_user
    if match.equals is not None and user != match.equals:
        found.append(f"last user message {_short(user)} does not equal {_short(match.equals)}")
    if match.contains is not None and (user is None or match.contains not in user):
        found.append(f"last user message {_short(user)} does not contain {_short(match.contains)}")
    if match.regex is not None and (user is None or not match.searches(user)):
        found.append(f"last user message {_short(user)} has no match of /{match.regex}/")
    if match.tool_result is not None and match.tool_result != conv.tool_result:
        found.append("the conversation ends with a tool result" if conv.tool_result
                     else "the conversation does not end with a tool result")
    if match.turn is not None and match.turn != conv.turn:
        found.append(f"turn {conv.turn} is not {match.turn}")
    if match.step is not None and match.step != conv.step:
        found.append(f"{conv.step} assistant message(s) after the last user message, not {match.step}")
    return found


@dataclass
class Hit:
    """A stub's answer: the stub, the request read, and the synthesized response."""

    stub: Stub
    conversation: Conversation
    response: Response


class StubBook:
    """The stubs one server answers with, in priority order; safe to change from another thread.

    Args:
        stubs: the stubs, first tried first.
    """

    def __init__(self, stubs: Iterable[Stub] = ()) -> None:
        self._stubs = list(stubs)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._stubs)

    @property
    def stubs(self) -> list[Stub]:
        """A copy of the list of stubs."""
        with self._lock:
            return list(self._stubs)

    def add(self, *stubs: Stub) -> None:
        """Append ``stubs`` (tried after the ones already there)."""
        with self._lock:
            self._stubs.extend(stubs)

    def replace(self, stubs: Iterable[Stub]) -> None:
        """Serve ``stubs`` instead."""
        with self._lock:
            self._stubs = list(stubs)

    def answer(self, request: Request, seed: int = 0) -> Hit | None:
        """The first available stub matching ``request`` and its response (its use counted),
        or None (no stub matches, or ``request`` is not a chat request)."""
        conv = read_conversation(request)
        if conv is None:
            return None
        with self._lock:
            stub = next((s for s in self._stubs if s.available and not differences(s.match, conv)), None)
            if stub is None:
                return None
            response = synthesize(stub, conv, seed)
            stub.used += 1
        return Hit(stub, conv, response)

    def closest(self, request: Request) -> dict[str, Any] | None:
        """The stub nearest to answering ``request``: ``{"stub", "match", "differences"}``
        (fewest failed conditions; a used-up stub says so), or None without stubs."""
        conv = read_conversation(request)
        with self._lock:
            stubs = list(self._stubs)
        if not stubs:
            return None
        scored = []
        for stub in stubs:
            if conv is None:
                found = [f"{request.method} {request.path} is not a chat request of a known provider"]
            else:
                found = differences(stub.match, conv)
            if not stub.available:
                found.append(f"used up (answered {stub.used} of {stub.times} time(s))")
            scored.append((len(found), stub, found))
        _, best, found = min(scored, key=lambda item: item[0])
        return {"stub": best.name, "match": best.match.describe(), "differences": found}
