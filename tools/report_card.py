"""Regenerate the report card of SSE clients: one row per client's current release, as graded by
``ssemock check-client`` with its adapter of examples/check-client/.

Usage: python tools/report_card.py [--quick] [--client NAME[=VERSION]]… [--write [PAGE]] [--reports DIR] [-j N]

Each client's release (the registry's latest unless ``NAME=VERSION`` pins one) is installed once in a
cached virtual environment (pip, PyPI) or ``node_modules`` prefix (npm), under ``$SSEMOCK_CLIENT_VENVS``
(default /tmp/ssemock-client-venvs, shared with the tests); check-client runs its adapter over one bundled
recording (an OpenAI chat stream for the SSE-level readers, the provider's own for an SDK), every preset
(``--quick``: :data:`QUICK`), with ``--client-timeout`` :data:`CLIENT_TIMEOUT` and no shrinking. The row is
written from the JSON report: the version, the verdicts counted per category and the failed presets by
name. A client whose adapter is missing, or whose install fails, is left out with the reason under the
table. ``--write PAGE`` replaces the block between :data:`BEGIN` and :data:`END` in PAGE (a missing PAGE
is written as the block alone); without it the block goes to stdout. ``--reports DIR`` keeps each JSON report.
Exit 0 when the table was written, 2 for bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "check-client"
PAGE = ROOT / "docs" / "reference" / "report-card.md"
"""The page the table is written into by default with ``--write``."""
BEGIN = "<!-- report-card: begin (written by python tools/report_card.py --write; do not edit) -->"
END = "<!-- report-card: end -->"
VENVS = Path(os.environ.get("SSEMOCK_CLIENT_VENVS", "/tmp/ssemock-client-venvs"))
"""Where the releases are installed and kept between runs (``$SSEMOCK_CLIENT_VENVS``)."""
CLIENT_TIMEOUT = 1.5
"""The clients' own read timeout, seconds (``--client-timeout``; the stall presets then last 5 s)."""
QUICK = ("bom", "cut-mid-event", "truncate")
"""The presets of a ``--quick`` run (besides the recording as recorded)."""
CHAT = "openai-chat-finish-length-usage"
CATEGORIES = ("conformance", "resilience")
VERDICTS = ("pass", "fail", "n/a")


@dataclass(frozen=True)
class Client:
    """One row of the card: how to install the client and run its adapter.

    Attributes:
        name: the row's name (the package's common name).
        registry: ``pypi``, ``npm``, ``chromium`` (the Debian package, not installed here) or ``ssemock``.
        package: the package installed, at the row's version.
        adapter: the adapter's file name in examples/check-client/ (``-m MODULE`` for a module).
        cassette: the bundled recording it reads.
        extra: further packages installed beside it, unpinned (their versions are shown).
        node_modules: for node, a fixed ``node_modules`` directory instead of an npm install.
        get: the recording is served with its stream request made a GET (for a browser EventSource).
    """

    name: str
    registry: str
    package: str
    adapter: str
    cassette: str = CHAT
    extra: tuple[str, ...] = ()
    node_modules: Path | None = None
    get: bool = False


CLIENTS = (
    Client("reference reader", "ssemock", "ssemock", "-m ssemock.checkclient.reader"),
    Client("openai-python", "pypi", "openai", "openai_chat_answer.py"),
    Client("openai-node", "npm", "openai", "openai_node_chat_answer.mjs"),
    Client("anthropic", "pypi", "anthropic", "anthropic_messages_answer.py", "anthropic-messages-thinking"),
    Client("google-genai", "pypi", "google-genai", "google_genai_answer.py", "gemini-streamgeneratecontent-crlf"),
    Client("httpx-sse", "pypi", "httpx-sse", "httpx_sse_reader.py", extra=("httpx",)),
    Client("sseclient-py", "pypi", "sseclient-py", "sseclient_py_reader.py", extra=("requests",)),
    Client("requests-sse", "pypi", "requests-sse", "requests_sse_reader.py"),
    Client("aiohttp-sse-client2", "pypi", "aiohttp-sse-client2", "aiohttp_sse_client2_reader.py"),
    Client("eventsource-parser", "npm", "eventsource-parser", "eventsource_parser_reader.mjs"),
    Client("eventsource", "npm", "eventsource", "eventsource_reader.mjs"),
    Client("@microsoft/fetch-event-source", "npm", "@microsoft/fetch-event-source", "fetch_event_source_reader.mjs"),
    Client("browser EventSource", "chromium", "chromium", "eventsource_browser_reader.mjs",
           node_modules=ROOT / "tests" / "node" / "node_modules", get=True),
)


def slug(name: str) -> str:
    """``name`` as a file name: each run of characters other than letters, digits, ``.`` and ``-`` as ``_``."""
    return re.sub(r"[^\w.-]+", "_", name)


class Skipped(Exception):
    """A client that cannot be run here; the message says why (shown under the table)."""


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``argv`` run to its end (text, output captured, 600 s at most); raises :class:`Skipped` when it fails."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Skipped(f"`{' '.join(argv[:3])} …` failed: {exc}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Skipped(f"`{' '.join(argv[:3])} …` exited {done.returncode}: {last}")
    return done


