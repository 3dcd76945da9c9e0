"""One ``check-client`` run: choose the cassettes, build the cases, run them (clean cases first: they are
the baseline of the others), grade each and gather the :class:`~.report.Report`."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..bundled import bundled_scenarios
from ..cassette import Cassette
from ..errors import ConfigError
from ..mockserver import MockServer, collect_cassettes, collect_scenarios
from ..plan import Plan
from ..providers import env_vars
from ..scenario import Scenario
from ..tls import local_authority
from .cases import Case, Rule, build_cases, longer_than
from .contract import MAX_OUTPUT, read_output
from .grade import FAIL, Expected, grade
from .reference import plan_events, sent_plan, stream_interaction
from .report import Entry, Report
from .reproduce import reproduce_command
from .run import ClientRun, RunOptions, run_cases, server_trust
from .shrink import shrink

__all__ = ["MAX_CASES", "CheckOptions", "check", "default_jobs"]

MAX_CASES = 2000
"""Cases one run takes at most (cassettes × (scenarios + 1))."""


def default_jobs() -> int:
    """The cores this process may use."""
    return max(1, len(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class CheckOptions:
    """The options of a run (the CLI's, one by one).

    Attributes:
        cassettes: names of the cassettes to run the client against (empty: those its first clean run asks
            for, among ``cassette_sources``).
        cassette_sources: cassette files or directories served (empty: the bundled cassettes).
        scenarios: scenario names (default: every bundled preset and every scenario of ``scenario_sources``,
            but those whose steps act on HTTP/2 frames: the cases are served over HTTP/1.1).
        scenario_sources: scenario files or directories added to the bundled presets.
        client_timeout: the client's own read timeout in seconds, or None (stalls then not graded).
        timeout: seconds one case may take.
        jobs: cases run at once (default: the cores).
        timing_scale: replay timing scale (default 0: no recorded delays).
        seed: the scenarios' seed.
        max_retries: requests sent again at most after an HTTP error.
        max_output: bytes of a client's stdout read at most.
        shrink_budget: seconds spent at most shrinking each failed conformance case (0: none).
        tls: serve the cases over https with ssemock's local authority (:func:`ssemock.tls.local_authority`),
            trusted by the command through ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE`` and ``NODE_EXTRA_CA_CERTS``;
            the presets of the TLS layer (``tls-split-crlf``...) are then among the default scenarios.
        http2: serve HTTP/2 too (ALPN ``h2`` over TLS, else h2c with prior knowledge); the presets of the
            HTTP/2 layer (``h2-split-crlf``...) are then among the default scenarios.
        base: scenario names composed into every case, the clean one included: the recording as the client
            can read it (e.g. ``framing: close`` and a ``charset`` for a client that reads beneath its HTTP
            library); each case's expected events are those under its scenario and these.
    """

    cassettes: tuple[str, ...] = ()
    cassette_sources: tuple[Path, ...] = ()
    scenarios: tuple[str, ...] | None = None
    scenario_sources: tuple[Path, ...] = ()
    client_timeout: float | None = None
    timeout: float = 30.0
    jobs: int = field(default_factory=default_jobs)
    timing_scale: float = 0.0
    seed: int = 0
    max_retries: int = 5
    max_output: int = MAX_OUTPUT
    shrink_budget: float = 60.0
    tls: bool = False
    http2: bool = False
    base: tuple[str, ...] = ()


def check(
    command: Sequence[str], options: CheckOptions = CheckOptions(), progress: Callable[[int, int], None] | None = None
) -> Report:
    """Run and grade ``command`` over every case; ``progress(done, total)`` after each case.

    Raises:
        ConfigError: no command, an unknown cassette or scenario, no cassette chosen, too many cases, a
            case timeout not longer than the stall.
        CassetteError, ScenarioError: a malformed file.
    """
    if not command:
        raise ConfigError("no client command: give it after --, e.g. ssemock check-client -- python client.py")
    served = collect_cassettes(list(options.cassette_sources) or None)
    scenarios = collect_scenarios([bundled_scenarios(), *options.scenario_sources])
    names = _scenario_names(scenarios, options)
    base = tuple(_known(scenarios, name, "--base") for name in options.base)
    with tempfile.TemporaryDirectory(prefix="ssemock-check-client-") as work:
        run_options = RunOptions(
            options.timeout, options.jobs, options.timing_scale, options.seed, options.max_output, Path(work),
            local_authority() if options.tls else None, options.http2, base,
        )
        chosen = _chosen(command, options, served, run_options)
        cases = build_cases(chosen, scenarios, names, options.client_timeout)
        if len(cases) > MAX_CASES:
            raise ConfigError(f"{len(cases)} cases: at most {MAX_CASES} (fewer --cassette or --scenario)")
        _check_stall(cases, options)
        runs = asyncio.run(_run_all(command, cases, served, list(scenarios.values()), run_options, progress))
        clean = {run.case.cassette: run for run in runs if run.case.rule is Rule.CLEAN}
        bundled = set(collect_cassettes(None)) if not options.cassette_sources else set()
        entries = []
        for run in runs:
            cassette = served[run.case.cassette]
            graded = grade(run, _expected(run, cassette, clean[run.case.cassette], options, base))
            line = reproduce_command(
                run.case,
                cassette,
                command,
                bundled=run.case.cassette in bundled,
                timing_scale=options.timing_scale,
                seed=options.seed,
                tls=run_options.tls,
                http2=options.http2,
                base=base,
            )
            shrunk = None
            if graded.verdict == FAIL and graded.category == "conformance" and options.shrink_budget > 0:
                shrunk = _shrunk(run, command, served, clean[run.case.cassette], options, run_options)
            scenario = run.case.scenario.name if run.case.scenario else None
            entries.append(Entry(graded, run.case.cassette, scenario, run.case.rule.value, line, shrunk))
    return Report(tuple(command), tuple(entries))


def _known(scenarios: dict[str, Scenario], name: str, option: str) -> Scenario:
    """The scenario ``name``. Raises :class:`ConfigError` naming ``option`` when there is none."""
    if name not in scenarios:
        raise ConfigError(f"{option} {name}: no such scenario (see ssemock scenarios)")
    return scenarios[name]


def _scenario_names(scenarios: dict[str, Scenario], options: CheckOptions) -> tuple[str, ...]:
    """The scenarios run: ``options.scenarios``, else every one the server's layers let apply.

    Raises:
        ConfigError: an unknown scenario, or one of a layer (HTTP/2, TLS) the cases are not served over.
    """
    def served(scenario: Scenario) -> bool:
        return (options.http2 or not scenario.needs_http2) and (options.tls or not scenario.needs_tls)

    names = options.scenarios if options.scenarios is not None else tuple(
        sorted(name for name, scenario in scenarios.items() if served(scenario)))
    for name in names:
        _known(scenarios, name, "--scenario")
        if scenarios[name].needs_http2 and not options.http2:
            raise ConfigError(f"--scenario {name}: its steps act on HTTP/2 frames: add --http2 (and an HTTP/2 client)")
        if scenarios[name].needs_tls and not options.tls:
            raise ConfigError(f"--scenario {name}: its steps act on TLS records: add --tls")
    return names


def _shrunk(
    run: ClientRun,
    command: Sequence[str],
    served: dict[str, Cassette],
    clean: ClientRun,
    options: CheckOptions,
    run_options: RunOptions,
) -> str | None:
    """The failed case of ``run`` shrunk (:func:`shrink`), described; None when there is nothing to shrink."""
    cassette, index = served[run.case.cassette], _interaction(run)

    def plan_of(scenario: Scenario) -> Plan:
        assert index is not None
        return sent_plan(cassette, index, _under_base(scenario, run_options.base), options.seed)

    fails = _fails(command, served, clean, options, run_options)
    found = shrink(run.case, fails, options.shrink_budget, None if index is None else plan_of)
    return None if found is None else found.describe()


def _under_base(scenario: Scenario | None, base: Sequence[Scenario]) -> Scenario | None:
    """What a case under ``scenario`` (None: clean) is served with: it and the ``--base`` scenarios, composed."""
    parts = [*([scenario] if scenario is not None else []), *base]
    return Scenario.compose(parts) if parts else None


def _interaction(run: ClientRun) -> int | None:
    """The interaction that answered the case's stream (the journal's first), else the case's own."""
    return next((e["interaction"] for e in run.journal if e.get("interaction") is not None), run.interaction)


