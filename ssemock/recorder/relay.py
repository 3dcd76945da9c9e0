"""The recorder's relay: the upstream answer passed to the client as it comes, read by read.

:func:`client_response` makes the client's answer from the upstream status and headers (hop-by-hop
headers left out, RFC 9110 section 7.6.1) and picks its framing; :func:`relay` writes each upstream
read to the client at once (awaited: back-pressure, no buffering) and hands it to the
:class:`~ssemock.recorder.tee.Tee`; :func:`finish_client` ends the client's answer as the upstream's
ended (clean, cut, reset).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from ..cassette import no_content
from ..edge import abort_connection, set_framing
from .tee import Tee

CASSETTE_HEADER = "X-SSEMock-Cassette"
"""The request header naming the cassette to record into (never forwarded)."""

__all__ = ["CASSETTE_HEADER", "HOP_BY_HOP", "Hold", "client_response", "finish_client", "relay"]

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-connection", "te", "trailer", "trailers",
     "transfer-encoding", "upgrade", "host", "content-length", CASSETTE_HEADER.lower()}
)


def client_response(
    request: web.Request, upstream: aiohttp.ClientResponse, raw_headers: list[tuple[str, str]],
) -> tuple[web.StreamResponse, bool]:
    """The client's answer, not prepared yet: the upstream status and headers (but hop-by-hop ones), and its
    framing; and whether it has no body (RFC 9110 section 6.4.1: a HEAD, 1xx, 204 or 304 answer)."""
    response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
    for k, v in raw_headers:
        if k.lower() not in HOP_BY_HOP:
            response.headers.add(k, v)
    no_body = no_content(request.method, upstream.status)
    if upstream.headers.get("Content-Length") is not None and "chunked" not in upstream.headers.get(
        "Transfer-Encoding", ""
    ):
        response.content_length = int(upstream.headers["Content-Length"])
    elif not no_body:
        set_framing(request, response, "chunked")  # close-delimited for an HTTP/1.0 client
    return response, no_body


@dataclass(eq=False)
class Hold:
    """The reads of an answer held back from its client, to be shaped by a scenario once complete.

    Attributes:
        limit: most bytes held (:data:`~ssemock.limits.MAX_HELD_BODY`); past it :attr:`released`.
        chunks: ``(t seconds since the request went upstream, bytes)`` per read, while held.
        released: the answer went past ``limit``: what was held went to the client, and the rest as it came.
    """

    limit: int
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    size: int = 0
    released: bool = False

    def keep(self, t: float, data: bytes) -> bool:
        """Hold ``data``; False once the answer is past :attr:`limit` (then :attr:`released`)."""
        if not self.released and self.size + len(data) <= self.limit:
            self.chunks.append((t, data))
            self.size += len(data)
            return True
        self.released = True
        return False


async def relay(
    request: web.Request, response: web.StreamResponse, upstream: aiohttp.ClientResponse, tee: Tee, t0: float,
    no_body: bool, hold: Hold | None = None,
) -> tuple[str, bytes, BaseException | None]:
    """Relay the upstream body to the client, one write per read, each read kept by ``tee`` with its time
    (seconds since ``t0``); returns how the body ended, the last bytes held back and the cancellation if
    the recorder is stopping.

    The bytes that complete a length-framed answer (or its headers, when it is empty) wait until the
    interaction is on disk: a client that has its whole answer finds it recorded. With ``hold``, the reads go
    to ``hold`` instead of the client (which gets nothing yet, not even the headers), until its limit."""
    loop = asyncio.get_running_loop()
    how, held, cancelled = "clean", b"", None
    left = None if no_body else response.content_length
    try:
        if left != 0 and not no_body and hold is None:
            await response.prepare(request)
        while data := await upstream.content.readany():
            t = round(loop.time() - t0, 6)
            if hold is not None and not hold.released:
                if hold.keep(t, data):
                    tee.add(t, data)
                    left = None if left is None else left - len(data)
                    continue
                await _release(request, response, hold)
            if left is not None:
                left -= len(data)
                if left <= 0:
                    held = data
                    tee.add(t, data)
                    continue
            try:
                await response.write(data)  # the client first; the tee only keeps the read
            except ConnectionError:
                how = "client_gone"
                break
            finally:
                tee.add(t, data)  # never waits: a read the scan cannot take now is spooled raw
    except (TimeoutError, aiohttp.ServerTimeoutError):
        how = "timeout"
    except aiohttp.ClientPayloadError as exc:
        how = "reset" if _is_reset(exc) else "cut"
    except (ConnectionResetError, aiohttp.ClientOSError):
        how = "reset"
    except ConnectionError:
        how = "client_gone"
    except asyncio.CancelledError as exc:  # the recorder is stopping: keep what we have
        how, cancelled = "timeout", exc
    return how, held, cancelled


async def _release(request: web.Request, response: web.StreamResponse, hold: Hold) -> None:
    """Send what ``hold`` held to the client, which gets the rest of the answer as it comes."""
    if not response.prepared:
        await response.prepare(request)
    for _, data in hold.chunks:
        await response.write(data)
    hold.chunks.clear()


async def finish_client(request: web.Request, response: web.StreamResponse, how: str, held: bytes) -> None:
    if how == "client_gone":
        return
    with contextlib.suppress(ConnectionError):
        if not response.prepared:
            await response.prepare(request)
        if held:
            await response.write(held)
    if how == "clean":
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
    elif how == "reset":
        abort_connection(request, reset=True)
    elif how in ("cut", "timeout"):
        abort_connection(request, reset=False)


def _is_reset(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionResetError) or "reset by peer" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False
