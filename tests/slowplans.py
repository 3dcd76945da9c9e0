"""Scenarios whose plans take seconds of Python to build, for tests of what happens meanwhile."""

from __future__ import annotations

from pathlib import Path

from ssemock.limits import MAX_SCENARIOS, MAX_STEPS

NAMES = [f"slow{i}" for i in range(1, MAX_SCENARIOS + 1)]
SLOW = ",".join(NAMES)
"""The scenario names a request composes (``X-SSEMock-Scenario``, ``/_ssemock/s/NAME,…/``): the most
allowed, each with the most steps allowed (8 × 100 keepalive steps, checked for cancellation
between steps): seconds of Python per request."""


def write_slow_scenarios(directory: Path) -> None:
    """Write the scenarios of :data:`SLOW` into ``directory``."""
    for name in NAMES:
        (directory / f"{name}.yaml").write_text(
            f"ssemock_scenario: 1\nname: {name}\nsteps:\n" + "- keepalive: {leading: 3, every_events: 2}\n" * MAX_STEPS,
            encoding="utf-8")
