"""The command-line options of the network edge, shared by ``serve`` and ``record``."""

from __future__ import annotations

import argparse
import contextlib
import resource
from typing import Any

from ..argtypes import integer, seconds
from .options import DEFAULT_BACKLOG, DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT

__all__ = ["add_network_arguments", "network_kwargs", "raise_open_files_limit"]


def add_network_arguments(parser: argparse.ArgumentParser, *, grace: float, grace_help: str) -> None:
    """Add ``--header-timeout``, ``--body-timeout``, ``--backlog``, ``--grace``, ``--allow-host``, ``--quiet``.

    Their values are checked by :class:`~ssemock.edge.NetworkOptions` (one rule for the
    command line and Python).
    """
    group = parser.add_argument_group("network limits and logging")
    group.add_argument("--header-timeout", type=seconds, default=DEFAULT_HEADER_TIMEOUT, metavar="SECONDS",
                       help="close a connection that has not sent a whole request line and headers this long "
                            f"after it opened or its previous answer ended (default {DEFAULT_HEADER_TIMEOUT:g})")
    group.add_argument("--body-timeout", type=seconds, default=DEFAULT_BODY_TIMEOUT, metavar="SECONDS",
                       help="answer 408 when a request body has not fully arrived this long after its headers "
                            f"(default {DEFAULT_BODY_TIMEOUT:g})")
    group.add_argument("--backlog", type=integer, default=DEFAULT_BACKLOG, metavar="N",
                       help=f"listen backlog: connections queued until accepted (default {DEFAULT_BACKLOG})")
    group.add_argument("--grace", type=seconds, default=grace, metavar="SECONDS", help=grace_help)
    group.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="a Host name the admin API answers under, besides localhost and the bound address, "
                            "and whose web pages may send replay requests to it under their own name "
                            "(repeatable; e.g. a container name)")
    group.add_argument("-q", "--quiet", action="store_true", help="no line per request on stderr")


def network_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``MockServer`` / ``Recorder`` from the options of :func:`add_network_arguments`."""
    return {"header_timeout": args.header_timeout, "body_timeout": args.body_timeout, "backlog": args.backlog,
            "grace": args.grace, "allowed_hosts": tuple(args.allow_host)}


def raise_open_files_limit() -> None:
    """Lift the soft limit on open files to the hard one (every connection holds a file descriptor)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
