"""Faults by rate (chaos): which scenario, if any, a request draws, from the seed and its sequence number.

A server (or a recorder) holds one :class:`Chaos`: rules, each a scope (every request, a path glob or a
provider) and the scenarios it applies with their rates. Written as ``--chaos`` takes it::

    cut-mid-event=0.05,http-429=0.02                  every request (no scope)
    path=/v1/chat/*:cut-mid-event=0.1                 requests whose provider path matches the glob
    provider=anthropic:http-429=0.2                   requests of that provider (ssemock.providers.NAMES)

The scope ends at the last ``:`` (a path may hold one: ``/v1beta/models/*:streamGenerateContent``; a
rate list never does). A path glob is :func:`fnmatch.fnmatchcase`'s (``*`` also crosses ``/``). A request
takes the first scoped rule that covers it, else the first rule without a scope, else none.

The draw (:func:`draw`): one number in [0, 1) per request, the first 8 bytes of BLAKE2b of the seed and
the request's sequence number (the journal's ``seq``), so the same seed and the same requests in the same
order get the same faults, whatever the time or the machine. The rates of a rule lie end to end from 0:
``cut-mid-event=0.05,http-429=0.02`` hits ``cut-mid-event`` for a draw below 0.05, ``http-429`` from 0.05
to below 0.07, nothing above. A scenario file's own ``probability: P`` (a scenario named by the request or
the server's default) comes before the rule's rates on the same draw: a request draws at most one fault.

Bounds (:data:`~ssemock.limits.MAX_CHAOS_RULES` rules, :data:`~ssemock.limits.MAX_CHAOS_RATES` rates per
rule, each rate in [0, 1], a rule's rates summing to at most 1, each scenario once per rule, a glob of at
most :data:`~ssemock.limits.MAX_CHAOS_GLOB` characters): :class:`~ssemock.errors.ConfigError` naming the
option and the text.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from .argtypes import option_number
from .errors import ConfigError, did_you_mean, short_repr
from .limits import MAX_CHAOS_GLOB, MAX_CHAOS_RATES, MAX_CHAOS_RULES
from .scenario.model import NAME, Scenario

__all__ = [
    "CHAOS_HELP",
    "SCOPES",
    "Chaos",
    "ChaosRule",
    "Draw",
    "Rate",
    "chaos_rule",
    "draw",
    "faults",
    "parse_rule",
    "pick",
    "provider_of",
]

SCOPES = ("path", "provider")
"""The scopes a rule may name (``path=GLOB:``, ``provider=NAME:``)."""
_SUM_SLACK = 1e-9  # 0.1 + 0.2 + 0.7 is 1.0000000000000002 in binary floating point


@dataclass(frozen=True)
class Rate:
    """One scenario and the probability (0 to 1) that a request in the rule's scope draws it."""

    scenario: str
    rate: float


@dataclass(frozen=True)
class ChaosRule:
    """The rates of one scope: ``path`` (a glob on the provider path) or ``provider`` (a provider name), or
    neither (every request)."""

    rates: tuple[Rate, ...]
    path: str | None = None
    provider: str | None = None

    @property
    def scoped(self) -> bool:
        return self.path is not None or self.provider is not None

    def covers(self, path: str, provider: Callable[[], str]) -> bool:
        """Whether a request on ``path`` (its provider named by ``provider()``, asked only when needed) is in scope."""
        if self.path is not None and not fnmatchcase(path, self.path):
            return False
        return self.provider is None or provider() == self.provider

    def describe(self) -> str:
        """The rule as ``--chaos`` takes it."""
        scope = (
            f"path={self.path}:"
            if self.path is not None
            else (f"provider={self.provider}:" if self.provider is not None else "")
        )
        return scope + ",".join(f"{r.scenario}={r.rate!r}" for r in self.rates)


@dataclass(frozen=True)
class Draw:
    """What one request drew: ``value`` in [0, 1), and the scenario it hit (None: no fault)."""

    value: float
    fault: str | None


