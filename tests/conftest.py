"""Shared test fixtures: the real recordings, the bundled cassettes, the non-Python test clients."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ssemock.bundled import bundled_cassettes
from ssemock.cassette import Cassette, load_cassettes

REALWORLD = Path(__file__).parent / "data" / "realworld"
NODE_MODULES = Path(__file__).parent / "node" / "node_modules"
CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "sh tests/install-clients.sh installs it"

# CI machines are loaded (one busy process per core): how long an example takes to generate or run
# says nothing about the property under test, so neither a deadline nor the "too slow" health check
# may fail a test. A test's own @settings still sets its example count.
settings.register_profile("loaded", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("loaded")


def require(what: str, present: bool) -> None:
    """Skip the test when a client that is not a Python package is absent — fail instead when ``CI`` is set.

    CI installs every client (``tests/install-clients.sh``), so there a missing one is a broken
    set-up, not a reason to skip; on a developer's machine the rest of the suite still runs.
    """
    if present:
        return
    message = f"{what} is not installed ({INSTALL})"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so the test cannot be skipped")
    pytest.skip(message)


@pytest.fixture
def node() -> str:
    """The ``node`` executable, with tests/node's packages (eventsource-parser, playwright-core) installed."""
    found = shutil.which("node")
    require("node with tests/node's packages", found is not None and NODE_MODULES.is_dir())
    assert found is not None
    return found


@pytest.fixture
def chromium(node: str) -> Path:
    """Debian's headless Chromium, driven by playwright-core from node."""
    require("Chromium (/usr/bin/chromium)", CHROMIUM.exists())
    return CHROMIUM


@pytest.fixture(scope="session")
def bundled() -> dict[str, Cassette]:
    """The bundled cassettes by name."""
    return load_cassettes(bundled_cassettes())
