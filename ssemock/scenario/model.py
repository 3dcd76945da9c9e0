"""The :class:`Scenario`: a named list of steps, its YAML file format, loading and composition."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cassette.read import read_yaml
from ..errors import Described, ScenarioError
from ..limits import MAX_SCENARIO_FILE, MAX_STEPS, claim_name
from ..plan import Plan
from .base import NEAR_MISSES, STAGES, STEPS, LineStep, Step
from .text import join_lines, split_lines

__all__ = ["FORMAT_KEY", "KEYS", "NAME", "NAME_RULE", "PRESERVES", "Scenario", "load_scenarios", "on_reconnect",
           "step_registry"]

FORMAT_KEY = "ssemock_scenario"
PRESERVES = ("events", "payloads", "nothing")
KEYS = (FORMAT_KEY, "name", "description", "preserves", "probability", "steps")
"""The keys of a scenario file (any other is refused)."""
NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"  # compiled on first use (re's cache), not at every start
"""A scenario ``name:`` (:data:`NAME_RULE`), as a regular expression."""
NAME_RULE = ("a scenario name of 1 to 100 ASCII letters, digits, '-', '_' and '.', starting with a letter or digit "
             "(no comma, slash or space: names are listed in X-SSEMock-Scenario and /_ssemock/s/NAME/)")


@dataclass
class Scenario:
    """A named list of steps.

    Attributes:
        name: the scenario name used in ``X-SSEMock-Scenario`` and ``/_ssemock/s/NAME/``; in a
            file, 1 to 100 ASCII letters, digits, ``-``, ``_`` and ``.``, starting with a letter or digit.
        steps: the steps, applied in stage order (see :mod:`ssemock.scenario`).
        description: one line shown by ``ssemock scenarios``.
        preserves: what a client must still see the same: ``events`` (the type and
            data of every dispatched event), ``payloads`` (the type and JSON value
            of every event's data) or ``nothing`` (a fault).
        probability: the chance (0 to 1) that a request naming it (or served it by default) gets it, drawn
            from the server's seed and the request's sequence number (:mod:`ssemock.chaos`); None: always.
        source: the file it was loaded from, if any.
        parts: for a composed scenario (:meth:`compose`), the name and number of steps of each
            scenario composed, in order (errors name the scenario a step comes from).
    """

    name: str
    steps: list[Step] = field(default_factory=list)
    description: str = ""
    preserves: str = "nothing"
    probability: float | None = None
    source: str | None = field(default=None, compare=False, repr=False)
    parts: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    def apply(self, plan: Plan, cancelled: Callable[[], bool] | None = None,
              only: Callable[[Step], bool] | None = None) -> Plan:
        """Apply the steps to ``plan`` in stage order; returns the same plan.

        A recorded gzip/deflate body is decompressed first when a step edits the
        body, and compressed again on the wire; if it does not decode, the steps that edit the
        body are not applied (``NAME: not applied, Content-Encoding ... does not decode: ...``).
        Consecutive event and byte steps share one split of the body into lines.

        Args:
            cancelled: asked before each step; True stops applying (the plan, half built,
                is then to be dropped: its client left or the server stops).
            only: apply only the steps it says True of (:func:`on_reconnect` and its negation split a
                scenario around the cut of a ``Last-Event-ID`` reconnect); default all.

        Raises:
            ScenarioTooLargeError: the steps would add more than ``plan.growth_limit`` bytes to the
                body (:meth:`Plan.charge`); the plan, half built, is then to be dropped.
        """
        ordered = sorted(((i, s) for i, s in enumerate(self.steps) if only is None or only(s)),
                         key=lambda item: (STAGES.index(item[1].stage), item[1].phase))
        if any(step.edits_body for _, step in ordered):
            plan.running = (self.name, "decoding the recorded Content-Encoding")
            if not plan.decode_content():  # never edited compressed: those steps are left out, and said so
                skipped = [f"{step.name}: not applied, {plan.undecodable}" for _, step in ordered if step.edits_body]
                plan.notes.extend(skipped)
                plan.ineffective.extend(skipped)
                ordered = [(index, step) for index, step in ordered if not step.edits_body]
        lines = None
        original = plan.response.chunks
        for index, step in ordered:
            if cancelled is not None and cancelled():
                return plan
            plan.step_index = index
            plan.running = self.origin(index, step.name)
            if isinstance(step, LineStep):
                if plan.is_event_stream and lines is None:
                    original = plan.response.chunks
                    lines = split_lines(original)
                lines = _run_lines(step, lines, plan)
                continue
            if lines is not None:
                plan.response.chunks, lines = join_lines(lines, original), None
            written, seen, said = len(plan.notes), plan.observable(), len(plan.ineffective)
            step.apply(plan)
            if len(plan.notes) == written:
                plan.notes.append(step.note())
            if len(plan.ineffective) == said and plan.observable() == seen:
                plan.ineffective.append(f"{step.name}: no effect, this response holds nothing it changes")
        if lines is not None:
            plan.response.chunks = join_lines(lines, original)
        return plan

    def check_notes(self) -> list[str]:
        """What ``ssemock scenarios check`` says besides ``ok``: steps that run in another order than
        written (by stage and phase), and steps that may have no effect (a ``buffer`` without timing)."""
        order = sorted(range(len(self.steps)), key=lambda i: (STAGES.index(self.steps[i].stage), self.steps[i].phase))
        notes = [f"note: steps[{i}].{self.steps[i].name} runs before steps[{j}].{self.steps[j].name} "
                 f"({self.steps[i].stage} stage, phase {self.steps[i].phase}), whatever the order written"
                 for n, i in enumerate(order) for j in order[n + 1:]
                 if j < i and self.steps[i].stage == self.steps[j].stage][:5]
        timed = any(s.name == "timing" for s in self.steps)
        notes += [f"note: steps[{i}].fragment (buffer) may change nothing a client can time: on a recording "
                  "without timing or at timing scale 0 every buffer is due at once; add a timing step to time it"
                  for i, s in enumerate(self.steps) if getattr(s, "mode", None) == "buffer" and not timed]
        return notes

    def origin(self, index: int, step: str) -> tuple[str, str]:
        """The scenario name and the step (``steps[2].edit``) of step ``index``, in the scenario composed
        that gave it (see :attr:`parts`)."""
        for name, count in self.parts:
            if index < count:
                return name, f"steps[{index}].{step}"
            index -= count
        return self.name, f"steps[{index}].{step}"

    @property
    def needs_http2(self) -> bool:
        """Whether a step acts on HTTP/2 frames (:attr:`~ssemock.scenario.Step.http2_only`): an HTTP/1.x request
        under this scenario is answered ``400 ssemock_needs_http2``."""
        return any(step.http2_only for step in self.steps)

    @property
    def needs_tls(self) -> bool:
        """Whether a step acts on TLS (:attr:`~ssemock.scenario.Step.tls_only`): a request without TLS under this
        scenario is answered ``400 ssemock_needs_tls``."""
        return any(step.tls_only for step in self.steps)

    def describe(self) -> dict[str, Any]:
        """The scenario as YAML data (the file format)."""
        chance = {} if self.probability is None else {"probability": self.probability}
        return {FORMAT_KEY: 1, "name": self.name, "description": self.description,
                "preserves": self.preserves, **chance, "steps": [s.describe() for s in self.steps]}

    @classmethod
    def compose(cls, scenarios: Iterable[Scenario]) -> Scenario:
        """One scenario with the steps of all, named ``a,b``; it preserves what all of them preserve."""
        items = list(scenarios)
        rank = max((PRESERVES.index(s.preserves) for s in items), default=0)
        return cls(
            ",".join(s.name for s in items),
            [step for s in items for step in s.steps],
            "; ".join(s.description for s in items if s.description),
            PRESERVES[rank],
            parts=tuple(part for s in items for part in (s.parts or ((s.name, len(s.steps)),))),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scenario:
        """Read a scenario file (at most :data:`~ssemock.limits.MAX_SCENARIO_FILE`, 1 MiB; no anchors,
        aliases or duplicate keys). Raises :class:`ScenarioError` naming file, step and field (or line)."""
        p = Path(path)
        try:
            doc = read_yaml(p, str(p), limit=MAX_SCENARIO_FILE, error=ScenarioError)
        except FileNotFoundError as exc:
            raise ScenarioError(p, "", "a readable YAML scenario file", str(exc)) from None
        scenario = cls.from_dict(doc, name=p.stem, source=str(p))
        scenario.source = str(p)
        return scenario

    @classmethod
    def from_dict(cls, doc: Any, *, name: str = "scenario", source: str = "<memory>") -> Scenario:
        """Build a scenario from parsed YAML. Raises :class:`ScenarioError`."""
        if not isinstance(doc, Mapping):
            raise ScenarioError(source, "", "a mapping with 'steps'", None if doc is None else Described(doc))
        if doc.get(FORMAT_KEY, 1) != 1 or isinstance(doc.get(FORMAT_KEY), bool):
            raise ScenarioError(source, FORMAT_KEY, "scenario format version 1", doc.get(FORMAT_KEY))
        for key in doc:
            if key not in KEYS:
                raise ScenarioError(source, str(key), f"a scenario key: one of {', '.join(KEYS)}", None)
        for key in ("name", "description"):
            if key in doc and not isinstance(doc[key], str):
                raise ScenarioError(source, key, "a string", doc[key])
        preserves = doc.get("preserves", "nothing")
        if preserves not in PRESERVES:
            raise ScenarioError(source, "preserves", f"one of {' | '.join(PRESERVES)}", preserves)
        steps_doc = doc.get("steps", [])
        if not isinstance(steps_doc, list):
            raise ScenarioError(source, "steps", "a list of steps", steps_doc)
        if len(steps_doc) > MAX_STEPS:
            raise ScenarioError(source, "steps", f"at most {MAX_STEPS} steps (each is a pass over the response)",
                                f"{len(steps_doc)} steps")
        steps = [_step(item, f"steps[{i}]", source) for i, item in enumerate(steps_doc)]
        return cls(_name(doc.get("name", name), source), steps, doc.get("description", ""), preserves,
                   _probability(doc.get("probability"), source))


def _name(name: str, source: str) -> str:
    """``name`` if it can be selected (``X-SSEMock-Scenario: A,B``, ``/_ssemock/s/A,B/``). Raises ScenarioError."""
    if re.fullmatch(NAME, name) is None:
        raise ScenarioError(source, "name", NAME_RULE, name)
    return name


def _probability(value: Any, source: str) -> float | None:
    """A scenario's ``probability:``, a number from 0 to 1 (None: not given). Raises ScenarioError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ScenarioError(source, "probability", "a number from 0 to 1 (the chance a request gets this scenario)",
                            value)
    return float(value)


