"""The per-test handle on a shared replay server, and cassette lookup beside a test.

:class:`SSEMockFixture` is what the pytest fixture ``sse_mock`` (also ``ssemock``) gives a test: the
server URL, :meth:`~SSEMockFixture.use` to pick a cassette and scenario, the
journal and assertions over it. It does not import pytest, so it can also serve
other test runners.

Lookup order for a cassette named ``NAME`` (the pytest-recording convention first):

1. a path to an existing file (absolute, or relative to the test file's directory);
2. ``cassettes/<test module>/NAME.yaml`` (or ``.yml``) beside the test file (the test's recording
   folder: in pytest, the ``ssemock_cassette_dir`` fixture);
3. ``cassettes/NAME.yaml`` beside the test file;
4. the configured cassette directories (loaded by name);
5. the bundled real-world cassettes.

How requests are matched (``match_on``, vcrpy's name; see :mod:`ssemock.matching`): as
given to :meth:`SSEMockFixture.use` (or the pytest marker), where every matcher named,
the body included, must pass. Otherwise, a cassette recorded beside the test (in
``cassettes/<test module>/``, where the plugin writes recordings) is matched on method,
path and body, so a request whose prompt changed since the recording is refused; any
other cassette (hand-written elsewhere, configured, bundled) on method and path, its
recorded bodies only choosing among its interactions.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .body_paths import check_paths
from .cassette import Cassette, load
from .changes import Change, apply_change
from .chaos import Chaos
from .errors import CassetteNotFoundError, ScenarioError, did_you_mean
from .journal import describe_journal, repeats, select, unmatched_report
from .journal_query import Journal
from .matching import DEFAULT_MATCH_ON, check_match_on
from .mockserver import MockServer, check_seed
from .names import scenario_names
from .runtime_fixture import RuntimeChanges
from .stubs import Chain, Stub, StubBook
from .stubs import on as _on
from .stubs import reply as _reply

if TYPE_CHECKING:
    from .recorder import Recorder

__all__ = ["CassetteLookup", "SSEMockFixture"]

CassetteRef = str | os.PathLike[str] | Cassette
RECORDER_SETTLE = 2.0


@dataclass
class CassetteLookup:
    """Where cassettes are searched for one test.

    Attributes:
        test_dir: the directory of the test file.
        module: the test module's file name without ``.py``.
        test_name: the default cassette name of the test (``test_x`` or ``TestClass.test_x``).
        rootdir: cassette files under it are named by their path relative to it.
        configured: cassettes from the configured directories, by name.
        bundled: the bundled cassettes, by name.
        cache: loaded cassette files by path, with their modification time (shared by tests).
        cassette_dir: the test's recording folder, where its recordings are written and its own
            cassette is looked for; None: ``cassettes/<module>/`` beside the test.
    """

    test_dir: Path
    module: str
    test_name: str
    rootdir: Path
    configured: Mapping[str, Cassette]
    bundled: Mapping[str, Cassette]
    cache: dict[Path, tuple[float, Cassette]] = field(default_factory=dict)
    cassette_dir: Path | None = None
    _own_dir: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        here = os.fspath(self.test_dir)
        self._own_dir = os.path.join(here, "cassettes", self.module) if self.cassette_dir is None \
            else os.path.join(here, self.cassette_dir)  # an absolute folder stays itself

    @property
    def default_path(self) -> Path:
        """``<test name>.yaml`` in :attr:`recording_dir`: the test's own cassette."""
        return self.recording_dir / f"{self.test_name}.yaml"

    def candidates(self, name: str) -> list[Path]:
        """The files that may hold cassette ``name``, in search order."""
        return [Path(file) for file in self._candidates(name)]

    def _candidates(self, name: str) -> list[str]:
        """:meth:`candidates` as strings (cheaper to look for, once per test)."""
        here = os.fspath(self.test_dir)
        files = [os.path.join(here, name)]  # an absolute name stays itself
        for base in (self._own_dir, os.path.join(here, "cassettes")):
            files += [os.path.join(base, f"{name}.yaml"), os.path.join(base, f"{name}.yml")]
        return files

    def find(self, ref: CassetteRef) -> Cassette:
        """The cassette ``ref`` names (see the module docstring for the order).

        Raises:
            CassetteNotFoundError: nowhere; the message lists every place searched.
            CassetteError: the file found is malformed.
        """
        if isinstance(ref, Cassette):
            return ref
        name = os.fspath(ref)
        for file in self._candidates(name):
            if os.path.isfile(file):
                return self.load(Path(file))
        if name in self.configured:
            return self.configured[name]
        if name in self.bundled:
            return self.bundled[name]
        searched = [str(p) for p in self.candidates(name)]
        searched.append(f"the configured directories ({', '.join(sorted(self.configured)) or 'no cassettes'})")
        searched.append(f"the bundled cassettes ({', '.join(sorted(self.bundled))})")
        error = CassetteNotFoundError(name)
        close = did_you_mean(name, [*self.configured, *self.bundled])
        error.args = (f"no cassette named {name!r}{close}; searched: " + "; ".join(searched),)
        raise error

    @property
    def recording_dir(self) -> Path:
        """The test's recording folder (``cassettes/<test module>/`` beside the test unless
        :attr:`cassette_dir` says otherwise): where its recordings go."""
        return Path(self._own_dir)

    def recorded_here(self, cassette: Cassette) -> bool:
        """True when ``cassette`` was loaded from :attr:`recording_dir`."""
        return cassette.path is not None and _resolved(cassette.path).parent == _resolved(self.recording_dir)

    def own(self) -> Cassette | None:
        """The test's own cassette (:attr:`default_path`), when that file exists."""
        path = os.path.join(self._own_dir, f"{self.test_name}.yaml")
        return self.load(Path(path)) if os.path.isfile(path) else None

    def load(self, file: Path) -> Cassette:
        """Load ``file`` (cached until it changes), named by its path relative to the rootdir."""
        file = _resolved(file)
        mtime = file.stat().st_mtime
        cached = self.cache.get(file)
        if cached is not None and cached[0] == mtime:
            return cached[1]
        try:
            key = file.relative_to(self.rootdir).with_suffix("").as_posix()
        except ValueError:
            key = file.with_suffix("").as_posix()
        cassette = load(file, name=key)
        cassette.name = key
        self.cache[file] = (mtime, cassette)
        return cassette


