"""The option fixtures of the pytest plugin: what the session's replay server is made with.

* ``ssemock_limits`` — the :class:`~ssemock.Limits` of the session's replay server, and of the
  recorder a record mode runs (default ``Limits()``);
* ``ssemock_network`` — the :class:`~ssemock.NetworkOptions` of that server (default ``NetworkOptions()``).

Both are of session scope, as the server is: override one with a fixture of the same name and scope
in the ``conftest.py`` at the root of the tests::

    @pytest.fixture(scope="session")
    def ssemock_limits() -> Limits:
        return Limits(max_request_body=1 << 20)
"""

from __future__ import annotations

import pytest

from .config import Limits
from .edge.options import NetworkOptions

__all__ = ["ssemock_limits", "ssemock_network"]


@pytest.fixture(scope="session")
def ssemock_limits() -> Limits:
    """The bounds of the session's replay server and recorder."""
    return Limits()


@pytest.fixture(scope="session")
def ssemock_network() -> NetworkOptions:
    """The network options of the session's replay server."""
    return NetworkOptions()