def on_reconnect(step: Step) -> bool:
    """Whether ``step`` also applies to the stream that answers a ``Last-Event-ID`` reconnect, counted from
    the reconnect's first event: every transport step (stall, disconnect, http-error, keep-alive, framing,
    …) but ``drop-and-resume`` (phase 0), which would drop the reconnect again."""
    return step.stage == "transport" and step.phase > 0


def step_registry() -> dict[str, type[Step]]:
    """Every step class by name (each step module of :mod:`ssemock.scenario`, imported with the package,
    registers its own)."""
    return STEPS


def _step(item: Any, where: str, source: str) -> Step:
    registry = STEPS
    names = ", ".join(sorted(registry))
    if not (isinstance(item, Mapping) and len(item) == 1):
        raise ScenarioError(source, where, f"a one-key mapping naming a step: one of {names}", item)
    ((kind, args),) = item.items()
    if kind not in registry:
        hint = NEAR_MISSES.get((kind, None)) if isinstance(kind, str) else None
        raise ScenarioError(source, where, (f"a step name ({kind} is done by the step {hint}); one of "
                                            if hint else "a step name: one of ") + names, kind)
    return registry[kind].build(args, f"{where}.{kind}", source)


def load_scenarios(directory: str | os.PathLike[str]) -> dict[str, Scenario]:
    """Load every ``*.yaml`` / ``*.yml`` scenario in ``directory`` by name.

    Raises:
        ScenarioError: a file is malformed, or two files give one name (both named).
    """
    root = Path(directory)
    if not root.is_dir():
        raise ScenarioError(root, "", "a directory of scenario files", None)
    found = {}
    claimed: dict[str, str] = {}
    for file in sorted(root.glob("*.y*ml")):
        scenario = Scenario.load(file)
        claim_name(claimed, scenario.name, file, ScenarioError, "scenario")
        found[scenario.name] = scenario
    return found


def _run_lines(step: LineStep, lines: list[Any] | None, plan: Plan) -> list[Any] | None:
    """Run a line step over ``lines`` (None: the body is not an event stream, the step does nothing) and
    note what it did, or that it changed no line."""
    written = len(plan.notes)
    if lines is not None:
        before, said = list(lines), len(plan.ineffective)  # a step may return the list it was given
        lines = step.run(lines, plan)
        if lines == before and len(plan.ineffective) == said:
            plan.ineffective.append(f"{step.name}: no effect, no line of this stream is one it changes")
            if len(plan.notes) == written:
                plan.notes.append(f"{step.name}: no line changed")
        if len(plan.notes) == written:
            plan.notes.append(step.note())
    return lines