def latest(client: Client) -> str:
    """The registry's current release of the client's package."""
    if client.registry == "pypi":
        out = run([sys.executable, "-m", "pip", "index", "versions", client.package]).stdout
        found = re.search(rf"^{re.escape(client.package)} \(([^)]+)\)", out, re.M | re.I)
        if not found:
            raise Skipped(f"pip index versions {client.package}: no version in its answer")
        return found.group(1)
    if client.registry == "npm":
        return run([shutil.which("npm") or "npm", "view", client.package, "version"]).stdout.strip()
    if client.registry == "chromium":
        chromium = os.environ.get("SSEMOCK_CHROMIUM", "/usr/bin/chromium")
        found = re.search(r"\d+(?:\.\d+)+", run([chromium, "--version"]).stdout)  # "Chromium 120.0.6099.224 …"
        if not found:
            raise Skipped(f"{chromium} --version: no version in its answer")
        return found.group(0)
    from ssemock import __version__

    return __version__


def install_python(client: Client, version: str) -> tuple[Path, str]:
    """The Python of a cached virtual environment holding the release, and its extras' versions."""
    home = VENVS / f"{client.package}-{version}"
    python = home / "bin" / "python"
    if not (home / "installed").exists():
        venv.create(home, with_pip=True, clear=True)
        run([str(python), "-m", "pip", "install", "-q", f"{client.package}=={version}", *client.extra])
        (home / "installed").write_text(version)
    extras = []
    for name in client.extra:
        probe = f"import importlib.metadata as m; print(m.version({name!r}))"
        extras.append(f"{name} {run([str(python), '-c', probe]).stdout.strip()}")
    return python, ", ".join(extras)


def install_node(client: Client, version: str) -> Path:
    """A cached ``node_modules`` directory holding the release alone (npm)."""
    home = VENVS / f"node-{client.package}-{version}"
    if not (home / "installed").exists():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        run([shutil.which("npm") or "npm", "install", "--prefix", str(home), "--no-audit", "--no-fund",
             "--loglevel=error", f"{client.package}@{version}"])
        (home / "installed").write_text(version)
    return home / "node_modules"


def command(client: Client, version: str, work: Path) -> tuple[list[str], str]:
    """The adapter's command for the release (installed when missing), and the extras' versions.

    Raises:
        Skipped: the adapter is missing, or the install failed.
    """
    timeout = str(CLIENT_TIMEOUT)
    if client.registry == "ssemock":
        return [sys.executable, *client.adapter.split(), "--timeout", timeout], ""
    adapter = EXAMPLES / client.adapter
    if not adapter.exists():
        raise Skipped(f"no adapter examples/check-client/{client.adapter} when this ran")
    if client.registry == "pypi":
        python, extras = install_python(client, version)
        return [str(python), str(adapter), "--timeout", timeout], extras
    modules = client.node_modules or install_node(client, version)
    if not modules.is_dir():
        raise Skipped(f"no {modules} (tests/install-clients.sh installs it)")
    here = work / slug(client.name)
    here.mkdir()
    shutil.copy(adapter, here / adapter.name)
    (here / "node_modules").symlink_to(modules)  # an ES module resolves its packages beside itself
    return [shutil.which("node") or "node", str(here / adapter.name), timeout], ""


def get_recording(cassette: str, work: Path) -> Path:
    """A directory holding ``cassette`` with its requests made GETs (a browser EventSource sends no other)."""
    from ssemock.cassette.io import save
    from ssemock.mockserver import collect_cassettes

    loaded = collect_cassettes(None)[cassette]
    loaded.interactions = [replace(i, request=replace(i.request, method="GET", body=None))
                           for i in loaded.interactions]
    out = work / "get-recordings"
    out.mkdir(exist_ok=True)
    save(loaded, out / f"{cassette}.yaml")
    return out


