"""``ssemock record``: the recorder on the command line (design §4).

``ssemock record --target URL [--cassettes DIR] [--host H] [--port P]`` prints
``ssemock recording on http://HOST:PORT -> URL`` as its first stdout line, one
progress line per interaction on stderr (``--quiet``: none), and a summary on stderr
at exit. ``--stubs PATH`` (instead of ``--target``) records what stubs answer: a replay
server with those stubs only (no cassette stands in) runs in the same process as the
upstream, so each stub hit is written as a cassette, like any recording (redacted, written
atomically, replayable by ``ssemock serve``); the first line then ends ``-> stubs PATH`` (as typed,
``stubs/`` with its slash).
Without ``--target`` nor ``--stubs``, the target is the environment variable ``SSEMOCK_TARGET``
(:data:`TARGET_VARIABLE`): user info in it (``https://user:password@proxy``) then stays out of the
process list, where any local user reads a command line; a ``--target`` holding a password gets a
warning on stderr saying so. SIGINT/SIGTERM stop it: streams in progress get ``--grace`` seconds (default
0.1), every cassette is written, then it exits with status 0 (1 if a cassette could
not be written); a second signal exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..argtypes import body_path, integer, matcher_names, scenario_list, seconds
from ..background import stop_on_signals
from ..config import Limits
from ..edge import NetworkOptions, configure_logging
from ..edge.arguments import (
    add_limit_arguments,
    add_network_arguments,
    add_tls_arguments,
    raise_open_files_limit,
    record_of,
    tls_choice,
)
from ..errors import RecorderConfigError, RecorderError
from ..limits import MAX_BODY_PATHS
from ..matching import MATCHERS
from ..tls import trust_notice
from .modes import RecordMode

if TYPE_CHECKING:
    from ..mockserver import MockServer
    from .core import Recorder

__all__ = ["TARGET_VARIABLE", "add_arguments", "run", "target_of"]

TARGET_VARIABLE = "SSEMOCK_TARGET"
"""The environment variable holding the target when ``--target`` is not given (nor ``--stubs``)."""


def add_arguments(rec: argparse.ArgumentParser) -> None:
    """Add the options of the ``record`` subcommand to its parser ``rec``."""
    from ..chaos import CHAOS_HELP, chaos_rule  # the scenario model, imported when the record parser is built
    upstream = rec.add_mutually_exclusive_group()
    upstream.add_argument("--target", metavar="URL",
                          help=f"provider base URL, e.g. https://api.openai.com (default: ${TARGET_VARIABLE}, "
                               "where user info such as https://user:password@proxy stays out of the process list, "
                               "which any local user can read)")
    upstream.add_argument("--stubs", action="append", metavar="PATH",  # kept as typed, for the first line
                          help="instead of a provider, stub files or directories (repeatable): each stub's answer "
                               "is recorded, e.g. to review it as a cassette")
    rec.add_argument("--cassettes", type=Path, default=Path("cassettes"), metavar="DIR",
                     help="directory the cassettes are written to (default ./cassettes)")
    rec.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    rec.add_argument("--port", type=integer, default=8080, help="port (default 8080; 0 picks a free port)")
    rec.add_argument("--record-mode", default="once", metavar="MODE",
                     help=f"one of {', '.join(m.value for m in RecordMode)} (default once)")
    rec.add_argument("--cassette", metavar="NAME",
                     help="cassette for requests without X-SSEMock-Cassette (default: one per request fingerprint)")
    rec.add_argument("--filter-header", action="append", default=[], metavar="NAME",
                     help="also drop this request or response header (repeatable)")
    rec.add_argument("--filter-query", action="append", default=[], metavar="NAME",
                     help="also drop this query parameter (repeatable)")
    rec.add_argument("--filter-json", action="append", default=[], metavar="PATH",
                     help="replace this request body JSON path by REDACTED, e.g. metadata.user_id (repeatable)")
    rec.add_argument("--filter-regex", action="append", default=[], metavar="REGEX",
                     help="replace matches of this regular expression (RE2 syntax: no backreferences or look-around) "
                          "everywhere (repeatable)")
    rec.add_argument("--filter-word", action="append", default=[], metavar="WORD",
                     help="also take names holding this word for credentials, e.g. pin (repeatable)")
    rec.add_argument("--allow-name", action="append", default=[], metavar="NAME",
                     help="keep this header, query or JSON field name although a word of it names a credential "
                          "(repeatable)")
    rec.add_argument("--credential-min-length", type=integer, default=8, metavar="N",
                     help="replace a credential sent wherever it appears when it has at least N characters "
                          "(default 8)")
    rec.add_argument("--max-body-size", type=integer, default=1 << 20, metavar="BYTES",
                     help="write request bodies larger than this into the cassette as sha256 + size only "
                          "(default 1048576; -1 keeps all); --max-request-body refuses larger requests instead")
    rec.add_argument("--keep-encoding", action="store_true",
                     help="forward Accept-Encoding and record compressed bytes (default: ask for identity)")
    rec.add_argument("--read-timeout", type=seconds, default=600.0, metavar="SECONDS",
                     help="end a stream as 'timeout' after this long without a byte (default 600)")
    rec.add_argument("--match-on", type=matcher_names, default="method,path,body",
                     help=f"matchers for replaying recorded requests, among {', '.join(MATCHERS)}")
    rec.add_argument("--drop-body-field", action="append", default=[], type=body_path, metavar="PATH",
                     help="delete this request body field (e.g. metadata.trace_id, messages[*].id) from the stored "
                          "body, and list it in the cassette's match: dropped_body, which replay then ignores; the "
                          f"request goes upstream whole (repeatable, at most {MAX_BODY_PATHS})")
    rec.add_argument("--ignore-body-field", action="append", default=[], type=body_path, metavar="PATH",
                     help="a request body field the body matcher ignores when replaying recorded requests "
                          f"(repeatable, at most {MAX_BODY_PATHS})")
    rec.add_argument("--scenario", type=scenario_list, metavar="NAME",
                     help="send every client's answer under these scenarios (comma-separated), e.g. cut-mid-event: "
                          "the cassette keeps the upstream's own bytes; a forwarded answer is held back until complete")
    rec.add_argument("--scenarios", action="append", type=Path, metavar="DIR",
                     help="scenario directory or file for --scenario and --chaos, added to the bundled presets "
                          "(repeatable)")
    rec.add_argument("--chaos", action="append", type=chaos_rule, metavar="RULE",
                     help=CHAOS_HELP.replace("faults by rate", "faults by rate on what clients get"))
    rec.add_argument("--seed", type=integer, default=0,
                     help="seed of the --chaos draws and the scenarios' random choices (default 0)")
    add_tls_arguments(rec)
    add_limit_arguments(rec, "record")
    add_network_arguments(rec, "record", grace_help="on SIGINT/SIGTERM, let streams in progress finish this long, "
                                                    "then record them as ended by 'timeout' (a second signal exits "
                                                    "at once)")


def run(args: argparse.Namespace) -> int:
    """Run ``ssemock record`` until SIGINT/SIGTERM; returns the exit status.

    Raises:
        RecorderConfigError: bad mode, target, cassette name, directory, filter,
            matcher or number (port, size, timeout).
        ConfigError: a limit or network option out of its bounds (the message names the field).
    """
    from ..redact import Filter  # imported here: "ssemock serve" never needs them
    from .core import Recorder

    filter_ = Filter(
        request_headers=frozenset(args.filter_header), response_headers=frozenset(args.filter_header),
        query_params=frozenset(args.filter_query), json_paths=tuple(args.filter_json),
        patterns=tuple(args.filter_regex), secret_words=frozenset(args.filter_word),
        allow_names=frozenset(args.allow_name), credential_min_length=args.credential_min_length,
    )

    limits, network = record_of(Limits, args, "record"), record_of(NetworkOptions, args, "record")
    tls = tls_choice(args)
    shaping: dict[str, Any] = {"scenario": args.scenario, "seed": args.seed}
    if args.chaos:
        from ..chaos import Chaos

        shaping["chaos"] = Chaos.of(args.chaos, "--chaos")
    if args.scenarios:
        from ..bundled import bundled_scenarios

        shaping["scenarios"] = [bundled_scenarios(), *args.scenarios]

    def make(target: str, shown: str | None = None) -> Recorder:
        return Recorder(
            target, args.cassettes, mode=args.record_mode, cassette=args.cassette, host=args.host,
            port=args.port, filter=filter_, max_body_size=None if args.max_body_size == -1 else args.max_body_size,
            limits=limits, network=network, keep_encoding=args.keep_encoding, read_timeout=args.read_timeout,
            match_on=args.match_on, ignore_body=args.ignore_body_field, drop_body=args.drop_body_field, tls=tls,
            progress=None if args.quiet else sys.stderr, shown_target=shown, **shaping,
        )

    if args.stubs is None:
        recorder = make(target_of(args.target, os.environ))  # checks every option
        return _run(lambda: _until_signal(recorder), quiet=args.quiet)
    from ..mockserver import MockServer

    make("http://127.0.0.1")  # every option checked before anything starts
    stubs = MockServer(cassettes=[], scenarios=[], stubs=args.stubs)  # the stub files too
    return _run(lambda: _stubs_until_signal(stubs, make, "stubs " + ", ".join(args.stubs)),
                quiet=args.quiet)


def target_of(option: str | None, environ: Mapping[str, str]) -> str:
    """The target URL: ``--target`` (``option``), else ``environ[SSEMOCK_TARGET]``. A ``--target`` holding a
    password gets one warning line on stderr: the command line is visible to other local users.

    Raises:
        RecorderConfigError: neither is given (or the variable is empty).
    """
    if option is None:
        target = environ.get(TARGET_VARIABLE, "").strip()
        if not target:
            raise RecorderConfigError(f"record needs --target URL, --stubs PATH or the {TARGET_VARIABLE} environment "
                                      "variable (e.g. https://api.openai.com)")
        return target
    if _has_password(option):
        print(f"ssemock record: warning: the password in --target is visible to other local users (ps, "
              f"/proc/PID/cmdline); give the URL in the {TARGET_VARIABLE} environment variable instead",
              file=sys.stderr, flush=True)
    return option


def _has_password(url: str) -> bool:
    """Whether ``url``'s user info holds a password (``user:password@``)."""
    try:
        return urlsplit(url).password is not None
    except ValueError:  # not a URL: the recorder says so
        return False


