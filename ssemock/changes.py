"""Changes to a running server: the typed record (:class:`Change`) and the registry of what applies each
kind (:data:`APPLIERS`).

A change comes from an admin request (``POST``/``DELETE /_ssemock/stubs``, ``PUT``/``DELETE
/_ssemock/scenario``: :mod:`ssemock.change_routes`), from a :class:`~ssemock.MockServer` method
(``add_stubs``, ``set_scenario``...), or from another worker process under ``--workers``
(:mod:`ssemock.workers`), which is why the record is plain data (:meth:`Change.to_json`). Its document
is read by the loader of the files it stands for, so a body is valid exactly when the file would be:

* ``stubs.add``: a stub file (``ssemock_stubs: 1``, ``stubs: [...]``; :func:`ssemock.stubs.parse_stubs`,
  within :data:`~ssemock.stubs.files.MAX_STUB_FILE` bytes). Its stubs are tried before every other stub,
  the latest addition first (:meth:`~ssemock.stubs.StubBook.add_at_run_time`); at most
  :data:`~ssemock.limits.MAX_ADDED_STUBS` in all.
* ``stubs.clear``: no document. Removes the stubs added at run time; the stubs loaded from files
  (``--stubs``, ``MockServer(stubs=...)``, the plugin's ``ssemock_stubs``) and a test's inline stubs stay.
* ``scenario.set``: scenario names (a list, or one string, comma-separated as in ``X-SSEMock-Scenario``),
  each served, at most :data:`~ssemock.limits.MAX_SCENARIOS`; or a scenario file's mapping
  (:meth:`ssemock.Scenario.from_dict`, within :data:`~ssemock.limits.MAX_SCENARIO_FILE` bytes; ``name``
  defaults to :data:`DOCUMENT_NAME`), then served under its name besides the others (selectable per
  request too) and the default alone. A document may not take the name of a scenario loaded from a file.
* ``scenario.clear``: no document. No default scenario; the scenarios documents brought are served no more.
* ``chaos.set``: the faults by rate (:mod:`ssemock.chaos`), as ``--chaos`` takes them: one rule's text
  (``cut-mid-event=0.05,http-429=0.02``, ``path=/v1/*:http-500=0.1``), a list of rules, or a mapping of
  scenario names to rates (one rule without a scope); each scenario served, at most
  :data:`~ssemock.limits.MAX_CHAOS_RULES` rules. They replace the server's rates whole; the draws go on from
  the server's seed and each request's ``seq``.
* ``chaos.clear``: no document. No faults by rate.

Applying checks everything first and changes nothing on an error: a change is applied whole or not at all.
Reading a document (seconds for 1 MiB of YAML) is apart from making the change (:data:`Applier` returns a
:data:`Commit`), so that a server reads it off its event loop and makes it on the loop.
A new kind is one entry, a function ``(state, change) -> commit``, in :data:`APPLIERS`;
its route's handler calls :func:`ssemock.change_routes.change_from_body` (or ``answer_change``), and
``--workers`` hands it to every worker as it does the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .cassette.files import FileError
from .cassette.yamltext import load_yaml, utf8_text
from .chaos import Chaos
from .errors import ChaosError, ConfigError, ScenarioError, StubError, did_you_mean
from .limits import MAX_ADDED_SCENARIOS, MAX_ADDED_STUBS, MAX_SCENARIO_FILE, MAX_SCENARIOS, json_depth_exceeds
from .names import scenario_names
from .refusals import TooManyScenariosError, UnknownScenarioError
from .scenario import Scenario
from .state import ServerState
from .stubs import count_stubs, parse_stubs
from .stubs.files import MAX_STUB_FILE

__all__ = [
    "APPLIERS",
    "DOCUMENT_NAME",
    "MAX_CHANGE_RECORD",
    "Applier",
    "Change",
    "Commit",
    "apply_change",
    "prepare_change",
    "read_document",
    "stub_summary",
]

DOCUMENT_NAME = "runtime"
"""The name of a scenario given as a document without a ``name``."""
MAX_CHANGE_RECORD = 16 * 1024 * 1024
"""Bytes of a change record (:meth:`Change.to_json` as JSON) a worker reads from another: a document of 1 MiB
whose every character JSON writes as ``\\uXXXX`` (six bytes) fits, twice over."""
Syntax: TypeAlias = Literal["yaml", "json"]


@dataclass(frozen=True)
class Change:
    """One change of a running server's state.

    Attributes:
        kind: what it changes, a key of :data:`APPLIERS` (``stubs.add``, ``stubs.clear``, ``scenario.set``,
            ``scenario.clear``, ``chaos.set``, ``chaos.clear``).
        text: the document as written (a request body, decoded as UTF-8 with ``surrogateescape``), read with
            ``syntax``; or None.
        syntax: how ``text`` is read: ``yaml`` (the files' strict loader) or ``json`` (``application/json``).
        data: the document already parsed, when ``text`` is None: a mapping, a list or a string (JSON data),
            or, from Python in the server's own process, a :class:`~ssemock.Scenario`.
        source: what an error names as the file (``POST /_ssemock/stubs``).
    """

    kind: str
    text: str | None = None
    syntax: Syntax = "yaml"
    data: Any = None
    source: str = "<memory>"

    def document(self, error: FileError, limit: int) -> Any:
        """The document: :attr:`data`, or :attr:`text` parsed (at most ``limit`` UTF-8 bytes, as a file).

        Raises:
            StubError, ScenarioError (``error``): too large, or not valid YAML / JSON (the line named).
        """
        if self.text is None:
            return self.data
        # a body's bytes that are not UTF-8 came as surrogates (``surrogateescape``): the loader names them
        return read_document(self.text.encode("utf-8", "surrogateescape"), self.syntax, self.source, error, limit)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data (what one worker process sends the others)."""
        return {"kind": self.kind, "text": self.text, "syntax": self.syntax, "data": self.data, "source": self.source}

    @classmethod
    def from_json(cls, value: Any) -> Change:
        """The record :meth:`to_json` wrote. Raises ``ValueError`` for anything else."""
        if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str):
            raise ValueError("not a change record")
        text, syntax, source = value.get("text"), value.get("syntax", "yaml"), value.get("source", "<memory>")
        if not (text is None or isinstance(text, str)) or syntax not in ("yaml", "json") or not isinstance(source, str):
            raise ValueError("not a change record")
        return cls(value["kind"], text, syntax, value.get("data"), source)


