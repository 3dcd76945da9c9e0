"""The command-line options made from the option records, shared by ``serve`` and ``record``.

Each :func:`~ssemock.config.knob` field of :class:`~ssemock.config.Limits` and
:class:`~ssemock.edge.NetworkOptions` that a command takes is set by a repeatable
``--limit NAME=VALUE`` and by its own long flag (``--max-request-body``, ``--header-timeout``...);
both write the argparse destination named after the field, so the last one given wins.
Sizes in bytes take ``B``, ``kB``, ``MB``, ``GB``, ``KiB``, ``MiB`` or ``GiB`` (``64MiB``), times in seconds
``s`` or ``ms`` (``30s``, ``500ms``); a plain number is bytes or seconds (:data:`~ssemock.argtypes.UNITS`).
The text is read by :func:`~ssemock.argtypes.option_quantity`; the bounds are the record's to check
(:class:`~ssemock.ConfigError`, one rule for the command line and Python).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import resource
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..argtypes import option_quantity
from ..config import Knob, Limits, knobs
from ..errors import ConfigError
from ..tls import TLSFiles
from .options import NetworkOptions

__all__ = ["add_limit_arguments", "add_match_arguments", "add_network_arguments", "add_tls_arguments", "knob_value",
           "raise_open_files_limit",
           "record_of", "tls_choice"]

R = TypeVar("R")
RECORDS = (Limits, NetworkOptions)
"""The records whose fields are command-line options."""
_METAVARS = {"bytes": "BYTES", "seconds": "SECONDS"}


def knob_value(spec: Knob, text: str) -> int | float:
    """The value of field ``spec`` written ``text`` on the command line: ``64MiB`` is 67108864, ``500ms`` 0.5.

    Raises:
        argparse.ArgumentTypeError: ``expected FORM, got 'TEXT'`` (:func:`~ssemock.argtypes.option_quantity`: ASCII
            digits only, the unit one of the field's).
    """
    return option_quantity(text, spec.unit, integer=spec.kind == "integer")


def shown_default(spec: Knob) -> str:
    """A field's default as the command line writes it: ``32MiB``, ``64KiB``, ``30s``, ``0.1s``, ``128``."""
    value = spec.default
    if spec.unit == "seconds":
        return f"{value:g}s"
    if spec.unit == "bytes":
        for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
            if value >= size and value % size == 0:
                return f"{value // size}{unit}"
    return str(value)


def command_knobs(command: str) -> dict[str, Knob]:
    """The number fields of :data:`RECORDS` that ``command`` takes, by name (the names ``--limit`` accepts)."""
    return {k.name: k for record in RECORDS for k in knobs(record) if command in k.commands and k.kind != "names"}


class _SetField(argparse.Action):
    """``--limit NAME=VALUE``: sets the destination of field NAME (what its own flag sets)."""

    def __init__(self, option_strings: Sequence[str], dest: str, *, fields: Mapping[str, Knob], **kwargs: Any) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)
        self.fields = fields

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        name, equals, text = str(values).partition("=")
        spec = self.fields.get(name)
        if spec is None or not equals:
            problem = f"unknown name {name!r}" if equals else f"no '=' in {str(values)!r}"
            raise argparse.ArgumentError(self, f"{problem}: expected NAME=VALUE, NAME one of {', '.join(self.fields)}")
        try:
            setattr(namespace, name, knob_value(spec, text))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentError(self, f"{name}: {exc}") from None


def add_limit_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """Add ``--limit NAME=VALUE`` and the long flags of :class:`~ssemock.config.Limits`' fields ``command`` takes."""
    fields = command_knobs(command)
    listed = "; ".join(f"{k.name} ({k.unit}, default {shown_default(k)})" for k in fields.values())
    group = parser.add_argument_group("limits", "bounds on requests: see the docs' Limits reference")
    group.add_argument("--limit", action=_SetField, fields=fields, metavar="NAME=VALUE",
                       help=f"set one limit or network option (repeatable): {listed}; sizes in B, kB, MB, GB, KiB, "
                            "MiB or GiB, times in s or ms")
    _add_flags(group, command, knobs(Limits), {})


