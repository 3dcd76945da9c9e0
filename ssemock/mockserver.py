"""``MockServer``: the replay server as a context manager, for tests and scripts.

``with MockServer(...) as server`` runs it in a background thread with its own
event loop, so synchronous clients (``openai.OpenAI``, ``requests``) work;
``async with MockServer(...)`` runs it in the current event loop.
"""

from __future__ import annotations

import asyncio
import copy
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from aiohttp import web

from .background import BackgroundLoop
from .body_paths import check_paths
from .bundled import bundled_cassettes, bundled_scenarios
from .cassette import Cassette, load, load_cassettes
from .cassette.read import check_times
from .changes import Change, apply_change, prepare_change, stub_summary
from .chaos import Chaos
from .config import Limits, replace_fields
from .edge import NetworkOptions, port_hint, start_runner
from .edge.cors import origin_names
from .errors import CassetteError, CassetteNotFoundError, ConfigError, ScenarioError, ServerError, short_repr
from .http2 import front as h2_front
from .journal_query import Journal
from .limits import claim_name
from .matching import DEFAULT_MATCH_ON, check_match_on
from .names import check_names_in, scenario_names
from .scanner.own_rules import default_scanner
from .scenario import Scenario, load_scenarios
from .server import ServerState, create_app
from .stubs import StubBook
from .tls import TLSFiles, local_authority, server_context

if TYPE_CHECKING:
    from .stubs import Stub

__all__ = ["MockServer", "check_timing_scale", "collect_cassettes", "collect_scenarios", "collect_stubs"]

T = TypeVar("T")
EXPOSURE = ("anyone who can reach it can read the journal (/_ssemock/requests), which holds every prompt "
            "received and may hold keys, and clear it")
CassetteSource = str | os.PathLike[str] | Cassette
ScenarioSource = str | os.PathLike[str] | Scenario
StubSource: TypeAlias = "str | os.PathLike[str] | Stub | Iterable[Stub]"


def _sources(sources: Any, bundled: Path) -> list[Any]:
    """None: the bundled directory; one path or object: a list of it; else the iterable as a list."""
    if sources is None:
        return [bundled]
    if isinstance(sources, (str, os.PathLike, Cassette, Scenario)):
        return [sources]
    return list(sources)


def collect_cassettes(sources: Iterable[CassetteSource] | CassetteSource | None) -> dict[str, Cassette]:
    """Cassettes by name from directories, files and :class:`Cassette` objects (one or several).

    None means the bundled cassettes. A :class:`Cassette` object replaces a cassette of the same
    name; two files giving one name are refused.

    Raises:
        CassetteError: a malformed file, two files (in any directories) giving one name (the
            message names both), or a :class:`Cassette` object with a time that is not a finite
            number of seconds from 0 to 24 h.
        CassetteNotFoundError: a file or directory does not exist.
    """
    found: dict[str, Cassette] = {}
    claimed: dict[str, str] = {}
    for source in _sources(sources, bundled_cassettes()):
        if isinstance(source, Cassette):
            check_times(source)
            found[source.name] = source
            continue
        if not Path(source).exists():
            raise CassetteNotFoundError(str(source), path=True)
        loaded = load_cassettes(source).values() if Path(source).is_dir() else [load(source)]
        for cassette in loaded:
            claim_name(claimed, cassette.name, cassette.path, CassetteError, "cassette")
            found[cassette.name] = cassette
    return found


