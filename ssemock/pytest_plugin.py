"""pytest plugin (``pytest11`` entry point ``ssemock``): a fake provider per test.

Fixtures:

* ``ssemock`` — an :class:`~ssemock.testing.SSEMockFixture`: one replay server per
  session (per xdist worker) in a background thread, reset before each test.
* ``ssemock_env`` — opt-in: points ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
  ``GOOGLE_GEMINI_BASE_URL``, ``GROQ_BASE_URL`` at the server and sets placeholder API keys
  (monkeypatch; the list is each provider module's ``env``, :mod:`ssemock.providers`).
* ``ssemock_server`` — the session's :class:`~ssemock.MockServer`, made with ``ssemock_limits`` and
  ``ssemock_network`` (:mod:`ssemock.pytest_options`: the fixtures a ``conftest.py`` overrides).

Marker ``@pytest.mark.ssemock(cassette=None, scenario=None, matrix=False,
timing_scale=None, target=None, match_on=None, stubs=None)``; with ``matrix=True`` the test runs once
per conformance preset, with the preset name as test id (or give a list of scenario names).

In replay mode (``none``, and ``once`` when the cassette exists) a test is answered from
its own cassette, ``cassettes/<test module>/<test name>.yaml`` beside the test, or from
the cassette its marker names; a test with neither fails set-up, naming the file looked
for and how to record it — unless stubs answer it: a test that stubs inline (its code reads
``ssemock.reply`` or ``ssemock.on``), one marked ``stubs=``, or any test of a session given
stub files; then only stubs answer (no bundled recording stands in).
How requests are compared (``match_on``) is described in
:mod:`ssemock.testing`: a test's own recording is matched on method, path and body, and a
request that differs fails the test with the difference and how to record it again.

Options: ``--ssemock-record=none|once|new_episodes|all`` (default ``none``),
``--ssemock-target=URL``, ``--ssemock-cassettes=DIR`` (repeatable), ``--ssemock-stubs=PATH``
(stub files or directories, repeatable), ``--ssemock-report-unused`` (see :mod:`ssemock.unused`); ini keys
``ssemock_cassettes`` (directories, one a line), ``ssemock_stubs``, ``ssemock_record_mode``,
``ssemock_target``, ``ssemock_timing_scale`` (default 1: recorded timing).

A request the server refuses (no matching interaction, unknown cassette or
scenario) fails the test with the closest interactions and their differences,
as does an exception in the server thread.
"""

from __future__ import annotations

import functools
import logging
import re
import traceback
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

import pytest

from .bundled import bundled_cassettes
from .cassette import Cassette, load_cassettes
from .config import Limits
from .edge.options import NetworkOptions
from .errors import ConfigError, NoMatchError, RecorderConfigError, SSEMockError, short_repr
from .matching import DEFAULT_MATCH_ON, check_match_on
from .mockserver import MockServer, check_timing_scale, collect_stubs
from .providers import env_vars
from .scenario import conformance_matrix
from .stubs import Stub
from .testing import CassetteLookup, SSEMockFixture

if TYPE_CHECKING:
    from .recorder import Recorder

__all__ = ["ENV_VARS", "RECORD_MODES", "conformance_presets"]

pytest_plugins = ["ssemock.pytest_options"]  # the option fixtures
RECORD_MODES = ("none", "once", "new_episodes", "all")
MARKER_ARGS = ("cassette", "scenario", "matrix", "timing_scale", "target", "match_on", "stubs")
ENV_VARS = env_vars()
"""What ``ssemock_env`` sets (each provider module's ``env``); ``{url}`` is the fake provider's base URL."""

