"""``python -m ssemock.schemas``: write the JSON Schemas of the file formats, or check the shipped ones.

With no option, writes ``KIND.schema.json`` for each kind into ``--output`` (default: the package's
``ssemock/schemas/``). ``--check`` writes nothing and exits 1 when a file there differs from what the
generator writes. ``--path KIND`` prints the installed schema file, ``--modeline KIND`` the comment
line that names it for editors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..cassette.append import atomic_write_bytes
from . import DIRECTORY, KINDS, modeline, path, text


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m ssemock.schemas``."""
    out = argparse.ArgumentParser(
        prog="python -m ssemock.schemas",
        description="Write the JSON Schemas (draft 2020-12) of cassette, scenario and stub files, generated from "
        "the definitions ssemock's loaders check; or check that the shipped files are up to date.",
        epilog="example: python -m ssemock.schemas --check",
    )
    group = out.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="write nothing; exit 1 when a schema file is stale")
    group.add_argument("--path", choices=KINDS, metavar="KIND", help="print the installed schema file of KIND")
    group.add_argument(
        "--modeline",
        choices=KINDS,
        metavar="KIND",
        help="print the '# yaml-language-server: $schema=...' line for KIND",
    )
    out.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DIRECTORY,
        metavar="DIR",
        help="the directory written or checked (default: the package's ssemock/schemas/)",
    )
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status: 0, 1 for ``--check`` with a stale file, 2 when a file cannot
    be written or read (one line on stderr naming it). Each file is written atomically (a temporary file in
    its directory, then a rename)."""
    args = parser().parse_args(argv)
    if args.path:
        print(path(args.path))
        return 0
    if args.modeline:
        print(modeline(args.modeline))
        return 0
    stale = []
    for kind in KINDS:
        target = args.output / f"{kind}.schema.json"
        wanted = text(kind)
        try:
            if args.check:
                if not target.is_file() or target.read_bytes() != wanted.encode("utf-8"):
                    stale.append(str(target))
                continue
            atomic_write_bytes(target, wanted.encode("utf-8"))
        except OSError as exc:  # a file where the directory should be, a directory where a file, no permission
            doing = "read" if args.check else "write"
            where = args.output if args.output.exists() and not args.output.is_dir() else target
            reason = "not a directory" if where is args.output else exc.strerror or str(exc)
            print(
                f"python -m ssemock.schemas: error: {where}: cannot {doing} {target.name} ({reason})", file=sys.stderr
            )
            return 2
        print(target)
    for name in stale:
        print(f"{name}: differs from the generator (run: python -m ssemock.schemas)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