@dataclass(frozen=True)
class Chaos:
    """A server's faults by rate: its rules, checked (see the module docstring). Immutable: a server swaps the
    whole value to change its rates."""

    rules: tuple[ChaosRule, ...] = ()
    option: str = field(default="chaos", compare=False)
    """The option it was given as (``--chaos``, ``chaos``), named by the errors of :meth:`check`."""

    def __bool__(self) -> bool:
        return bool(self.rules)

    @classmethod
    def of(cls, value: Chaos | str | Sequence[str] | Mapping[str, float] | None, option: str = "chaos") -> Chaos:
        """The chaos given as ``value``: a :class:`Chaos`, one rule's text or several (``--chaos``'s form), or a
        mapping of scenario names to rates (one rule without a scope); None: none.

        Raises:
            ConfigError: a malformed rule, a rate out of [0, 1], rates summing to more than 1, too many rules or
                rates; the message starts with ``option``.
        """
        if value is None:
            return cls()
        if isinstance(value, Chaos):
            return value
        if isinstance(value, Mapping):
            return cls.of([",".join(f"{_name_text(k, option)}={_rate_text(k, v, option)}" for k, v in value.items())],
                          option)
        texts = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else [value]
        if not all(isinstance(t, str) for t in texts):
            raise ConfigError(
                f"{option}: expected rules such as 'cut-mid-event=0.05,http-429=0.02', got {short_repr(value)}"
            )
        if len(texts) > MAX_CHAOS_RULES:
            raise ConfigError(f"{option}: at most {MAX_CHAOS_RULES} rules, got {len(texts)}")
        return cls(tuple(parse_rule(t, option) for t in texts), option)

    def check(self, scenarios: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` for a rate naming a scenario not in ``scenarios``."""
        for rule in self.rules:
            for rate in rule.rates:
                if rate.scenario not in scenarios:
                    raise ConfigError(
                        f"{self.option} {rule.describe()!r}: no scenario named {rate.scenario!r}"
                        f"{did_you_mean(rate.scenario, scenarios)}"
                    )

    def rule_for(self, path: str, provider: Callable[[], str]) -> ChaosRule | None:
        """The rule of a request on ``path``: the first scoped one covering it, else the first without a scope."""
        for rule in self.rules:
            if rule.scoped and rule.covers(path, provider):
                return rule
        return next((rule for rule in self.rules if not rule.scoped), None)

    def describe(self) -> list[str]:
        return [rule.describe() for rule in self.rules]


CHAOS_HELP = (
    "faults by rate: [path=GLOB:|provider=NAME:]SCENARIO=RATE[,SCENARIO=RATE...], e.g. "
    "cut-mid-event=0.05,http-429=0.02; each request draws at most one, from --seed and its sequence number "
    "(repeatable: the first scoped rule covering a request applies, else the one without a scope)"
)
"""The help of ``--chaos`` (``serve`` and ``record``)."""


def chaos_rule(text: str) -> str:
    """argparse type of ``--chaos``: one rule, checked now (:func:`parse_rule`), kept as its text.

    Raises:
        argparse.ArgumentTypeError: ``expected a chaos rule ..., got 'TEXT': what is wrong``.
    """
    try:
        parse_rule(text, "")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(
            f"expected a chaos rule [path=GLOB:|provider=NAME:]SCENARIO=RATE,..., got{exc}"
        ) from None
    return text


def parse_rule(text: str, option: str = "chaos") -> ChaosRule:
    """One rule from ``[path=GLOB:|provider=NAME:]NAME=RATE[,NAME=RATE…]``. Raises :class:`ConfigError`."""
    from .providers import NAMES

    shown = short_repr(text)
    scope, _, rates_text = text.rpartition(":") if ":" in text else ("", "", text)
    path = provider = None
    if scope:
        kind, _, value = scope.partition("=")
        if kind not in SCOPES or not value:
            raise ConfigError(f"{option} {shown}: a scope is path=GLOB: or provider=NAME:, got {short_repr(scope)}")
        if kind == "path":
            if not value.startswith("/") or len(value) > MAX_CHAOS_GLOB:
                raise ConfigError(
                    f"{option} {shown}: path= takes a glob starting with '/', at most {MAX_CHAOS_GLOB} characters"
                )
            path = value
        elif value not in NAMES:
            raise ConfigError(f"{option} {shown}: provider= takes one of {', '.join(NAMES)}, got {value!r}")
        else:
            provider = value
    items = rates_text.split(",") if rates_text else []
    if not items:
        raise ConfigError(f"{option} {shown}: expected NAME=RATE[,NAME=RATE...], e.g. cut-mid-event=0.05")
    if len(items) > MAX_CHAOS_RATES:
        raise ConfigError(f"{option} {shown}: at most {MAX_CHAOS_RATES} rates in one rule, got {len(items)}")
    rates: list[Rate] = []
    for item in items:
        name, eq, number = item.partition("=")
        if not eq or re.fullmatch(NAME, name) is None:
            raise ConfigError(
                f"{option} {shown}: expected NAME=RATE (a scenario name, a rate from 0 to 1), got {short_repr(item)}"
            )
        try:  # the one check of a number option's text (ASCII digits, nothing around them)
            rate = option_number(number, "a rate from 0 to 1", integer=False, low=0, high=1)
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"{option} {shown}: the rate of {name}: {exc}") from None
        if any(r.scenario == name for r in rates):
            raise ConfigError(f"{option} {shown}: {name} has two rates in one rule")
        rates.append(Rate(name, rate))
    total = math.fsum(r.rate for r in rates)
    if total > 1 + _SUM_SLACK:
        raise ConfigError(
            f"{option} {shown}: the rates of one rule sum to at most 1 (a request draws one fault), got {total:g}"
        )
    return ChaosRule(tuple(rates), path, provider)


def _name_text(key: Any, option: str) -> str:
    """A key of the mapping form: a scenario name alone (no scope, no second rate)."""
    if not isinstance(key, str) or re.fullmatch(NAME, key) is None:
        raise ConfigError(f"{option}: the keys of a mapping are scenario names, got {short_repr(key)}")
    return key


def _rate_text(key: str, value: Any, option: str) -> str:
    """A rate of the mapping form as a rule's text, checked first (an integer too large for a float included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:  # NaN is not
        raise ConfigError(f"{option}: the rate of {key}: expected a rate from 0 to 1, got {short_repr(value)}")
    return repr(float(value) or 0.0)  # -0.0 as 0.0


def draw(seed: int, seq: int) -> float:
    """The draw of request ``seq`` under ``seed``: a number in [0, 1) (a multiple of 2**-64), the same on every
    machine and run (BLAKE2b, personalised ``ssemock-chaos``)."""
    digest = hashlib.blake2b(f"{seed}:{seq}".encode(), digest_size=8, person=b"ssemock-chaos").digest()
    return int.from_bytes(digest, "big") / 2**64


def pick(rates: Iterable[Rate], value: float) -> str | None:
    """The scenario whose stretch of [0, 1) holds ``value``, the rates laid end to end from 0 in order; None
    past their sum."""
    edge = 0.0
    for rate in rates:
        edge += rate.rate
        if value < edge:
            return rate.scenario
    return None


def faults(
    chosen: Sequence[Scenario],
    chaos: Chaos | None,
    scenarios: Mapping[str, Scenario],
    *,
    seed: int,
    seq: int,
    path: str,
    provider: Callable[[], str],
) -> tuple[Scenario | None, Draw | None]:
    """The scenario a request is answered under, and its draw: the scenarios ``chosen`` (by the request or the
    server's default) without a ``probability``, composed with the one fault drawn (among the chosen ones with a
    ``probability``, then the rates of ``chaos``' rule for ``path``), for the replay server and the recorder alike.

    Args:
        chosen: the scenarios the request names (or the server's default), in order.
        chaos: the server's rates; ``scenarios``: the scenarios served (the names its rates give).
        seed, seq: the server's seed and the request's sequence number (:func:`draw`).
        path: the provider path; ``provider``: the request's provider name, asked only for a
            ``provider=`` rule.

    Returns:
        ``(scenario or None, draw or None)``: no draw when nothing applies by chance.
    """
    fixed = [s for s in chosen if s.probability is None]
    chances = [Rate(s.name, s.probability) for s in chosen if s.probability is not None]
    rule = chaos.rule_for(path, provider) if chaos else None
    if rule is not None:
        chances += rule.rates
    hit = None
    if chances:
        value = draw(seed, seq)
        fault = pick(chances, value)
        hit = Draw(value, fault)
        if fault is not None and all(s.name != fault for s in fixed):
            fixed.append(next((s for s in chosen if s.name == fault), None) or scenarios[fault])
    return (Scenario.compose(fixed) if fixed else None), hit


def provider_of(path: str, body: bytes | None) -> Callable[[], str]:
    """The name of a request's provider (:func:`~ssemock.providers.provider_for` of its path and the first
    4 KiB of its body), as :func:`faults` asks for it: worked out when asked."""

    def name() -> str:
        from .providers import provider_for

        return provider_for(path, (body or b"")[:4096].decode("utf-8", "replace")).name

    return name
