"""The reference reader: ``python -m ssemock.checkclient.reader [--timeout SECONDS]``.

A correct SSE-level reader by the ``check-client`` output contract, and the example of one: it sends
the recorded request (``SSEMOCK_METHOD`` to ``SSEMOCK_STREAM_URL`` with the body of
``SSEMOCK_BODY_FILE``), feeds each read to the WHATWG decoder (:class:`ssemock.sse.Decoder`) and prints
each event as it is dispatched, ``{"type", "data", "id"}`` (``id``: the last event ID). As
``EventSource`` it fails on a status other than 200 or a content type other than
``text/event-stream``; it also fails on a body cut short or reset, and when no byte arrives for
``--timeout`` seconds (default 10). It exits 0 after a clean end of the stream, 1 on a failure (one
line on stderr). It does not reconnect, nor judge whether an answer is complete.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import aiohttp

from ..sse import Decoder, Event

__all__ = ["main", "read_stream"]


async def read_stream(method: str, url: str, body: bytes | None, timeout: float) -> int:
    """Read one stream and print its events (see the module docstring); returns the exit status."""
    headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    decoder = Decoder()
    limits = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
    async with (
        aiohttp.ClientSession(timeout=limits) as session,
        session.request(method, url, data=body, headers=headers) as response,
    ):
        if response.status != 200:
            return _fail(f"HTTP {response.status}")
        kind = response.headers.get("Content-Type", "")
        if kind.split(";")[0].strip().lower() != "text/event-stream":
            return _fail(f"Content-Type {kind!r}, not text/event-stream")
        async for data in response.content.iter_any():
            _print(decoder.feed(data))
    _print(decoder.close())
    return 0


def _print(items: Sequence[object]) -> None:
    for item in items:
        if isinstance(item, Event):
            line = json.dumps({"type": item.type, "data": item.data, "id": item.last_event_id}, ensure_ascii=False)
            sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _fail(message: str) -> int:
    print(f"reader: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the reader (arguments: ``--timeout SECONDS``); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ssemock.checkclient.reader")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds without a byte before giving up")
    args = parser.parse_args(argv)
    url = os.environ.get("SSEMOCK_STREAM_URL")
    if not url:
        return _fail("SSEMOCK_STREAM_URL is not set (run it under ssemock check-client)")
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    try:
        return asyncio.run(read_stream(os.environ.get("SSEMOCK_METHOD", "GET"), url, body, args.timeout))
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return _fail(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