_FIXTURE = pytest.StashKey[SSEMockFixture]()
_SESSION = pytest.StashKey["_Session"]()
_SERVER_THREAD = "ssemock-server"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ssemock", "ssemock: fake SSE providers (record and replay)")
    group.addoption(
        "--ssemock-record", choices=RECORD_MODES, default=None, metavar="MODE",
        help="record mode: none (default: replay only, never reach the network), once, new_episodes, all",
    )
    group.addoption("--ssemock-target", default=None, metavar="URL", help="upstream provider to record from")
    group.addoption(
        "--ssemock-cassettes", action="append", default=[], metavar="DIR",
        help="cassette directory searched after the test's own cassettes (repeatable)",
    )
    group.addoption(
        "--ssemock-stubs", action="append", default=[], metavar="PATH",
        help="stub file or directory: synthesized answers tried before cassettes (repeatable)",
    )
    group.addoption("--ssemock-report-unused", action="store_true",
                    help="after the run, list the cassettes and interactions no test played")
    parser.addini("ssemock_cassettes", "cassette directories searched after the test's own", type="paths")
    parser.addini("ssemock_stubs", "stub files or directories, tried before cassettes", type="paths")
    parser.addini("ssemock_record_mode", "record mode when --ssemock-record is not given", default="none")
    parser.addini("ssemock_target", "upstream provider URL to record from", default="")
    parser.addini("ssemock_timing_scale", "multiplies recorded times (0: no delays)", default="1")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "ssemock(cassette=None, scenario=None, matrix=False, timing_scale=None, target=None, match_on=None, "
        "stubs=None): "
        "the cassette and scenario the fake provider serves this test; matrix=True runs the test "
        "under every conformance preset; match_on: the request parts compared (method, path, query, body); "
        "stubs: stub files (paths beside the test) answering before cassettes",
    )
    mode = config.getoption("ssemock_record") or config.getini("ssemock_record_mode")
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"ssemock_record_mode: {mode!r} is not one of {', '.join(RECORD_MODES)}")
    if config.getoption("ssemock_report_unused"):
        from .unused import UnusedReport

        config.pluginmanager.register(UnusedReport(config), "ssemock-report-unused")


def conformance_presets() -> list[str]:
    """The conformance-matrix presets (see :func:`ssemock.scenario.conformance_matrix`):
    the bundled scenarios a correct client gets through with the same events or payloads,
    ``torture`` among them (several triggers at once, which catches readers every single preset misses)."""
    return conformance_matrix()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("ssemock")
    if marker is None or "ssemock" not in metafunc.fixturenames:
        return
    matrix = marker.kwargs.get("matrix", False)
    if not matrix:
        return
    problem = marker_problem({"matrix": matrix})
    if problem is not None:
        pytest.fail(f"@pytest.mark.ssemock: {problem}", pytrace=False)
    names = conformance_presets() if matrix is True else [str(n) for n in matrix]
    metafunc.parametrize("ssemock", names, ids=names, indirect=True)


@dataclass
class _Session:
    """What every test of a session (or xdist worker) shares."""

    server: MockServer
    configured: dict[str, Cassette]
    bundled: dict[str, Cassette]
    base: dict[str, Cassette]
    timing_scale: float
    record_mode: str
    target: str | None
    cache: dict[Path, tuple[float, Cassette]] = field(default_factory=dict)
    stubs: list[Stub] = field(default_factory=list)
    failures: list[logging.LogRecord] = field(default_factory=list)


class _ServerFailures(logging.Handler):
    """Keeps the errors logged by aiohttp in the server thread, to fail the test that caused them."""

    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName == _SERVER_THREAD:
            self.into.append(record)


