"""The step model: :class:`Step`, its typed fields, validation and the registry of step names.

A step is a dataclass whose class attributes say its YAML ``name``, its
``stage`` (``event``, ``byte``, ``chunk`` or ``transport``, design §2) and its
``fields``: for each field, a :class:`~ssemock.limits.Field` that checks a YAML value
and says what would be valid (the same range check as cassette fields and options).
Validation errors are :class:`~ssemock.ScenarioError` naming the file, the step
(``steps[2].fragment``), the field and the choices.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .. import limits
from ..errors import ScenarioError
from ..limits import Field, bounded, bounds_text, integer, is_integer, nullable, string, whole, within
from ..plan import Plan

if TYPE_CHECKING:  # the lines are made when a scenario is applied: a server starts without them
    from .text import Line

__all__ = [
    "MAX_BYTES",
    "MAX_COUNT",
    "MAX_RETRY_MS",
    "MAX_SECONDS",
    "MAX_TEXT",
    "NEAR_MISSES",
    "SPLIT_MODES",
    "STAGES",
    "STEPS",
    "Field",
    "LineStep",
    "Step",
    "check_split",
    "integer",
    "number",
    "register",
    "split_fields",
]

STAGES = ("event", "byte", "chunk", "transport")
BOM = "\ufeff"


MAX_SECONDS = 3600.0
"""Longest injected or scaled delay, in seconds (an hour)."""
MAX_COUNT = 100_000
"""Most comments, parts or repetitions a step may add."""
MAX_BYTES = 64 * 1024 * 1024
"""Largest size or offset a step may ask for, in bytes (64 MiB)."""
MAX_RETRY_MS = 3_600_000
"""Largest ``retry_ms`` a step writes (``event-ids``, ``extra-fields``, ``meta-blocks``), in milliseconds (an hour)."""
MAX_TEXT = 256
"""Longest text a step repeats in every event (comment text, id, field name), in characters."""
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 token
_HEADER_FORBIDDEN = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # controls but HTAB (RFC 9110 §5.5)
_CONTROLS = "".join(map(chr, [*range(0x09), *range(0x0a, 0x20), 0x7f]))


def number(minimum: float = 0.0, maximum: float = MAX_SECONDS, *, optional: bool = False) -> Field:
    """A number (int or float) from ``minimum`` to ``maximum``; seconds unless the name says otherwise."""
    return limits.number(minimum, maximum, optional=optional)


def choice(*values: Any) -> Field:
    """One of ``values``."""
    shown = " | ".join("null" if v is None else str(v) for v in values)
    return Field(f"one of {shown}", lambda v: any(v == x and type(v) is type(x) for x in values),
                 {"enum": list(values)})


def text(*, optional: bool = False, nonempty: bool = False) -> Field:
    """A string (one line unless stated)."""
    what = "a non-empty string" if nonempty else "a string"
    return Field(
        what + (" or null" if optional else ""),
        lambda v: (optional and v is None) or (isinstance(v, str) and (not nonempty or bool(v))),
        nullable({"type": "string", "minLength": 1} if nonempty else {"type": "string"}, optional),
    )


def short_text(forbidden: str = "\r\n", *, maximum: int = MAX_TEXT, optional: bool = False) -> Field:
    """A string of at most ``maximum`` characters, none of them in ``forbidden`` (default CR and LF)."""
    names = {"\r": "CR", "\n": "LF", "\0": "NUL", ":": "colon"}
    without = ", ".join(names.get(c, repr(c)) for c in forbidden)
    suffix = " or null" if optional else ""
    return Field(
        f"a string of at most {maximum} characters without {without}{suffix}",
        lambda v: (optional and v is None)
        or (isinstance(v, str) and len(v) <= maximum and not set(v) & set(forbidden)),
        nullable(string(maximum=maximum, without=forbidden), optional),
    )


def header_value(*, optional: bool = False) -> Field:
    """A non-empty HTTP header value: no CR, LF, NUL or other control character but HTAB."""
    suffix = " or null" if optional else ""
    return Field(
        f"a non-empty header value without CR, LF, NUL or other control characters{suffix}",
        lambda v: (optional and v is None) or _header_value(v),
        nullable(string(minimum=1, without=_CONTROLS), optional),
    )


def header_map() -> Field:
    """A mapping of HTTP header names (RFC 9110 tokens) to header values."""
    return Field(
        "a mapping of header names (letters, digits and !#$%&'*+-.^_`|~) to values without CR, LF, NUL "
        "or other control characters",
        lambda v: isinstance(v, Mapping)
        and all(isinstance(k, str) and _HEADER_NAME.fullmatch(k) and _header_value(x, empty=True)
                for k, x in v.items()),
        {"type": "object", "propertyNames": {"pattern": whole(_HEADER_NAME.pattern)},
         "additionalProperties": string(without=_CONTROLS)},
    )


def _shown(value: Any) -> str:
    """``value`` as in YAML flow style (``null``, ``true``, lists), cut to 40 characters."""
    if isinstance(value, bool) or value is None:
        text_ = {True: "true", False: "false", None: "null"}[value]
    elif isinstance(value, (list, dict)):
        text_ = re.sub(r"'([^']*)'", r"\1", str(value))
    else:
        text_ = str(value) if value == str(value).strip() and str(value) else repr(value)
    return text_ if len(text_) <= 40 else text_[:39] + "…"


def _header_value(value: Any, *, empty: bool = False) -> bool:
    return isinstance(value, str) and (empty or bool(value)) and _HEADER_FORBIDDEN.search(value) is None


def flag() -> Field:
    """true or false."""
    return Field("true or false", lambda v: isinstance(v, bool), {"type": "boolean"})


def integers(
    minimum: int = 0, maximum: int = MAX_BYTES, *, nonempty: bool = True, items: int = MAX_COUNT, in_bytes: bool = True,
) -> Field:
    """A list of at most ``items`` integers from ``minimum`` to ``maximum``; ``in_bytes`` (default): sizes
    or offsets in bytes (bounds shown in MiB or KiB too)."""
    shown = bounds_text(minimum, maximum, in_bytes=in_bytes)
    return Field(
        f"a {'non-empty ' if nonempty else ''}list of at most {items} integers{shown}",
        lambda v: isinstance(v, list) and (bool(v) or not nonempty) and len(v) <= items
        and all(is_integer(x) and within(x, minimum, maximum) for x in v),
        {"type": "array", "minItems": int(nonempty), "maxItems": items, "items": bounded("integer", minimum, maximum)},
    )


def anything() -> Field:
    """Any YAML value (e.g. a JSON body)."""
    return Field("any YAML value", lambda v: True, {"description": "any value"})


SPLIT_MODES = ("offsets", "size", "random", "crlf", "utf8")
"""How ``h2-frames`` and ``tls-records`` cut the frames or records inside writes."""


def split_fields(largest: int) -> dict[str, Field]:
    """The fields of a step that cuts frames or records inside writes (``mode`` of :data:`SPLIT_MODES`,
    ``offsets``, ``size``, ``min``, ``max``), sizes of 1 to ``largest`` bytes."""
    return {
        "mode": choice(*SPLIT_MODES),
        "offsets": integers(1, MAX_BYTES),
        "size": integer(1, largest, in_bytes=True),
        "min": integer(1, largest, in_bytes=True),
        "max": integer(1, largest, in_bytes=True),
    }


SPLIT_BY_MODE: dict[str, tuple[str, ...]] = {
    "offsets": ("offsets",), "size": ("size",), "random": ("min", "max"), "crlf": (), "utf8": ()}
"""The fields each mode of :func:`split_fields` reads besides ``mode``."""


def check_split(step: Any, where: str, source: str) -> None:
    """Raise :class:`ScenarioError` for mode ``offsets`` without offsets, or ``min`` above ``max``."""
    if step.mode == "offsets" and not step.offsets:
        raise ScenarioError(source, f"{where}.offsets", "a non-empty list of integers >= 1 (mode offsets)", None)
    if step.min > step.max:
        raise ScenarioError(source, f"{where}.min", f"at most max ({step.max})", step.min)


class Step:
    """A replay step. Subclasses are dataclasses that set ``name``, ``stage``,
    ``fields`` (with a docstring giving a YAML example) and implement :meth:`apply`.

    ``edits_body`` is False for steps that only change timing or headers (the
    recorded body then stays byte for byte, content encoding included). ``http2_only``: the step acts on
    HTTP/2 frames (:mod:`.h2_steps`), and an HTTP/1.x request under it is refused; ``tls_only``: the step acts on
    TLS (:mod:`.tls_steps`), and a request without TLS under it is refused.

    ``phase`` orders the steps of one stage whatever the order written (lower first; steps of one
    phase keep their written order): ``timing`` (0) runs before ``fragment`` (1), so a buffer is
    timed by the new times; ``drop-and-resume`` (0) runs before the other transport faults, which
    then apply to the stream that answers the reconnect too.
    """

    name: ClassVar[str] = ""
    stage: ClassVar[str] = "chunk"
    phase: ClassVar[int] = 1
    fields: ClassVar[dict[str, Field]] = {}
    by_mode: ClassVar[dict[str, tuple[str, ...]]] = {}
    """For a step with a ``mode``: the fields each mode reads besides ``mode`` and the fields no mode names here
    (empty: every field counts in every mode). A field of another mode is refused, not ignored."""
    edits_body: ClassVar[bool] = True
    http2_only: ClassVar[bool] = False
    tls_only: ClassVar[bool] = False

    def apply(self, plan: Plan) -> None:
        """Edit ``plan`` in place."""
        raise NotImplementedError

    def note(self) -> str:
        """One short line for the journal's ``injected``, written after :meth:`apply` when the step
        wrote none itself: ``NAME: field value, …`` (each value cut to 40 characters)."""
        given = ", ".join(f"{k} {_shown(getattr(self, k))}" for k in self.fields)
        return f"{self.name}: {given}" if given else f"{self.name}: applied"

    def validate(self, where: str, source: str) -> None:
        """Check field values together (after each was checked alone). Raises :class:`ScenarioError`."""

    def describe(self) -> dict[str, Any]:
        """The step as YAML data: ``{name: {field: value}}`` (the fields its mode reads, with a ``mode``)."""
        return {self.name: {k: getattr(self, k) for k in self.fields if self._reads(k, getattr(self, "mode", ""))}}

    @classmethod
    def _reads(cls, key: str, mode: str) -> bool:
        """Whether the step in ``mode`` reads field ``key`` (see :attr:`by_mode`)."""
        if not cls.by_mode or key == "mode" or mode not in cls.by_mode:
            return True
        return key in cls.by_mode[mode] or not any(key in names for names in cls.by_mode.values())

    @classmethod
    def _default(cls, key: str) -> Any:
        """The default value of field ``key``."""
        spec = next(f for f in dataclasses.fields(cls) if f.name == key)  # type: ignore[arg-type]
        return spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default

    @classmethod
    def build(cls, args: Any, where: str, source: str) -> Step:
        """Make the step from its YAML mapping, checking every field. Raises :class:`ScenarioError`."""
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise ScenarioError(source, where, f"a mapping of fields ({', '.join(cls.fields) or 'none'})", args)
        for key, value in args.items():
            spec = cls.fields.get(key)
            if spec is None:
                hint = NEAR_MISSES.get((cls.name, key))
                raise ScenarioError(
                    source, f"{where}.{key}", f"a field of {cls.name}: {', '.join(cls.fields) or '(none)'}"
                    + (f" ({key} is done by the step {hint})" if hint else ""), None
                )
            if not spec.check(value):
                raise ScenarioError(source, f"{where}.{key}", spec.expected, value)
        mode = args.get("mode", getattr(cls, "mode", ""))
        # a value the mode would not read (a default changes nothing: an editor's completion may add it)
        ignored = next((key for key in args if not cls._reads(key, mode) and args[key] != cls._default(key)), None)
        if ignored is not None:
            modes = [m for m, names in cls.by_mode.items() if ignored in names]
            reads = [k for k in cls.fields if k != "mode" and cls._reads(k, mode)]
            raise ScenarioError(source, f"{where}.{ignored}", f"a field mode {mode} reads: {', '.join(reads) or 'none'}"
                                f" ({ignored} is for mode {' or '.join(modes)})", args[ignored])
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
            from .text import join_lines, split_lines

            chunks = plan.response.chunks
            plan.response.chunks = join_lines(self.run(split_lines(chunks), plan), chunks)


_KEEP_ALIVE = "keep-alive-every: {seconds: S, text: ping}"
NEAR_MISSES: dict[tuple[str, str | None], str] = {
    ("keepalive", "every_seconds"): _KEEP_ALIVE, ("keepalive", "seconds"): _KEEP_ALIVE,
    ("keepalive", "every"): _KEEP_ALIVE, ("stall", "keepalive_every"): _KEEP_ALIVE,
    ("stall", "keepalive"): _KEEP_ALIVE, ("stall", "every_seconds"): _KEEP_ALIVE,
    ("keep-alive-every", "event"): "ping-event: {seconds: S}", ("heartbeat", "event"): "ping-event: {seconds: S}",
    ("edit", "to"): "copy: {path: P, to: Q}", ("edit", "rename"): "copy: {path: P, to: Q, move: true}",
    ("timing", "end"): "disconnect or heartbeat", ("stall", "after_bytes"): "disconnect: {after_bytes: N}",
    ("inject-event", None): "insert", ("inject", None): "insert", ("add-event", None): "insert",
    ("keep-alive", None): _KEEP_ALIVE, ("keepalive-every", None): _KEEP_ALIVE, ("ping", None): "ping-event",
    ("ping-events", None): "ping-event", ("rename", None): "copy: {path: P, to: Q, move: true}",
    ("copy-field", None): "copy", ("move", None): "copy: {path: P, to: Q, move: true}",
    ("delay", None): "first-byte (before the headers) or stall (after N events)", ("pause", None): "stall",
    ("sleep", None): "stall", ("error", None): "http-error or error-mid-stream", ("http-status", None): "http-error",
    ("drop-event", None): "drop", ("remove", None): "drop", ("split", None): "fragment", ("chunk", None): "fragment",
    ("gzip", None): "content-encoding: {coding: gzip}", ("compress", None): "content-encoding",
    ("buffer", None): "fragment: {mode: buffer, size: 4096}", ("reconnect", None): "drop-and-resume",
}
"""Near-miss spellings (a step name with None, or a step's field) and the step that does what they ask:
refusals name it."""

STEPS: dict[str, type[Step]] = {}
S = TypeVar("S", bound=type[Step])


def register(cls: S) -> S:
    """Class decorator: make a step available under ``cls.name`` in scenario files."""
    assert cls.stage in STAGES, cls
    assert dataclasses.is_dataclass(cls), cls
    STEPS[cls.name] = cls
    return cls