def _fails(
    command: Sequence[str],
    served: dict[str, Cassette],
    clean: ClientRun,
    options: CheckOptions,
    run_options: RunOptions,
) -> Callable[[Case], bool]:
    """Whether the client fails a case (one run, graded by the case's rule): what :func:`shrink` asks."""

    def fails(case: Case) -> bool:
        (run,) = asyncio.run(run_cases(command, [case], served, [], run_options))
        return grade(run, _expected(run, served[case.cassette], clean, options, run_options.base)).verdict == FAIL

    return fails


async def _run_all(
    command: Sequence[str],
    cases: list[Case],
    served: dict[str, Cassette],
    scenarios: list[Scenario],
    options: RunOptions,
    progress: Callable[[int, int], None] | None,
) -> list[ClientRun]:
    """The clean cases first (the others' baseline), then the others; runs in the order of ``cases``."""
    done = 0

    def tick(_: ClientRun) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(cases))

    clean = [c for c in cases if c.rule is Rule.CLEAN]
    rest = [c for c in cases if c.rule is not Rule.CLEAN]
    runs = await run_cases(command, clean, served, scenarios, options, tick)
    runs += await run_cases(command, rest, served, scenarios, options, tick)
    order = {case.name: n for n, case in enumerate(cases)}
    return sorted(runs, key=lambda run: order[run.case.name])


