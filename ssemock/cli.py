"""The ``ssemock`` command: serve | record | import | inspect | diff | scenarios.

``main(argv) -> int`` returns the exit status: 0 on success, 2 for bad input
(one line on stderr, no traceback), 1 when serving fails at run time or ``diff`` finds
differences.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .background import stop_on_signals
from .bundled import bundled_scenarios
from .cassette import Cassette
from .diff import MAX_IGNORED, TOLERANCE, diff_cassettes, timed_events
from .edge import configure_logging
from .edge.arguments import add_network_arguments, network_kwargs, raise_open_files_limit
from .edge.options import DEFAULT_GRACE
from .errors import ConfigError, ScenarioError, SSEMockError
from .importers import decoded_body, save_imported
from .limits import JOURNAL_BODY, JOURNAL_CAPACITY, MAX_JSON_DEPTH, MAX_REQUEST_BODY, claim_name
from .matching import MATCHERS
from .mockserver import MockServer, collect_cassettes, collect_scenarios
from .recorder import cli as record_cli
from .server import cassette_summary
from .sse import Comment, decode

__all__ = ["console", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class UsageError(ConfigError):
    """Bad command-line input."""


def port_number(text: str) -> int:
    """argparse type: a TCP port 0-65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {port}")
    return port


def scale_factor(text: str) -> float:
    """argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def byte_count(text: str) -> int:
    """argparse type: an integer >= 0 (a size in bytes or a count)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ssemock", description="Record and replay Server-Sent Events streams.")
    parser.add_argument("--version", action="version", version=f"ssemock {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    serve = sub.add_parser("serve", help="serve cassettes over HTTP (replay)")
    serve.add_argument("--cassettes", action="append", type=Path, metavar="DIR",
                       help="cassette directory or file (repeatable; default: the bundled cassettes)")
    serve.add_argument("--scenarios", action="append", type=Path, metavar="DIR",
                       help="scenario directory or file, added to the bundled presets (repeatable; "
                            "a scenario of the same name replaces the preset)")
    serve.add_argument("--scenario", metavar="NAME", help="default scenario(s), comma-separated")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=8080,
                       help="port (default 8080; 0 picks a free port)")
    serve.add_argument("--timing-scale", type=scale_factor, default=1.0, metavar="FACTOR",
                       help="multiply recorded delays (1 = as recorded, 0 = no delays, 0.5 = twice as fast)")
    serve.add_argument("--seed", type=int, default=0,
                       help="seed of the scenarios' random choices (default 0; journaled with every request)")
    serve.add_argument("--match-on", default="method,path,body",
                       help=f"comma-separated matchers among {', '.join(MATCHERS)} (default method,path,body)")
    serve.add_argument("--max-request-body", type=byte_count, default=MAX_REQUEST_BODY, metavar="BYTES",
                       help=f"answer larger request bodies with 413 (default {MAX_REQUEST_BODY}, 32 MiB)")
    serve.add_argument("--max-json-depth", type=byte_count, default=MAX_JSON_DEPTH, metavar="N",
                       help=f"answer JSON bodies nested deeper with 400 (default {MAX_JSON_DEPTH}, at most 256)")
    serve.add_argument("--journal-capacity", type=byte_count, default=JOURNAL_CAPACITY, metavar="N",
                       help=f"journal entries kept, the oldest dropped first (default {JOURNAL_CAPACITY})")
    serve.add_argument("--journal-body-limit", type=byte_count, default=JOURNAL_BODY, metavar="BYTES",
                       help=f"journal larger bodies as sha256 + size + prefix (default {JOURNAL_BODY}, 64 KiB)")
    add_network_arguments(serve, grace=DEFAULT_GRACE,
                          grace_help="on SIGINT/SIGTERM, let requests in progress finish this long, then cut them "
                                     f"(default {DEFAULT_GRACE:g}; a second signal exits at once)")

    imp = sub.add_parser("import", help="convert foreign recordings into ssemock cassettes")
    kinds = imp.add_subparsers(dest="kind", required=True, parser_class=_Parser)
    vcr = kinds.add_parser("vcr", help="VCR.py / pytest-recording cassettes")
    vcr.add_argument("files", nargs="+", type=Path, metavar="FILE")
    for kind, helptext in (("raw", "raw response bodies (.sse.txt, .sse.bin)"),
                           ("chunks", "one JSON payload per line (.chunks.txt)")):
        p = kinds.add_parser(kind, help=helptext)
        p.add_argument("files", nargs="+", type=Path, metavar="FILE")
        p.add_argument("--path", required=True, help="URL path to answer, e.g. /v1/chat/completions")
        p.add_argument("--method", default="POST", help="HTTP method to answer (default POST)")
        if kind == "chunks":
            p.add_argument("--done", action="store_true", help="append 'data: [DONE]' (OpenAI chat style)")
            p.add_argument("--event-from-type", action="store_true",
                           help="write 'event: <payload type>' lines (OpenAI Responses style)")
    for p in kinds.choices.values():
        p.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="output directory")
        p.add_argument("--licence", help="licence of the recording, kept in the provenance")
        p.add_argument("--source", help="where the recording comes from, kept in the provenance")
        p.add_argument("--force", action="store_true", help="overwrite cassettes that exist in DIR")

    ins = sub.add_parser("inspect", help="show a cassette's interactions, chunks, timing and events")
    ins.add_argument("cassette", help="cassette file, or the name of a bundled cassette")
    ins.add_argument("--chunks", action="store_true", help="list every chunk (size and time)")
    ins.add_argument("--plot", type=Path, metavar="FILE.svg|FILE.png",
                     help="draw one interaction's chunks, gaps and events over time (needs ssemock[plot])")
    ins.add_argument("--interaction", type=int, metavar="N",
                     help="the interaction drawn (default: the first event stream)")
    ins.add_argument("--scenario", metavar="NAME[,NAME…]|FILE",
                     help="draw the stream as sent under these scenarios (bundled names or a scenario file)")

    dif = sub.add_parser("diff", help="compare two cassettes event by event and in time; exit 0 equal, 1 different")
    dif.add_argument("a", metavar="A", help="the reference: a cassette file or a bundled cassette's name")
    dif.add_argument("b", metavar="B", help="the cassette compared with it (e.g. a re-recording)")
    dif.add_argument("--tolerance", type=scale_factor, default=TOLERANCE, metavar="S",
                     help=f"seconds two times may differ by (default {TOLERANCE})")
    dif.add_argument("--no-timing", action="store_true", help="compare no times")
    dif.add_argument("--ignore", action="append", default=[], metavar="KEY",
                     help=f"a JSON key left out of bodies and event data at any depth (at most {MAX_IGNORED})")

    scen = sub.add_parser("scenarios", help="list the bundled scenarios, one line each; 'check FILE…' validates files")
    checks = scen.add_subparsers(dest="action", parser_class=_Parser)
    check = checks.add_parser("check", help="validate scenario files: one line per file; exit 2 naming the file, "
                                            "step and field of the first error of each bad file")
    check.add_argument("files", nargs="+", type=Path, metavar="FILE")
    record_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ssemock`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        handler = {"serve": _serve, "import": _import, "inspect": _inspect, "diff": _diff, "scenarios": _scenarios,
                   "record": record_cli.run}
        return handler[args.command](args)
    except SSEMockError as exc:
        print(f"ssemock: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. "ssemock inspect X | head": the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def console() -> NoReturn:
    """The ``ssemock`` console script and ``python -m ssemock``: :func:`main`, then exit.

    After ``serve`` and ``record`` have stopped (every cassette written and closed, every
    log line flushed), the process ends without tearing the interpreter down, which
    takes longer than the stop itself (0.2-0.5 s measured on a loaded machine): a signal
    stops the command within a second.
    """
    status = main()
    if sys.argv[1:2] in (["serve"], ["record"]):
        logging.shutdown()
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


def _serve(args: argparse.Namespace) -> int:
    match_on = tuple(m.strip() for m in args.match_on.split(","))
    if not all(match_on):
        raise UsageError(f"--match-on: expected comma-separated matchers among {', '.join(MATCHERS)}, "
                         f"got {args.match_on!r}")
    scenarios = [bundled_scenarios(), *args.scenarios] if args.scenarios else None
    try:
        server = MockServer(
            args.cassettes, scenarios=scenarios, scenario=args.scenario, host=args.host,
            port=args.port, match_on=match_on, timing_scale=args.timing_scale, seed=args.seed,
            max_request_body=args.max_request_body, journal_capacity=args.journal_capacity,
            journal_body_limit=args.journal_body_limit, max_json_depth=args.max_json_depth,
            **network_kwargs(args),
        )
    except ConfigError as exc:
        raise UsageError(f"serve: {exc}") from None
    configure_logging(quiet=args.quiet)
    raise_open_files_limit()
    return asyncio.run(_run_until_signal(server))


async def _run_until_signal(server: MockServer) -> int:
    stop = stop_on_signals()
    await server.start()
    print(f"ssemock serving on {server.url}", flush=True)
    names = ", ".join(server.state.cassettes) or "(none)"
    print(f"{len(server.state.cassettes)} cassette(s): {names}", file=sys.stderr, flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


def _import(args: argparse.Namespace) -> int:
    from .importers.chunks import import_chunks
    from .importers.raw import import_raw
    from .importers.vcr import import_vcr

    provenance: dict[str, Any] = {k: v for k, v in (("source", args.source), ("licence", args.licence)) if v}
    if args.output.exists() and not args.output.is_dir():
        raise UsageError(f"-o {args.output}: expected a directory, found a file")
    cassettes = []
    for file in args.files:
        if args.kind == "vcr":
            cassettes.append(import_vcr(file, provenance=provenance))
        elif args.kind == "raw":
            cassettes.append(import_raw(file, method=args.method, request_path=args.path, provenance=provenance))
        else:
            cassettes.append(import_chunks(
                file, method=args.method, request_path=args.path, done=args.done,
                event_from_type=args.event_from_type, provenance=provenance,
            ))
    targets = save_imported(args.files, cassettes, args.output, force=args.force)
    for file, cassette, target in zip(args.files, cassettes, targets):
        print(f"{file} -> {target} ({len(cassette.interactions)} interaction(s), timing: none)")
    return 0


def _cassette(name: str) -> Cassette:
    """The cassette file ``name``, else the bundled cassette of that name."""
    path = Path(name)
    if path.exists():
        return Cassette.load(path)
    bundled = collect_cassettes(None)
    if name not in bundled:
        raise UsageError(f"no cassette file or bundled cassette named {name!r}")
    return bundled[name]


def _diff(args: argparse.Namespace) -> int:
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
    cassette = _cassette(args.cassette)
    if args.plot is not None:
        return _plot(cassette, args)
    if args.scenario is not None or args.interaction is not None:
        raise UsageError("--scenario and --interaction go with --plot")
    summary = cassette_summary(cassette)
    print(f"cassette {cassette.name}: {len(cassette.interactions)} interaction(s)")
    for key, value in cassette.provenance.items():
        print(f"  {key}: {value}")
    for index, (inter, line) in enumerate(zip(cassette.interactions, summary["interactions"])):
        resp = inter.response
        sizes = [len(c.data) for c in resp.chunks]
        print(f"\n#{index} {line['request']} -> {resp.status} {line['content_type'] or ''}".rstrip())
        print(f"  {len(sizes)} chunk(s), {sum(sizes)} bytes, sizes min/max {min(sizes, default=0)}/"
              f"{max(sizes, default=0)}; end: {resp.end.how}")
        if resp.timed:
            gaps = [b.t - a.t for a, b in zip(resp.chunks, resp.chunks[1:])]
            first = resp.chunks[0].t if resp.chunks else resp.end.t
            print(f"  timing: headers {resp.start:.3f} s, first chunk {first:.3f} s, end {resp.end.t:.3f} s, "
                  f"largest gap {max(gaps, default=0.0):.3f} s")
        else:
            print("  timing: none (imported without timing; replayed without delays)")
        if args.chunks:
            for c in resp.chunks:
                print(f"    t={c.t:.6f}  {len(c.data)} bytes")
        _print_events(resp.body, resp.header("content-type") or "", resp.header("content-encoding"))
    return 0


def _plot(cassette: Cassette, args: argparse.Namespace) -> int:
    from .plot import draw, pick_interaction, timeline
    from .scenario import Scenario

    scenario = None
    if args.scenario is not None:
        if Path(args.scenario).is_file():
            scenario = Scenario.load(args.scenario)
        else:
            known = collect_scenarios(None)
            names = [n.strip() for n in args.scenario.split(",") if n.strip()]
            unknown = [n for n in names if n not in known]
            if unknown or not names:
                raise UsageError(f"--scenario: no scenario file or bundled scenario named {args.scenario!r}")
            scenario = Scenario.compose(known[n] for n in names)
    index = pick_interaction(cassette, args.interaction)
    line = timeline(cassette, index, scenario)
    draw(line, args.plot)
    print(f"{args.plot}: {line.title}, {len(line.chunks)} chunk(s), {len(line.events)} event(s), end {line.end_how}")
    return 0


def _print_events(body: bytes, content_type: str, encoding: str | None) -> None:
    if encoding and encoding.lower() != "identity":
        plain = decoded_body(body, encoding)
        if plain is None:
            print(f"  body: {len(body)} bytes, {encoding}-encoded (not decodable)")
            return
        body = plain
    if "event-stream" not in content_type:
        print(f"  body: {body[:100].decode('utf-8', 'replace')!r}" + ("…" if len(body) > 100 else ""))
        return
    items = decode(body, comments=True)
    events = [i for i in items if not isinstance(i, Comment)]
    print(f"  {len(events)} event(s), {len(items) - len(events)} comment(s):")
    for item in items:
        if isinstance(item, Comment):
            print(f"    : {item.text}")
        else:
            data = item.data if len(item.data) <= 90 else item.data[:89] + "…"
            print(f"    {item.type}: {data}")


def _scenarios(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check_scenarios(args.files)
    for name, scenario in sorted(collect_scenarios(None).items()):
        print(f"{name:24} {scenario.description}")
    return 0


def _check_scenarios(files: list[Path]) -> int:
    """Load each scenario file: ``FILE: ok, NAME, N step(s), preserves P`` on stdout, or the error on stderr.

    Returns 0 when every file is valid, else 2 (each bad file named on one line of stderr).
    """
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
    return status
