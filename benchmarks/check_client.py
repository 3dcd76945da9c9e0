"""``check_client``: grading a Python SDK client over every preset on one recording, end to end.

``ssemock check-client --cassette openai-chat-finish-length-usage --client-timeout 2 -- python
examples/check-client/openai_chat_answer.py --timeout 2`` as a user runs it (the openai SDK, every bundled
preset served over HTTP/1.1, ``-j`` the cores, failures shrunk within the default budget), timed from
start to exit in its own process; ``--quick`` runs 2 presets.

Baseline, measured in the same run: the floor of that work, the same number of runs of the same client
command, as many at once as ``-j``, each reading the clean recording from ``ssemock serve`` (so the
client's start-up, which dominates, is counted on both sides; what is left is the cases' faults:
stalls, retries after HTTP errors, and the shrinking).

* ``check_client.wall``: seconds for the whole grading; goal (issue: fast enough for every commit):
  at most 120 s on 2 cores. The ratio to the floor is printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from . import figure, spread
from .common import ROOT, median, standalone

__all__ = ["run"]

CASSETTE = "openai-chat-finish-length-usage"
CLIENT = [sys.executable, str(ROOT / "examples" / "check-client" / "openai_chat_answer.py"), "--timeout", "2"]
QUICK_PRESETS = ("cut-mid-event", "split-bytes")
GOAL_S = 120.0


def grading(presets: tuple[str, ...] | None, work: Path) -> tuple[float, int]:
    """``(seconds, cases)`` of one ``ssemock check-client`` run of the openai SDK adapter."""
    report = work / "report.json"
    chosen = ["--scenario", ",".join(presets)] if presets else []
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ssemock", "check-client", "--cassette", CASSETTE, "--client-timeout", "2",
         *chosen, "--json", str(report), "--", *CLIENT],
        cwd=work, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=1200, check=False,
    )
    took = time.perf_counter() - started
    cases = json.loads(report.read_text())["cases"]
    return took, len(cases)


def floor(cases: int, jobs: int, work: Path) -> float:
    """Seconds for ``cases`` runs of the client on the clean recording, ``jobs`` at once."""
    from ssemock.providers import env_vars

    server = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--timing-scale", "0"],
                              cwd=work, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip().rsplit(" ", 1)[1] + f"/_ssemock/c/{CASSETTE}"
        env = {**os.environ, **{name: value.format(url=base) for name, value in env_vars().items()},
               "NO_PROXY": "127.0.0.1,localhost"}

        def once(_: int) -> None:
            done = subprocess.run(CLIENT, env=env, capture_output=True, timeout=60, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"check_client floor: the client failed on the clean recording: {done.stderr!r}")

        started = time.perf_counter()
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(once, range(cases)))
        return time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(30)


def run(quick: bool = False) -> list[dict[str, Any]]:
    from ssemock.checkclient.check import default_jobs

    jobs = default_jobs()
    ours: list[float] = []
    base: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ssemock-bench-check-") as tmp:
        work = Path(tmp)
        for _ in range(1 if quick else 2):  # interleaved: grading, then its floor
            took, cases = grading(QUICK_PRESETS if quick else None, work)
            ours.append(took)
            base.append(floor(cases, jobs, work))
    value, baseline = median(ours), median(base)
    unit = f"s for {cases} cases, -j {jobs}" + (" (quick: 2 presets)" if quick else "")
    return [figure("check_client.wall", value, unit, baseline=baseline, goal=f"<= {GOAL_S:g} s",
                   met=value <= GOAL_S, spread=spread(ours, base))]


if __name__ == "__main__":
    standalone(run)
