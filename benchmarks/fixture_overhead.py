"""What the ``ssemock`` pytest fixture costs a test that streams one real response through it.

A generated test module holds N tests of each kind, run interleaved (one of each kind in
turn) in one real pytest session (a subprocess) so that a busy machine slows all alike:

* ``fixture``: takes the ``ssemock`` fixture (naming the bundled cassette
  ``openai-chat-finish-length-usage``) and streams ``POST /v1/chat/completions`` through it
  with one shared ``httpx.Client``, reading the whole body (1,124 bytes, 5 chunks);
* ``bare`` (the baseline): the same request, the same client, against a bare aiohttp server
  started once for the session in a thread of the same process
  (:func:`benchmarks.common.serve_in_thread`), writing the same recorded status, headers and
  chunks (one ``write`` each) — the least a test needs to stream a fake answer;
* ``httpserver`` (a peer, when ``pytest-httpserver`` is installed): the same request against
  its ``httpserver`` fixture answering the same bytes;
* ``empty``: a test doing nothing (pytest's own cost per test).

Each test's set-up + call + tear-down is measured by pytest; every test counts, the first
(which also starts the session's server) included. The session is run ``runs`` times;
each figure is the median over the runs of the per-run median, with min/median/max of
the per-run medians in ``spread``. Goal: the fixture costs at most 2 ms more per test than
the bare server. Physical bound: one HTTP request over loopback (the ``bare`` figure).

``python -m benchmarks.fixture_overhead [--quick]`` prints the figures.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import figure, spread
from .common import ROOT, median, standalone

__all__ = ["run"]

GOAL_MS = 2.0
CASSETTE = "openai-chat-finish-length-usage"

TESTS = """
import pytest
from conftest import EXPECTED

CHAT = {{"model": "gpt-4o", "stream": True, "messages": [{{"role": "user", "content": "Hi"}}]}}


def stream(client, url):
    with client.stream("POST", url + "/v1/chat/completions", json=CHAT) as resp:
        assert resp.status_code == 200
        return resp.read()


@pytest.mark.ssemock(cassette="{cassette}")
@pytest.mark.parametrize("n", range({count}))
def test_fixture(ssemock, client, n):
    assert stream(client, ssemock.url) == EXPECTED


@pytest.mark.parametrize("n", range({count}))
def test_bare(bare, client, n):
    assert stream(client, bare) == EXPECTED


{peer}

@pytest.mark.parametrize("n", range({count}))
def test_empty(n):
    pass
"""

PEER = """
@pytest.mark.parametrize("n", range({count}))
def test_httpserver(httpserver, client, n):
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_data(
        EXPECTED, content_type="text/event-stream")
    assert stream(client, httpserver.url_for("").rstrip("/")) == EXPECTED
"""

# The shared client, the bare server, the interleaving, every phase's duration and each test's CPU time
# (the whole process: test, client and server threads), written as JSON at the end.
# {response} is Python code setting RESPONSE, the ssemock.cassette.Response the bare server writes.
CONFTEST = """
import json, time
import httpx, pytest
from aiohttp import web
from benchmarks.common import serve_in_thread
{response}
HEADERS = dict(RESPONSE.headers)
CHUNKS = [c.data for c in RESPONSE.chunks]
EXPECTED = b"".join(CHUNKS)
KINDS = {kinds!r}
DURATIONS, CPU = {{}}, {{}}


def pytest_collection_modifyitems(items):
    by_kind = [[i for i in items if i.originalname == kind] for kind in KINDS]
    items[:] = [item for group in zip(*[k for k in by_kind if k]) for item in group]


def pytest_runtest_logreport(report):
    DURATIONS[report.nodeid] = DURATIONS.get(report.nodeid, 0.0) + report.duration


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = time.process_time()
    try:
        return (yield)
    finally:
        CPU[item.nodeid] = time.process_time() - start


def pytest_sessionfinish(session):
    with open({out!r}, "w") as fh:
        json.dump({{"wall": DURATIONS, "cpu": CPU}}, fh)


@pytest.fixture(scope="session")
def client():
    with httpx.Client() as c:
        yield c


@pytest.fixture(scope="session")
def bare():
    async def handler(request):
        await request.read()
        response = web.StreamResponse(status=RESPONSE.status, headers=HEADERS)
        response.enable_chunked_encoding()
        await response.prepare(request)
        for data in CHUNKS:
            await response.write(data)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    with serve_in_thread(app) as url:
        yield url