@pytest.fixture(scope="session")
def ssemock_server(pytestconfig: pytest.Config, ssemock_limits: Limits,
                   ssemock_network: NetworkOptions) -> Iterator[MockServer]:
    """The session's replay server (one per xdist worker), running in a background thread."""
    dirs = [Path(d) for d in (*pytestconfig.getoption("ssemock_cassettes"), *pytestconfig.getini("ssemock_cassettes"))]
    try:
        configured: dict[str, Cassette] = {}
        for directory in dirs:
            configured.update(load_cassettes(directory))
        bundled = load_cassettes(bundled_cassettes())
        stubs = collect_stubs([*pytestconfig.getoption("ssemock_stubs"), *pytestconfig.getini("ssemock_stubs")])
        scale = float(pytestconfig.getini("ssemock_timing_scale"))
    except (SSEMockError, ValueError) as exc:
        raise pytest.UsageError(f"ssemock: {exc}") from None
    base = {**configured, **{k: v for k, v in bundled.items() if k not in configured}}
    mode = pytestconfig.getoption("ssemock_record") or pytestconfig.getini("ssemock_record_mode")
    target = pytestconfig.getoption("ssemock_target") or pytestconfig.getini("ssemock_target") or None
    with MockServer(list(base.values()), timing_scale=scale, limits=ssemock_limits, network=ssemock_network) as server:
        session = _Session(server, configured, bundled, base, scale, mode, target, stubs=stubs)
        handler = _ServerFailures(session.failures)
        logger = logging.getLogger("aiohttp.server")
        logger.addHandler(handler)
        pytestconfig.stash[_SESSION] = session
        try:
            yield server
        finally:
            logger.removeHandler(handler)
            del pytestconfig.stash[_SESSION]


def _test_name(item: pytest.Item) -> str:
    """The default cassette name (pytest-recording): ``test_x`` or ``TestClass.test_x``; in
    parametrized tests every character other than letters, digits, ``.``, ``_``, ``-`` becomes
    ``-`` (``test_x[a b]`` → ``test_x-a-b-``)."""
    cls = getattr(item, "cls", None)
    name = f"{cls.__name__}.{item.name}" if cls is not None else item.name
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


def _recorder(lookup: CassetteLookup, options: dict[str, Any], session: _Session) -> Recorder | None:
    """The recorder this test talks to in a record mode, or None to replay.

    ``once`` replays a cassette that exists anywhere in the lookup order and records a
    missing one; ``new_episodes`` and ``all`` always go through the recorder, which
    replays or records each request as the mode says. Recordings are written to
    ``cassettes/<test module>/<cassette name>.yaml`` beside the test.
    """
    mode = session.record_mode
    if mode == "none":
        return None
    name = str(options.get("cassette") or lookup.test_name)
    if mode == "once":
        try:
            lookup.find(name)
            return None
        except SSEMockError:
            pass
    target = options.get("target") or session.target
    if not target:
        raise RecorderConfigError(
            f"record mode {mode} needs the upstream provider: --ssemock-target URL, the ini key "
            "ssemock_target, or @pytest.mark.ssemock(target=URL)"
        )
    from .recorder import Recorder

    match_on = options.get("match_on")
    return Recorder(
        str(target), lookup.recording_dir, mode=mode, cassette=name,
        match_on=check_match_on(match_on) if match_on is not None else DEFAULT_MATCH_ON, limits=session.server.limits,
    )


def _marker_options(item: pytest.Item) -> dict[str, Any]:
    marker = item.get_closest_marker("ssemock")
    if marker is None:
        return {}
    if marker.args:
        pytest.fail("@pytest.mark.ssemock takes keyword arguments only: " + ", ".join(MARKER_ARGS), pytrace=False)
    unknown = sorted(set(marker.kwargs) - set(MARKER_ARGS))
    if unknown:
        pytest.fail(
            f"@pytest.mark.ssemock: unknown argument {unknown[0]!r}; valid: {', '.join(MARKER_ARGS)}", pytrace=False
        )
    problem = marker_problem(marker.kwargs)
    if problem is not None:
        pytest.fail(f"@pytest.mark.ssemock: {problem}", pytrace=False)
    return dict(marker.kwargs)


def _names(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, str) and v for v in value)


