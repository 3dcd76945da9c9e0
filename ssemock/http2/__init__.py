"""HTTP/2 for the replay server: over TLS (ALPN ``h2``, HTTP/1.1 still offered) and as h2c with prior knowledge,
on the same port as HTTP/1.1 (``ssemock serve --http2``, ``MockServer(http2=True)``).

Built on the ``h2`` state machine (python-hyper; the ``http2`` extra, or ``pip install h2``) with asyncio:
:mod:`.switch` picks the protocol of each connection, :mod:`.connection` turns each stream into the request
aiohttp's own server answers (the same cassettes, matching, scenarios, journal and admin routes as
HTTP/1.1), :mod:`.stream` writes the answer as DATA frames and carries out the faults of this layer
(:mod:`ssemock.h2faults`, set by the steps of :mod:`ssemock.scenario.h2_steps`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web

from ..edge.malformed import ConnectionFront
from ..errors import ConfigError

__all__ = ["ALPN", "front"]

ALPN = ["h2", "http/1.1"]
"""The protocols a TLS server with HTTP/2 offers, preferred first."""


def front(max_body: int, idle: float) -> ConnectionFront:
    """The connection front of a server that speaks HTTP/2 besides HTTP/1.1 (for
    :func:`ssemock.edge.start_runner`): ``max_body`` bytes of a request body are kept (``max_request_body``),
    a connection without a stream is closed after ``idle`` seconds.

    Raises:
        ConfigError: the ``h2`` package is not installed.
    """
    try:
        from .switch import Switch
    except ImportError:
        raise ConfigError("HTTP/2 needs the h2 package: pip install h2 (ssemock's 'http2' extra)") from None

    def make(server: web.Server, http1: Callable[[], asyncio.Protocol]) -> asyncio.Protocol:
        return Switch(server, http1, max_body, idle)

    return make
