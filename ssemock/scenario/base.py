"""The step model: :class:`Step`, its typed fields, validation and the registry of step names.

A step is a dataclass whose class attributes say its YAML ``name``, its
``stage`` (``event``, ``byte``, ``chunk`` or ``transport``, design §2) and its
``fields``: for each field, a :class:`Field` that checks a YAML value and says
what would be valid. Validation errors are :class:`~ssemock.ScenarioError`
naming the file, the step (``steps[2].fragment``), the field and the choices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ..errors import ScenarioError
from .plan import Plan
from .text import Line, join_lines, split_lines

__all__ = ["STAGES", "STEPS", "Field", "LineStep", "Step", "register"]

STAGES = ("event", "byte", "chunk", "transport")
BOM = "\ufeff"


@dataclass(frozen=True)
class Field:
    """How to check one step field.

    Attributes:
        expected: what is valid, as shown in errors (``"an integer >= 1"``).
        check: returns True for a valid value.
    """

    expected: str
    check: Callable[[Any], bool]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def number(minimum: float = 0.0, *, optional: bool = False) -> Field:
    """A number (int or float) ``>= minimum``; seconds unless the name says otherwise."""
    suffix = " or null" if optional else ""
    return Field(
        f"a number >= {minimum:g}{suffix}",
        lambda v: (optional and v is None) or (_number(v) and v >= minimum),
    )


def integer(minimum: int | None = 0, *, optional: bool = False) -> Field:
    """An integer ``>= minimum`` (None: any integer, negative ones counting from the end)."""
    bound = "" if minimum is None else f" >= {minimum}"
    suffix = " or null" if optional else ""
    return Field(
        f"an integer{bound}{suffix}",
        lambda v: (optional and v is None) or (_integer(v) and (minimum is None or v >= minimum)),
    )


def choice(*values: Any) -> Field:
    """One of ``values``."""
    shown = " | ".join("null" if v is None else str(v) for v in values)
    return Field(f"one of {shown}", lambda v: any(v == x and type(v) is type(x) for x in values))


def text(*, optional: bool = False, nonempty: bool = False) -> Field:
    """A string (one line unless stated)."""
    what = "a non-empty string" if nonempty else "a string"
    return Field(
        what + (" or null" if optional else ""),
        lambda v: (optional and v is None) or (isinstance(v, str) and (not nonempty or bool(v))),
    )


def flag() -> Field:
    """true or false."""
    return Field("true or false", lambda v: isinstance(v, bool))


def integers(minimum: int = 0, *, nonempty: bool = True) -> Field:
    """A list of integers ``>= minimum``."""
    return Field(
        f"a {'non-empty ' if nonempty else ''}list of integers >= {minimum}",
        lambda v: isinstance(v, list) and (bool(v) or not nonempty)
        and all(_integer(x) and x >= minimum for x in v),
    )


def mapping() -> Field:
    """A mapping of strings to strings (e.g. headers)."""
    return Field(
        "a mapping of names to string values",
        lambda v: isinstance(v, Mapping) and all(isinstance(k, str) and isinstance(x, str) for k, x in v.items()),
    )


def anything() -> Field:
    """Any YAML value (e.g. a JSON body)."""
    return Field("any YAML value", lambda v: True)


class Step:
    """A replay step. Subclasses are dataclasses that set ``name``, ``stage``,
    ``fields`` (with a docstring giving a YAML example) and implement :meth:`apply`.

    ``edits_body`` is False for steps that only change timing or headers (the
    recorded body then stays byte for byte, content encoding included).
    """

    name: ClassVar[str] = ""
    stage: ClassVar[str] = "chunk"
    fields: ClassVar[dict[str, Field]] = {}
    edits_body: ClassVar[bool] = True

    def apply(self, plan: Plan) -> None:
        """Edit ``plan`` in place."""
        raise NotImplementedError

    def validate(self, where: str, source: str) -> None:
        """Check field values together (after each was checked alone). Raises :class:`ScenarioError`."""

    def describe(self) -> dict[str, Any]:
        """The step as YAML data: ``{name: {field: value}}``."""
        return {self.name: {k: getattr(self, k) for k in self.fields}}

    @classmethod
    def build(cls, args: Any, where: str, source: str) -> Step:
        """Make the step from its YAML mapping, checking every field. Raises :class:`ScenarioError`."""
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise ScenarioError(source, where, f"a mapping of fields ({', '.join(cls.fields) or 'none'})", args)
        for key, value in args.items():
            spec = cls.fields.get(key)
            if spec is None:
                raise ScenarioError(
                    source, f"{where}.{key}", f"a field of {cls.name}: {', '.join(cls.fields) or '(none)'}", None
                )
            if not spec.check(value):
                raise ScenarioError(source, f"{where}.{key}", spec.expected, value)
        step = cls(**args)
        step.validate(where, source)
        return step


class LineStep(Step):
    """A step of the ``event`` or ``byte`` stage: it edits the body as lines.

    Only applied to ``text/event-stream`` bodies; the scenario splits the body
    into :class:`~ssemock.scenario.text.Line` items once, runs every line step,
    then joins the lines back into the recorded chunks.
    """

    stage: ClassVar[str] = "byte"

    def edit(self, lines: list[Line], plan: Plan) -> list[Line]:
        """Return the edited lines (may be the same list)."""
        raise NotImplementedError

    def run(self, lines: list[Line], plan: Plan) -> list[Line]:
        """:meth:`edit`, keeping a leading BOM at the very start whatever lines are added before."""
        bom = bool(lines) and lines[0].text.startswith(BOM)
        if bom:
            lines = [lines[0].with_text(lines[0].text[1:]), *lines[1:]]
        out = self.edit(lines, plan)
        if bom and out and not out[0].text.startswith(BOM):
            out = [out[0].with_text(BOM + out[0].text), *out[1:]]
        return out

    def apply(self, plan: Plan) -> None:
        if plan.is_event_stream:
            chunks = plan.response.chunks
            plan.response.chunks = join_lines(self.run(split_lines(chunks), plan), chunks)


STEPS: dict[str, type[Step]] = {}
S = TypeVar("S", bound=type[Step])


def register(cls: S) -> S:
    """Class decorator: make a step available under ``cls.name`` in scenario files."""
    assert cls.stage in STAGES, cls
    assert dataclasses.is_dataclass(cls), cls
    STEPS[cls.name] = cls
    return cls