_MARKER_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "cassette": ("a cassette name (str)", lambda v: isinstance(v, str) and bool(v)),
    "scenario": ("scenario names (str, comma-separated)", lambda v: isinstance(v, str) and bool(v)),
    "target": ("a provider URL (str)", lambda v: isinstance(v, str) and bool(v)),
    "matrix": ("True, False or a list of scenario names", lambda v: isinstance(v, bool) or _names(v)),
    "stubs": ("a stub file path (str) or a list of them ([]: the test's fixtures or helpers add stubs)",
              lambda v: (isinstance(v, str) and bool(v)) or v == [] or _names(v)),
}


def marker_problem(kwargs: Mapping[str, Any]) -> str | None:
    """What is wrong with the ``@pytest.mark.ssemock`` arguments ``kwargs`` (one line), or None.

    Each argument may be None (the default); otherwise ``cassette``, ``scenario`` and ``target``
    are non-empty strings, ``matrix`` a bool or scenario names, ``match_on`` known matcher names,
    ``timing_scale`` a finite number >= 0 (as ``MockServer`` and ``serve --timing-scale`` check).
    """
    for name, value in kwargs.items():
        if value is None:
            continue
        try:
            if name == "timing_scale":
                check_timing_scale(value)
            elif name == "match_on":
                check_match_on(value)  # its messages name match_on
            elif name in _MARKER_TYPES and not _MARKER_TYPES[name][1](value):
                return f"{name}: expected {_MARKER_TYPES[name][0]}, got {short_repr(value)}"
        except ConfigError as exc:
            return str(exc) if name == "match_on" else f"{name}: {exc}"
    return None


@pytest.fixture
def ssemock(request: pytest.FixtureRequest, ssemock_server: MockServer) -> Iterator[SSEMockFixture]:
    """A fake provider for this test: ``.url``, ``.use(cassette, scenario=...)``, ``.requests``,
    ``.assert_requests(...)``, ``.assert_no_repeats()``."""
    session = request.config.stash[_SESSION]
    item = request.node
    options = _marker_options(item)
    lookup = CassetteLookup(
        test_dir=request.path.parent, module=request.path.stem, test_name=_test_name(item),
        rootdir=request.config.rootpath, configured=session.configured, bundled=session.bundled,
        cache=session.cache,
    )
    handle = SSEMockFixture(ssemock_server, lookup, session.base,
                            [replace(stub, used=0) for stub in session.stubs])
    scenarios = [s for s in (options.get("scenario"), getattr(request, "param", None)) if s]
    scale = options.get("timing_scale")
    problem = None
    try:
        handle.recorder = _recorder(lookup, options, session)
        cassette = None
        if handle.recorder is None:
            named = options.get("cassette")
            cassette = lookup.find(named) if named is not None else lookup.own()
        if handle.recorder is None and cassette is None:
            handle.stubs_only = _stubbed(item, options, session, handle)
        if handle.recorder is None and cassette is None and not handle.stubs_only:
            problem = _no_cassette(item, lookup, session)
        else:
            handle.reset(
                cassette, scenario=",".join(scenarios) or None,
                timing_scale=session.timing_scale if scale is None else float(scale),
                match_on=options.get("match_on"),
            )
    except SSEMockError as exc:
        problem = f"@pytest.mark.ssemock: {exc}"
    if problem:
        pytest.fail(problem, pytrace=False)
    del session.failures[:]
    item.stash[_FIXTURE] = handle
    if handle.recorder is None:
        yield handle
    else:
        with handle.recorder:
            yield handle
    del item.stash[_FIXTURE]


INLINE_STUB_NAMES = frozenset({"reply", "on"})
"""A test whose code reads one of these attributes (``ssemock.reply``, ``ssemock.on``) stubs inline."""


def _code_names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names