def _expected(run: ClientRun, cassette: Cassette, clean: ClientRun, options: CheckOptions,
              base: tuple[Scenario, ...] = ()) -> Expected:
    index = _interaction(run)
    events = retry_after = None
    stall = 0.0
    close_delimited = False
    if index is not None:
        plan = sent_plan(cassette, index, _under_base(run.case.scenario, base), options.seed)
        events = plan_events(plan)
        retry_after = _number(plan.response.header("retry-after"))
        stall = sum(plan.pauses.values()) + plan.first_byte_delay
        close_delimited = plan.framing == "close"
    return Expected(
        events,
        None if run.case.rule is Rule.CLEAN else read_output(clean.stdout),
        retry_after,
        options.client_timeout,
        stall,
        options.max_retries,
        clean.status,
        close_delimited,
    )


def _number(text: str | None) -> float | None:
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def _check_stall(cases: list[Case], options: CheckOptions) -> None:
    for case in cases:
        if case.rule in (Rule.STALL, Rule.FIRST_BYTE) and options.client_timeout is not None:
            seconds = longer_than(options.client_timeout)
            if options.timeout <= seconds + 1:
                raise ConfigError(
                    f"--timeout {options.timeout:g}: a case must outlast the {seconds:g} s stall that "
                    f"--client-timeout {options.client_timeout:g} asks for (give at least "
                    f"{seconds + 5:g})"
                )


def _chosen(
    command: Sequence[str], options: CheckOptions, served: dict[str, Cassette], run_options: RunOptions
) -> list[str]:
    """The cassettes named, else those the command asks for on a first run against all of them."""
    for name in options.cassettes:
        if name not in served:
            raise ConfigError(f"--cassette {name}: no such cassette among {', '.join(sorted(served)) or '(none)'}")
    if options.cassettes:
        return list(dict.fromkeys(options.cassettes))
    asked, ended = asyncio.run(_first_run(command, served, run_options))
    if not asked:
        raise ConfigError(
            f"the client's first run asked for no recorded interaction{ended}: name the cassette with "
            "--cassette NAME (ssemock inspect shows what a cassette holds)"
        )
    return asked


async def _first_run(command: Sequence[str], served: dict[str, Cassette], options: RunOptions) -> tuple[list[str], str]:
    """The cassettes whose first event stream was recorded from the method and path the command asks for
    (against all of ``served``, matched on method and path), else those that answered it; and how the command
    ended when it failed (`` (it exited with status 1: LAST LINE OF STDERR)``, else empty)."""
    server = MockServer(list(served.values()), match_on=("method", "path"), timing_scale=0, tls=options.tls or False,
                        http2=options.http2)
    async with server:
        env = {**os.environ, "SSEMOCK_URL": server.url, **server_trust(options)}
        env.update({k: v.format(url=server.url) for k, v in env_vars().items()})
        errors = options.workdir / "first-run.stderr"
        with open(errors, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=err, env=env,
            )
            try:
                await asyncio.wait_for(proc.wait(), options.timeout)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        journal = list(server.state.journal)
    asked = {(e.method, e.path) for e in journal}
    streams = [name for name, cassette in served.items() if _stream_route(cassette) in asked]
    return streams or list(dict.fromkeys(e.cassette for e in journal if e.cassette is not None)), _ended(proc, errors)


def _ended(proc: asyncio.subprocess.Process, errors: Path) -> str:
    """`` (it exited with status N: the last line of its stderr)`` for a command that failed, else empty."""
    if not proc.returncode:
        return ""
    with open(errors, "rb") as err:
        err.seek(max(0, errors.stat().st_size - 2000))  # its end says why; the rest is bounded out
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    return f" (it exited with status {proc.returncode}{': ' + lines[-1][:300] if lines else ''})"


def _stream_route(cassette: Cassette) -> tuple[str, str] | None:
    index = stream_interaction(cassette)
    if index is None:
        return None
    request = cassette.interactions[index].request
    return request.method, request.path
