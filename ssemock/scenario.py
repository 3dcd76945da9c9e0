"""Scenarios: named, composable steps applied to a recorded response on replay.

A scenario file (YAML)::

    ssemock_scenario: 1
    name: slow
    description: recorded timing, twice as slow, half a second before the first byte
    steps:
    - timing: {mode: scale, factor: 2.0, first_byte: 0.5}

Steps run in stage order (design §2): ``event`` → ``byte`` → ``chunk`` →
``transport``; within a stage, in the order written. Composing scenarios
(``X-SSEMock-Scenario: a,b``) concatenates their steps before that sort.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml

from .cassette import Chunk, Response
from .errors import ScenarioError

__all__ = ["STAGES", "STEPS", "Plan", "Scenario", "Step", "TimingStep", "load_scenarios"]

STAGES = ("event", "byte", "chunk", "transport")
FORMAT_KEY = "ssemock_scenario"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Plan:
    """What the server will send for one request; steps edit it in place.

    Attributes:
        response: a private copy of the recorded response (status, headers, chunks, end).
        framing: ``chunked`` (HTTP/1.1 chunked), ``length`` (Content-Length) or
            ``close`` (body ends when the connection closes).
        seed: the seed of every random choice, reported in the journal.
        timing_scale: multiplies every recorded time; 0 sends without delay.
    """

    response: Response
    framing: str = "chunked"
    seed: int = 0
    timing_scale: float = 1.0

    @classmethod
    def of(cls, response: Response, *, seed: int = 0, timing_scale: float = 1.0) -> Plan:
        """A plan for ``response`` (deep-copied, so steps never touch the cassette)."""
        return cls(copy.deepcopy(response), seed=seed, timing_scale=timing_scale)


class Step:
    """A replay step. Subclasses set ``name``, ``stage`` and ``fields`` and implement :meth:`apply`."""

    name: ClassVar[str] = ""
    stage: ClassVar[str] = "chunk"
    fields: ClassVar[dict[str, str]] = {}

    def apply(self, plan: Plan) -> None:
        """Edit ``plan`` in place."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The step as YAML data: ``{name: {field: value}}``."""
        return {self.name: {k: getattr(self, k) for k in self.fields}}


@dataclass
class TimingStep(Step):
    """Timing of the chunks (stage ``chunk``).

    YAML::

        - timing: {mode: none}                    # no delays at all
        - timing: {mode: scale, factor: 0.5}      # recorded gaps, twice as fast
        - timing: {mode: fixed, interval: 0.05}   # 50 ms between chunks
        - timing: {mode: recorded, first_byte: 2} # recorded, headers after 2 s

    Fields: ``mode`` (recorded | none | scale | fixed), ``factor`` (for scale),
    ``interval`` (seconds, for fixed), ``first_byte`` (seconds before the headers,
    replacing the recorded start).
    """

    mode: str = "recorded"
    factor: float = 1.0
    interval: float = 0.0
    first_byte: float | None = None

    name: ClassVar[str] = "timing"
    stage: ClassVar[str] = "chunk"
    fields: ClassVar[dict[str, str]] = {
        "mode": "recorded | none | scale | fixed",
        "factor": "a number >= 0 (scale)",
        "interval": "seconds >= 0 (fixed)",
        "first_byte": "seconds >= 0",
    }
    MODES: ClassVar[tuple[str, ...]] = ("recorded", "none", "scale", "fixed")

    def apply(self, plan: Plan) -> None:
        resp = plan.response
        shift = 0.0
        if self.first_byte is not None:
            shift = self.first_byte - resp.start
            resp.start = self.first_byte
        times = [c.t + shift for c in resp.chunks]
        if self.mode == "none":
            times = [resp.start] * len(times)
        elif self.mode == "scale":
            times = [resp.start + (t - resp.start) * self.factor for t in times]
        elif self.mode == "fixed":
            times = [resp.start + self.interval * (i + 1) for i in range(len(times))]
        resp.chunks = [Chunk(max(t, resp.start), c.data) for t, c in zip(times, resp.chunks)]
        resp.timed = True


