"""The option fixtures of the pytest plugin, each overridden by a fixture of the same name (pytest-recording's
``vcr_config`` and ``vcr_cassette_dir``).

What the session's replay server is made with, of session scope as the server is (override one in the
``conftest.py`` at the root of the tests)::

    @pytest.fixture(scope="session")
    def ssemock_limits() -> Limits:
        return Limits(max_request_body=1 << 20)

* ``ssemock_limits`` — the :class:`~ssemock.Limits` of the session's replay server, and of the
  recorder a record mode runs (default ``Limits()``);
* ``ssemock_network`` — the :class:`~ssemock.NetworkOptions` of that server (default ``NetworkOptions()``).

What one test's fake provider does, overridden in any ``conftest.py`` (its directory) or test module:

* ``ssemock_config`` — the defaults of the tests (:class:`~ssemock.pytest_config.SSEMockConfig`:
  scenario names, ``match_on``, timing scale, record target), under the marker's arguments;
* ``ssemock_cassette_dir`` — the folder of a module's own cassettes and recordings;
* ``ssemock_cassette_name`` — the name of a test's own cassette.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .config import Limits
from .edge.options import NetworkOptions
from .pytest_config import SSEMockConfig

__all__ = ["cassette_name", "ssemock_cassette_dir", "ssemock_cassette_name", "ssemock_config", "ssemock_limits",
           "ssemock_network"]


@pytest.fixture(scope="session")
def ssemock_limits() -> Limits:
    """The bounds of the session's replay server and recorder."""
    return Limits()


@pytest.fixture(scope="session")
def ssemock_network() -> NetworkOptions:
    """The network options of the session's replay server."""
    return NetworkOptions()


def cassette_name(item: pytest.Item) -> str:
    """The default cassette name (pytest-recording): ``test_x`` or ``TestClass.test_x``; in
    parametrized tests every character other than letters, digits, ``.``, ``_``, ``-`` becomes
    ``-`` (``test_x[a b]`` → ``test_x-a-b-``)."""
    cls = getattr(item, "cls", None)
    name = f"{cls.__name__}.{item.name}" if cls is not None else item.name
    return re.sub(r"[^A-Za-z0-9._-]", "-", name)


@pytest.fixture(scope="module")
def ssemock_config() -> SSEMockConfig:
    """The defaults of the fake provider for the tests of a module: default scenario names, ``match_on``,
    timing scale, record target (:class:`~ssemock.pytest_config.SSEMockConfig`; a mapping of its fields is
    accepted too). Override this fixture in a ``conftest.py`` (a directory) or a test module; a marker
    argument overrides it for one test."""
    return SSEMockConfig()


@pytest.fixture(scope="module")
def ssemock_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """The recording folder of a module's tests: their own cassettes are read from it and their
    recordings written to it; ``cassettes/<test module>/`` beside the test file. Override it to move
    them (a relative path counts from the test file's folder)."""
    return request.path.parent / "cassettes" / request.path.stem


@pytest.fixture
def ssemock_cassette_name(request: pytest.FixtureRequest) -> str:
    """The name of a test's own cassette (``<name>.yaml`` in :func:`ssemock_cassette_dir`): ``test_x``
    or ``TestClass.test_x``, other characters than letters, digits, ``.``, ``_``, ``-`` made ``-``."""
    return cassette_name(request.node)
