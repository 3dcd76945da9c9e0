"""``Recorder``: the recording reverse proxy as a context manager (mirrors ``MockServer``)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp
from aiohttp import web

from ..background import BackgroundLoop
from ..body_paths import check_paths
from ..cassette.append import remove_stale_temporaries
from ..config import Limits, replace_fields
from ..edge import NetworkOptions, port_hint, start_runner
from ..errors import ConfigError, RecorderConfigError, RecorderError
from ..matching import DEFAULT_MATCH_ON, check_match_on
from ..redact import Filter
from ..send import TIMELINE
from ..timeline import Timeline
from ..tls import TLSFiles, local_authority, server_context
from .modes import RecordMode, record_mode
from .progress import Progress
from .proxy import handle, health
from .state import STATE, RecorderOptions, RecorderState
from .store import check_cassette_name

if TYPE_CHECKING:
    from ..chaos import Chaos
    from ..mockserver import ScenarioSource

__all__ = ["RECORDER_NETWORK", "Recorder", "check_directory", "check_numbers", "split_target"]

RECORDER_NETWORK = NetworkOptions(grace=5.0)
"""The recorder's network options by default: those of the replay server, but a stop gives streams
in progress 5 s (``ssemock record --grace``: 0.1 s)."""


def split_target(target: str) -> tuple[str, str, str | None]:
    """Split a target URL into what is sent to, what is shown, and basic-auth credentials.

    ``http://alice:pw@host:8080/base`` gives ``("http://host:8080/base",
    "http://***@host:8080/base", "Basic YWxpY2U6cHc=")``: the user info is never
    shown nor written; it becomes the ``Authorization`` header of requests that
    carry none (as curl does).

    Raises:
        RecorderConfigError: not an http(s) URL with a host (and a port from 1 to 65535, if any: ``[::1``,
            ``host:99999`` and ``host:abc`` are none), or it has a query or fragment.
    """
    try:
        parts = urlsplit(target)
        port = parts.port  # a port that is no number, or out of range, is refused here
    except ValueError as exc:
        shown = re.sub(r"//[^/]*@", "//***@", target)  # the user info is never shown
        raise RecorderConfigError(
            f"target {shown!r}: {exc} (expected an http(s) URL such as https://api.openai.com)"
        ) from None
    if port == 0:
        raise RecorderConfigError("target port 0: expected a port from 1 to 65535 (e.g. https://api.openai.com)")
    userinfo, _, host = parts.netloc.rpartition("@")
    if parts.scheme not in ("http", "https") or not host or parts.query or parts.fragment:
        shown = target.replace(userinfo + "@", "***@") if userinfo else target
        raise RecorderConfigError(f"target {shown!r} must be an http(s) URL without query, e.g. https://api.openai.com")
    base_url = urlunsplit((parts.scheme, host, parts.path, "", "")).rstrip("/")
    if not userinfo:
        return base_url, base_url, None
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    credentials = f"Basic {token}"
    return base_url, f"{parts.scheme}://***@{host}{parts.path}".rstrip("/"), credentials


def check_numbers(*, port: int, max_body_size: int | None, read_timeout: float, replay_timing_scale: float) -> None:
    """Check the numeric options of :class:`Recorder` outside its records (see its docstring).

    Raises:
        RecorderConfigError: ``port`` not an integer 0-65535, ``max_body_size`` negative,
            ``read_timeout`` not > 0, ``replay_timing_scale`` negative (or any of them not a
            finite number).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise RecorderConfigError(f"port must be an integer 0-65535, got {port!r}")
    if max_body_size is not None and (isinstance(max_body_size, bool) or not isinstance(max_body_size, int)
                                      or max_body_size < 0):
        raise RecorderConfigError(f"max body size must be an integer >= 0 (bytes), got {max_body_size!r}")
    _check_seconds("read timeout", read_timeout, positive=True)
    _check_seconds("replay timing scale", replay_timing_scale, positive=False)


def _check_seconds(what: str, value: float, *, positive: bool) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise RecorderConfigError(f"{what} must be a number {'> 0' if positive else '>= 0'}, got {value!r}")


def _paths(paths: Sequence[str], what: str) -> tuple[str, ...]:
    """Body paths checked (:func:`ssemock.body_paths.check_paths`), as a :class:`RecorderConfigError`."""
    try:
        return check_paths(paths, what)
    except ConfigError as exc:
        raise RecorderConfigError(str(exc)) from None


def _shaping(scenario: Sequence[str] | str | None, chaos: Any, scenarios: Any, seed: int) -> dict[str, Any]:
    """The :class:`RecorderOptions` fields of the scenarios clients' answers are sent under, checked as
    :class:`ssemock.MockServer` checks them (only the scenarios named are kept).

    Raises:
        ConfigError: an unknown or empty scenario name, a bad chaos rule, a seed that is not an integer.
        ScenarioError: a scenario file is malformed.
    """
    from ..names import check_names_in, scenario_names

    names = scenario_names(scenario)
    if not names and not chaos:
        return {"seed": seed}
    from ..chaos import Chaos
    from ..mockserver import check_seed, collect_scenarios

    rates = Chaos.of(chaos)
    known = collect_scenarios(scenarios)
    check_names_in(names, known)
    rates.check(known)
    used = {*names, *(rate.scenario for rule in rates.rules for rate in rule.rates)}
    return {"scenarios": {n: known[n] for n in used}, "scenario": names, "chaos": rates or None,
            "seed": check_seed(seed)}


def check_directory(path: Path) -> Path:
    """``path`` if cassettes can be written there: a directory, or one that can be created.

    Nothing is left behind here (the directory is created with the first cassette): the
    nearest existing ancestor is tried by creating and removing an empty directory in it,
    since permission bits do not tell (``/proc`` looks writable to root).

    Raises:
        RecorderConfigError: ``path`` or its nearest existing ancestor is not a
            directory, or nothing can be created in that ancestor.
    """
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise RecorderConfigError(f"cassettes directory {str(path)!r}: {str(existing)!r} is not a directory")
    try:
        tempfile.TemporaryDirectory(dir=existing, prefix=".ssemock-probe-").cleanup()
    except OSError as exc:
        raise RecorderConfigError(f"cassettes directory {str(path)!r}: cannot create files in {str(existing)!r} "
                                  f"({exc.strerror or exc})") from None
    return path


class Recorder:
    """A recording reverse proxy on ``host:port`` in front of ``target``.

    Point a client at :attr:`url` instead of the provider: every request is
    forwarded to ``target`` (same method, path, query, headers and body; the real
    credentials go upstream untouched) and the answer streams back read by read
    while it is recorded into ``cassette_dir/NAME.yaml``, with secrets removed (see
    :class:`ssemock.redact.Filter`). Each finished interaction is appended to its
    cassette file and fsynced before the client gets the answer's last byte (bodies
    over 1 MiB: right after it), see :mod:`ssemock.recorder.store`.

    Which cassette: the request header ``X-SSEMock-Cassette: NAME`` (not forwarded),
    else ``cassette``, else a name from the request fingerprint
    (``<method>-<path words>-<12 hex digits>``). ``NAME`` may contain ``/`` (sub-folders).

    Args:
        target: the provider base URL, e.g. ``"https://api.openai.com"``; a path
            (``https://host/openai``) is prefixed to every request path. User info
            (``https://user:password@host``) is sent upstream as basic auth on requests
            without an ``Authorization`` header and never shown or recorded.
        cassette_dir: directory of the cassettes (created when needed).
        mode: record mode (:class:`RecordMode` or its name): ``none``, ``once``
            (default), ``new_episodes``, ``all``. Matching requests are replayed
            from the cassette where the mode says so.
        cassette: default cassette name for requests without the header.
        host: address to bind (default ``127.0.0.1``).
        port: TCP port (default 0: a free port).
        filter: extra secrets to remove (headers, query names, JSON paths, regexes);
            the defaults always apply.
        max_body_size: request bodies larger than this many bytes are stored as
            SHA-256 digest and size (still matched on replay); None keeps every body.
            Default 1 MiB.
        keep_encoding: forward the client's ``Accept-Encoding`` (only its gzip, deflate and
            identity: the codings the secret scan decodes) and record the encoded bytes;
            default False asks the upstream for ``identity``.
        read_timeout: seconds without an upstream byte before a stream is ended
            as ``timeout`` (default 600).
        match_on: matchers used to find a recorded interaction to replay.
        ignore_body: body paths the ``body`` matcher ignores when replaying (:mod:`ssemock.body_paths`).
        drop_body: body paths deleted from every JSON request body before it is stored
            (``["metadata.trace_id", "user"]``); the client's request goes upstream whole. Each cassette
            written lists them (``match: {dropped_body: [...]}``), so replay ignores them too. A body
            stored by digest (over ``max_body_size``) is kept whole.
        replay_timing_scale: timing factor of replayed interactions (1 = as recorded).
        progress: stream for one line per interaction (None, the default: silent).
        shown_target: how the upstream is named in messages and in the cassettes' provenance
            (``target``); None: the target URL, its user info replaced by ``***``.
        limits: the bounds on a request (:class:`~ssemock.Limits`): larger bodies than
            ``max_request_body`` are answered 413 ``ssemock_body_too_large``, JSON nested deeper than
            ``max_json_depth`` 400 ``ssemock_json_too_deep``, and neither is forwarded; its other
            fields are the replay server's.
        network: the network edge's options (:class:`~ssemock.NetworkOptions`), as for
            :class:`ssemock.MockServer`, but for the ``grace`` :meth:`stop` gives streams in progress
            before they are recorded as ended by ``timeout``: 5 s by default (:data:`RECORDER_NETWORK`).
        **keywords: the fields of ``limits`` and ``network`` the recorder reads, one by one
            (``max_request_body=N``, ``grace=S``), as before the records; each replaces that field.
        scenario: scenario names (``"cut-mid-event"``, a tuple, or ``"a,b"``) every client's answer is sent under,
            as the replay server would send it: the cassette keeps the upstream's own bytes; a forwarded answer is
            then held back until it is complete (at most :data:`~ssemock.limits.MAX_HELD_BODY`), recorded, and sent
            shaped. None: the answers go to their clients as they come.
        chaos: faults by rate, as for :class:`ssemock.MockServer` (``"cut-mid-event=0.05"``, a
            :class:`~ssemock.chaos.Chaos`, a mapping), drawn from ``seed`` and the request's sequence number.
        scenarios: where the scenarios ``scenario`` and ``chaos`` name come from, as for :class:`ssemock.MockServer`
            (None: the bundled presets).
        seed: the seed of the draws and of the scenarios' random choices (default 0).
        tls: accept https clients, as :class:`ssemock.MockServer` does (``True``: ssemock's local authority,
            :mod:`ssemock.tls`; or your own :class:`~ssemock.tls.TLSFiles`); the upstream side is unchanged.

    Attributes:
        url: ``http://HOST:PORT`` once started.
        target: the target as shown (user info replaced by ``***``).
        options: the options its handler reads (:class:`RecorderOptions`).
        network: the network edge's options.
        interactions: one dict per request handled (a :class:`ProgressRow` as a dict): a recorded,
            refused or failed request is listed before its client gets the last byte of
            the answer; a replayed one when its answer starts.

    Raises:
        RecorderConfigError: bad mode, target URL, cassette name, filter, body path (``ignore_body``,
            ``drop_body``), number (see :func:`check_numbers`), limit, or a ``cassette_dir`` that is not (and cannot
            become) a writable directory.
        ConfigError: an unknown matcher, or a bad network option (as for ``MockServer``);
            the parent of :class:`RecorderConfigError`.
        RecorderError: the port cannot be bound (from :meth:`start` / ``with``).
        TypeError: a keyword that is no parameter nor field the recorder reads of ``limits`` or ``network``.
    """

    def __init__(
        self,
        target: str,
        cassette_dir: str | os.PathLike[str] = "cassettes",
        *,
        mode: RecordMode | str = RecordMode.ONCE,
        cassette: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        filter: Filter | None = None,  # noqa: A002 - VCR's word
        max_body_size: int | None = 1 << 20,
        keep_encoding: bool = False,
        read_timeout: float = 600.0,
        match_on: Sequence[str] = DEFAULT_MATCH_ON,
        ignore_body: Sequence[str] = (),
        drop_body: Sequence[str] = (),
        replay_timing_scale: float = 1.0,
        progress: TextIO | None = None,
        shown_target: str | None = None,
        limits: Limits = Limits(),
        network: NetworkOptions = RECORDER_NETWORK,
        tls: bool | TLSFiles = False,
        scenario: Sequence[str] | str | None = None,
        chaos: Chaos | str | Sequence[str] | Mapping[str, float] | None = None,
        scenarios: Iterable[ScenarioSource] | ScenarioSource | None = None,
        seed: int = 0,
        **keywords: Any,
    ) -> None:
        base_url, shown, credentials = split_target(target)
        shown = shown_target or shown
        check_numbers(port=port, max_body_size=max_body_size, read_timeout=read_timeout,
                      replay_timing_scale=replay_timing_scale)
        limits, self.network = replace_fields("Recorder", "record", keywords, limits, network)
        filter = filter or Filter()  # noqa: A001
        match_on = check_match_on(match_on)
        self.target = shown
        self.host = host
        self.port = port
        self.read_timeout = read_timeout
        self._progress = Progress(progress)
        self.options = RecorderOptions(
            base_url=base_url, shown_target=shown, credentials=credentials,
            directory=check_directory(Path(cassette_dir)), mode=record_mode(mode), filter=filter,
            cassette=check_cassette_name(filter.name(cassette)) if cassette else None, max_body_size=max_body_size,
            keep_encoding=keep_encoding, match_on=tuple(match_on), replay_timing_scale=replay_timing_scale,
            limits=limits, ignore_body=_paths(ignore_body, "ignore_body"), drop_body=_paths(drop_body, "drop_body"),
            **_shaping(scenario, chaos, scenarios, seed),
        )
        self.tls: TLSFiles | None = local_authority() if tls is True else tls or None
        self._context = None if self.tls is None else server_context(self.tls)
        self.state: RecorderState | None = None
        self._runner: web.AppRunner | None = None
        self._background = BackgroundLoop("ssemock-recorder", self.start, self.stop)

    @property
    def url(self) -> str:
        """The base URL, ``http://HOST:PORT`` (``https://`` with ``tls``). Raises :class:`RecorderError` when not
        running."""
        if self._runner is None:
            raise RecorderError("Recorder is not running")
        return f"{'http' if self.tls is None else 'https'}://{self.host}:{self.port}"

    @property
    def mode(self) -> RecordMode:
        """The record mode."""
        return self.options.mode

    @property
    def interactions(self) -> list[dict[str, Any]]:
        """One dict per request handled so far: each :class:`ProgressRow`'s fields, copied."""
        return [dataclasses.asdict(row) for row in self._progress.interactions]

    @property
    def journal(self) -> list[dict[str, Any]]:
        """One record per request handled so far, in the replay journal's shape (:meth:`ProgressRow.to_journal`)."""
        return [row.to_journal() for row in self._progress.interactions]

    def summary(self) -> str:
        """One line: what was recorded, replayed or refused, and into which cassettes."""
        return self._progress.summary()

    # ---- async ----------------------------------------------------------------
    async def start(self) -> None:
        """Start in the running event loop. Raises :class:`RecorderError` if the port is taken."""
        state = RecorderState(self.options, self._progress)
        await asyncio.to_thread(self.options.filter.prepare)  # not on the first request's path
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=self.read_timeout)
        state.session = aiohttp.ClientSession(
            auto_decompress=False, timeout=timeout, connector=aiohttp.TCPConnector(limit=0),
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        app = web.Application(client_max_size=self.options.limits.max_request_body)
        app[STATE] = state
        app[TIMELINE] = Timeline()  # for the replays of recorded answers
        app.router.add_get("/_ssemock/health", health)
        app.router.add_route("*", "/{tail:.*}", handle)
        stale = await asyncio.to_thread(remove_stale_temporaries, self.options.directory)
        if stale:
            state.progress.note(f"removed {len(stale)} temporary file(s) left by a writer that was killed: "
                                + ", ".join(str(p) for p in stale[:3]) + (" ..." if len(stale) > 3 else ""))
        exposure = (f"anyone who can reach it can send requests to {self.target} through it (with the "
                    "target URL's credentials, if it has any) and read what is replayed")
        try:
            runner = await start_runner(app, self.host, self.port, self.network, exposure=exposure,
                                        self_reporting=(handle,), guard_every_path=True,
                                        ssl_context=self._context)
        except OSError as exc:
            await state.session.close()
            reason = f"{exc.strerror or exc}{port_hint(exc)}"
            raise RecorderError(f"cannot listen on {self.host}:{self.port}: {reason}") from None
        self.port = runner.addresses[0][1]
        self.state, self._runner = state, runner

    async def stop(self) -> None:
        """Stop: streams in progress get ``grace`` seconds, then every cassette is written.

        Raises:
            RecorderError: a cassette could not be written (the others still are).
        """
        if self._runner is None or self.state is None:
            return
        runner, self._runner = self._runner, None
        await runner.cleanup()
        await self.state.session.close()
        errors = []
        for store in self.state.stores.values():
            try:
                await store.flush()
            except RecorderError as exc:
                errors.append(exc)
            store.close()
        if errors:
            raise errors[0]

    async def flush(self) -> None:
        """Wait until every interaction completed so far is written to its cassette file.

        Not needed to read a cassette after a request whose answer is up to 1 MiB: such an
        interaction is on disk before its client gets the last byte; a larger one is scrubbed
        and written right after. Raises :class:`RecorderError` (see :meth:`stop`).
        """
        if self.state is not None:
            while self.state.finishing:
                await asyncio.gather(*self.state.finishing)
            for store in list(self.state.stores.values()):
                await store.flush()

    async def __aenter__(self) -> Recorder:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # ---- background thread ------------------------------------------------------
    def __enter__(self) -> Recorder:
        self._background.run()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Streams still open get ``grace`` seconds to finish; a failure while writing the
        # cassettes is raised unless the block already raised.
        self._background.close(timeout=self.network.grace + 30, raise_failure=exc is None)
