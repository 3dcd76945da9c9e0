"""``ssemock check-client [options] -- CMD [ARGS…]``: the options, the run, the reports, the exit status.

Exit status: 0 when every case passes (or is not graded), 1 when any fails, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..argtypes import option_number, positive_count, positive_size, scale_factor, scenario_list, seconds
from ..errors import ConfigError
from .check import CheckOptions, check, default_jobs
from .contract import MAX_OUTPUT
from .report import compare_lines, junit_xml, load_report, table_lines, write_text

__all__ = ["add_arguments", "run"]

_DEFAULTS = CheckOptions(jobs=1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``ssemock check-client`` to its parser."""
    parser.add_argument(
        "client",
        nargs=argparse.REMAINDER,
        metavar="-- CMD [ARGS…]",
        help="the client command, run once per case with SSEMOCK_URL and the SDK base URLs set",
    )
    parser.add_argument(
        "--cassette",
        action="append",
        default=[],
        metavar="NAME",
        help="a cassette to run the client against (repeatable; default: those the client asks for on a first run)",
    )
    parser.add_argument(
        "--cassettes",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="cassette directory or file served (repeatable; default: the bundled cassettes)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        type=scenario_list,
        metavar="NAME[,NAME…]",
        help="the scenarios run (repeatable; default: every bundled preset but those of the HTTP/2 and TLS layers "
        "without --http2 and --tls)",
    )
    parser.add_argument(
        "--scenarios",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="scenario directory or file added to the bundled presets (repeatable)",
    )
    parser.add_argument("--base", action="append", default=[], type=scenario_list, metavar="NAME[,NAME…]",
                        help="scenarios composed into every case, the clean one included (repeatable), e.g. a file of "
                        "--scenarios that serves close-delimited bodies with a charset, for a client that reads "
                        "beneath its HTTP library")
    parser.add_argument("--tls", action="store_true",
                        help="serve the cases over https with ssemock's local authority, trusted by the client "
                        "through SSL_CERT_FILE, REQUESTS_CA_BUNDLE and NODE_EXTRA_CA_CERTS; adds the TLS presets")
    parser.add_argument("--http2", action="store_true",
                        help="serve HTTP/2 too (ALPN h2 over --tls, else h2c with prior knowledge); adds the HTTP/2 "
                        "presets, which need an HTTP/2 client")
    _add_bounds(parser)
    _add_reports(parser)


def _add_bounds(parser: argparse.ArgumentParser) -> None:
    """The timeouts, the parallelism, the replay's timing and seed, and the bounds of a case."""
    parser.add_argument(
        "--client-timeout",
        type=seconds,
        metavar="SECONDS",
        help="the client's own read timeout: stalls then last longer than it and must be reported "
        "(default: stalls not graded)",
    )
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=_DEFAULTS.timeout,
        metavar="SECONDS",
        help=f"longest one case may take before the client is killed (default {_DEFAULTS.timeout:g})",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_count,
        default=None,
        metavar="N",
        help="cases run at once (default: the cores this process may use)",
    )
    parser.add_argument(
        "--timing-scale",
        type=scale_factor,
        default=_DEFAULTS.timing_scale,
        metavar="FACTOR",
        help="multiply recorded delays (default 0: none; injected stalls are not scaled)",
    )
    parser.add_argument("--seed", type=positive_count_or_zero, default=0, help="the scenarios' seed (default 0)")
    parser.add_argument(
        "--max-retries",
        type=positive_count_or_zero,
        default=_DEFAULTS.max_retries,
        metavar="N",
        help=f"requests a client may send again after an HTTP error (default {_DEFAULTS.max_retries})",
    )
    parser.add_argument(
        "--max-output",
        type=positive_size,
        default=MAX_OUTPUT,
        metavar="BYTES",
        help=f"largest stdout of one case (default {MAX_OUTPUT}, 64 MiB)",
    )


def _add_reports(parser: argparse.ArgumentParser) -> None:
    """The report files, the comparison with an earlier report, and shrinking."""
    parser.add_argument(
        "--shrink-budget",
        type=seconds,
        default=_DEFAULTS.shrink_budget,
        metavar="SECONDS",
        help=f"time spent at most shrinking each failed conformance case to its fewest failing steps and "
        f"chunk boundaries (default {_DEFAULTS.shrink_budget:g}; 0: no shrinking)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report to FILE ('-': stdout)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write the report as JUnit XML to FILE")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write the report as one self-contained HTML page to FILE"
    )
    parser.add_argument("--compare", type=Path, metavar="OLD.json", help="show what changed since an earlier --json")


def positive_count_or_zero(text: str) -> int:
    """argparse type: an integer >= 0."""
    return int(option_number(text, "an integer >= 0", integer=True, low=0))


def run(args: argparse.Namespace) -> int:
    """Run ``check-client`` with parsed ``args``; returns the exit status."""
    command = list(args.client)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise ConfigError(
            "check-client: no client command: give it after --, e.g. ssemock check-client -- python client.py"
        )
    old = load_report(args.compare) if args.compare is not None else None
    options = CheckOptions(
        cassettes=tuple(args.cassette),
        cassette_sources=tuple(args.cassettes),
        scenarios=None if args.scenario is None else tuple(n for names in args.scenario for n in names),
        scenario_sources=tuple(args.scenarios),
        client_timeout=args.client_timeout,
        timeout=args.timeout,
        jobs=args.jobs or default_jobs(),
        timing_scale=args.timing_scale,
        seed=args.seed,
        max_retries=args.max_retries,
        max_output=args.max_output,
        shrink_budget=args.shrink_budget,
        tls=args.tls,
        http2=args.http2,
        base=tuple(n for names in args.base for n in names),
    )
    report = check(command, options, _progress if sys.stderr.isatty() else None)
    to_stdout = args.json is not None and str(args.json) == "-"
    out = sys.stderr if to_stdout else sys.stdout
    for line in table_lines(report):
        print(line, file=out)
    if old is not None:
        for line in compare_lines(old, report):
            print(line, file=out)
    if args.json is not None:
        text = json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n"
        if to_stdout:
            sys.stdout.write(text)
        else:
            write_text(args.json, text)
    if args.junit is not None:
        write_text(args.junit, junit_xml(report))
    if args.html is not None:
        from .html import html_page  # here: Jinja2 is imported only for --html

        write_text(args.html, html_page(report))
    return 1 if report.failed else 0


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done == total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} cases", end=end, file=sys.stderr, flush=True)