def _resolved(path: Path) -> Path:
    """``path.resolve()``, remembered for an absolute path: every test of a session asks about the
    same few files and folders (a symbolic link changed during the session is not seen)."""
    return _resolved_absolute(path) if path.is_absolute() else path.resolve()


@functools.lru_cache(maxsize=4096)
def _resolved_absolute(path: Path) -> Path:
    return path.resolve()


class SSEMockFixture(RuntimeChanges):
    """One test's view of the shared replay server.

    Args:
        server: the running :class:`MockServer` (started ``with``, in its thread).
        lookup: where this test's cassettes are searched.
        base: the session's cassettes by name (configured, then bundled).
        stubs: the session's stubs (from stub files), tried before this test's inline ones.

    Attributes:
        recorder: in a record mode, the running :class:`~ssemock.recorder.Recorder`
            the client talks to instead of the replay server; else None.
        stubs: this test's stubs (the session's, then those added by :meth:`reply` and :meth:`on`).
        stubs_only: True when the test has no cassette: only stubs answer (no bundled
            recording stands in for a missing one).
    """

    def __init__(self, server: MockServer, lookup: CassetteLookup, base: dict[str, Cassette],
                 stubs: Sequence[Stub] = ()) -> None:
        self.server = server
        self.lookup = lookup
        self._base = base
        self.recorder: Recorder | None = None
        self.cassette: Cassette | None = None
        self.scenario: tuple[str, ...] = ()
        self.match_on: tuple[str, ...] = DEFAULT_MATCH_ON
        self.ignore_body: tuple[str, ...] = ()
        self.strict = False
        self.stubs = StubBook(stubs)
        self.stubs_only = False
        self.chaos, self.seed = Chaos(), 0

    # ---- inline stubs --------------------------------------------------------------
    def reply(self, text: str, **fields: Any) -> Stub:
        """Answer this test's next chat request with ``text``, in the format of the provider
        whose path it arrives on (OpenAI chat or Responses, Anthropic, Gemini, OpenRouter).

        Args:
            text: the answer.
            **fields: ``times`` (default 1; None: every request), ``timing``
                (:class:`~ssemock.stubs.Timing`), ``reasoning``, ``tool_calls``, ``refusal``,
                ``finish_reason``, ``usage``, ``model`` (see :func:`ssemock.stubs.reply`).

        Returns:
            The stub (its ``used`` counts the requests it answered).

        Raises:
            StubError: a field is invalid (named).
        """
        stub = _reply(text, **fields)
        self.stubs.add(stub)
        return stub

    def on(self, **conditions: Any) -> Chain:
        """Steps answering the requests that match ``conditions``: e.g.
        ``on(contains="weather").call_tool("get_weather", {"city": "Paris"}).then_reply("Sunny")``
        answers the request whose last user message contains ``weather`` with the tool call,
        and the follow-up request carrying the tool result with ``Sunny``.

        Args:
            **conditions: ``contains``, ``equals``, ``regex`` (the last user message),
                ``model``, ``provider``, ``path``, ``tool_result``, ``turn``, ``timing``
                (see :func:`ssemock.stubs.on`).

        Raises:
            StubError: a condition is invalid (named).
        """
        return _on(**conditions, on_add=self.stubs.add)

    @property
    def url(self) -> str:
        """The base URL to give the client, ``http://127.0.0.1:PORT`` (append ``/v1`` for OpenAI SDKs)."""
        return self.recorder.url if self.recorder is not None else self.server.url

    def use(
        self, cassette: CassetteRef | None = None, *, scenario: Sequence[str] | str | None = None,
        timing_scale: float | None = None, match_on: Sequence[str] | None = None,
        ignore_body: Sequence[str] | None = None,
    ) -> SSEMockFixture:
        """Answer this test's requests from ``cassette`` under ``scenario``.

        Args:
            cassette: a cassette name (see :class:`CassetteLookup`), a file path or a
                :class:`Cassette`; None keeps the cassette in play.
            scenario: scenario names, a tuple (``("crlf", "split-bytes")``; one name may be a
                string, and a comma-separated string is split); None or ``()`` replays faithfully.
            timing_scale: multiplies recorded times (0 = no delays); None keeps the session's.
            match_on: matcher names (``"method"``, ``"path"``, ``"query"``, ``"body"``, ``"prompt"``),
                all required; None: the default for the cassette (see the module docstring).
            ignore_body: body paths the ``body`` matcher ignores (``["metadata.trace_id",
                "messages[*].id"]``, :mod:`ssemock.body_paths`), besides the cassette's own; None: none.

        Returns:
            self, so ``ssemock.use("name").url`` reads in one line.

        Raises:
            CassetteNotFoundError: no such cassette (the message lists the places searched).
            ScenarioError: no such scenario (the message lists the known ones).
            ConfigError: an empty scenario name; ``match_on`` is a string, empty or names an unknown matcher;
                ``ignore_body`` holds something else than body paths, or too many.
        """
        found = self.lookup.find(cassette) if cassette is not None else self.cassette
        names = self._scenario_names(scenario)
        self.match_on, self.strict = self._matching(found, match_on)
        self.ignore_body = check_paths(ignore_body or (), "ignore_body")
        self.cassette, self.scenario = found, names
        self._apply(timing_scale=timing_scale)
        return self

    def reset(
        self, cassette: Cassette | None = None, *, scenario: Sequence[str] | str | None = None,
        timing_scale: float | None = None, match_on: Sequence[str] | None = None,
        ignore_body: Sequence[str] | None = None, chaos: Any = None, seed: int | None = None,
    ) -> None:
        """Forget the journal and play counts; serve ``cassette`` (None: all the session's cassettes) under
        ``scenario``, matched on ``match_on`` ignoring ``ignore_body`` (as in :meth:`use`), with the faults by rate
        ``chaos`` (as ``MockServer(chaos=...)`` takes them; None: none) drawn from ``seed`` (None: 0).
        Raises :class:`ScenarioError` (unknown scenario), :class:`ConfigError` (bad ``match_on``, ``ignore_body``,
        chaos rule or seed). Returns at once: the change is made in the server's thread before any later request."""
        names = self._scenario_names(scenario)
        self.match_on, self.strict = self._matching(cassette, match_on)
        self.ignore_body = check_paths(ignore_body or (), "ignore_body")
        self.chaos, self.seed = Chaos.of(chaos), check_seed(0 if seed is None else seed)
        self.chaos.check(self.server.state.scenarios)
        self.cassette, self.scenario = cassette, names
        self._apply(reset=True, timing_scale=timing_scale, wait=False)

    def _matching(self, cassette: Cassette | None, match_on: Sequence[str] | None) -> tuple[tuple[str, ...], bool]:
        """``(match_on, strict)`` for ``cassette`` (see the module docstring)."""
        if match_on is not None:
            return check_match_on(match_on), True
        return DEFAULT_MATCH_ON, cassette is not None and self.lookup.recorded_here(cassette)

    def _scenario_names(self, scenario: Sequence[str] | str | None) -> tuple[str, ...]:
        """``scenario`` as a tuple of served names; raises :class:`ScenarioError` naming one that is not served."""
        names, known = scenario_names(scenario), self.server.state.scenarios
        for name in names:
            if name not in known:
                raise ScenarioError("ssemock", "scenario", f"a scenario name, one of {', '.join(sorted(known))}", name)
        return names

    def _apply(self, *, reset: bool = False, timing_scale: float | None = None, wait: bool = True) -> None:
        cassette, scenario, base = self.cassette, self.scenario, self._base
        match_on, strict, ignore_body, chaos, seed = self.match_on, self.strict, self.ignore_body, self.chaos, self.seed
        cassettes = {} if cassette is None and self.stubs_only else base if (
            cassette is None or base.get(cassette.name) is cassette) else {cassette.name: cassette, **base}
        stubs = self.stubs

        def apply() -> None:
            state = self.server.state
            if reset:
                state.reset()
                apply_change(state, Change("scenario.clear"))  # scenarios an earlier test gave at run time
            state.cassettes = cassettes
            state.cassette = cassette.name if cassette is not None else None
            state.scenario = scenario
            state.match_on, state.strict, state.ignore_body = match_on, strict, ignore_body
            state.stubs = stubs
            state.chaos, state.seed = chaos, seed
            if timing_scale is not None:
                state.timing_scale = timing_scale

        if wait:
            self.server.call(apply)
        else:
            self.server.call_soon(apply)

    # ---- the journal -------------------------------------------------------------
    @property
    def requests(self) -> Journal:
        """The journal of this test: one dict per request received, oldest first
        (:meth:`ssemock.journal.JournalEntry.to_json`), in every record mode: in one that records, the
        recorder's records have the same keys and its own besides (``action``, ``end``, ``events``, ...:
        :meth:`ssemock.recorder.progress.ProgressRow.to_journal`). A list that
        :meth:`~ssemock.journal_query.Journal.filter` narrows (``ssemock.requests.filter(path="/v1/*")``).
        """
        if self.recorder is not None:
            return Journal(self.recorder.journal)
        return self.server.requests

    @property
    def last_request(self) -> dict[str, Any]:
        """The most recent request. Raises ``AssertionError`` when there was none."""
        entries = self.requests
        assert entries, "no request reached the fake provider"
        return entries[-1]

    def assert_requests(self, count: int | None = None, **where: Any) -> list[dict[str, Any]]:
        """Assert which requests reached the server; returns them.

        Args:
            count: how many requests (that match ``where``) are expected;
                None: at least one.
            **where: journal fields to match: ``method``, ``path``, ``query``,
                ``body`` (a mapping matches a JSON body holding those keys),
                ``cassette``, ``interaction``, ``stub``, ``scenario``, ``status``, ``outcome``.

        Raises:
            AssertionError: with the whole journal, one line per request.
        """
        entries = self._settled(lambda found: len(select(found, **where)) >= (count or 1))
        chosen = select(entries, **where)
        what = f"request(s) matching {where}" if where else "request(s)"
        if count is None:
            assert chosen, f"expected at least one {what}, got none; journal:\n{describe_journal(entries)}"
        else:
            assert len(chosen) == count, (
                f"expected {count} {what}, got {len(chosen)}; journal:\n{describe_journal(entries)}"
            )
        return [dict(e) for e in chosen]

    def _settled(self, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
        """The journal; in a record mode, waited for (up to :data:`RECORDER_SETTLE` seconds)
        until ``done`` holds, since the recorder lists an interaction just after its client
        has read the end of the response."""
        entries = self.requests
        deadline = time.monotonic() + RECORDER_SETTLE
        while self.recorder is not None and not done(entries) and time.monotonic() < deadline:
            time.sleep(0.005)
            entries = self.requests
        return entries

    def assert_no_repeats(self) -> None:
        """Assert that no request was sent twice (same method, path, query and body):
        e.g. that a client did not replay a generation after the stream was interrupted.

        Raises:
            AssertionError: naming the first repeated request, with the whole journal.
        """
        entries = self.requests
        found = repeats(entries)
        if found:
            first, again = found[0]
            raise AssertionError(
                f"request #{again['seq']} repeats #{first['seq']} ({first['method']} {first['path']}, "
                f"same body); journal:\n{describe_journal(entries)}"
            )

    def unmatched_report(self) -> str | None:
        """What went unanswered (refused requests, closest interactions, differences), or None."""
        if self.recorder is None and not self._refused():
            return None  # the usual case, told without waiting for the server's thread
        return unmatched_report(self.requests)

    def _refused(self) -> bool:
        """True when the replay server refused a request since the reset. Read from this thread:
        copying the journal is one step the server's thread cannot interleave with, and an entry's
        ``outcome`` is set once, before the answer is sent."""
        return any(entry.outcome == "refused" for entry in self.server.state.journal.copy())

    def describe(self) -> str:
        """The journal, one line per request."""
        return describe_journal(self.requests)

