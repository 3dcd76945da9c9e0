"""Which web pages may read the replay server's answers (CORS): pages of this machine by default.

A replay answers with recorded prompts and answers, and its errors list the cassettes and how a
request differs from the recorded ones. Browsers let a page read an answer from another origin
only when it carries ``Access-Control-Allow-Origin`` naming the page's origin, and a page may
send simple requests (``GET``, a ``POST`` of ``text/plain``) anywhere without asking first. So
replay paths allow:

* loopback origins, any port, ``http`` or ``https``: ``localhost``, ``*.localhost``,
  ``127.0.0.0/8``, ``[::1]`` (a front end on ``http://localhost:3000`` reading a stream with
  ``EventSource``);
* the origins given with ``MockServer(cors_origins=[...])`` / ``ssemock serve --cors-origin
  ORIGIN``, ``*`` allowing every origin (then any web page the developer visits may read them).

An answer to any other origin carries no ``Access-Control-Allow-Origin`` (the browser withholds
it from the page; preflights are refused with 403). aiohttp-cors does the CORS part; this module
gives it :class:`AllowedOrigins`, the rule it consults.

CORS cannot withhold an answer from a page that reached the server through DNS rebinding: its
name (``evil.example``) now resolves to 127.0.0.1, so the browser sends ``Host: evil.example:PORT``
and ``Origin: http://evil.example:PORT`` and, the two being one origin, gives the page any answer.
Only the server can tell: the ``Origin``'s host is none the server answers under (the admin
API's ``Host`` check, :func:`~ssemock.edge.guard.origin_host_allowed`: loopback names and
addresses, the address bound, ``--allow-host`` names). Such a request is a page of another origin
(:func:`cross_origin`), and one naming the ``Host`` is refused (:func:`rebound_page`); so is a
same-origin ``GET`` (sent without ``Origin``) that says ``Sec-Fetch-Site: same-origin`` under such a
``Host`` (browsers that send no ``Sec-Fetch-Site``, Safari before 16.4, are not told apart from
curl). A request with neither (curl, SDKs, a Docker Compose service name in ``Host``) is not a page's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp_cors
from aiohttp import hdrs, web
from aiohttp_cors.urldispatcher_router_adapter import ResourcesUrlDispatcherRouterAdapter

from ..errors import ConfigError
from ..limits import Field, check_option
from .guard import origin_host_allowed
from .options import is_loopback
from .runner import EDGE

__all__ = ["ANY_ORIGIN", "ORIGIN", "AllowedOrigins", "allow_cors", "cross_origin", "loopback_origin",
           "origin_names", "rebound_page"]

ANY_ORIGIN = "*"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(text: str) -> str | None:
    """``text`` as browsers write an ``Origin`` (lower case, no default port, no slash), or None if it is not one."""
    if text in (ANY_ORIGIN, "null"):
        return text
    try:
        parts = urlsplit(text.strip().removesuffix("/"))
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if (parts.scheme.lower() not in _DEFAULT_PORTS or not host or parts.path or parts.query or parts.fragment
            or "@" in parts.netloc or any(c in host for c in " \\/")):
        return None
    scheme = parts.scheme.lower()
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else "")


ORIGIN = Field("an origin such as https://app.example:8443 (scheme, host and port; no path), 'null' or '*'",
               lambda v: isinstance(v, str) and _origin(v) is not None)


def origin_names(origins: Iterable[str]) -> tuple[str, ...]:
    """``origins`` checked (:data:`ORIGIN`) and written as browsers send them (``HTTPS://App.Example:443/``
    is ``https://app.example``).

    Raises:
        ConfigError: ``origins`` is a string rather than a list, or holds something that is not
            an origin, ``null`` or ``*``.
    """
    if isinstance(origins, str):
        raise ConfigError(f"cors_origins: expected a list of origins, got the string {origins!r}")
    checked = []
    for origin in origins:
        check_option("cors_origins", origin, ORIGIN)
        checked.append(_origin(origin))
    return tuple(o for o in checked if o is not None)


def loopback_origin(origin: str) -> bool:
    """Whether ``origin`` (an ``Origin`` header) is a page served from this machine: ``http`` or
    ``https``, a loopback name or address (:func:`~ssemock.edge.is_loopback`), any port."""
    normal = _origin(origin)
    if normal is None or normal in (ANY_ORIGIN, "null"):
        return False
    return is_loopback(urlsplit(normal).hostname or "")


class AllowedOrigins(Mapping[str, Any]):
    """The origins allowed, as the mapping aiohttp-cors looks an ``Origin`` up in: loopback origins
    (any port) and ``extra`` (exact origins, or ``*`` for all) map to ``options``, others to nothing.

    Iterating gives ``extra`` only (loopback origins are a rule, not a list); the mapping is never
    empty (so that aiohttp-cors answers preflights).
    """

    def __init__(self, extra: Iterable[str], options: Any) -> None:
        self.extra = frozenset(extra)
        self.options = options

    def __getitem__(self, origin: str) -> Any:
        if self._allows(origin):
            return self.options
        raise KeyError(origin)

    def __contains__(self, origin: object) -> bool:
        return self._allows(origin)

    def _allows(self, origin: object) -> bool:
        return isinstance(origin, str) and (origin in self.extra or loopback_origin(origin))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.extra))

    def __len__(self) -> int:
        return len(self.extra)

    def __bool__(self) -> bool:
        return True


class _Routes(ResourcesUrlDispatcherRouterAdapter):
    """aiohttp-cors' view of the routes, for which a request without ``Origin`` is never a CORS request.

    aiohttp-cors adds nothing to the answer of such a request (CORS 6.1.1: no ``Origin``, no CORS
    headers), but looks the request's route and its configuration up first, on every answer (a dozen
    calls, measured near 3 % of the instructions of a replayed stream). Only the hook that adds the headers
    to answers asks this; the preflight handler (``OPTIONS``) does not.
    """

    def is_cors_enabled_on_request(self, request: web.Request) -> bool:
        return hdrs.ORIGIN in request.headers and super().is_cors_enabled_on_request(request)


def allow_cors(app: web.Application, routes: Iterable[web.AbstractRoute], origins: Iterable[str]) -> None:
    """Let pages of loopback origins and of ``origins`` (``*``: any) read ``routes`` (browser
    ``EventSource``, ``fetch``): aiohttp-cors answers their preflights and adds
    ``Access-Control-Allow-Origin`` (and exposes every header) to the answers; credentials are
    not allowed."""
    options = aiohttp_cors.ResourceOptions(allow_credentials=False, expose_headers="*", allow_headers="*",
                                           allow_methods="*")  # type: ignore[no-untyped-call]
    allowed = AllowedOrigins(origins, options)
    adapter = _Routes(app.router, allowed)
    cors = aiohttp_cors.CorsConfig(app, router_adapter=adapter)
    app[aiohttp_cors.APP_CONFIG_KEY] = cors
    for route in routes:
        cors.add(route)


def _own_name(request: web.BaseRequest, origin: str) -> bool:
    """Whether the host of ``origin`` is a name the server serving ``request`` answers under."""
    edge = request.app.get(EDGE) if isinstance(request, web.Request) else None
    if edge is None:  # an application not served by start_runner: loopback names only
        return origin_host_allowed(origin, "127.0.0.1", frozenset())
    return origin_host_allowed(origin, edge.host, edge.options.allowed_hosts)


def _same_as_host(request: web.BaseRequest, origin: str) -> bool:
    """Whether ``origin`` is ``http://`` + the ``Host`` of ``request`` (as browsers write both)."""
    own = f"http://{request.host}"
    if origin.lower() == own.lower():
        return True
    normal = _origin(origin)
    return normal is not None and normal == _origin(own)


