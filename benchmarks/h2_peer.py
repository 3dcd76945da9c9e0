"""The servers and readers of :mod:`benchmarks.h2_throughput`.

``python -m benchmarks.h2_peer ours|bare PICKLE`` serves the first interaction of the pickled cassette
(:func:`benchmarks.common.handed_over`) with no delays and prints its port, until stdin is closed:

* ``ours``: ssemock's replay server with HTTP/2 on (``MockServer(http2=True, timing_scale=0)``), which
  answers HTTP/1.1 and h2c with prior knowledge on the same port;
* ``bare``: the baseline, a bare server on the same ``h2`` state machine and asyncio: one DATA frame per
  recorded chunk, one transport write each, waiting for ``WINDOW_UPDATE`` when the client's window is
  spent; no routing, matching, journal or plan.

:func:`read_h2` and :func:`read_http1` read one stream on a socket and count what arrived.
"""

from __future__ import annotations

import asyncio
import pickle
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
import h11

WINDOW = 1 << 24
"""The readers' flow-control window (16 MiB), stream and connection alike, as httpx and browsers open it."""


class BareH2(asyncio.Protocol):
    """The baseline: every request stream gets the chunks as DATA frames, honouring flow control."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        self.transport: asyncio.Transport | None = None
        self.window_open = asyncio.Event()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.conn.initiate_connection()
        transport.write(self.conn.data_to_send())

    def data_received(self, data: bytes) -> None:
        for event in self.conn.receive_data(data):
            if isinstance(event, h2.events.StreamEnded) and event.stream_id is not None:
                asyncio.get_running_loop().create_task(self.answer(event.stream_id))
            elif isinstance(event, h2.events.WindowUpdated):
                self.window_open.set()
        self.flush()

    def flush(self) -> None:
        assert self.transport is not None
        data = self.conn.data_to_send()
        if data:
            self.transport.write(data)

    async def answer(self, stream_id: int) -> None:
        self.conn.send_headers(stream_id, [(":status", "200"), ("content-type", "text/event-stream")])
        self.flush()
        for chunk in self.chunks:
            while self.conn.local_flow_control_window(stream_id) < len(chunk):
                self.window_open.clear()
                await self.window_open.wait()
            self.conn.send_data(stream_id, chunk)
            self.flush()
        self.conn.end_stream(stream_id)
        self.flush()


async def serve(kind: str, cassette_file: str) -> None:
    cassette = pickle.loads(Path(cassette_file).read_bytes())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    threading.Thread(target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    if kind == "ours":
        from ssemock import MockServer

        ours = MockServer([cassette], scenarios=[], timing_scale=0, http2=True)
        await ours.start()
        print(ours.port, flush=True)
        await stop.wait()
        await ours.stop()
        return
    chunks = [c.data for c in cassette.interactions[0].response.chunks]
    server = await loop.create_server(lambda: BareH2(chunks), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await stop.wait()
    server.close()


def read_h2(port: int, path: str, body: bytes, timeout: float = 120.0) -> dict[str, Any]:
    """One POST over h2c with prior knowledge: ``{"bytes", "frames", "elapsed"}`` (seconds from the request to
    ``END_STREAM``)."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.local_settings = h2.settings.Settings(
        client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW}
    )
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        conn.initiate_connection()
        conn.increment_flow_control_window(WINDOW - 65_535)
        stream_id = conn.get_next_available_stream_id()
        start = time.perf_counter()
        conn.send_headers(
            stream_id, [(":method", "POST"), (":path", path), (":scheme", "http"), (":authority", f"127.0.0.1:{port}")]
        )
        conn.send_data(stream_id, body, end_stream=True)
        sock.sendall(conn.data_to_send())
        size = frames = 0
        ended = False
        while not ended:
            data = sock.recv(1 << 20)
            if not data:
                raise RuntimeError("h2_peer: the server closed the connection")
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.DataReceived) and event.data:
                    size += len(event.data)
                    frames += 1
                    conn.acknowledge_received_data(event.flow_controlled_length or 0, stream_id)
                ended = ended or isinstance(event, h2.events.StreamEnded | h2.events.StreamReset)
            out = conn.data_to_send()
            if out:
                sock.sendall(out)
        return {"bytes": size, "frames": frames, "elapsed": time.perf_counter() - start}


def read_http1(port: int, path: str, body: bytes, timeout: float = 120.0) -> dict[str, Any]:
    """One POST over HTTP/1.1 (h11): ``{"bytes", "frames"`` (HTTP chunks) ``, "elapsed"}``."""
    conn = h11.Connection(h11.CLIENT)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        start = time.perf_counter()
        sock.sendall(
            conn.send(
                h11.Request(
                    method="POST",
                    target=path,
                    headers=[("Host", f"127.0.0.1:{port}"), ("Content-Length", str(len(body)))],
                )
            )
            + conn.send(h11.Data(data=body))
            + conn.send(h11.EndOfMessage())
        )
        size = frames = 0
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(sock.recv(1 << 20))
            elif isinstance(event, h11.Data):
                size += len(event.data)
                frames += event.chunk_end
            elif isinstance(event, h11.EndOfMessage):
                return {"bytes": size, "frames": frames, "elapsed": time.perf_counter() - start}


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
