"""``ssemock drift CASSETTE… --target URL``: the options, the run, the report and the exit status.

Exit status (:func:`exit_status`): 0 when no finding is at or above ``--fail-on`` (default
``changed``: cosmetic findings alone exit 0), else by the worst tier: 3 cosmetic, 4 changed,
5 breaking; 1 when an interaction could not be compared (the provider unreachable, an error from the
recorder, too slow, too large, not replayable) and no finding gives more; 2 for bad input (the CLI's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..argtypes import positive_count, positive_size, scale_factor, seconds
from ..errors import ConfigError
from ..limits import MAX_CHECK_SIZE
from ..recorder.relay import HOP_BY_HOP
from .compare import Finding, Tier, Tolerance
from .run import DriftOptions, Outcome

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = [
    "EXIT_FAILED",
    "EXIT_STATUS",
    "MAX_CASSETTES",
    "MAX_INTERACTIONS",
    "add_arguments",
    "exit_status",
    "header_option",
    "run",
]

MAX_CASSETTES = 100
"""Cassette files one run reads at most by default (``--max-cassettes``)."""
MAX_INTERACTIONS = 200
"""Interactions one run replays at most by default (``--max-interactions``): each is a paid request."""
MAX_RESPONSE = MAX_CHECK_SIZE
"""Bytes of one answer read at most by default (``--max-response-size``; ``ssemock check``'s file bound)."""
EXIT_STATUS = {Tier.COSMETIC: 3, Tier.CHANGED: 4, Tier.BREAKING: 5}
"""The exit status by the worst tier found (at or above ``--fail-on``)."""
EXIT_FAILED = 1
"""The exit status when an interaction could not be compared (and no finding gives more)."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110 section 5.6.2
_TIERS = {t.label: t for t in Tier}


def add_arguments(drift: argparse.ArgumentParser) -> None:
    """Add the options of ``ssemock drift`` to its parser."""
    drift.add_argument(
        "cassettes", nargs="+", type=Path, metavar="CASSETTE", help="cassette files or directories (their *.yaml files)"
    )
    drift.add_argument(
        "--target", metavar="URL", help="provider base URL, e.g. https://api.openai.com (default: $SSEMOCK_TARGET)"
    )
    drift.add_argument(
        "--header",
        action="append",
        default=[],
        type=header_option,
        metavar="'NAME: VALUE'",
        help="add this request header, e.g. 'Authorization: Bearer ${OPENAI_API_KEY}': ${VAR} is read "
        "from the environment; never printed nor written (repeatable)",
    )
    drift.add_argument(
        "--fail-on",
        choices=list(_TIERS),
        default="changed",
        help="the least tier that fails the run (default changed: cosmetic findings exit 0)",
    )
    drift.add_argument("--json", action="store_true", help="print one JSON document (for CI) instead of lines")
    drift.add_argument(
        "--update",
        action="store_true",
        help="replace each interaction with findings by the new recording (atomic write; the other interactions kept)",
    )
    _add_bounds(drift)


def _add_bounds(drift: argparse.ArgumentParser) -> None:
    """The timing tolerance and the bounds of a run."""
    drift.add_argument(
        "--timing-tolerance",
        type=scale_factor,
        default=Tolerance.factor,
        metavar="FACTOR",
        help=f"timing slower or faster by up to this factor is cosmetic, beyond it changed (default "
        f"{Tolerance.factor:g})",
    )
    drift.add_argument(
        "--timing-floor",
        type=seconds,
        default=Tolerance.floor,
        metavar="SECONDS",
        help=f"timing that moved by at most this much is no finding (default {Tolerance.floor:g})",
    )
    drift.add_argument("--no-timing", action="store_true", help="compare no timing")
    drift.add_argument(
        "--timeout",
        type=seconds,
        default=DriftOptions.timeout,
        metavar="SECONDS",
        help=f"longest one interaction may take (default {DriftOptions.timeout:g})",
    )
    drift.add_argument(
        "--max-response-size",
        type=positive_size,
        default=MAX_RESPONSE,
        metavar="BYTES",
        help=f"largest answer read (default {MAX_RESPONSE}, 10 MiB; a unit may follow: 50MB)",
    )
    drift.add_argument(
        "--max-interactions",
        type=positive_count,
        default=MAX_INTERACTIONS,
        metavar="N",
        help=f"most interactions replayed in one run (default {MAX_INTERACTIONS})",
    )
    drift.add_argument(
        "--max-cassettes",
        type=positive_count,
        default=MAX_CASSETTES,
        metavar="N",
        help=f"most cassette files read in one run (default {MAX_CASSETTES})",
    )


def header_option(text: str) -> tuple[str, str]:
    """``'NAME: VALUE'`` as ``(NAME, VALUE)``, ``${VAR}`` not expanded yet (:func:`expand`)."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _TOKEN.fullmatch(name) or "\r" in value or "\n" in value:
        raise argparse.ArgumentTypeError(
            f"expected 'NAME: VALUE' (a header name, a colon, a value on one line), "
            f"got {name + ':' if colon else text[:40]!r}..."
        )
    if name.lower() in HOP_BY_HOP:  # a Content-Length of its own held every request until --timeout
        raise argparse.ArgumentTypeError(
            f"{name} is a header drift sets itself (the framing, the target's Host, the recorder's cassette); "
            "expected another header, such as Authorization"
        )
    return name, value


def expand(headers: Sequence[tuple[str, str]], environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The headers with each ``${VAR}`` replaced by the environment variable's value.

    Raises:
        ConfigError: a variable is not set or empty (named; the value of none is shown).
    """
    out = []
    for name, value in headers:
        for variable in _VARIABLE.findall(value):
            if not environ.get(variable):
                raise ConfigError(f"drift: --header {name}: the environment variable {variable} is not set")
        out.append((name, _VARIABLE.sub(lambda m: environ[m.group(1)], value)))
    return tuple(out)


def exit_status(outcomes: Sequence[Outcome], fail_on: Tier) -> int:
    """The exit status of a run (see the module docstring)."""
    worst = max((f.tier for o in outcomes for f in o.findings if f.tier >= fail_on), default=None)
    failed = EXIT_FAILED if any(o.error for o in outcomes) else 0
    return max(failed, EXIT_STATUS[worst] if worst is not None else 0)


def run(args: argparse.Namespace) -> int:
    """Run ``ssemock drift``; returns the exit status.

    Raises:
        ConfigError: a bound exceeded, a missing target or variable, a bad target URL.
        CassetteError: a cassette file does not load (the file and field named).
    """
    from ..recorder.core import split_target
    from .run import replay_all
    from .update import update_cassettes

    target = args.target or os.environ.get("SSEMOCK_TARGET", "").strip()
    if not target:
        raise ConfigError("drift needs --target URL or the SSEMOCK_TARGET environment variable")
    shown = split_target(target)[1]
    files, cassettes = _load(args, shown)
    _warn_literal(args.header)
    tolerance = Tolerance(args.timing_tolerance, args.timing_floor, not args.no_timing)
    options = DriftOptions(target, expand(args.header, os.environ), tolerance, args.timeout, args.max_response_size)
    outcomes = asyncio.run(replay_all(cassettes, options))
    updated, problems = update_cassettes(cassettes, outcomes) if args.update else ([], [])
    status = max(exit_status(outcomes, _TIERS[args.fail_on]), EXIT_FAILED if problems else 0)
    for problem in problems:
        print(f"ssemock drift: error: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps(report(shown, files, outcomes, updated, status), indent=2))
    else:
        _print_lines(outcomes, updated)
    counts = ", ".join(f"{n} {t}" for t, n in _counts(outcomes).items())
    compared = sum(not o.error for o in outcomes)
    print(f"ssemock drift: {len(files)} cassette file(s), {compared} of {len(outcomes)} interaction(s) compared with "
          f"{shown}; {counts}; exit {status}", file=sys.stderr)  # fmt: skip
    return status


def _load(args: argparse.Namespace, shown: str) -> tuple[list[Path], list[Cassette]]:
    """The cassette files named and their cassettes, within ``--max-cassettes`` and ``--max-interactions``."""
    from ..cassette import load
    from ..hygiene import cassette_files

    files = cassette_files(args.cassettes)
    if len(files) > args.max_cassettes:
        raise ConfigError(f"drift: {len(files)} cassette files, over --max-cassettes {args.max_cassettes}")
    cassettes = [load(file) for file in files]
    count = sum(len(c.interactions) for c in cassettes)
    if count > args.max_interactions:
        raise ConfigError(
            f"drift: {count} interactions in {len(files)} cassette file(s), over --max-interactions "
            f"{args.max_interactions} (each one is a request to {shown})"
        )
    return files, cassettes


def _warn_literal(headers: Sequence[tuple[str, str]]) -> None:
    """One warning line per credential header whose value is written out on the command line."""
    from ..scanner.names import SECRET_REQUEST_HEADERS, is_credential_name

    for name, value in headers:
        secret = name.lower() in SECRET_REQUEST_HEADERS or is_credential_name(name, header=True)
        if secret and not _VARIABLE.search(value):
            print(f"ssemock drift: warning: the value of --header {name} is visible to other local users (ps); "
                  "write it as ${VARIABLE}, read from the environment", file=sys.stderr)  # fmt: skip


def report(
    shown: str, files: Sequence[Path], outcomes: Sequence[Outcome], updated: Sequence[Path], status: int
) -> dict[str, Any]:
    """The ``--json`` document: target, cassette files, findings, interactions not compared, counts by tier,
    the worst tier, the files updated and the exit status."""
    findings = [o_f for o in outcomes for o_f in o.findings]
    worst = max((f.tier for f in findings), default=None)
    return {
        "target": shown,
        "cassettes": [str(f) for f in files],
        "compared": sum(not o.error for o in outcomes),
        "findings": [_finding_doc(f) for f in findings],
        "not_compared": [
            {"cassette": str(o.cassette), "interaction": o.index, "request": o.request, "error": o.error}
            for o in outcomes
            if o.error
        ],
        "counts": _counts(outcomes),
        "worst": worst.label if worst is not None else None,
        "updated": [str(p) for p in updated],
        "not_updated": [
            {"cassette": str(o.cassette), "interaction": o.index, "reason": o.not_updated}
            for o in outcomes
            if o.not_updated
        ],
        "exit_status": status,
    }


def _finding_doc(finding: Finding) -> dict[str, Any]:
    return {
        "tier": finding.tier.label,
        "kind": finding.kind,
        "subject": finding.subject,
        "recorded": finding.recorded,
        "now": finding.now,
        "cassette": finding.cassette,
        "interaction": finding.interaction,
        "request": finding.request,
    }


def _counts(outcomes: Sequence[Outcome]) -> dict[str, int]:
    tiers = [f.tier for o in outcomes for f in o.findings]
    return {t.label: tiers.count(t) for t in sorted(Tier, reverse=True)}


def _print_lines(outcomes: Sequence[Outcome], updated: Sequence[Path]) -> None:
    for tier in sorted(Tier, reverse=True):
        lines = [f.line() for o in outcomes for f in o.findings if f.tier is tier]
        if lines:
            print(f"{tier.label} ({len(lines)})")
            print("".join(f"  {line}\n" for line in lines), end="")
    failed = [o for o in outcomes if o.error]
    if failed:
        print(f"not compared ({len(failed)})")
        print("".join(f"  {o.cassette} #{o.index} {o.request}: {o.error}\n" for o in failed), end="")
    for o in outcomes:
        if o.not_updated:
            print(f"not updated: {o.cassette} #{o.index} {o.request}: {o.not_updated}")
    for path in updated:
        print(f"updated {path}")
