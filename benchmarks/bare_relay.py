"""The recorder's second baseline: a bare aiohttp reverse proxy, ``python -m benchmarks.bare_relay TARGET``.

What any aiohttp relay costs (client ``readany`` + server chunked ``write`` and ``drain``
per upstream read, as the recorder does), with nothing else: no recording, spool, secret
scan, matching or progress line. Prints ``relaying on URL`` on its first line of stdout,
then relays until it is terminated.
"""

from __future__ import annotations

import asyncio
import sys

import aiohttp
from aiohttp import web

_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})


def relay_app(target: str) -> web.Application:
    """An app forwarding every request to ``target`` and streaming the answer back, one write per read."""
    app = web.Application()
    sessions: list[aiohttp.ClientSession] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        headers = {"Accept-Encoding": "identity"}
        async with sessions[0].request(request.method, target + request.raw_path, headers=headers) as upstream:
            response = web.StreamResponse(status=upstream.status)
            for k, v in upstream.headers.items():
                if k.lower() not in _HOP_BY_HOP:
                    response.headers.add(k, v)
            response.enable_chunked_encoding()
            await response.prepare(request)
            while data := await upstream.content.readany():
                await response.write(data)
            await response.write_eof()
            return response

    async def session_ctx(app: web.Application):  # type: ignore[no-untyped-def]
        sessions.append(aiohttp.ClientSession(auto_decompress=False))
        yield
        await sessions[0].close()

    app.cleanup_ctx.append(session_ctx)
    app.router.add_route("*", "/{path:.*}", handle)
    return app


async def _main(target: str) -> None:
    runner = web.AppRunner(relay_app(target), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    print(f"relaying on http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1]))
