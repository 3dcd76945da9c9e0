"""Helpers of the check-client tests: the example adapters, virtual environments holding a given release
of a Python client (made once with pip, from the package registry), ``node_modules`` directories holding
a given release of a node package (made once with npm, from the package registry), and ``ssemock
check-client`` run as its own process with its JSON report read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

from ssemock import MockServer
from ssemock.checkclient.cases import Case, Rule
from ssemock.checkclient.contract import PrintedEvent
from ssemock.checkclient.reference import expected_events, stream_interaction
from ssemock.checkclient.run import case_environment, case_url
from ssemock.mockserver import collect_cassettes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "check-client"
READER = [sys.executable, "-m", "ssemock.checkclient.reader"]
VENVS = Path(os.environ.get("SSEMOCK_CLIENT_VENVS", "/tmp/ssemock-client-venvs"))
"""Where the releases' virtual environments (and node packages) are kept between runs (``$SSEMOCK_CLIENT_VENVS``)."""


def release_python(package: str, version: str, *extra: str) -> Path:
    """The Python of a virtual environment holding ``package==version`` (made with pip when missing)."""
    home = VENVS / f"{package}-{version}"
    python = home / "bin" / "python"
    marker = home / "installed"
    if not marker.exists():
        venv.create(home, with_pip=True, clear=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"{package}=={version}", *extra],
            check=True,
            capture_output=True,
            timeout=600,
        )
        marker.write_text(version)
    return python


def release_node(package: str, version: str) -> Path:
    """A ``node_modules`` directory holding ``package@version`` alone (installed with npm when missing).

    Node resolves an ES module's imports from the ``node_modules`` beside the script: link it there.
    """
    home = VENVS / f"node-{package}-{version}"
    marker = home / "installed"
    if not marker.exists():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        npm = shutil.which("npm") or "npm"
        subprocess.run(
            [npm, "install", "--prefix", str(home), "--no-audit", "--no-fund", "--loglevel=error",
             f"{package}@{version}"],
            check=True,
            capture_output=True,
            timeout=600,
        )
        marker.write_text(version)
    return home / "node_modules"


def check_client(
    tmp_path: Path, *args: str, command: list[str]
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``ssemock check-client ARGS --json FILE -- COMMAND`` as a process; its result and its JSON report."""
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ssemock", "check-client", *args, "--json", str(report), "--", *command],
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    return done, json.loads(report.read_text()) if report.exists() else {}


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    """Scenario (``clean`` for none) -> verdict, for a report of one cassette."""
    return {case["scenario"] or "clean": case["verdict"] for case in report["cases"]}


def failing(report: dict[str, Any]) -> set[str]:
    """The scenarios of the failed cases."""
    return {name for name, verdict in verdicts(report).items() if verdict == "fail"}


def recorded_events(cassette: str) -> tuple[PrintedEvent, ...]:
    """The events the reference decoder (``ssemock.sse``) dispatches from the bundled ``cassette``'s stream."""
    loaded = collect_cassettes(None)[cassette]
    index = stream_interaction(loaded)
    assert index is not None, cassette
    events = expected_events(loaded, index, None)
    assert events, cassette
    return events


def run_once(cassette: str, command: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``command`` run once, as check-client runs it (its environment), against the bundled ``cassette`` as
    recorded, served by a real replay server on 127.0.0.1."""
    loaded = collect_cassettes(None)[cassette]
    with MockServer([loaded], timing_scale=0) as server:
        case = Case(cassette, None, Rule.CLEAN)
        env = {**os.environ, **case_environment(case_url(server.url, case), case, loaded, None)}
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def clean_answer(cassette: str, command: list[str]) -> dict[str, Any]:
    """The JSON object ``command`` prints on the bundled ``cassette`` as recorded (:func:`run_once`); it
    must exit 0."""
    done = run_once(cassette, command)
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def case_verdicts(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(cassette, scenario: ``clean`` for none) -> verdict, for a report of several cassettes."""
    return {(case["cassette"], case["scenario"] or "clean"): case["verdict"] for case in report["cases"]}


def release_reports(tmp_path: Path, package: str, versions: tuple[str, ...], adapter: Path,
                    *extra: str) -> dict[str, dict[str, Any]]:
    """The JSON report of each release of a Python client, its ``adapter`` run by check-client on the openai chat
    recording with a 1.5 s client timeout (each run fails some case: exit 1)."""
    reports = {}
    for version in versions:
        python = release_python(package, version, *extra)
        done, reports[version] = check_client(
            tmp_path, "--cassette", "openai-chat-finish-length-usage", "--client-timeout", "1.5",
            command=[str(python), str(adapter), "--timeout", "1.5"],
        )
        assert done.returncode == 1, done.stdout + done.stderr
    return reports