def collect_scenarios(sources: Iterable[ScenarioSource] | ScenarioSource | None) -> dict[str, Scenario]:
    """Scenarios by name from directories, files and :class:`Scenario` objects (None: bundled).

    A scenario file may replace a bundled preset of the same name, and a :class:`Scenario`
    object any scenario; two other files giving one name are refused.

    Raises:
        ScenarioError: a malformed file, or two files (in any directories) giving one name:
            the message names both.
    """
    found: dict[str, Scenario] = {}
    claimed: dict[str, str] = {}
    bundled = bundled_scenarios()
    for source in _sources(sources, bundled):
        if isinstance(source, Scenario):
            found[source.name] = source
            continue
        directory = Path(source).is_dir()
        loaded = load_scenarios(source).values() if directory else [Scenario.load(source)]
        presets = directory and Path(source).resolve() == bundled.resolve()  # presets may be replaced
        for scenario in loaded:
            if not presets:
                claim_name(claimed, scenario.name, scenario.source, ScenarioError, "scenario")
            found[scenario.name] = scenario
    return found


def collect_stubs(sources: Iterable[StubSource] | StubSource | None) -> list[Stub]:
    """Stubs from stub files, directories (every ``*.yaml`` under it, in name order), :class:`Stub`
    objects and chains (``ssemock.stubs.on(...)...``), in the order given; None: no stubs.

    Raises:
        StubError: a file is missing or invalid (the message names the file and the field).
    """
    if sources is None:
        return []
    from .stubs import Stub, load_stubs  # a server without stubs imports none of their modules

    if isinstance(sources, (str, os.PathLike, Stub)):
        sources = [sources]
    found: list[Stub] = []
    for source in sources:
        if isinstance(source, Stub):
            found.append(source)
        elif isinstance(source, (str, os.PathLike)):
            found += load_stubs(source)
        else:
            found += list(source)
    return found


def check_options(*, port: int, timing_scale: float, match_on: Sequence[str]) -> None:
    """Raise :class:`~ssemock.ConfigError` for a port outside 0-65535, a timing scale that is
    not a finite number >= 0, or an empty or unknown list of matchers."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"port must be an integer 0-65535, got {port!r}")
    check_timing_scale(timing_scale)
    check_match_on(match_on)


def check_timing_scale(timing_scale: Any) -> float:
    """``timing_scale`` if it is a finite number >= 0 (0: no delays); else raise :class:`~ssemock.ConfigError`."""
    if isinstance(timing_scale, bool) or not isinstance(timing_scale, (int, float)) or not (
        math.isfinite(timing_scale) and timing_scale >= 0
    ):
        raise ConfigError(f"timing scale must be a finite number >= 0, got {short_repr(timing_scale)}")
    return float(timing_scale)


def check_seed(seed: Any) -> int:
    """``seed`` if it is an integer; else raise :class:`~ssemock.ConfigError`."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed must be an integer, got {short_repr(seed)}")
    return seed


def check_names(state: ServerState) -> None:
    """Raise :class:`~ssemock.ConfigError` when the default scenario or cassette does not exist."""
    check_names_in(state.scenario, state.scenarios)
    if state.cassette is not None and state.cassette not in state.cassettes:
        known = ", ".join(sorted(state.cassettes)) or "(none)"
        raise ConfigError(f"no cassette named {state.cassette!r}; known: {known}")


