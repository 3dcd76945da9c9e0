"""The sending layer: a :class:`~ssemock.scenario.Plan` written to an aiohttp response.

Used by the replay server and by the recorder's replay path. Faithful replay: one
``write`` per chunk (aiohttp sets TCP_NODELAY on every connection), each at
``t × timing_scale`` seconds after the request arrived; HTTP/1.1 chunked framing, so a
recorded ``cut`` (connection closed without the terminating chunk) or ``reset`` (TCP RST)
stays distinguishable from a clean end.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from aiohttp import web

from .edge import abort_connection, set_framing, stopping
from .scenario import Plan

__all__ = ["drop_default_content_type", "end_body", "send_plan", "sleep_until"]

# Hop-by-hop and framing headers: the sending layer frames the body itself.
_FRAMING_HEADERS = frozenset({"transfer-encoding", "content-length", "connection", "keep-alive"})
_NO_CONTENT_TYPE: weakref.WeakSet[web.StreamResponse] = weakref.WeakSet()  # responses sent without one


async def drop_default_content_type(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare`` hook: aiohttp adds ``Content-Type: application/octet-stream``;
    a response recorded (or edited) without a content type is sent without one."""
    if response in _NO_CONTENT_TYPE:
        response.headers.popall("Content-Type", None)


async def send_plan(
    request: web.Request, plan: Plan, entry: dict[str, Any], arrived: float, *, own_cors: bool = False
) -> web.StreamResponse:
    """Send ``plan``: status and headers at ``start``, then one write per chunk at its time.

    Recorded times (and ``plan.pace``) are multiplied by ``plan.timing_scale``;
    ``plan.first_byte_delay`` and ``plan.pauses`` are absolute and push every later
    write back. Each chunk is one ``write`` (one HTTP chunk, flushed: aiohttp sets
    TCP_NODELAY), at least ``pace`` seconds after the previous one.

    Args:
        request: the request answered.
        plan: what to send.
        entry: the journal entry, filled in as the response goes out.
        arrived: loop time (seconds) when the request arrived; recorded times count from it.
        own_cors: the application adds its own CORS headers (aiohttp-cors): a request with
            an ``Origin`` then gets none of the recorded ``Access-Control-*`` headers.

    The journal ``entry`` gets ``status``, ``framing`` (``chunked``, ``length`` or
    ``close``: an HTTP/1.0 client gets ``close`` for ``chunked``), ``chunks_sent``,
    ``bytes_sent``, ``injected`` (what the scenario's steps did) and ``outcome``
    (``complete``, ``cut``, ``reset``, ``client_gone``, or ``stopped`` when the server
    stopped first; ``error`` with status 500 if the response could not be sent).
    """
    resp_rec = plan.response
    scale = plan.timing_scale
    chunks = plan.wire_chunks()
    cors = own_cors and "Origin" in request.headers
    response = web.StreamResponse(status=resp_rec.status, reason=resp_rec.reason)
    for name, value in resp_rec.headers:
        lname = name.lower()
        if lname not in _FRAMING_HEADERS and not (cors and lname.startswith("access-control-")):
            response.headers.add(name, value)
    if plan.content_encoding is not None:
        response.headers["Content-Encoding"] = plan.content_encoding
    if resp_rec.header("content-type") is None:
        _NO_CONTENT_TYPE.add(response)
    framing = set_framing(request, response, plan.framing, sum(len(c.data) for c in chunks))
    entry["status"] = resp_rec.status
    entry["framing"] = framing
    entry["chunks_sent"] = entry["bytes_sent"] = 0
    entry["injected"] = list(plan.notes)
    loop = asyncio.get_running_loop()
    shift = arrived + plan.first_byte_delay  # absolute delays move every later deadline
    try:
        await sleep_until(loop, shift + resp_rec.start * scale)
        await response.prepare(request)
        last = -1.0
        for index, chunk in enumerate(chunks):
            if plan.pauses:  # no coroutine per chunk on the common path
                shift += await _pause(plan, index)
            if scale:
                await sleep_until(loop, max(shift + chunk.t * scale, last + plan.pace * scale))
            await response.write(chunk.data)
            last = loop.time()
            entry["chunks_sent"] += 1
            entry["bytes_sent"] += len(chunk.data)
        shift += await _pause(plan, len(chunks))
        if scale:
            await sleep_until(loop, shift + resp_rec.end.t * scale)
        entry["outcome"] = await end_body(request, response, resp_rec.end.how)
    except ConnectionError:
        entry["outcome"] = "client_gone"
    except asyncio.CancelledError:  # the server stops, or the client left (aiohttp cancels its handler)
        entry["outcome"] = "stopped" if stopping(request) else "client_gone"
        raise
    except Exception:
        if not response.prepared:  # aiohttp answers 500
            entry["status"] = 500
        entry["outcome"] = "error"
        raise
    return response


async def end_body(request: web.Request, response: web.StreamResponse, how: str) -> str:
    """End the body as recorded (``how``: ``clean``, ``cut``, ``reset``, ``timeout`` or
    ``client_gone``); returns the journal outcome (``complete``, ``cut`` or ``reset``)."""
    if how == "reset":
        abort_connection(request, reset=True)
        return "reset"
    if how in ("cut", "timeout", "client_gone"):
        abort_connection(request, reset=False)
        return "cut"
    await response.write_eof()  # the terminating chunk; with "close" framing aiohttp then closes
    return "complete"


async def _pause(plan: Plan, index: int) -> float:
    """Sleep the injected pause before chunk ``index`` (a stall), from now; returns its length."""
    seconds = plan.pauses.get(index, 0.0)
    if seconds > 0:
        await asyncio.sleep(seconds)
    return seconds


# asyncio's timers wake up to ~1 ms late (epoll waits in whole milliseconds). The last
# stretch before a deadline is therefore waited by yielding to the loop until it is due,
# by a few streams at a time so that many concurrent streams never keep a core busy.
_SPIN_WINDOW = 0.0012  # seconds
_MAX_SPINNERS = 4
_spinners = 0


async def sleep_until(loop: asyncio.AbstractEventLoop, deadline: float) -> None:
    """Sleep until ``deadline`` (loop time, seconds), to within tens of microseconds when few wait."""
    global _spinners
    delay = deadline - loop.time()
    if delay <= 0:
        return
    if delay > _SPIN_WINDOW or _spinners >= _MAX_SPINNERS:
        await asyncio.sleep(delay - _SPIN_WINDOW if _spinners < _MAX_SPINNERS else delay)
        if loop.time() >= deadline or _spinners >= _MAX_SPINNERS:
            return
    _spinners += 1
    try:
        while loop.time() < deadline:
            await asyncio.sleep(0)
    finally:
        _spinners -= 1
