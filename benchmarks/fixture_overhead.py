"""What the ``ssemock`` pytest fixture costs a test: set-up + call + tear-down, against an empty test.

A generated test module holds N tests that take the ``ssemock`` fixture (naming a bundled
cassette, as a test without a recording of its own must) and N empty tests,
interleaved so that a busy machine slows both alike; a real pytest session (a subprocess)
reports the duration of each phase. The figure is the median per test (milliseconds) of
set-up + call + tear-down: the call phase counts because the plugin checks the journal for
refused requests when a test ends. Goal: at most 2 ms more than the empty test.

``python -m benchmarks.fixture_overhead [--quick]`` prints the figures.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["run"]

GOAL_MS = 2.0

TESTS = """
import pytest

@pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
@pytest.mark.parametrize("n", range({count}))
def test_fixture(ssemock, n):
    pass

@pytest.mark.parametrize("n", range({count}))
def test_empty(n):
    pass
"""

# Records every phase's duration; writes them as JSON at the end of the session.
CONFTEST = """
import json

DURATIONS = {{}}

def pytest_collection_modifyitems(items):
    fixture = [i for i in items if i.originalname == "test_fixture"]
    empty = [i for i in items if i.originalname == "test_empty"]
    items[:] = [item for pair in zip(fixture, empty) for item in pair]

def pytest_runtest_logreport(report):
    DURATIONS.setdefault(report.nodeid, 0.0)
    DURATIONS[report.nodeid] += report.duration

def pytest_sessionfinish(session):
    with open({out!r}, "w") as fh:
        json.dump(DURATIONS, fh)
"""


def measure(count: int) -> tuple[list[float], list[float]]:
    """Per-test durations in ms (set-up + call + tear-down): fixture tests, empty tests."""
    with tempfile.TemporaryDirectory(prefix="ssemock-fixture-bench-") as tmp:
        root = Path(tmp)
        out = root / "durations.json"
        (root / "test_overhead.py").write_text(TESTS.format(count=count))
        (root / "conftest.py").write_text(CONFTEST.format(out=str(out)))
        (root / "pytest.ini").write_text("[pytest]\n")
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
             "-p", "no:benchmark", "-p", "no:xdist", "-p", "no:randomly", str(root)],
            cwd=root, check=True, capture_output=True,
        )
        durations: dict[str, float] = json.loads(out.read_text())
    fixture = [1000 * d for node, d in durations.items() if "::test_fixture[" in node]
    empty = [1000 * d for node, d in durations.items() if "::test_empty[" in node]
    return fixture[1:], empty[1:]  # the first fixture test also starts the session's server


def run(quick: bool = False) -> list[dict[str, Any]]:
    """The figures: median per-test time with the fixture, the empty test as baseline."""
    count = 201 if quick else 501
    fixture, empty = measure(count)
    value, baseline = statistics.median(fixture), statistics.median(empty)
    return [
        {
            "name": f"pytest fixture ssemock: set-up + call + tear-down per test (median of {len(fixture)})",
            "value": round(value, 4),
            "unit": "ms",
            "baseline": round(baseline, 4),
            "ratio": round(value / baseline, 4) if baseline else None,
            "goal": f"<= {GOAL_MS:g} ms more than an empty test",
            "met": value - baseline <= GOAL_MS,
        },
        {
            "name": "pytest fixture ssemock: overhead per test over an empty test",
            "value": round(value - baseline, 4),
            "unit": "ms",
            "baseline": None,
            "ratio": None,
            "goal": f"<= {GOAL_MS:g} ms",
            "met": value - baseline <= GOAL_MS,
        },
    ]


if __name__ == "__main__":
    for item in run(quick="--quick" in sys.argv[1:]):
        print(json.dumps(item))