class MockServer:
    """A replay server on ``host:port`` (port 0 picks a free one).

    Args:
        cassettes: a directory, a cassette file or a :class:`Cassette`, or a list of
            them; None (default) serves the bundled real-world cassettes.
        scenarios: a directory, a scenario file or a :class:`Scenario`, or a list of
            them; None (default) loads the bundled presets.
        scenario: default scenario names, a tuple (``("crlf", "split-bytes")``; one name may be a string,
            and a comma-separated string is split as ``--scenario`` is); None: none.
        host: address to bind (default ``127.0.0.1``).
        port: TCP port (default 0: a free port).
        match_on: matcher names (default ``("method", "path", "body")``; ``("prompt",)`` matches chat
            requests as stubs are matched: model, last user message, turn).
        ignore_body: body paths the ``body`` matcher ignores in every cassette (``["metadata.trace_id",
            "messages[*].id"]``; see :mod:`ssemock.body_paths`), besides each cassette's own ``match:``.
        timing_scale: multiplies recorded times (1 = as recorded, 0 = no delays).
        seed: seeds the scenarios' random choices (journaled with every request;
            the same seed replays the same bytes and chunk boundaries).
        limits: the bounds on a request (:class:`~ssemock.Limits`: ``max_request_body``,
            ``max_json_depth``, ``max_scenario_growth``, ``journal_capacity``, ``journal_body_limit``,
            with their units and defaults).
        network: timeouts, listen backlog, stop ``grace`` and ``allowed_hosts``
            (:class:`~ssemock.NetworkOptions`); :meth:`stop` gives requests in progress ``grace``
            seconds (journal outcome ``stopped``).
        stubs: stub files or directories, :class:`~ssemock.stubs.Stub` objects or chains, or a
            list of them (see :func:`collect_stubs`); consulted before the cassettes.
        cors_origins: origins (``https://app.example:8443``) whose web pages may read replay
            answers, besides loopback origins (``http://localhost:3000``, any port), which always
            may; ``"*"``: any web page (see :mod:`ssemock.edge.cors`).
        chaos: faults by rate (:mod:`ssemock.chaos`): a :class:`~ssemock.chaos.Chaos`, rules as ``--chaos``
            takes them (``"cut-mid-event=0.05,http-429=0.02"``, ``"path=/v1/chat/*:http-429=0.1"``, or a list of
            them), or a mapping ``{"cut-mid-event": 0.05}``; drawn from ``seed`` and each request's ``seq``, so the
            same seed and requests give the same faults (the journal's ``fault`` and ``draw``); None: none.
        tls: serve over https: True with ssemock's local authority (:func:`ssemock.tls.local_authority`; its
            certificate is ``tls.ca``, for the client's ``SSL_CERT_FILE`` or ``verify=``), or a
            :class:`~ssemock.tls.TLSFiles` of your own; False (default): plain http.
        http2: answer HTTP/2 too, on the same port (:mod:`ssemock.http2`; needs the ``h2`` package): with
            ``tls``, clients that offer ``h2`` by ALPN get it, the others HTTP/1.1; without, clients with prior
            knowledge (h2c: ``curl --http2-prior-knowledge``) get it. False (default): HTTP/1.1 only.
        **keywords: the fields of ``limits`` and ``network`` one by one (``max_request_body=N``),
            as before the records; each replaces that field of the record given.

    Attributes:
        url: ``http://HOST:PORT`` once started.

    Raises:
        CassetteError, ScenarioError, StubError: a cassette, scenario or stub file is malformed.
        ConfigError: an invalid option (port, timing scale, matcher, body path, limit, empty or unknown default
            scenario or cassette name, timeout, backlog, grace, host name, origin, chaos rule or rate).
        TypeError: a keyword that is no parameter nor field of ``limits`` or ``network``.
        ServerError: the server could not start (e.g. the port is taken).
    """

    def __init__(
        self,
        cassettes: Iterable[CassetteSource] | CassetteSource | None = None,
        *,
        scenarios: Iterable[ScenarioSource] | ScenarioSource | None = None,
        scenario: Sequence[str] | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        match_on: Sequence[str] = DEFAULT_MATCH_ON,
        ignore_body: Sequence[str] = (),
        timing_scale: float = 1.0,
        seed: int = 0,
        limits: Limits = Limits(),
        network: NetworkOptions = NetworkOptions(),
        stubs: Iterable[StubSource] | StubSource | None = None,
        cors_origins: Iterable[str] = (),
        tls: bool | TLSFiles = False,
        http2: bool = False,
        chaos: Chaos | str | Sequence[str] | Mapping[str, float] | None = None,
        **keywords: Any,
    ) -> None:
        limits, network = replace_fields("MockServer", "serve", keywords, limits, network)
        check_seed(seed)
        rates = Chaos.of(chaos)
        check_options(port=port, timing_scale=timing_scale, match_on=match_on)
        origins = origin_names(cors_origins)
        self.network = network
        self.state = ServerState(
            cassettes=collect_cassettes(cassettes),
            scenarios=collect_scenarios(scenarios),
            scenario=scenario_names(scenario),
            match_on=tuple(match_on),
            ignore_body=check_paths(ignore_body, "ignore_body"),
            timing_scale=timing_scale,
            seed=seed,
            limits=limits,
            stubs=StubBook(collect_stubs(stubs)),
            cors_origins=origins,
            chaos=rates,
        )
        check_names(self.state)
        rates.check(self.state.scenarios)
        self.host = host
        self.port = port
        self.tls: TLSFiles | None = local_authority() if tls is True else tls or None
        self._context = None if self.tls is None else server_context(self.tls, http2=http2)
        self.http2 = http2
        self._front = None if not http2 else h2_front(limits.max_request_body, network.header_timeout)
        self._runner: web.AppRunner | None = None
        self._background = BackgroundLoop("ssemock-server", self.start, self.stop)

    @property
    def limits(self) -> Limits:
        """The bounds this server keeps (:class:`~ssemock.Limits`)."""
        return self.state.limits

    @property
    def url(self) -> str:
        """The base URL, ``http://HOST:PORT`` (``http://[::1]:PORT`` for an IPv6 address; ``https://`` with TLS)."""
        if self._runner is None:
            raise ServerError("MockServer is not running")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'http' if self.tls is None else 'https'}://{host}:{self.port}"

    @property
    def requests(self) -> Journal:
        """A copy of the journal: one dict per request received (:meth:`JournalEntry.to_json
        <ssemock.journal.JournalEntry.to_json>`), oldest first, at most
        ``limits.journal_capacity`` (see :mod:`ssemock.journal`); a list, which
        :meth:`~ssemock.journal_query.Journal.filter` narrows (``server.requests.filter(outcome="cut")``)."""
        return Journal(self.call(lambda: copy.deepcopy([entry.to_json() for entry in self.state.journal])))

    def reset(self) -> None:
        """Clear the journal and play counts."""
        self.call(self.state.reset)

    # ---- changes while running: the admin routes /_ssemock/stubs and /_ssemock/scenario -----------------
    def add_stubs(self, document: Mapping[str, Any] | str) -> list[str]:
        """Add the stubs of a stub file while the server runs (``POST /_ssemock/stubs``): they answer the next
        matching requests, tried before every other stub (the latest addition first).

        Args:
            document: a stub file's data (``{"ssemock_stubs": 1, "stubs": [...]}``) or its YAML text.

        Returns:
            The names of the stubs added (one per step of a tool loop), in the order they are tried.

        Raises:
            StubError: the stub file loader refuses it (naming the field, the file being
                ``MockServer.add_stubs``); nothing is added.
        """
        source = "MockServer.add_stubs"
        change = Change("stubs.add", text=document, source=source) if isinstance(document, str) else Change(
            "stubs.add", data=document, source=source)
        return list(self.call(prepare_change(self.state, change))["stubs"])  # read here, made in the server

    def clear_stubs(self) -> int:
        """Remove the stubs added while running (:meth:`add_stubs`, ``POST /_ssemock/stubs``) and return how
        many; those given as ``stubs=`` stay."""
        return int(self.call(lambda: apply_change(self.state, Change("stubs.clear")))["cleared"])

    @property
    def stubs(self) -> list[dict[str, Any]]:
        """The stubs served, in the order they are tried (``GET /_ssemock/stubs``): one dict each, ``name``,
        ``match`` (its conditions as text), ``source``, ``times``, ``used``, ``added`` (true: added while running)."""
        return self.call(lambda: stub_summary(self.state))

    @property
    def scenario(self) -> tuple[str, ...]:
        """The default scenario names, applied to a request that names none (``()``: faithful replay)."""
        return self.state.scenario

    def set_scenario(self, scenario: Sequence[str] | str | Mapping[str, Any] | Scenario) -> tuple[str, ...]:
        """Set the default scenario while the server runs (``PUT /_ssemock/scenario``).

        Args:
            scenario: served scenario names (a tuple, or one string, comma-separated as in
                ``X-SSEMock-Scenario``; ``()``: none); or a scenario file's data (a mapping with ``steps``,
                ``name`` default ``runtime``) or a :class:`Scenario`, then also served under its name.

        Returns:
            The default scenario names now.

        Raises:
            ScenarioError: an invalid scenario document (naming the field), or a document whose name is that
                of a scenario loaded from a file.
            UnknownScenarioError: a name not served; TooManyScenariosError: more than 8 names.
        """
        data = list(scenario) if isinstance(scenario, Sequence) and not isinstance(scenario, str) else scenario
        change = Change("scenario.set", data=data, source="MockServer.set_scenario")
        return tuple(self.call(prepare_change(self.state, change))["scenario"])

    def clear_scenario(self) -> None:
        """No default scenario (``DELETE /_ssemock/scenario``); the scenarios given to :meth:`set_scenario` as
        documents are served no more."""
        self.call(lambda: apply_change(self.state, Change("scenario.clear")))

    def set_chaos(self, chaos: Chaos | str | Sequence[str] | Mapping[str, float]) -> list[str]:
        """Replace the faults by rate while the server runs (``PUT /_ssemock/chaos``) with ``chaos``, as
        ``MockServer(chaos=...)`` takes it (``"cut-mid-event=0.05,http-429=0.02"``, a list of such rules, a
        mapping of scenario names to rates, a :class:`~ssemock.chaos.Chaos`). Returns the rules as ``--chaos``
        writes them. Raises :class:`~ssemock.errors.ChaosError` (a :class:`ScenarioError`) for a malformed
        rule, a rate out of [0, 1], rates summing to more than 1, or a scenario not served; nothing changed
        then."""
        data = list(chaos) if isinstance(chaos, Sequence) and not isinstance(chaos, str) else chaos
        change = Change("chaos.set", data=data, source="MockServer.set_chaos")
        return list(self.call(prepare_change(self.state, change))["chaos"])

    def clear_chaos(self) -> None:
        """No faults by rate from now on (``DELETE /_ssemock/chaos``)."""
        self.call(lambda: apply_change(self.state, Change("chaos.clear")))

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` where the server runs and return its result (or raise its exception).

        When the server runs in its background thread (``with MockServer()``), ``fn``
        runs in the server's event loop, between two steps of any request in flight,
        so it may read :attr:`state` or replace its attributes safely from another
        thread. Otherwise ``fn`` is called directly.
        """
        return self._background.call(fn)

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Run ``fn()`` where the server runs, without waiting: before any request that arrives
        after this call (see :meth:`call`). ``fn`` should not raise (the loop would only log it)."""
        self._background.call_soon(fn)

    # ---- async ----------------------------------------------------------------
    async def start(self) -> None:
        """Start serving in the running event loop. Raises :class:`ServerError`."""
        # The secret scanner (what the journal, the access log and refusals show goes through it) is built
        # first, in a thread (about 80 ms), not by the first request on the event loop, where it held
        # every other request that long.
        await asyncio.to_thread(default_scanner)
        try:
            runner = await start_runner(create_app(self.state), self.host, self.port, self.network,
                                        exposure=EXPOSURE, handler_cancellation=True, ssl_context=self._context,
                                        front=self._front)
        except OSError as exc:
            reason = f"{exc.strerror or exc}{port_hint(exc)}"
            raise ServerError(f"cannot listen on {self.host}:{self.port}: {reason}") from None
        self.port = runner.addresses[0][1]
        self._runner = runner

    async def stop(self) -> None:
        """Stop serving: requests in progress get ``grace`` seconds, then they are cut."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> MockServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # ---- background thread ------------------------------------------------------
    def __enter__(self) -> MockServer:
        self._background.run()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._background.close(timeout=10)