def _page_origin(request: web.BaseRequest) -> str | None:
    """The origin of the page that sent ``request``: its ``Origin``; for a same-origin ``GET`` or
    ``HEAD``, which browsers send without one (``fetch``, ``EventSource``), ``http://`` + its ``Host``
    when ``Sec-Fetch-Site: same-origin`` says so; None for a request of no page (curl, SDKs)."""
    origin = request.headers.get("Origin")
    if origin is None and request.headers.get("Sec-Fetch-Site", "").lower() == "same-origin":
        return f"http://{request.host}"
    return origin


def cross_origin(request: web.BaseRequest) -> bool:
    """Whether ``request`` comes from a page of another origin (allowed by CORS or not): an
    ``Origin`` other than ``http://`` + its ``Host``, or a page's origin whose host is no name the
    server answers under (DNS rebinding, see the module docstring)."""
    origin = _page_origin(request)
    if origin is None:
        return False
    return not _same_as_host(request, origin) or not _own_name(request, origin)


def rebound_page(request: web.BaseRequest, origins: Iterable[str]) -> bool:
    """Whether ``request`` comes from a page that reached the server through DNS rebinding and that
    CORS does not allow: the page's origin (``Origin``, or ``Sec-Fetch-Site: same-origin``) is
    ``http://`` + its ``Host``, so the browser gives the page any answer, but names a host the server
    does not answer under, and neither ``origins`` (the ``--cors-origin`` ones) nor ``*`` among them
    allow it. Such a request must be refused."""
    origin = _page_origin(request)
    if origin is None or not _same_as_host(request, origin) or _own_name(request, origin):
        return False
    allowed = AllowedOrigins(origins, None)
    return origin not in allowed and ANY_ORIGIN not in allowed
