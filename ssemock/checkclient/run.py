"""Running the client command once per case, each against its own in-process replay server.

Each case gets a fresh :class:`~ssemock.MockServer` on 127.0.0.1 (its own journal and play counts),
serving the case's cassette; the command runs with the environment of :func:`case_environment`, its
stdout read up to ``max_output`` bytes, killed (its whole process group) after ``timeout`` seconds.
Cases run ``jobs`` at a time in one event loop, which also serves the replays.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..cassette import Cassette
from ..mockserver import MockServer
from ..providers import env_vars
from ..scenario import Scenario
from ..tls import TLSFiles, trust_env
from .cases import Case
from .reference import stream_interaction

__all__ = ["ClientRun", "RunOptions", "case_environment", "case_url", "run_cases", "server_trust", "stream_request"]

_STDERR_KEPT = 4096


@dataclass(frozen=True)
class RunOptions:
    """How cases run.

    Attributes:
        timeout: seconds one case may take before the command is killed (a hang).
        jobs: cases run at once.
        timing_scale: the replay's timing scale (0: no recorded delays; injected stalls are not scaled).
        seed: the scenarios' seed.
        max_output: bytes of stdout read at most (more: the client is killed and fails the case).
        workdir: a directory for the request bodies handed to the command (``SSEMOCK_BODY_FILE``).
        tls: the certificate and key each case's server answers https with, or None (http); the command's
            environment then trusts its authority (:func:`ssemock.tls.trust_env`).
        http2: each case's server speaks HTTP/2 too (ALPN ``h2`` over TLS, h2c with prior knowledge).
        base: scenarios composed into every case, the clean one included (``/_ssemock/s/CASE,BASE``).
    """

    timeout: float = 30.0
    jobs: int = 2
    timing_scale: float = 0.0
    seed: int = 0
    max_output: int = 64 * 1024 * 1024
    workdir: Path = Path(".")
    tls: TLSFiles | None = None
    http2: bool = False
    base: tuple[Scenario, ...] = ()


@dataclass
class ClientRun:
    """What one case's run gave.

    Attributes:
        case: the case.
        status: the exit status (negative: killed by that signal), None when killed for the timeout.
        seconds: from the start of the command to its exit (or kill).
        stdout: what it printed (at most ``max_output`` bytes).
        stderr: the last 4 KiB of its stderr, as text.
        journal: the replay server's journal (``MockServer.requests`` entries), oldest first.
        timed_out: killed after ``timeout`` seconds.
        overflow: killed for printing more than ``max_output`` bytes.
        interaction: the interaction a correct reader would read (the first event stream's), or None.
        ended: when the command exited or was killed (seconds since the epoch, as the journal's ``time``).
    """

    case: Case
    status: int | None
    seconds: float
    stdout: bytes
    stderr: str
    journal: list[dict[str, Any]] = field(default_factory=list)
    timed_out: bool = False
    overflow: bool = False
    interaction: int | None = None
    ended: float = 0.0

    @property
    def since_request(self) -> float | None:
        """Seconds from the last request's arrival to the command's end (None: no request came)."""
        return self.ended - self.journal[-1]["time"] if self.journal else None


def server_trust(options: RunOptions) -> dict[str, str]:
    """The variables that make the command trust the cases' https servers (empty over http)."""
    return trust_env(options.tls) if options.tls is not None else {}


def case_url(base: str, case: Case, every: Sequence[str] = ()) -> str:
    """``SSEMOCK_URL`` of ``case``: ``base`` + ``/_ssemock/c/CASSETTE`` (+ ``/_ssemock/s/SCENARIO``, with the
    scenarios ``every`` case is under after it: ``/_ssemock/s/SCENARIO,NAME``)."""
    url = f"{base}/_ssemock/c/{quote(case.cassette, safe='')}"
    names = [*([case.scenario.name] if case.scenario else []), *every]
    return url + (f"/_ssemock/s/{','.join(names)}" if names else "")


def case_environment(url: str, case: Case, cassette: Cassette, body_file: Path | None) -> dict[str, str]:
    """The variables set for the command (added to the inherited environment).

    ``SSEMOCK_URL`` (see :func:`case_url`), the SDK variables the ``ssemock_env`` fixture sets (each base
    URL under ``SSEMOCK_URL``, placeholder keys), ``SSEMOCK_CASE`` (``CASSETTE/SCENARIO``), and for
    SSE-level readers the recorded request of the stream: ``SSEMOCK_METHOD``, ``SSEMOCK_STREAM_URL``
    (``SSEMOCK_URL`` + its path and query) and ``SSEMOCK_BODY_FILE`` (its body, absent without one);
    ``NO_PROXY`` covers 127.0.0.1 so that no proxy of the environment stands between.
    """
    out = {name: value.format(url=url) for name, value in env_vars().items()}
    out.update(SSEMOCK_URL=url, SSEMOCK_CASE=case.name)
    out.update(stream_request(cassette, url))
    if body_file is not None and out.get("SSEMOCK_METHOD"):
        out["SSEMOCK_BODY_FILE"] = str(body_file)
    no_proxy = os.environ.get("NO_PROXY", "")
    out["NO_PROXY"] = out["no_proxy"] = ",".join(filter(None, [no_proxy, "127.0.0.1", "localhost"]))
    return out


def stream_request(cassette: Cassette, url: str) -> dict[str, str]:
    """``SSEMOCK_METHOD`` and ``SSEMOCK_STREAM_URL`` (``url`` + the path and query) of the recorded request
    of ``cassette``'s first event stream; empty without one."""
    index = stream_interaction(cassette)
    if index is None:
        return {}
    request = cassette.interactions[index].request
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in request.query)
    return {"SSEMOCK_METHOD": request.method, "SSEMOCK_STREAM_URL": url + request.path + (f"?{query}" if query else "")}


def body_files(cassettes: Mapping[str, Cassette], workdir: Path) -> dict[str, Path | None]:
    """Write the body of each cassette's stream request into ``workdir``; the file of each (None: no body)."""
    out: dict[str, Path | None] = {}
    for number, (name, cassette) in enumerate(sorted(cassettes.items())):
        index = stream_interaction(cassette)
        body = None if index is None else cassette.interactions[index].request.body
        if body is None:
            out[name] = None
            continue
        path = workdir / f"request-{number}.body"
        path.write_bytes(body)
        out[name] = path
    return out


async def run_cases(
    command: Sequence[str],
    cases: Sequence[Case],
    cassettes: Mapping[str, Cassette],
    scenarios: Sequence[Scenario],
    options: RunOptions,
    progress: Callable[[ClientRun], None] | None = None,
) -> list[ClientRun]:
    """Run ``command`` once per case (``options.jobs`` at a time); the runs in the order of ``cases``."""
    gate = asyncio.Semaphore(options.jobs)
    bodies = body_files(cassettes, options.workdir)

    async def one(case: Case) -> ClientRun:
        async with gate:
            done = await _run_case(command, case, cassettes[case.cassette], scenarios, bodies[case.cassette], options)
        if progress is not None:
            progress(done)
        return done

    return list(await asyncio.gather(*(one(case) for case in cases)))


async def _run_case(
    command: Sequence[str],
    case: Case,
    cassette: Cassette,
    scenarios: Sequence[Scenario],
    body_file: Path | None,
    options: RunOptions,
) -> ClientRun:
    served = [*scenarios, *options.base, *([case.scenario] if case.scenario is not None else [])]
    server = MockServer([cassette], scenarios=served, timing_scale=options.timing_scale, seed=options.seed,
                        tls=options.tls or False, http2=options.http2)
    async with server:
        url = case_url(server.url, case, [s.name for s in options.base])
        env = {**os.environ, **case_environment(url, case, cassette, body_file), **server_trust(options)}
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        assert proc.stdout is not None and proc.stderr is not None
        reading = asyncio.gather(
            _read(proc.stdout, options.max_output, lambda: _kill(proc)), _tail(proc.stderr), proc.wait()
        )
        timed_out = False
        try:
            (stdout, overflow), stderr, _ = await asyncio.wait_for(asyncio.shield(reading), options.timeout)
        except TimeoutError:
            timed_out = True
            _kill(proc)
            (stdout, overflow), stderr, _ = await reading
        seconds, ended = time.monotonic() - started, time.time()
        journal = [entry.to_json() for entry in server.state.journal]
    status = None if timed_out else proc.returncode
    return ClientRun(
        case, status, seconds, stdout, stderr, journal, timed_out, overflow, stream_interaction(cassette), ended
    )


async def _read(stream: asyncio.StreamReader, limit: int, overflow: Callable[[], None]) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of ``stream``, and whether there was more (then ``overflow()`` is called and
    the rest drained unread)."""
    parts: list[bytes] = []
    size = 0
    while part := await stream.read(65536):
        if size + len(part) > limit:
            parts.append(part[: limit - size])
            overflow()
            while await stream.read(65536):
                pass
            return b"".join(parts), True
        parts.append(part)
        size += len(part)
    return b"".join(parts), False


async def _tail(stream: asyncio.StreamReader) -> str:
    kept = b""
    while part := await stream.read(65536):
        kept = (kept + part)[-_STDERR_KEPT:]
    return kept.decode("utf-8", "replace")


def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the command's process group (the command and what it started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