def read_document(body: bytes, syntax: Syntax, source: str, error: FileError, limit: int) -> Any:
    """``body`` parsed as a file of at most ``limit`` bytes would be: YAML by the files' strict loader
    (anchors, aliases, duplicate keys, deep nesting refused with their line), or JSON nested at most
    :data:`~ssemock.cassette.fastyaml.MAX_NESTING` deep.

    Raises:
        StubError, ScenarioError (``error``): over ``limit`` bytes, not UTF-8, or not valid YAML / JSON.
    """
    from .cassette.fastyaml import MAX_NESTING

    if len(body) > limit:
        raise error(source, "", f"a document of at most {limit} bytes", f"{len(body)} bytes")
    text = utf8_text(body, source, error)
    if syntax == "yaml":
        return load_yaml(text, source, error)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(source, f"line {exc.lineno}, column {exc.colno}", "valid JSON", exc.msg) from None
    except RecursionError:
        raise error(source, "", f"JSON nested at most {MAX_NESTING} deep", None) from None
    except ValueError as exc:  # an integer of more digits than Python converts (4,300 by default)
        raise error(source, "", "JSON numbers Python can read", str(exc)) from None
    if json_depth_exceeds(value, MAX_NESTING):
        raise error(source, "", f"JSON nested at most {MAX_NESTING} deep", None)
    return value


Commit: TypeAlias = Callable[[], dict[str, Any]]
"""Makes a change that was read and checked, on the server's event loop, and returns the answer (JSON data);
raises an :class:`~ssemock.SSEMockError` (having changed nothing) when the state refuses it (a bound)."""
Applier: TypeAlias = Callable[[ServerState, Change], Commit]
"""Reads and checks a change's document (in a thread: a 1 MiB document takes seconds), and returns the
:data:`Commit` that makes it; raises an :class:`~ssemock.SSEMockError` when the change is invalid."""


def _add_stubs(state: ServerState, change: Change) -> Commit:
    stubs = parse_stubs(change.document(StubError, MAX_STUB_FILE), change.source)

    def commit() -> dict[str, Any]:
        held = len(state.stubs.added)
        if held + len(stubs) > MAX_ADDED_STUBS:
            raise StubError(
                change.source,
                "stubs",
                f"at most {MAX_ADDED_STUBS} stubs added at run time in all "
                f"({held} are; DELETE /_ssemock/stubs clears them)",
                f"{len(stubs)} more",
            )
        state.stubs.add_at_run_time(stubs)
        return {"added": count_stubs(stubs), "stubs": [stub.name for stub in stubs]}

    return commit


def _clear_stubs(state: ServerState, change: Change) -> Commit:
    return lambda: {"cleared": state.stubs.clear_added()}


_SCENARIO_DOCUMENT = "scenario names (a list, or one string, comma-separated) or a scenario file's mapping"


