"""The pytest fixture's changes while a test runs (:class:`RuntimeChanges`, a base of
:class:`ssemock.testing.SSEMockFixture`): the admin routes ``/_ssemock/stubs``, ``/_ssemock/scenario`` and
``/_ssemock/chaos`` in Python."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .chaos import Chaos
from .mockserver import MockServer
from .scenario import Scenario

__all__ = ["RuntimeChanges"]


class RuntimeChanges:
    """Stubs and the scenario of one test's server, changed while the test runs."""

    server: MockServer
    scenario: tuple[str, ...]
    chaos: Chaos

    def add_stubs(self, document: Mapping[str, Any] | str) -> list[str]:
        """Add a stub file's stubs (its data or YAML text) for this test, tried before its other stubs, as
        ``POST /_ssemock/stubs`` does (:meth:`ssemock.MockServer.add_stubs`). Returns their names.
        Raises :class:`~ssemock.StubError` naming the field."""
        return self.server.add_stubs(document)

    def clear_stubs(self) -> int:
        """Remove the stubs :meth:`add_stubs` and ``POST /_ssemock/stubs`` added (how many); the others stay."""
        return self.server.clear_stubs()

    def set_scenario(self, scenario: Sequence[str] | str | Mapping[str, Any] | Scenario) -> tuple[str, ...]:
        """Set this test's scenario while it runs, as ``PUT /_ssemock/scenario`` does: served names, or a
        scenario file's data (:meth:`ssemock.MockServer.set_scenario`). Returns the names; raises
        :class:`~ssemock.ScenarioError` naming the field, or ``UnknownScenarioError``."""
        self.scenario = self.server.set_scenario(scenario)
        return self.scenario

    def clear_scenario(self) -> None:
        """Replay faithfully from now on (``DELETE /_ssemock/scenario``)."""
        self.server.clear_scenario()
        self.scenario = ()

    def set_chaos(self, chaos: Chaos | str | Sequence[str] | Mapping[str, float]) -> list[str]:
        """Set this test's faults by rate while it runs, as ``PUT /_ssemock/chaos`` does
        (:meth:`ssemock.MockServer.set_chaos`): drawn from the test's seed. Returns the rules; raises
        :class:`~ssemock.ScenarioError` for a bad rule or rate."""
        rules = self.server.set_chaos(chaos)
        self.chaos = Chaos.of(chaos)  # what the server now holds (it took the same value)
        return rules

    def clear_chaos(self) -> None:
        """No faults by rate from now on (``DELETE /_ssemock/chaos``)."""
        self.server.clear_chaos()
        self.chaos = Chaos()