"""

CASSETTE_RESPONSE = f"""
from ssemock.bundled import bundled_cassettes
from ssemock.cassette import load
RESPONSE = load(bundled_cassettes() / "{CASSETTE}.yaml").interactions[0].response
"""


def has_peer() -> bool:
    """Whether pytest-httpserver is installed (then it is measured too)."""
    return importlib.util.find_spec("pytest_httpserver") is not None


Timings = dict[str, list[float]]


def measure_session(tests: str, response: str, kinds: tuple[str, ...], what: str) -> tuple[Timings, Timings]:
    """One pytest session (a subprocess) of the module ``tests``, its ``bare`` fixture writing the
    response the Python code ``response`` sets: per-test durations in ms (set-up + call + tear-down)
    by kind (``test_<kind>``), in run order, and the CPU ms of the whole process (test, client and
    server threads) during each test, likewise. ``what`` names the benchmark in an error."""
    with tempfile.TemporaryDirectory(prefix="ssemock-fixture-bench-") as tmp:
        root = Path(tmp)
        out = root / "durations.json"
        (root / "test_overhead.py").write_text(tests)
        (root / "conftest.py").write_text(CONFTEST.format(
            out=str(out), response=response, kinds=tuple(f"test_{k}" for k in kinds)))
        (root / "pytest.ini").write_text("[pytest]\n")
        plugins = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:xdist",
                   "-p", "no:randomly"]
        # the tree measured, and benchmarks.common, importable from the session's own directory
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", *plugins, str(root)],
                              cwd=root, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"the {what} benchmark's tests failed:\n{proc.stdout[-3000:]}")
        found: dict[str, dict[str, float]] = json.loads(out.read_text())
    wall, cpu = ({k: [1000 * d for node, d in found[which].items() if f"::test_{k}[" in node] for k in kinds}
                 for which in ("wall", "cpu"))
    return wall, cpu


def measure(count: int) -> dict[str, list[float]]:
    """One pytest session: per-test durations in ms (set-up + call + tear-down) by kind, in run order."""
    peer = PEER.format(count=count) if has_peer() else ""
    tests = TESTS.format(count=count, cassette=CASSETTE, peer=peer)
    return measure_session(tests, CASSETTE_RESPONSE, ("fixture", "bare", "httpserver", "empty"), "fixture")[0]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures: per-test time with the fixture against the bare server, the peer and the empty test."""
    count, runs = (50, 1) if quick else (300, 3)
    sessions = [measure(count) for _ in range(runs)]
    per_run = {k: [median(s[k]) for s in sessions if s[k]] for k in sessions[0]}
    first = {k: [s[k][0] for s in sessions if s[k]] for k in sessions[0]}
    m = {k: median(v) for k, v in per_run.items() if v}
    over = [f - b for f, b in zip(per_run["fixture"], per_run["bare"])]
    figures = [
        figure(f"fixture_overhead: streamed request through the ssemock fixture, per test (median of {count})",
               m["fixture"], "ms", baseline=m["bare"], goal=f"<= {GOAL_MS:g} ms more than the bare server",
               met=median(over) <= GOAL_MS, spread=spread(per_run["fixture"], per_run["bare"])),
        figure("fixture_overhead: fixture minus bare in-process aiohttp server, per test", median(over), "ms",
               baseline=None, goal=f"<= {GOAL_MS:g} ms", met=median(over) <= GOAL_MS, spread=spread(over)),
        figure("fixture_overhead: first test (also starts the session's server)", median(first["fixture"]), "ms",
               baseline=median(first["bare"]), goal="reported", met=True,
               spread=spread(first["fixture"], first["bare"])),
        figure("fixture_overhead: an empty test (pytest's own cost)", m["empty"], "ms", baseline=None,
               goal="reported", met=True, spread=spread(per_run["empty"])),
    ]
    if "httpserver" in m:
        figures.insert(1, figure(
            "fixture_overhead: peer pytest-httpserver, same request, per test", m["fixture"], "ms",
            baseline=m["httpserver"], goal="reported (ours against the peer)", met=True,
            spread=spread(per_run["fixture"], per_run["httpserver"])))
    return figures


if __name__ == "__main__":
    standalone(run)
