"""The ``ssemock`` command: serve | record | import | inspect | diff | scenarios | check | drift | check-client.

``inspect`` shows a cassette, or a stub file (``ssemock_stubs: 1``) as the streams its stubs
send in one provider's format (``--provider``).

``main(argv) -> int`` returns the exit status: 0 on success, 2 for bad input
(one line on stderr, no traceback), 1 when serving fails at run time, ``check``
has findings or ``diff`` finds differences (``drift``: see :mod:`ssemock.drift.cli`), or a
``check-client`` case fails.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .argtypes import (
    age_days,
    integer,
    port_number,
    positive_count,
    positive_size,
    scale_factor,
    scenario_list,
    worker_count,
)
from .commands import COMMANDS, DESCRIPTION, EXAMPLES, HelpFormatter, epilog
from .errors import ConfigError, ScenarioError, SSEMockError
from .version import __version__

if TYPE_CHECKING:
    from .cassette import Cassette
    from .mockserver import MockServer

# Each command imports what it needs when it runs: ``serve`` never imports the importers, the diff,
# the plot, the lint or the workers (tests/test_cold_start.py checks it).

__all__ = ["console", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class UsageError(ConfigError):
    """Bad command-line input."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``ssemock`` argument parser; ``command`` (the sub-command about to be parsed, None: any)
    spares building the other commands' parsers, and the imports their defaults need (a command that
    does not exist gets them all, for the list of choices in its error)."""
    parser = _Parser(prog="ssemock", description=DESCRIPTION, epilog=epilog(EXAMPLES), formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=f"ssemock {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, entry in COMMANDS.items():
        if command not in COMMANDS or name == command:
            _ADD_ARGUMENTS[name](sub.add_parser(name, help=entry.help, description=entry.description,
                                                epilog=epilog(entry.examples), formatter_class=HelpFormatter))
    return parser


def _add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    from .chaos import CHAOS_HELP, chaos_rule
    from .edge.arguments import add_limit_arguments, add_match_arguments, add_network_arguments, add_tls_arguments

    serve.add_argument("--cassettes", action="append", type=Path, metavar="DIR",
                       help="cassette directory or file (repeatable; default: the bundled cassettes)")
    serve.add_argument("--scenarios", action="append", type=Path, metavar="DIR",
                       help="scenario directory or file, added to the bundled presets (repeatable; "
                            "a scenario of the same name replaces the preset)")
    serve.add_argument("--scenario", type=scenario_list, metavar="NAME", help="default scenario(s), comma-separated")
    serve.add_argument("--stubs", action="append", type=Path, metavar="PATH",
                       help="stub file or directory: synthesized answers, tried before the cassettes (repeatable)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8080,
                       help="port (default 8080; 0 picks a free port)")
    serve.add_argument("--timing-scale", type=scale_factor, default=1.0, metavar="FACTOR",
                       help="multiply recorded delays (1 = as recorded, 0 = no delays, 0.5 = twice as fast)")
    serve.add_argument("--seed", type=integer, default=0,
                       help="seed of the scenarios' random choices (default 0; journaled with every request)")
    serve.add_argument("--chaos", action="append", type=chaos_rule, metavar="RULE", help=CHAOS_HELP)
    add_match_arguments(serve, "in every cassette")
    serve.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                       help="an origin (https://app.example:8443) whose web pages may read replay answers, besides "
                            "loopback origins (localhost, 127.0.0.1, [::1], any port); '*': any web page (repeatable)")
    serve.add_argument("--workers", type=worker_count, metavar="N|auto",
                       help="serve from N processes on one port (auto: one per core; needs gunicorn: "
                            "pip install gunicorn, ssemock's 'workers' extra); the journal gathers them all")
    add_tls_arguments(serve)
    serve.add_argument("--http2", action="store_true",
                       help="answer HTTP/2 too, on the same port: over --tls to clients that offer h2 (ALPN), "
                            "else to clients with prior knowledge (h2c); HTTP/1.1 stays served (needs h2: "
                            "pip install h2, ssemock's 'http2' extra)")
    add_limit_arguments(serve, "serve")
    add_network_arguments(serve, "serve", grace_help="on SIGINT/SIGTERM, let requests in progress finish this long, "
                                                     "then cut them (a second signal exits at once)")


def _add_inspect_arguments(ins: argparse.ArgumentParser) -> None:
    ins.add_argument("cassette", help="cassette file, or the name of a bundled cassette")
    ins.add_argument("--chunks", action="store_true", help="list every chunk (size and time)")
    ins.add_argument("--provider", default="openai-chat", metavar="NAME",
                     help="for a stub file: the provider format to show (openai-chat, openai-responses, anthropic, "
                          "gemini, openrouter; default openai-chat)")
    ins.add_argument("--plot", type=Path, metavar="FILE.svg|FILE.png",
                     help="draw one interaction's chunks, gaps and events over time (needs matplotlib: the plot extra)")
    ins.add_argument("--interaction", type=integer, metavar="N",
                     help="the interaction drawn (default: the first event stream)")
    ins.add_argument("--scenario", metavar="NAME[,NAME…]|FILE",
                     help="draw the stream as sent under these scenarios (bundled names or a scenario file)")


def _add_diff_arguments(dif: argparse.ArgumentParser) -> None:
    from .diff import MAX_IGNORED, TOLERANCE

    dif.add_argument("a", metavar="A", help="the reference: a cassette file or a bundled cassette's name")
    dif.add_argument("b", metavar="B", help="the cassette compared with it (e.g. a re-recording)")
    dif.add_argument("--tolerance", type=scale_factor, default=TOLERANCE, metavar="S",
                     help=f"seconds two times may differ by (default {TOLERANCE})")
    dif.add_argument("--no-timing", action="store_true", help="compare no times")
    dif.add_argument("--ignore", action="append", default=[], metavar="KEY",
                     help=f"a JSON key left out of bodies and event data at any depth (at most {MAX_IGNORED})")


def _add_scenarios_arguments(scen: argparse.ArgumentParser) -> None:
    checks = scen.add_subparsers(dest="action", parser_class=_Parser)
    check = checks.add_parser("check", help="validate scenario files: one line per file; exit 2 naming the file, "
                                            "step and field of the first error of each bad file")
    check.add_argument("files", nargs="+", type=Path, metavar="FILE")


def _add_record_arguments(rec: argparse.ArgumentParser) -> None:
    from .recorder.cli import add_arguments

    add_arguments(rec)


def _add_drift_arguments(drift: argparse.ArgumentParser) -> None:
    from .drift.cli import add_arguments

    add_arguments(drift)


def _add_check_client_arguments(parser: argparse.ArgumentParser) -> None:
    from .checkclient.cli import add_arguments

    add_arguments(parser)


_OPTION_TYPES: dict[str, Callable[[str], Any]] = {"str": str, "int": positive_count, "bytes": positive_size}


def _add_import_parsers(imp: argparse.ArgumentParser) -> None:
    """``ssemock import NAME``: one sub-command per registered importer, with its own options."""
    from .importers.registry import IMPORTERS

    kinds = imp.add_subparsers(dest="kind", required=True, parser_class=_Parser)
    for entry in IMPORTERS.values():
        p = kinds.add_parser(entry.name, help=entry.help)
        p.add_argument("files", nargs="+", type=Path, metavar="FILE")
        for option in entry.options:
            if option.switch:
                p.add_argument(option.flag, dest=option.dest, action="store_true", help=option.help)
            else:
                p.add_argument(option.flag, dest=option.dest, required=option.required, default=option.default,
                               type=_OPTION_TYPES[option.kind], metavar=option.metavar,
                               help=option.help)
        p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
        p.add_argument("--licence", help="licence of the recording, kept in the provenance")
        p.add_argument("--source", help="where the recording comes from, kept in the provenance")
        p.add_argument("--force", action="store_true", help="overwrite cassettes that exist in DIR")


def _add_check_parser(check: argparse.ArgumentParser) -> None:
    from .limits import MAX_CHECK_SIZE

    check.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="cassette files or directories")
    check.add_argument("--max-size", type=positive_size, default=MAX_CHECK_SIZE, metavar="BYTES",
                       help=f"largest cassette file (default {MAX_CHECK_SIZE}, 10 MiB; a unit may follow: 120MB, "
                            "1GiB)")
    check.add_argument("--max-age", type=age_days, default=None, metavar="DAYS",
                       help="warn about recordings older than this (provenance.recorded_at)")


_ADD_ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "serve": _add_serve_arguments, "import": _add_import_parsers, "inspect": _add_inspect_arguments,
    "diff": _add_diff_arguments, "scenarios": _add_scenarios_arguments, "check": _add_check_parser,
    "record": _add_record_arguments, "drift": _add_drift_arguments, "check-client": _add_check_client_arguments,
}
"""The function adding each sub-command's options (called only for the command parsed, or for all when
it is not known yet, e.g. ``ssemock --help``); their texts are :data:`ssemock.commands.COMMANDS`."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ssemock`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command(argv)).parse_args(argv)
    try:
        handler = {"serve": _serve, "import": _import, "inspect": _inspect, "diff": _diff, "scenarios": _scenarios,
                   "record": _record, "check": _check, "drift": _drift, "check-client": _check_client}
        return handler[args.command](args)
    except SSEMockError as exc:
        print(f"ssemock: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # input within every bound, but not within this process's memory
        print("ssemock: error: out of memory (see the bounds in the docs' Limits reference)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. "ssemock inspect X | head": the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _command(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv`` (its first word not starting with ``-``), or None."""
    return next((word for word in argv if not word.startswith("-")), None)


def console() -> NoReturn:
    """The ``ssemock`` console script and ``python -m ssemock``: :func:`main`, then exit with its status."""
    sys.exit(main())


def _serve(args: argparse.Namespace) -> int:
    from .edge.arguments import raise_open_files_limit

    server = _server(args)
    from .edge import configure_logging

    configure_logging(quiet=args.quiet)
    raise_open_files_limit()
    if args.workers is not None:
        try:
            from .workers import serve_workers
        except ImportError as exc:
            raise UsageError(f"serve --workers needs gunicorn ({exc}): pip install gunicorn (ssemock's 'workers' "
                             "extra)") from None
        return serve_workers(server, args.workers)
    import asyncio

    return asyncio.run(_run_until_signal(server))


def _server(args: argparse.Namespace) -> MockServer:
    from .bundled import bundled_scenarios
    from .config import Limits
    from .edge import NetworkOptions
    from .edge.arguments import record_of, tls_choice
    from .mockserver import MockServer

    scenarios = [bundled_scenarios(), *args.scenarios] if args.scenarios else None
    try:
        tls = tls_choice(args)
        if tls and args.workers is not None:
            raise ConfigError("--tls goes without --workers (the worker processes serve plain http)")
        if args.http2 and args.workers is not None:
            raise ConfigError("--http2 goes without --workers (the worker processes serve HTTP/1.1)")
        from .chaos import Chaos

        chaos = Chaos.of(args.chaos, "--chaos") if args.chaos else None
        return MockServer(
            args.cassettes, tls=tls, scenarios=scenarios, scenario=args.scenario, host=args.host, chaos=chaos,
            port=args.port, match_on=args.match_on, ignore_body=args.ignore_body_field,
            timing_scale=args.timing_scale, seed=args.seed,
            limits=record_of(Limits, args, "serve"), network=record_of(NetworkOptions, args, "serve"),
            stubs=args.stubs, cors_origins=args.cors_origin, http2=args.http2,
        )
    except ConfigError as exc:
        raise UsageError(f"serve: {exc}") from None


async def _run_until_signal(server: MockServer) -> int:
    from .background import stop_on_signals

    stop = stop_on_signals()
    await server.start()
    print(f"ssemock serving on {server.url}", flush=True)
    from .tls import trust_notice

    if notice := trust_notice(server.tls):
        print(notice, file=sys.stderr, flush=True)
    names = ", ".join(server.state.cassettes) or "(none)"
    print(f"{len(server.state.cassettes)} cassette(s): {names}", file=sys.stderr, flush=True)
    if len(server.state.stubs):
        from .stubs import count_stubs

        stubs = server.state.stubs.stubs
        steps = f" ({len(stubs)} steps in all)" if count_stubs(stubs) != len(stubs) else ""
        print(f"{count_stubs(stubs)} stub(s){steps}, tried first", file=sys.stderr, flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


def _import(args: argparse.Namespace) -> int:
    from .importers import save_imported
    from .importers.registry import IMPORTERS

    entry = IMPORTERS[args.kind]
    provenance: dict[str, Any] = {k: v for k, v in (("source", args.source), ("licence", args.licence)) if v}
    options = {o.dest: getattr(args, o.dest) for o in entry.options}
    if args.output.exists() and not args.output.is_dir():
        raise UsageError(f"-o {args.output}: expected a directory, found a file")
    cassettes = [entry.convert(file, provenance=provenance, **options) for file in args.files]
    targets = save_imported(args.files, cassettes, args.output, force=args.force)
    for file, cassette, target in zip(args.files, cassettes, targets):
        timed = any(i.response.timed for i in cassette.interactions)
        print(f"{file} -> {target} ({len(cassette.interactions)} interaction(s), "
              f"timing: {'from the recording' if timed else 'none'})")
    return 0


def _drift(args: argparse.Namespace) -> int:
    from .drift.cli import run

    return run(args)


def _check_client(args: argparse.Namespace) -> int:
    from .checkclient.cli import run

    return run(args)


def _record(args: argparse.Namespace) -> int:
    from .recorder.cli import run

    return run(args)


def _cassette(name: str) -> Cassette:
    """The cassette file ``name``, else the bundled cassette of that name."""
    from .cassette import load
    from .mockserver import collect_cassettes

    path = Path(name)
    if path.exists():
        return load(path)
    bundled = collect_cassettes(None)
    if name not in bundled:
        raise UsageError(f"no cassette file or bundled cassette named {name!r}")
    return bundled[name]


def _diff(args: argparse.Namespace) -> int:
    from .diff import MAX_IGNORED, diff_cassettes, timed_events

    if len(args.ignore) > MAX_IGNORED:
        raise UsageError(f"--ignore given {len(args.ignore)} times; at most {MAX_IGNORED} keys")
    a, b = _cassette(args.a), _cassette(args.b)
    found = diff_cassettes(a, b, tolerance=args.tolerance, ignore=frozenset(args.ignore), timing=not args.no_timing)
    for difference in found:
        print(difference)
    events = sum(len(timed_events(i.response)) for i in a.interactions)
    if not found:
        print(f"equal: {len(a.interactions)} interaction(s), {events} event(s)")
        return 0
    print(f"{len(found)} difference(s) between A ({args.a}) and B ({args.b})")
    return 1


def _inspect(args: argparse.Namespace) -> int:
    path = Path(args.cassette)
    from .stubs.files import holds_stub_files, is_stub_file

    if (path.is_file() and is_stub_file(path)) or (path.is_dir() and holds_stub_files(path)):
        from .stubs import load_stubs
        from .stubs.preview import stub_cassette

        try:
            cassette = stub_cassette(load_stubs(path), args.provider, name=str(path))
        except ValueError as exc:
            raise UsageError(f"inspect: {exc}") from None
    else:
        cassette = _cassette(args.cassette)
    if args.plot is not None:
        return _plot(cassette, args)
    if args.scenario is not None or args.interaction is not None:
        raise UsageError("--scenario and --interaction go with --plot")
    from .inspection import describe_cassette

    for line in describe_cassette(cassette, chunks=args.chunks):
        print(line)
    return 0


def _plot(cassette: Cassette, args: argparse.Namespace) -> int:
    from .plot import plot_interaction

    print(plot_interaction(cassette, args.plot, scenario=args.scenario, interaction=args.interaction))
    return 0


def _scenarios(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check_scenarios(args.files)
    from .mockserver import collect_scenarios

    for name, scenario in sorted(collect_scenarios(None).items()):
        print(f"{name:24} {scenario.description}")
    return 0


def _check_scenarios(files: list[Path]) -> int:
    """Load each scenario file: ``FILE: ok, NAME, N step(s), preserves P`` on stdout, or the error on stderr.

    Returns 0 when every file is valid, else 2 (each bad file named on one line of stderr).
    """
    from .limits import claim_name
    from .scenario import Scenario

    status = 0
    claimed: dict[str, str] = {}
    for file in files:
        try:
            scenario = Scenario.load(file)
            claim_name(claimed, scenario.name, file, ScenarioError, "scenario")
        except ScenarioError as exc:
            print(f"ssemock: error: {exc}", file=sys.stderr)
            status = 2
            continue
        print(f"{file}: ok, {scenario.name}, {len(scenario.steps)} step(s), preserves {scenario.preserves}")
        print("".join(f"{file}: {note}\n" for note in scenario.check_notes()), end="")
    return status


def _check(args: argparse.Namespace) -> int:
    from .hygiene import cassette_files, check_file

    try:
        files = cassette_files(args.paths)
    except ConfigError as exc:
        raise UsageError(f"check: {exc}") from None
    findings = [f for file in files for f in check_file(file, max_size=args.max_size, max_age=args.max_age)]
    count = len(files)
    for finding in findings:
        print(finding.line())
    failed = sum(not f.warning for f in findings)
    print(f"ssemock check: {count} cassette file(s), {failed} finding(s), {len(findings) - failed} warning(s)",
          file=sys.stderr)
    return 1 if failed else 0