def _set_scenario(state: ServerState, change: Change) -> Commit:
    document = change.document(ScenarioError, MAX_SCENARIO_FILE)
    if document is None:
        raise ScenarioError(change.source, "", f"{_SCENARIO_DOCUMENT}; DELETE /_ssemock/scenario clears the default")
    if isinstance(document, Scenario | Mapping):
        scenario = (
            document
            if isinstance(document, Scenario)
            else Scenario.from_dict(document, name=DOCUMENT_NAME, source=change.source)
        )
        return lambda: {"scenario": [_add_scenario(state, scenario, change.source)]}
    try:
        names = scenario_names(document)
    except ConfigError as exc:
        raise ScenarioError(change.source, "", f"{_SCENARIO_DOCUMENT} ({exc})") from None
    if len(names) > MAX_SCENARIOS:
        raise TooManyScenariosError(len(names), MAX_SCENARIOS)

    def commit() -> dict[str, Any]:
        unknown = [name for name in names if name not in state.scenarios]
        if unknown:
            raise UnknownScenarioError(f"{change.source}: no scenario named {unknown[0]!r}"
                                       f"{did_you_mean(unknown[0], state.scenarios)}", state.scenarios)
        state.scenario = names
        return {"scenario": list(names)}

    return commit


def _add_scenario(state: ServerState, scenario: Scenario, source: str) -> str:
    name, added = scenario.name, state.added_scenarios
    if name in state.scenarios and name not in added:
        raise ScenarioError(source, "name", "a name no scenario loaded from a file has", name)
    if name not in added and len(added) >= MAX_ADDED_SCENARIOS:
        raise ScenarioError(
            source,
            "name",
            f"one of the {MAX_ADDED_SCENARIOS} scenarios given at run time (DELETE /_ssemock/scenario clears them)",
            name,
        )
    # a new dict: the one replaced may be shared (a pytest session's scenarios)
    state.scenarios = {**state.scenarios, name: scenario}
    state.added_scenarios = added | {name}
    state.scenario = (name,)
    return name


def _clear_scenario(state: ServerState, change: Change) -> Commit:
    def commit() -> dict[str, Any]:
        added = state.added_scenarios
        if added:
            state.scenarios = {name: s for name, s in state.scenarios.items() if name not in added}
            state.added_scenarios = frozenset()
        state.scenario = ()
        return {"scenario": [], "removed": sorted(added)}

    return commit


_CHAOS_DOCUMENT = (
    "chaos rules as --chaos takes them: 'cut-mid-event=0.05,http-429=0.02', a list of rules, or {name: rate}"
)


def _set_chaos(state: ServerState, change: Change) -> Commit:
    document = change.document(ChaosError, MAX_SCENARIO_FILE)
    if document is None:
        raise ChaosError(change.source, "", f"{_CHAOS_DOCUMENT}; DELETE /_ssemock/chaos clears them")
    try:
        rates = Chaos.of(document, "chaos")
    except ConfigError as exc:
        raise ChaosError(change.source, "", f"{_CHAOS_DOCUMENT} ({exc})") from None

    def commit() -> dict[str, Any]:
        try:
            rates.check(state.scenarios)
        except ConfigError as exc:
            raise ChaosError(change.source, "", f"rates of scenarios the server serves ({exc})") from None
        state.chaos = rates
        return {"chaos": rates.describe()}

    return commit


def _clear_chaos(state: ServerState, change: Change) -> Commit:
    def commit() -> dict[str, Any]:
        state.chaos = Chaos()
        return {"chaos": []}

    return commit


APPLIERS: dict[str, Applier] = {
    "stubs.add": _add_stubs,
    "stubs.clear": _clear_stubs,
    "scenario.set": _set_scenario,
    "scenario.clear": _clear_scenario,
    "chaos.set": _set_chaos,
    "chaos.clear": _clear_chaos,
}
"""What reads and applies each kind of :class:`Change`, by kind."""


def prepare_change(state: ServerState, change: Change) -> Commit:
    """Read and check ``change`` (from any thread: the replay server calls it in one of its own, so that it
    goes on answering meanwhile); returns what makes it, to call on the server's event loop.

    Raises:
        StubError, ScenarioError: an invalid document (naming the field); nothing changed.
        TooManyScenariosError: more than :data:`~ssemock.limits.MAX_SCENARIOS` names.
        KeyError: ``change.kind`` is no key of :data:`APPLIERS`.
    """
    return APPLIERS[change.kind](state, change)


def apply_change(state: ServerState, change: Change) -> dict[str, Any]:
    """Read, check and make ``change`` at once (on the server's event loop) and return the answer (JSON data).

    Raises:
        StubError, ScenarioError: an invalid document (naming the field), or a bound of the state
            (:data:`~ssemock.limits.MAX_ADDED_STUBS`...); nothing changed.
        UnknownScenarioError, TooManyScenariosError: scenario names not served, or too many.
        KeyError: ``change.kind`` is no key of :data:`APPLIERS`.
    """
    return prepare_change(state, change)()


def stub_summary(state: ServerState) -> list[dict[str, Any]]:
    """The stubs served, in the order they are tried: each one's ``name``, ``match`` (its conditions, as
    text), ``source``, ``times``, ``used`` and ``added`` (true: added at run time)."""
    added = {id(stub) for stub in state.stubs.added}
    return [
        {
            "name": stub.name,
            "match": stub.match.describe(),
            "source": stub.source,
            "times": stub.times,
            "used": stub.used,
            "added": id(stub) in added,
        }
        for stub in state.stubs.stubs
    ]