def check(client: Client, cmd: list[str], work: Path, *, quick: bool, jobs: int, report: Path) -> dict[str, Any]:
    """``ssemock check-client`` of ``cmd`` over the client's recording; its JSON report."""
    args = [sys.executable, "-m", "ssemock", "check-client", "--cassette", client.cassette,
            "--client-timeout", str(CLIENT_TIMEOUT), "--shrink-budget", "0", "-j", str(jobs), "--json", str(report)]
    if client.get:
        args += ["--cassettes", str(get_recording(client.cassette, work))]
    if quick:
        args += ["--scenario", ",".join(QUICK)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([*args, "--", *cmd], capture_output=True, text=True, env=env, cwd=work, check=False,
                          timeout=3600)
    if done.returncode not in (0, 1) or not report.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Skipped(f"check-client exited {done.returncode}: {last}")
    result: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return result


def row(client: Client, version: str, extras: str, report: dict[str, Any]) -> dict[str, Any]:
    """The card's row of a client, from its check-client JSON report: counts of each verdict per
    category, and the presets (``clean`` for the recording as recorded) of the failed cases, in run order."""
    counts = Counter((case["category"], case["verdict"]) for case in report["cases"])
    return {
        "client": client.name,
        "version": f"{version} ({extras})" if extras else version,
        "recording": client.cassette,
        **{cat: {v: counts[cat, v] for v in VERDICTS} for cat in CATEGORIES},
        "fails": [case["scenario"] or "clean" for case in report["cases"] if case["verdict"] == "fail"],
    }


def markdown(rows: list[dict[str, Any]], skipped: list[tuple[str, str]], note: str) -> str:
    """The rows as a Markdown table, after ``note``, and the clients left out with their reasons."""
    lines = [note, "", "| client | version | recording | conformance pass / fail / n/a "
             "| resilience pass / fail / n/a | fails |", "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        cells = [r["client"], r["version"], f"`{r['recording']}`",
                 *(" / ".join(str(r[cat][v]) for v in VERDICTS) for cat in CATEGORIES),
                 ", ".join(f"`{name}`" for name in r["fails"]) or "nothing"]
        lines.append("| " + " | ".join(cells) + " |")
    if skipped:
        lines += ["", "Left out of this run:", ""]
        lines += [f"- {name}: {reason}" for name, reason in skipped]
    return "\n".join(lines)


def write_block(block: str, page: Path | None) -> None:
    """``block`` between :data:`BEGIN` and :data:`END` into ``page`` (stdout when None).

    Raises:
        ValueError: ``page`` exists without both marker lines, in order.
    """
    text = f"{BEGIN}\n{block}\n{END}\n"
    if page is None:
        sys.stdout.write(text)
        return
    if page.exists():
        old = page.read_text(encoding="utf-8")
        start, end = old.find(BEGIN), old.find(END)
        if start < 0 or end < start:
            raise ValueError(f"{page}: expected the lines {BEGIN!r} and {END!r}, in that order")
        text = old[:start] + text.rstrip("\n") + old[end + len(END):]
    page.write_text(text, encoding="utf-8")


def chosen(specs: list[str]) -> list[tuple[Client, str | None]]:
    """The clients named by ``--client NAME[=VERSION]`` (all, unpinned, when none).

    Raises:
        ValueError: a name that is no client of :data:`CLIENTS`.
    """
    if not specs:
        return [(c, None) for c in CLIENTS]
    by_name = {c.name: c for c in CLIENTS}
    picked = []
    for spec in specs:
        name, _, version = spec.partition("=")
        if name not in by_name:
            raise ValueError(f"--client {spec!r}: expected one of {', '.join(by_name)}")
        picked.append((by_name[name], version or None))
    return picked


def card(picked: list[tuple[Client, str | None]], *, quick: bool, jobs: int, reports: Path | None) -> str:
    """Run every picked client and return the block: a line saying how, the table, the clients left out."""
    rows, skipped = [], []
    began, load = time.monotonic(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ssemock-report-card-") as tmp:
        work = Path(tmp)
        for client, pinned in picked:
            try:
                version = pinned or latest(client)
                cmd, extras = command(client, version, work)
                out = (reports or work) / f"{slug(client.name)}.json"
                report = check(client, cmd, work, quick=quick, jobs=jobs, report=out)
            except Skipped as why:
                skipped.append((client.name, str(why)))
                continue
            rows.append(row(client, version, extras, report))
            print(f"{client.name} {version}: fails {', '.join(rows[-1]['fails']) or 'nothing'}", file=sys.stderr)
    node = subprocess.run([shutil.which("node") or "node", "--version"], capture_output=True, text=True, check=False)
    note = (f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} by `python tools/report_card.py"
            f"{' --quick' if quick else ''}` ({'quick: ' + ', '.join(QUICK) if quick else 'every preset'}, "
            f"`--client-timeout {CLIENT_TIMEOUT}`, in {time.monotonic() - began:.0f} s), Python "
            f"{sys.version.split()[0]}, node {node.stdout.strip() or 'missing'}, {len(os.sched_getaffinity(0))} "
            f"core(s), `-j {jobs}`, load average {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end "
            f"(a loaded machine can make a client late under the timing presets: `stall`, `slow-first-byte`).")
    return markdown(rows, skipped, note)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/report_card.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only the presets {', '.join(QUICK)}")
    parser.add_argument("--client", action="append", default=[], metavar="NAME[=VERSION]",
                        help="a client to run (repeatable; default: all, each at its latest release)")
    parser.add_argument("--write", nargs="?", const=PAGE, type=Path, metavar="PAGE",
                        help=f"write the table into PAGE (default {PAGE.relative_to(ROOT)}) instead of stdout")
    parser.add_argument("--reports", type=Path, metavar="DIR", help="keep each client's JSON report in DIR")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="cases run at once (default 1: a run of its own cases in parallel can make a client late "
                             "under the timing presets)")
    args = parser.parse_args(argv)
    try:
        picked = chosen(args.client)
    except ValueError as exc:
        print(f"report_card: {exc}", file=sys.stderr)
        return 2
    if args.reports:
        args.reports = args.reports.resolve()
        args.reports.mkdir(parents=True, exist_ok=True)
    block = card(picked, quick=args.quick, jobs=args.jobs, reports=args.reports)
    try:
        write_block(block, args.write)
    except ValueError as exc:
        print(f"report_card: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