def _run(main: Callable[[], Coroutine[Any, Any, int]], *, quiet: bool) -> int:
    configure_logging(quiet=quiet)
    raise_open_files_limit()
    return asyncio.run(main())


async def _stubs_until_signal(stubs: MockServer, make: Callable[[str, str], Recorder], shown: str) -> int:
    """Record what ``stubs`` answer (a replay server in this event loop) until SIGINT/SIGTERM."""
    await stubs.start()
    try:
        return await _until_signal(make(stubs.url, shown))
    finally:
        await stubs.stop()


async def _until_signal(recorder: Recorder) -> int:
    stop = stop_on_signals()
    await recorder.start()
    print(f"ssemock recording on {recorder.url} -> {recorder.target}", flush=True)
    if notice := trust_notice(recorder.tls):
        print(notice, file=sys.stderr, flush=True)
    print(f"record mode {recorder.mode.value}; cassettes in {recorder.options.directory}",
          file=sys.stderr, flush=True)
    status = 0
    try:
        await stop.wait()
    finally:
        print("ssemock record: stopping; writing cassettes", file=sys.stderr, flush=True)
        try:
            await recorder.stop()
        except RecorderError as exc:
            print(f"ssemock: error: {exc}", file=sys.stderr, flush=True)
            status = 1
        print(recorder.summary(), file=sys.stderr, flush=True)
    return status
