"""pytest plugin (``pytest11`` entry point ``ssemock``): a fake provider per test.

Fixtures:

* ``sse_mock`` — an :class:`~ssemock.testing.SSEMockFixture`: one replay server per
  session (per xdist worker) in a background thread, reset before each test. ``ssemock`` is
  the same fixture under its first name (which hides ``import ssemock`` in the test taking it).
* ``ssemock_config``, ``ssemock_cassette_dir``, ``ssemock_cassette_name`` — the defaults of a module's
  tests, the folder of their own cassettes and recordings, a test's own cassette name; and
  ``ssemock_limits``, ``ssemock_network`` — what the session's server is made with
  (:mod:`ssemock.pytest_options`: the fixtures a ``conftest.py`` overrides).
* ``ssemock_env`` — opt-in: points ``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
  ``GOOGLE_GEMINI_BASE_URL``, ``GROQ_BASE_URL`` at the server and sets placeholder API keys
  (monkeypatch; the list is each provider module's ``env``, :mod:`ssemock.providers`).
* ``ssemock_server`` — the session's :class:`~ssemock.MockServer`, made with ``ssemock_limits`` and
  ``ssemock_network``.

Marker ``@pytest.mark.ssemock(cassette=None, scenario=None, matrix=False,
timing_scale=None, target=None, match_on=None, ignore_body=None, stubs=None, chaos=None, seed=None)``, over
``ssemock_config``; with ``matrix=True`` the test runs once per conformance preset, with the preset name as
test id (or give a list of scenario names); ``chaos`` gives faults by rate drawn from ``seed``
(:mod:`ssemock.chaos`). In a record mode the scenarios and chaos shape what the test's client gets from the
provider, while the cassette keeps the provider's bytes.

In replay mode (``none``, and ``once`` when the cassette exists) a test is answered from
its own cassette, ``<test name>.yaml`` in its recording folder, or from the cassette its
marker names; a test with neither is answered by stubs alone (those it adds with ``reply`` /
``on``, from its body, a fixture or a helper; its marker's ``stubs=`` files; the session's stub
files): no bundled recording stands in. Its first request no stub answers fails the test,
naming the file looked for and how to record it.
How requests are compared (``match_on``; ``ignore_body``: volatile body fields left out, see
:mod:`ssemock.body_paths`) is described in :mod:`ssemock.testing`: a test's own recording is matched
on method, path and body, and a request that differs fails the test with the difference and how to
record it again.

Options: ``--ssemock-record=none|once|new_episodes|all`` (default ``none``),
``--ssemock-target=URL``, ``--ssemock-cassettes=DIR`` (repeatable), ``--ssemock-stubs=PATH``
(stub files or directories, repeatable), ``--ssemock-report-unused`` (see :mod:`ssemock.unused`),
``--ssemock-tls`` (the session's server over https; ``ssemock_env`` then names the authority to trust),
``--ssemock-http2`` (it answers HTTP/2 too: :mod:`ssemock.http2`); ini keys ``ssemock_cassettes``
(directories, one a line), ``ssemock_stubs``, ``ssemock_record_mode``, ``ssemock_target``,
``ssemock_timing_scale`` (default 1: recorded timing), ``ssemock_tls``, ``ssemock_http2`` (default false).

A request the server refuses (no matching interaction, unknown cassette or
scenario) fails the test with the closest interactions and their differences,
as does an exception in the server thread.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .bundled import bundled_cassettes
from .cassette import Cassette, load_cassettes
from .config import Limits
from .edge.options import NetworkOptions
from .errors import ConfigError, NoMatchError, RecorderConfigError, SSEMockError
from .matching import DEFAULT_MATCH_ON
from .mockserver import MockServer, collect_stubs
from .providers import env_vars
from .pytest_config import Settings, SSEMockConfig, config_of, marker_problem, settings_of
from .scenario import conformance_matrix
from .stubs import Stub
from .testing import CassetteLookup, SSEMockFixture
from .tls import trust_env

if TYPE_CHECKING:
    from .recorder import Recorder

__all__ = ["ENV_VARS", "MARKER", "RECORD_MODES", "SSEMockConfig", "conformance_presets"]

pytest_plugins = ["ssemock.pytest_options"]  # the fixtures a conftest.py overrides
RECORD_MODES = ("none", "once", "new_episodes", "all")
ENV_VARS = env_vars()
"""What ``ssemock_env`` sets (each provider module's ``env``); ``{url}`` is the fake provider's base URL."""
MARKER = (
    "ssemock(cassette=None, scenario=None, matrix=False, timing_scale=None, target=None, match_on=None, "
    "ignore_body=None, stubs=None, chaos=None, seed=None): the cassette and scenario the fake provider serves "
    "this test; matrix=True runs the test under every conformance preset; match_on: the request parts compared "
    "(method, path, query, body, prompt); ignore_body: body paths not compared (metadata.trace_id, "
    "messages[*].id); stubs: stub files (paths beside the test) answering before cassettes; chaos: faults by "
    "rate ('cut-mid-event=0.05', or {name: rate}) drawn from seed (an int, default 0)"
)
"""The ``ssemock`` marker as ``pytest --markers`` lists it: its keywords and what each does."""

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
    group.addoption("--ssemock-tls", action="store_true", default=None,
                    help="serve the session's fake provider over https, with ssemock's local authority")
    group.addoption("--ssemock-http2", action="store_true", default=None,
                    help="the session's fake provider answers HTTP/2 too (h2c, or ALPN h2 with --ssemock-tls)")
    group.addoption("--ssemock-report-unused", action="store_true",
                    help="after the run, list the cassettes and interactions no test played")
    parser.addini("ssemock_cassettes", "cassette directories searched after the test's own", type="paths")
    parser.addini("ssemock_stubs", "stub files or directories, tried before cassettes", type="paths")
    parser.addini("ssemock_record_mode", "record mode when --ssemock-record is not given", default="none")
    parser.addini("ssemock_target", "upstream provider URL to record from", default="")
    parser.addini("ssemock_timing_scale", "multiplies recorded times (0: no delays)", default="1")
    parser.addini("ssemock_tls", "serve the fake provider over https (ssemock's local authority)", type="bool",
                  default=False)
    parser.addini("ssemock_http2", "the fake provider answers HTTP/2 too", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
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
    if marker is None or "sse_mock" not in metafunc.fixturenames:  # taken directly or through an alias
        return
    matrix = marker.kwargs.get("matrix", False)
    if not matrix:
        return
    problem = marker_problem({"matrix": matrix})
    if problem is not None:
        pytest.fail(f"@pytest.mark.ssemock: {problem}", pytrace=False)
    names = conformance_presets() if matrix is True else [str(n) for n in matrix]
    metafunc.parametrize("sse_mock", names, ids=names, indirect=True)


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
    tls = bool(pytestconfig.getoption("ssemock_tls") or pytestconfig.getini("ssemock_tls"))
    http2 = bool(pytestconfig.getoption("ssemock_http2") or pytestconfig.getini("ssemock_http2"))
    with MockServer(list(base.values()), timing_scale=scale, limits=ssemock_limits, network=ssemock_network,
                    tls=tls, http2=http2) as server:
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


def _recorder(lookup: CassetteLookup, settings: Settings, session: _Session) -> Recorder | None:
    """The recorder this test talks to in a record mode, or None to replay.

    ``once`` replays a cassette that exists anywhere in the lookup order and records a
    missing one; ``new_episodes`` and ``all`` always go through the recorder, which
    replays or records each request as the mode says. Recordings are written to the
    test's recording folder (:func:`ssemock_cassette_dir`).
    """
    mode = session.record_mode
    if mode == "none":
        return None
    name = settings.cassette or lookup.test_name
    if mode == "once":
        try:
            lookup.find(name)
            return None
        except SSEMockError:
            pass
    target = settings.target or session.target
    if not target:
        raise RecorderConfigError(
            f"record mode {mode} needs the upstream provider: --ssemock-target URL, the ini key "
            "ssemock_target, or @pytest.mark.ssemock(target=URL)"
        )
    from .recorder import Recorder

    # The test's scenarios and chaos shape what its client gets, as on replay; the cassette keeps the upstream's bytes.
    shaped = settings.scenario or settings.chaos
    shaping = {"scenario": settings.scenario, "chaos": settings.chaos, "seed": settings.seed or 0,
               "scenarios": list(session.server.state.scenarios.values())} if shaped else {}
    return Recorder(target, lookup.recording_dir, mode=mode, cassette=name,
                    match_on=settings.match_on or DEFAULT_MATCH_ON, ignore_body=settings.ignore_body,
                    limits=session.server.limits, **shaping)


@pytest.fixture
def sse_mock(
    request: pytest.FixtureRequest, ssemock_server: MockServer, ssemock_config: Any, ssemock_cassette_dir: Path,
    ssemock_cassette_name: str,
) -> Iterator[SSEMockFixture]:
    """A fake provider for this test (:class:`~ssemock.testing.SSEMockFixture`): ``.url``,
    ``.use(cassette, scenario=...)``, ``.reply(...)``, ``.on(...)``, ``.requests``,
    ``.assert_requests(...)``, ``.assert_no_repeats()``."""
    session = request.config.stash[_SESSION]
    item = request.node
    try:
        settings = settings_of(item, config_of(ssemock_config), getattr(request, "param", None))
    except ConfigError as exc:
        raise pytest.fail.Exception(f"ssemock: {exc}", pytrace=False) from None  # the message says it all
    lookup = CassetteLookup(
        test_dir=request.path.parent, module=request.path.stem, test_name=ssemock_cassette_name,
        rootdir=request.config.rootpath, configured=session.configured, bundled=session.bundled,
        cache=session.cache, cassette_dir=Path(ssemock_cassette_dir),
    )
    handle = SSEMockFixture(ssemock_server, lookup, session.base,
                            [replace(stub, used=0) for stub in session.stubs])
    try:
        _prepare(handle, item, settings, session)
    except SSEMockError as exc:
        raise pytest.fail.Exception(f"@pytest.mark.ssemock: {exc}", pytrace=False) from None
    del session.failures[:]
    item.stash[_FIXTURE] = handle
    if handle.recorder is None:
        yield handle
    else:
        with handle.recorder:
            yield handle
    del item.stash[_FIXTURE]


@pytest.fixture
def ssemock(sse_mock: SSEMockFixture) -> SSEMockFixture:
    """:func:`sse_mock` under its first name, kept for the tests that use it (in them, the fixture
    hides ``import ssemock``)."""
    return sse_mock


def _prepare(handle: SSEMockFixture, item: pytest.Item, settings: Settings, session: _Session) -> None:
    """Point ``handle`` at the test's recorder (a record mode), its cassette, or, when it has none
    in replay mode, at its stubs alone: the first request no stub answers then fails the test with
    :func:`_no_cassette` (a test's stubs are known when its requests arrive, not before)."""
    handle.recorder = _recorder(handle.lookup, settings, session)
    cassette = None
    if handle.recorder is None:
        named = settings.cassette
        cassette = handle.lookup.find(named) if named is not None else handle.lookup.own()
        if settings.stubs:  # the marker's files, beside the test
            base = Path(str(item.path)).parent
            handle.stubs.add(*collect_stubs([p if Path(p).is_absolute() else base / p for p in settings.stubs]))
        handle.stubs_only = cassette is None  # no bundled recording stands in for the test's own
    scale = session.timing_scale if settings.timing_scale is None else settings.timing_scale
    handle.reset(cassette, scenario=settings.scenario, timing_scale=scale, match_on=settings.match_on,
                 ignore_body=settings.ignore_body, chaos=settings.chaos, seed=settings.seed)


def _record_command(item: pytest.Item, session: _Session, mode: str = "once") -> str:
    """The command line recording ``item``'s cassette in ``mode``."""
    target = session.target or "URL"
    return f"pytest --ssemock-record={mode} --ssemock-target={target} '{item.nodeid}'"


def _no_cassette(item: pytest.Item, lookup: CassetteLookup, session: _Session) -> str:
    """Why a test without a cassette cannot be answered in replay mode but by stubs, and what to do."""
    return (
        f"ssemock: {item.name} has no cassette: {lookup.default_path} does not exist and the test names none "
        f"(record mode {session.record_mode}: nothing is recorded, no request reaches the network).\n"
        f"Record it: {_record_command(item, session)}\n"
        "or name one: @pytest.mark.ssemock(cassette=NAME), a file beside the test, a configured cassette "
        f"or a bundled one ({', '.join(sorted(session.bundled))}).\n"
        "Or answer it with stubs: sse_mock.reply(...) or sse_mock.on(...) (in the test, a fixture or a helper), "
        "@pytest.mark.ssemock(stubs=FILE) or --ssemock-stubs PATH."
    )


def _ignoring(paths: tuple[str, ...]) -> str:
    """``", ignoring metadata.trace_id"`` for the re-record hint (``""``: no body path ignored)."""
    return f", ignoring {', '.join(paths)}" if paths else ""


def _rerecord_hint(item: pytest.Item, handle: SSEMockFixture, session: _Session) -> str | None:
    """How to record again a recording the test's requests no longer match, or None."""
    cassette = handle.cassette
    refused = [e for e in handle.requests if (e.get("error") or {}).get("type") == NoMatchError.code]
    if not refused or cassette is None or cassette.path is None or not handle.lookup.recorded_here(cassette):
        return None
    return (
        f"ssemock: the request differs from the recording {cassette.path} (compared on "
        f"{', '.join(handle.match_on)}{_ignoring(handle.ignore_body)}). If the change is intended, record it again: "
        "delete the file and run\n"
        f"  {_record_command(item, session)}\n"
        f"or add the new request beside the old ones: {_record_command(item, session, 'new_episodes')}"
    )


@pytest.fixture
def ssemock_env(sse_mock: SSEMockFixture, ssemock_server: MockServer,
                monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point the usual SDK environment variables at the fake provider; returns what was set.

    Over https (``--ssemock-tls``, ini ``ssemock_tls``) it also sets what makes the usual clients trust
    ssemock's local authority without code changes: ``SSL_CERT_FILE`` (Python's ssl, httpx and the SDKs
    built on it), ``REQUESTS_CA_BUNDLE`` (requests) and ``NODE_EXTRA_CA_CERTS`` (Node.js), each the
    authority's certificate (:func:`ssemock.tls.trust_env`).
    """
    values = {name: value.format(url=sse_mock.url) for name, value in ENV_VARS.items()}
    if ssemock_server.tls is not None:
        values.update(trust_env(ssemock_server.tls))
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
        if handle.stubs_only and handle.cassette is None and session is not None:  # a cassette would have answered
            parts.append(_no_cassette(item, handle.lookup, session))
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