STEPS: dict[str, type[Step]] = {TimingStep.name: TimingStep}


@dataclass
class Scenario:
    """A named list of steps.

    Attributes:
        name: the scenario name used in ``X-SSEMock-Scenario`` and ``/_ssemock/s/NAME/``.
        steps: the steps, applied in stage order (see module docstring).
        description: one line shown by ``ssemock scenarios``.
    """

    name: str
    steps: list[Step] = field(default_factory=list)
    description: str = ""

    def apply(self, plan: Plan) -> Plan:
        """Apply the steps to ``plan`` in stage order; returns the same plan."""
        for step in sorted(self.steps, key=lambda s: STAGES.index(s.stage)):
            step.apply(plan)
        return plan

    @classmethod
    def compose(cls, scenarios: Iterable[Scenario]) -> Scenario:
        """One scenario with the steps of all, named ``a,b``."""
        items = list(scenarios)
        return cls(
            ",".join(s.name for s in items),
            [step for s in items for step in s.steps],
            "; ".join(s.description for s in items if s.description),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a scenario file. Raises :class:`ScenarioError` naming file, step and field."""
        p = Path(path)
        try:
            doc = yaml.load(p.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ScenarioError(p, "", "a readable YAML scenario file", str(exc)) from None
        return cls.from_dict(doc, name=p.stem, source=str(p))

    @classmethod
    def from_dict(cls, doc: Any, *, name: str = "scenario", source: str = "<memory>") -> Scenario:
        """Build a scenario from parsed YAML. Raises :class:`ScenarioError`."""
        if not isinstance(doc, Mapping):
            raise ScenarioError(source, "", "a mapping with 'steps'", doc)
        if doc.get(FORMAT_KEY, 1) != 1:
            raise ScenarioError(source, FORMAT_KEY, "scenario format version 1", doc.get(FORMAT_KEY))
        steps_doc = doc.get("steps", [])
        if not isinstance(steps_doc, list):
            raise ScenarioError(source, "steps", "a list of steps", steps_doc)
        steps = [_step(item, f"steps[{i}]", source) for i, item in enumerate(steps_doc)]
        return cls(str(doc.get("name", name)), steps, str(doc.get("description", "")))


def _step(item: Any, where: str, source: str) -> Step:
    if not (isinstance(item, Mapping) and len(item) == 1):
        raise ScenarioError(source, where, f"a one-key mapping naming a step ({', '.join(STEPS)})", item)
    (kind, args), = item.items()
    if kind not in STEPS:
        raise ScenarioError(source, where, f"a step name: one of {', '.join(sorted(STEPS))}", kind)
    cls = STEPS[kind]
    args = {} if args is None else args
    if not isinstance(args, Mapping):
        raise ScenarioError(source, f"{where}.{kind}", "a mapping of fields", args)
    for key in args:
        if key not in cls.fields:
            raise ScenarioError(
                source, f"{where}.{kind}.{key}", f"a field of {kind}: {', '.join(cls.fields)}", None
            )
    step = cls(**args)
    _check(step, f"{where}.{kind}", source)
    return step


def _check(step: Step, where: str, source: str) -> None:
    if isinstance(step, TimingStep):
        if step.mode not in TimingStep.MODES:
            raise ScenarioError(source, f"{where}.mode", f"one of {', '.join(TimingStep.MODES)}", step.mode)
        for name in ("factor", "interval", "first_byte"):
            value = getattr(step, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ScenarioError(source, f"{where}.{name}", TimingStep.fields[name], value)


def load_scenarios(directory: str | os.PathLike[str]) -> dict[str, Scenario]:
    """Load every ``*.yaml`` scenario in ``directory`` by name. Raises :class:`ScenarioError`."""
    root = Path(directory)
    if not root.is_dir():
        raise ScenarioError(root, "", "a directory of scenario files", None)
    found = {}
    for file in sorted(root.glob("*.y*ml")):
        scenario = Scenario.load(file)
        found[scenario.name] = scenario
    return found
