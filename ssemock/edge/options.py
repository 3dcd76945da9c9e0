"""The options of a server's network edge, with their documented defaults and checks."""

from __future__ import annotations

import errno
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from ..config import check_knobs, knob
from ..errors import ConfigError

__all__ = [
    "DEFAULT_BACKLOG",
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_GRACE",
    "DEFAULT_HEADER_TIMEOUT",
    "NetworkOptions",
    "host_names",
    "is_loopback",
    "port_hint",
]

DEFAULT_HEADER_TIMEOUT = 30.0  # seconds
DEFAULT_BODY_TIMEOUT = 60.0  # seconds
DEFAULT_BACKLOG = 2048  # connections
DEFAULT_GRACE = 0.1  # seconds


@dataclass(frozen=True)
class NetworkOptions:
    """How a server (replay server or recorder) meets its connections.

    Attributes:
        header_timeout: seconds a connection may take to send a whole request line and
            headers, counted from when it opens or its previous response ended; then it is
            closed. It is also how long an idle keep-alive connection stays open. Default 30.
        body_timeout: seconds the whole request body may take to arrive once the headers
            are in; then the answer is ``408 ssemock_body_timeout`` and the connection is
            closed. Default 60.
        backlog: the listen backlog, connections the kernel queues until they are
            accepted (the kernel caps it at ``net.core.somaxconn``). Default 2048.
        grace: seconds a stop lets requests in progress finish before they are cut.
            Default 0.1 (``Recorder``: 5).
        allowed_hosts: host names the admin API answers under besides the loopback names
            and addresses (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``) and the
            address the server is bound to; any iterable of names, kept lower case, without
            port. A replay request whose ``Origin`` names another host is a page of another
            origin (:mod:`.cors`).

    Raises:
        ConfigError: a timeout or the grace not a finite number of seconds (``header_timeout`` and
            ``body_timeout`` > 0, ``grace`` >= 0), a backlog not an integer 1-65535, or a
            host name that is empty or holds a port, a path or spaces (the message names the field).
    """

    header_timeout: float = knob(
        DEFAULT_HEADER_TIMEOUT, "close a connection that has not sent a whole request line and headers this long "
        "after it opened or its previous answer ended", unit="seconds", above=True, flag="--header-timeout")
    body_timeout: float = knob(
        DEFAULT_BODY_TIMEOUT, "answer 408 when a request body has not fully arrived this long after its headers",
        unit="seconds", above=True, flag="--body-timeout")
    backlog: int = knob(DEFAULT_BACKLOG, "listen backlog: connections queued until accepted",
                        unit="connections", low=1, high=65535, flag="--backlog")
    grace: float = knob(DEFAULT_GRACE, "on a stop, let requests in progress finish this long, then cut them",
                        unit="seconds", flag="--grace")
    allowed_hosts: frozenset[str] = knob(
        frozenset(), "a Host name the admin API answers under, besides localhost and the bound address, and whose "
        "web pages may send replay requests to it under their own name (repeatable; e.g. a container name)",
        flag="--allow-host")

    def __post_init__(self) -> None:
        check_knobs(self)
        object.__setattr__(self, "allowed_hosts", frozenset(host_names(self.allowed_hosts)))


def host_names(names: Iterable[str]) -> list[str]:
    """``names`` lower-cased, each checked to be a bare host name or address (no port, no path)."""
    if isinstance(names, str):
        raise ConfigError(f"allowed hosts must be a list of names, got the string {names!r}")
    checked = []
    for name in names:
        bare = str(name).strip().lower().removeprefix("[").removesuffix("]")
        if not bare or any(c in bare for c in "/ @?#") or (":" in bare and not _is_ip(bare)):
            raise ConfigError(f"allowed host must be a host name or address without port, got {name!r}")
        checked.append(bare)
    return checked


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps a server reachable from this machine only.

    ``localhost``, ``*.localhost`` and loopback addresses are; every other name, the
    wildcard addresses (``0.0.0.0``, ``::``, empty) and other interfaces' addresses are not.
    """
    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def port_hint(exc: OSError) -> str:
    """What to do when a port cannot be bound because another process holds it (``EADDRINUSE``), else ``""``."""
    return " (another process holds it: pick another with --port N / port=N, or 0 for a free one)" if (
        exc.errno == errno.EADDRINUSE) else ""