def add_network_arguments(parser: argparse.ArgumentParser, command: str, *, grace_help: str) -> None:
    """Add the long flags of :class:`~ssemock.edge.NetworkOptions` (``--header-timeout``, ``--body-timeout``,
    ``--backlog``, ``--grace``, ``--allow-host``), and ``--quiet``; ``grace_help``: what ``--grace`` does here."""
    group = parser.add_argument_group("network limits and logging")
    _add_flags(group, command, knobs(NetworkOptions), {"grace": grace_help})
    group.add_argument("-q", "--quiet", action="store_true", help="no line per request on stderr")


def _add_flags(group: Any, command: str, specs: Sequence[Knob], helps: Mapping[str, str]) -> None:
    for spec in specs:
        if spec.flag is None or command not in spec.commands:
            continue
        text = helps.get(spec.name, spec.help)
        if spec.kind == "names":
            group.add_argument(spec.flag, dest=spec.name, action="append", default=[], metavar="NAME", help=text)
            continue
        group.add_argument(spec.flag, dest=spec.name, type=functools.partial(knob_value, spec), default=spec.default,
                           metavar=_METAVARS.get(spec.unit, "N"),
                           help=f"{text} (default {shown_default(spec)}; also --limit {spec.name}=VALUE)")


def record_of(record: type[R], args: argparse.Namespace, command: str) -> R:
    """``record`` (:class:`~ssemock.config.Limits`, :class:`~ssemock.edge.NetworkOptions`) made from the
    options ``command`` parsed into ``args``; the fields it does not take keep their defaults.

    Raises:
        ConfigError: a value out of its field's bounds (the message names the field).
    """
    values = {k.name: getattr(args, k.name) for k in knobs(record) if command in k.commands}
    return record(**values)


def raise_open_files_limit() -> None:
    """Lift the soft limit on open files to the hard one (every connection holds a file descriptor)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))


def add_match_arguments(parser: argparse.ArgumentParser, replaying: str) -> None:
    """``--match-on`` and ``--ignore-body-field``, as ``serve`` and ``record`` take them; ``replaying`` says
    which requests they are compared for (``in every cassette``, ``when replaying recorded requests``)."""
    from ..argtypes import body_path, matcher_names
    from ..limits import MAX_BODY_PATHS
    from ..matching import MATCHERS

    parser.add_argument("--match-on", type=matcher_names, default="method,path,body",
                        help=f"comma-separated matchers among {', '.join(MATCHERS)} (default method,path,body; "
                             "prompt: chat requests by model, last user message and turn, as stubs match)")
    parser.add_argument("--ignore-body-field", action="append", default=[], type=body_path, metavar="PATH",
                        help=f"a request body field the body matcher ignores {replaying}, e.g. metadata.trace_id "
                             f"or messages[*].id (repeatable, at most {MAX_BODY_PATHS})")


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tls``, ``--tls-cert FILE``, ``--tls-key FILE`` (``serve`` and ``record``: :mod:`ssemock.tls`)."""
    parser.add_argument("--tls", action="store_true",
                        help="answer over https with ssemock's local certificate authority (made once, kept in "
                             "~/.cache/ssemock/tls; its CA file is printed: SSL_CERT_FILE=…; needs "
                             "trustme: pip install trustme, ssemock's 'tls' extra)")
    parser.add_argument("--tls-cert", type=Path, metavar="FILE", help="with --tls: your own certificate chain (PEM)")
    parser.add_argument("--tls-key", type=Path, metavar="FILE", help="with --tls: its private key (PEM)")


def tls_choice(args: argparse.Namespace) -> TLSFiles | bool:
    """What the TLS options ask for: False (plain http), True (the local authority) or the user's own files.

    Raises:
        ConfigError: ``--tls-cert`` without ``--tls-key`` or the other way round.
    """
    if (args.tls_cert is None) != (args.tls_key is None):
        raise ConfigError("--tls-cert and --tls-key go together")
    if args.tls_cert is not None:
        return TLSFiles(args.tls_cert, args.tls_key)
    return bool(args.tls)
