"""Who may use the admin API: same-origin requests under a name the server answers to.

The admin paths (``/_ssemock/health``, ``cassettes``, ``scenarios``, ``requests`` and any
other ``/_ssemock/`` path that is not a ``/_ssemock/c/`` or ``/_ssemock/s/`` replay prefix)
read the journal, which holds prompts and may hold keys, and can clear it. A web page
open in the developer's browser must not reach them:

* ``Host`` must name the server as its developer does: ``localhost``, ``*.localhost``,
  a loopback address, the address it is bound to (any address when bound to all of
  them), or a name allowed with ``allowed_hosts`` / ``--allow-host``. A page that
  reaches the server through DNS rebinding sends its own name: ``421
  ssemock_misdirected_host``.
* a request with an ``Origin`` other than the server's own, or a ``Sec-Fetch-Site``
  other than ``same-origin`` / ``none``, comes from another site's page: ``403
  ssemock_cross_origin`` (preflights included, so a browser never sends the request).

Replay paths are not guarded this way: pages of this machine (loopback origins) and of the
origins given with ``--cors-origin`` read streams through CORS (:mod:`.cors`), and a request
without ``Origin`` is answered under any ``Host`` (a Docker Compose service name); but an
``Origin`` whose host fails the same check (:func:`origin_host_allowed`) is a page of another
site, even when it names the ``Host`` (:func:`ssemock.edge.cors.rebound_page`). The
recorder guards every path the same way (``every_path``): it forwards requests with the
target's credentials, so a page must neither reach it by rebinding a name nor from another
origin; SDK clients and tools (openai, anthropic, httpx, curl) send no ``Origin`` and the
``Host`` they were pointed at.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from aiohttp import web

from ..refusals import CrossOriginError, MisdirectedHostError, RequestError

__all__ = ["admin_path", "host_allowed", "origin_host_allowed", "refusal"]

_REPLAY_PREFIXES = ("/_ssemock/c/", "/_ssemock/s/")
_WILDCARD = frozenset({"", "0.0.0.0", "::"})  # noqa: S104 - names of the wildcard binds
_SAME_ORIGIN_FETCH = frozenset({"same-origin", "none"})


def admin_path(path: str) -> bool:
    """Whether ``path`` (decoded) is an admin path rather than a replay path."""
    if path == "/_ssemock":
        return True
    return path.startswith("/_ssemock/") and not path.startswith(_REPLAY_PREFIXES)


def _host_name(host: str) -> str | None:
    """The lower-case host name of a ``Host`` header value, without port; None if unparsable."""
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return None
    return name or None


def host_allowed(name: str, bound: str, allowed: frozenset[str]) -> bool:
    """Whether ``name`` (from ``Host``) names a server bound to ``bound``, or is in ``allowed``."""
    bound = bound.strip().lower().removeprefix("[").removesuffix("]")
    if name in allowed or name == bound or name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or bound in _WILDCARD


def origin_host_allowed(origin: str, bound: str, allowed: frozenset[str]) -> bool:
    """Whether the host of ``origin`` (an ``Origin`` header: ``http://name:port``) is one the server
    answers under (:func:`host_allowed`); False for ``null`` and anything that is no origin."""
    try:
        name = urlsplit(origin.strip()).hostname
    except ValueError:
        return False
    return name is not None and host_allowed(name, bound, allowed)


_ADMIN = ("the admin API", "web pages may read replay paths (CORS), never the journal or admin paths")
_RECORDER = ("the recorder", "it forwards requests with the target's credentials, so no web page may use it")


def refusal(request: web.BaseRequest, bound: str, allowed: frozenset[str], *,
            every_path: bool = False) -> RequestError | None:
    """The error refusing a request from another site, or None when it may go on.

    Args:
        bound: the address the server is bound to.
        allowed: host names allowed besides the loopback ones and ``bound``.
        every_path: the recorder's wording (every path is guarded) instead of the admin API's.

    Returns:
        :class:`~ssemock.refusals.MisdirectedHostError` (421 ``ssemock_misdirected_host``),
        :class:`~ssemock.refusals.CrossOriginError` (403 ``ssemock_cross_origin``), or None.
    """
    who, why = _RECORDER if every_path else _ADMIN
    host = request.host
    name = _host_name(host)
    if name is None or not host_allowed(name, bound, allowed):
        return MisdirectedHostError(
            f"{who} answers under localhost or the server's address, not Host {host[:200]!r} "
            "(a web page reaching this server through DNS rebinding sends its own name); "
            "use http://127.0.0.1:PORT, or allow the name with --allow-host / allowed_hosts",
        )
    origin = request.headers.get("Origin")
    own = f"http://{host}".lower()
    if origin is not None and origin.lower() != own:
        return CrossOriginError(
            f"{who} answers same-origin requests only, and Origin {origin[:200]!r} is not {own!r}; {why}",
        )
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site.lower() not in _SAME_ORIGIN_FETCH:
        return CrossOriginError(
            f"{who} answers same-origin requests only (Sec-Fetch-Site: {site[:50]}); {why}",
        )
    return None