def _stubbed(item: pytest.Item, options: Mapping[str, Any], session: _Session, handle: SSEMockFixture) -> bool:
    """True when stubs answer ``item`` (it has no cassette): the session has stub files, the
    marker names some (added to ``handle``), or the test function's code uses the inline API."""
    named = options.get("stubs")
    if named is not None:  # stubs=[]: the test adds its stubs from a helper or a fixture
        base = Path(str(item.path)).parent
        paths = [named] if isinstance(named, str) else list(named)
        handle.stubs.add(*collect_stubs([p if Path(p).is_absolute() else base / p for p in paths]))
        return True
    return bool(session.stubs) or _stubs_inline(getattr(item, "function", None))


@functools.cache
def _stubs_inline(function: Any) -> bool:
    """True when the code of ``function`` (a test) reads :data:`INLINE_STUB_NAMES`; looked at once per function."""
    code = getattr(function, "__code__", None)
    return isinstance(code, CodeType) and bool(_code_names(code) & INLINE_STUB_NAMES)


def _record_command(item: pytest.Item, session: _Session, mode: str = "once") -> str:
    """The command line recording ``item``'s cassette in ``mode``."""
    target = session.target or "URL"
    return f"pytest --ssemock-record={mode} --ssemock-target={target} '{item.nodeid}'"


def _no_cassette(item: pytest.Item, lookup: CassetteLookup, session: _Session) -> str:
    """Why a test without a cassette cannot run in replay mode, and what to do."""
    return (
        f"ssemock: {item.name} has no cassette: {lookup.default_path} does not exist and the test names none "
        f"(record mode {session.record_mode}: nothing is recorded, no request reaches the network).\n"
        f"Record it: {_record_command(item, session)}\n"
        "or name one: @pytest.mark.ssemock(cassette=NAME), a file beside the test, a configured cassette "
        f"or a bundled one ({', '.join(sorted(session.bundled))}).\n"
        "Or answer with stubs: @pytest.mark.ssemock(stubs=FILE) or --ssemock-stubs PATH; a test whose own code "
        "calls ssemock.reply / ssemock.on needs no cassette, but stubs added from a helper or a fixture are not "
        "seen here: mark such a test @pytest.mark.ssemock(stubs=[])"
    )


def _rerecord_hint(item: pytest.Item, handle: SSEMockFixture, session: _Session) -> str | None:
    """How to record again a recording the test's requests no longer match, or None."""
    cassette = handle.cassette
    refused = [e for e in handle.requests if (e.get("error") or {}).get("type") == NoMatchError.code]
    if not refused or cassette is None or cassette.path is None or not handle.lookup.recorded_here(cassette):
        return None
    return (
        f"ssemock: the request differs from the recording {cassette.path} (compared on "
        f"{', '.join(handle.match_on)}). If the change is intended, record it again: delete the file and run\n"
        f"  {_record_command(item, session)}\n"
        f"or add the new request beside the old ones: {_record_command(item, session, 'new_episodes')}"
    )


@pytest.fixture
def ssemock_env(ssemock: SSEMockFixture, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point the usual SDK environment variables at the fake provider; returns what was set."""
    values = {name: value.format(url=ssemock.url) for name, value in ENV_VARS.items()}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def _failure_report(item: pytest.Item) -> str | None:
    handle = item.stash.get(_FIXTURE, None)
    if handle is None:
        return None
    parts = []
    session = item.config.stash.get(_SESSION, None)
    if session is not None and session.failures:
        for record in session.failures:
            text = record.getMessage()
            if record.exc_info is not None:
                text += "\n" + "".join(traceback.format_exception(*record.exc_info))
            parts.append(f"ssemock: the fake provider failed while serving a request: {text}")
    report = handle.unmatched_report()
    if report:
        parts.append(report)
        hint = _rerecord_hint(item, handle, session) if session is not None else None
        if hint:
            parts.append(hint)
    return "\n".join(parts) or None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Fail the test when the fake provider refused a request or failed serving one."""
    try:
        yield
    except Exception as exc:
        report = _failure_report(item)
        if report:
            exc.add_note(report)
        raise
    report = _failure_report(item)
    if report:
        pytest.fail(report, pytrace=False)
