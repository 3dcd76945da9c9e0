"""check-client adapter: aiohttp-sse-client2 (its ``EventSource``, over aiohttp), an SSE-level reader.

    ssemock check-client --client-timeout 2 -- python examples/check-client/aiohttp_sse_client2_reader.py --timeout 2

Opens ``aiohttp_sse_client2.client.EventSource`` on the recorded request (SSEMOCK_METHOD,
SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE) and prints one JSON line per event (type, data, and the last event
ID once one was set). Exits 1 when it raises: a status of 400 or more (``ConnectionError``), another status
than 200 or a content type other than text/event-stream (``ConnectionAbortedError``), a broken read
(aiohttp's ``ClientPayloadError``), no byte for the timeout (``TimeoutError``).

At the clean end of the body aiohttp-sse-client2 calls ``on_error``, waits its reconnection time and
connects again, forever: the adapter ends the iteration there with exit status 0 instead.
"""

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp
from aiohttp_sse_client2 import client


class EndOfBody(Exception):
    """The body ended cleanly: where aiohttp-sse-client2 would connect again."""


async def read(timeout: float) -> None:
    """Print the events of the recorded request's stream (raises what the library raises)."""
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    opened: list[bool] = []

    def on_error() -> None:
        if opened:  # called before a reconnect; a failed connection raises its own error after this call
            raise EndOfBody

    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(sock_connect=timeout, sock_read=timeout)) as session,
        client.EventSource(
            os.environ["SSEMOCK_STREAM_URL"], option={"method": os.environ.get("SSEMOCK_METHOD", "GET")},
            session=session, max_connect_retry=0, on_open=lambda: opened.append(True), on_error=on_error,
            data=body, headers={"Content-Type": "application/json"} if body is not None else {},
        ) as source,
    ):
        async for event in source:
            line = {"type": event.type or "message", "data": event.data}
            if event.last_event_id:
                line["id"] = event.last_event_id
            print(json.dumps(line, ensure_ascii=False), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="aiohttp connect and read timeout, seconds")
    try:
        asyncio.run(read(parser.parse_args().timeout))
    except EndOfBody:
        return 0
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        print(f"aiohttp-sse-client2: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
