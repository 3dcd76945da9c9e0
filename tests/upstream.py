"""A local stand-in for a provider: real aiohttp server on 127.0.0.1 in a background thread.

It sends scripted streams: each script is a list of ``(delay seconds, bytes)``
writes, one ``write`` + drain each (so one HTTP chunk each), then an ending:
``clean`` (terminating chunk), ``cut`` (connection closed without it) or
``reset`` (TCP RST). The scripts follow the shapes of real provider streams
(OpenRouter keep-alive comments first, CRLF line endings as Gemini sends them,
a UTF-8 character split across writes, an OpenRouter-style mid-stream error).
Every request received is kept in ``received`` (method, path, query, headers, body).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import socket
import struct
import threading
from typing import Any

from aiohttp import web

Script = list[tuple[float, bytes]]

SCRIPTS: dict[str, tuple[Script, str]] = {
    "chat": ([
        (0.0, b": OPENROUTER PROCESSING\r\n\r\n"),
        (0.08, b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Caf\xc3'),
        (0.04, b'\xa9"}}]}\r\n\r\n'),
        (0.04, b'data: {"choices":[{"index":0,"delta":{"content":" costs 3 \xe2\x82\xac"}}]}\r\n\r\n'),
        (0.04, b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\r\n\r\ndata: [DONE]\r\n\r\n'),
    ], "clean"),
    "midstream-error": ([
        (0.0, b": OPENROUTER PROCESSING\n\n"),
        (0.06, b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'),
        (0.05, b'data: {"error":{"message":"Provider returned error","code":502},'
               b'"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}\n\n'),
    ], "clean"),
    "cut": ([
        (0.0, b'event: message_start\ndata: {"type":"message_start"}\n\n'),
        (0.06, b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"Hi"}}\n\n'),
    ], "cut"),
    "reset": ([
        (0.0, b'data: {"candidates":[{"content":{"parts":[{"text":"One"}]}}]}\r\n\r\n'),
        (0.06, b'data: {"candidates":[{"content":{"parts":[{"text":" two"}]}}]}\r\n\r\n'),
    ], "reset"),
}
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}


def script_times(script: Script) -> list[float]:
    """The time of each write, in seconds after the request arrived."""
    out, t = [], 0.0
    for delay, _ in script:
        t += delay
        out.append(t)
    return out


class Upstream:
    """The fake provider. ``with Upstream() as up: up.url`` (``http://127.0.0.1:PORT``)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.url = ""
        self.extra_headers: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_post("/stream/{name}", self.stream)
        app.router.add_post("/v1/chat/completions", self.stream)
        app.router.add_post("/slow", self.slow)
        app.router.add_post("/big", self.big)
        app.router.add_post("/json", self.json)
        app.router.add_post("/ratelimited", self.ratelimited)
        app.router.add_post("/gzip", self.gzipped)
        app.router.add_post("/echo", self.echo)
        app.router.add_post("/split", self.split)
        app.router.add_route("*", "/any/{tail:.*}", self.any_path)
        return app

    async def _keep(self, request: web.Request) -> bytes:
        body = await request.read()
        self.received.append({
            "method": request.method, "path": request.path, "query": dict(request.query),
            "headers": dict(request.headers), "body_sha256": hashlib.sha256(body).hexdigest(),
            "body_size": len(body), "body": body if len(body) < 100_000 else None,
        })
        return body

    async def _start(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={**SSE_HEADERS, **self.extra_headers})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        return resp

    async def stream(self, request: web.Request) -> web.StreamResponse:
        await self._keep(request)
        script, ending = SCRIPTS[request.match_info.get("name", "chat")]
        resp = await self._start(request)
        for delay, data in script:
            await asyncio.sleep(delay)
            await resp.write(data)
        await asyncio.sleep(0.03)
        end_connection(request, ending)
        if ending == "clean":
            await resp.write_eof()
        return resp

    async def slow(self, request: web.Request) -> web.StreamResponse:
        """One event every ``interval`` seconds (query), ``count`` events."""
        await self._keep(request)
        interval, count = float(request.query.get("interval", "0.1")), int(request.query.get("count", "100"))
        resp = await self._start(request)
        for i in range(count):
            await resp.write(f'data: {{"n":{i}}}\n\n'.encode())
            await asyncio.sleep(interval)
        await resp.write_eof()
        return resp

    async def big(self, request: web.Request) -> web.StreamResponse:
        """``size`` bytes of SSE events in writes of ``write`` bytes, as fast as the reader takes them."""
        await self._keep(request)
        size, write = int(request.query["size"]), int(request.query.get("write", "65536"))
        resp = await self._start(request)
        block = big_block(write)
        sent = 0
        while sent < size:
            piece = block[: min(write, size - sent)]
            await resp.write(piece)
            sent += len(piece)
        await resp.write_eof()
        return resp

    async def json(self, request: web.Request) -> web.Response:
        await self._keep(request)
        body = {"id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}]}
        return web.json_response(body, headers=self.extra_headers)

    async def ratelimited(self, request: web.Request) -> web.Response:
        await self._keep(request)
        body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
        return web.json_response(body, status=429, headers={"Retry-After": "7", **self.extra_headers})

    async def gzipped(self, request: web.Request) -> web.Response:
        """A gzip-encoded event stream whatever Accept-Encoding says (providers do this)."""
        body = await self._keep(request)
        payload = json.loads(body).get("say", "hello") if body else "hello"
        data = gzip.compress(f"data: {json.dumps({'text': payload})}\n\n".encode())
        return web.Response(body=data, headers={**SSE_HEADERS, "Content-Encoding": "gzip", **self.extra_headers})

    async def echo(self, request: web.Request) -> web.StreamResponse:
        """Streams back what the request said, split into writes of 7 bytes (secrets included)."""
        body = await self._keep(request)
        text = json.loads(body)["say"].encode()
        resp = await self._start(request)
        for i in range(0, len(text), 7):
            await resp.write(text[i : i + 7])
            await asyncio.sleep(0.005)
        await resp.write_eof()
        return resp

    async def split(self, request: web.Request) -> web.StreamResponse:
        """Streams back ``say`` (or the bytes of the hex text ``say_hex``: an answer whose secrets the request
        does not hold as they are) cut at the byte offsets ``cuts``, one write (and a short pause) per piece;
        ``header_hex``: the value of an ``X-Echo`` answer header, in hex likewise."""
        body = await self._keep(request)
        doc = json.loads(body)
        text = bytes.fromhex(doc["say_hex"]) if "say_hex" in doc else doc["say"].encode()
        cuts = sorted({c for c in doc.get("cuts", []) if 0 < c < len(text)})
        resp = web.StreamResponse(headers={**SSE_HEADERS, **self.extra_headers, **(
            {"X-Echo": bytes.fromhex(doc["header_hex"]).decode()} if "header_hex" in doc else {})})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for a, b in zip([0, *cuts], [*cuts, len(text)]):
            await resp.write(text[a:b])
            await asyncio.sleep(0.002)
        await resp.write_eof()
        return resp

    async def any_path(self, request: web.Request) -> web.Response:
        """Any method and path: a 404 JSON error that names the path asked (as many APIs do)."""
        await self._keep(request)
        body = {"error": {"message": f"no route for {request.method} {request.path}", "type": "not_found"}}
        return web.json_response(body, status=404, headers=self.extra_headers)

    def __enter__(self) -> Upstream:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop

            async def main() -> None:
                runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1)
                await runner.setup()
                site = web.TCPSite(runner, "127.0.0.1", 0)
                await site.start()
                self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
                self._stop = asyncio.Event()
                ready.set()
                await self._stop.wait()
                await runner.cleanup()

            loop.run_until_complete(main())
            loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)


def big_block(size: int) -> bytes:
    """``size`` bytes of whole SSE events (OpenAI chat chunk shape), padded to the size."""
    event = b'data: {"choices":[{"index":0,"delta":{"content":"lorem ipsum dolor sit amet "}}]}\n\n'
    block = event * (size // len(event) + 1)
    return block[:size]


def end_connection(request: web.Request, ending: str) -> None:
    """Close the connection without the chunked terminator (``cut``) or with a TCP RST (``reset``)."""
    if ending == "clean" or request.transport is None:
        return
    if ending == "reset":
        sock = request.transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        request.transport.abort()
    else:
        request.transport.close()
