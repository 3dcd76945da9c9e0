"""The cases of ``ssemock check-client``: each recording (a cassette) under no scenario and under each
preset, and the rule each case is graded by (:data:`RULES`).

Rules (:class:`Rule`), by what the preset does to the stream:

* ``clean``: the recording as recorded; the baseline of the other cases;
* ``events`` / ``payloads``: the preset keeps every event's type and data (``preserves: events``), or
  its type and JSON value (``preserves: payloads``): the output must be the clean one;
* ``decoded``: the preset changes what the events hold (``line-separators`` adds raw U+2028, U+2029
  and U+0085 inside data): a reader must print what the WHATWG reference decoder dispatches from the
  bytes sent;
* ``transport``: a cut, a reset, an HTTP error: every client must report it;
* ``content-type``: the stream served as ``text/plain``: a reader must fail as ``EventSource`` does
  (WHATWG: the connection fails); an SDK may read the stream whatever its type (not graded) unless it
  reports it;
* ``application``: the stream ends cleanly but the answer is incomplete (``truncate``, ``no-done``,
  an error event inside a 200, no final blank line): a client that prints an answer must report it; an
  SSE-level reader is not the one to judge it (shown as such, never as a failure) unless it reports it;
* ``stall``: silence longer than the client's own timeout (``--client-timeout``; :func:`longer_than`):
  the client must give up and report it before the stall ends; not graded without that option;
* ``first-byte``: the headers come late (``slow-first-byte``), longer than the client's own timeout:
  as ``stall``; without ``--client-timeout`` (the bundled 3 s) the output must be the clean one, and a
  client that reports the wait instead is not graded;
* ``resume``: ``drop-and-resume``: a reconnect must carry ``Last-Event-ID``; without one, as
  ``application``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from ..scenario import Scenario

__all__ = ["RULES", "Case", "Rule", "build_cases", "first_byte_scenario", "longer_than", "rule_of", "stall_scenario"]


class Rule(StrEnum):
    """How a case is graded (see the module docstring)."""

    CLEAN = "clean"
    EVENTS = "events"
    PAYLOADS = "payloads"
    DECODED = "decoded"
    TRANSPORT = "transport"
    APPLICATION = "application"
    STALL = "stall"
    FIRST_BYTE = "first-byte"
    RESUME = "resume"
    CONTENT_TYPE = "content-type"
    UNKNOWN = "unknown"


RULES: dict[str, Rule] = {
    "azure-first-chunk": Rule.DECODED,
    "line-separators": Rule.DECODED,
    "tool-call-without-id": Rule.DECODED,
    "cut-mid-event": Rule.TRANSPORT,
    "reset-mid-event": Rule.TRANSPORT,
    "tls-cut-without-close-notify": Rule.TRANSPORT,
    "h2-reset-mid-event": Rule.TRANSPORT,
    "h2-goaway-mid-stream": Rule.TRANSPORT,
    "http-401": Rule.TRANSPORT,
    "http-429": Rule.TRANSPORT,
    "http-500": Rule.TRANSPORT,
    "http-502-html": Rule.TRANSPORT,
    "wrong-content-type": Rule.CONTENT_TYPE,
    "truncate": Rule.APPLICATION,
    "no-done": Rule.APPLICATION,
    "error-mid-stream": Rule.APPLICATION,
    "no-final-blank-line": Rule.APPLICATION,
    "no-final-line-end": Rule.APPLICATION,
    "stall": Rule.STALL,
    "slow-first-byte": Rule.FIRST_BYTE,
    "drop-and-resume": Rule.RESUME,
}
"""The rule of each bundled preset that keeps nothing (``preserves: nothing``); the others are graded by
what they preserve."""
CATEGORY = {
    Rule.CLEAN: "conformance",
    Rule.EVENTS: "conformance",
    Rule.PAYLOADS: "conformance",
    Rule.DECODED: "conformance",
    Rule.UNKNOWN: "conformance",
}
"""The report's category of each rule; the others are ``resilience``."""


def rule_of(scenario: Scenario | None) -> Rule:
    """The rule ``scenario`` is graded by (None: the clean recording)."""
    if scenario is None:
        return Rule.CLEAN
    if scenario.name in RULES:
        return RULES[scenario.name]
    if scenario.name.startswith("stall-"):
        return Rule.STALL
    if scenario.name.startswith("slow-first-byte-"):
        return Rule.FIRST_BYTE
    return {"events": Rule.EVENTS, "payloads": Rule.PAYLOADS}.get(scenario.preserves, Rule.UNKNOWN)


def category(rule: Rule) -> str:
    """``conformance`` or ``resilience``."""
    return CATEGORY.get(rule, "resilience")


@dataclass(frozen=True)
class Case:
    """One run of the client: a cassette, under a scenario (None: as recorded), graded by ``rule``.

    Attributes:
        cassette: the cassette's name (selected by ``/_ssemock/c/NAME/``).
        scenario: the scenario served (``/_ssemock/s/NAME/``), or None.
        rule: how it is graded.
        bundled: whether ``ssemock serve`` knows the scenario by name (else the reproduce command writes it).
    """

    cassette: str
    scenario: Scenario | None
    rule: Rule
    bundled: bool = True

    @property
    def name(self) -> str:
        """``CASSETTE/SCENARIO`` (``CASSETTE/clean`` for the recording as recorded)."""
        return f"{self.cassette}/{self.scenario.name if self.scenario else 'clean'}"


def longer_than(client_timeout: float) -> int:
    """Seconds a wait lasts to be longer than ``client_timeout``: twice it, and at least 2 s more, so that
    giving up within the timeout never races the end of the wait."""
    return math.ceil(max(2 * client_timeout, client_timeout + 2))


def stall_scenario(client_timeout: float) -> Scenario:
    """A stall after the first event lasting :func:`longer_than` ``client_timeout``."""
    seconds = longer_than(client_timeout)
    return Scenario.from_dict(
        {
            "name": f"stall-{seconds}s",
            "description": f"{seconds} s of silence after the first event, then the rest",
            "steps": [{"stall": {"after_events": 1, "seconds": seconds}}],
        }
    )


def first_byte_scenario(client_timeout: float) -> Scenario:
    """The headers held back :func:`longer_than` ``client_timeout``."""
    seconds = longer_than(client_timeout)
    return Scenario.from_dict(
        {
            "name": f"slow-first-byte-{seconds}s",
            "description": f"{seconds} s before the status line and headers",
            "steps": [{"first-byte": {"seconds": seconds}}],
        }
    )


_TIMED = {"stall": stall_scenario, "slow-first-byte": first_byte_scenario}


def build_cases(
    cassettes: Iterable[str], scenarios: Mapping[str, Scenario], names: Iterable[str], client_timeout: float | None
) -> list[Case]:
    """The cases: each cassette clean, then under each scenario of ``names`` (in that order). With
    ``client_timeout``, ``stall`` and ``slow-first-byte`` are replaced by :func:`stall_scenario` and
    :func:`first_byte_scenario`."""
    chosen: list[tuple[Scenario, bool]] = []
    for name in names:
        scenario = scenarios[name]
        if name in _TIMED and client_timeout is not None:
            chosen.append((_TIMED[name](client_timeout), False))
        else:
            chosen.append((scenario, True))
    return [
        case
        for cassette in cassettes
        for case in [
            Case(cassette, None, Rule.CLEAN),
            *(Case(cassette, scenario, rule_of(scenario), bundled) for scenario, bundled in chosen),
        ]
    ]
