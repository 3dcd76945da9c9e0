"""A raw HTTP/1.1 client on a socket and h11, that keeps each HTTP chunk and its arrival time.

It sees what is on the wire: the chunk-size framing (one HTTP chunk per server write),
whether the body ended with the terminating chunk, was cut (FIN first) or reset (RST).
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import h11


@dataclass
class RawResponse:
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # arrival of each chunk's last byte, s after send
    ending: str = ""  # "complete", "cut" (FIN before the end of the body) or "reset" (RST)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name.lower()), None)


def raw_request(
    base_url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None,
    timeout: float = 30.0, slow: float = 0.0,
) -> RawResponse:
    """Send one request and read the whole response, keeping HTTP chunk boundaries (``slow``: seconds
    to wait before each read of at most 64 KiB, a client that reads slowly)."""
    url = urlsplit(base_url)
    conn = h11.Connection(h11.CLIENT)
    hdrs = [("Host", url.netloc), ("Content-Length", str(len(body))), *(headers or {}).items()]
    out = RawResponse()
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as sock:
        sent = time.perf_counter()
        sock.sendall(conn.send(h11.Request(method=method, target=path, headers=hdrs)) + conn.send(h11.Data(data=body))
                     + conn.send(h11.EndOfMessage()))
        piece = b""
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:  # closed before the terminating chunk
                out.ending = "cut"
                return out
            if event is h11.NEED_DATA:
                if slow:
                    time.sleep(slow)
                try:
                    data = sock.recv(1 << 16)
                except ConnectionResetError:
                    out.ending = "reset"
                    return out
                now = time.perf_counter() - sent
                conn.receive_data(data)
                continue
            if isinstance(event, h11.Response):
                out.status = event.status_code
                out.headers = [(k.decode(), v.decode()) for k, v in event.headers]
            elif isinstance(event, h11.Data):
                piece += event.data
                if event.chunk_end or out.header("transfer-encoding") != "chunked":
                    out.chunks.append(piece)
                    out.times.append(now)
                    piece = b""
            elif isinstance(event, h11.EndOfMessage):
                out.ending = "complete"
                return out
            elif isinstance(event, h11.ConnectionClosed):
                out.ending = "cut"
                return out


def raw_json(
    base_url: str, method: str, path: str, payload: object, headers: dict[str, str] | None = None
) -> RawResponse:
    """``raw_request`` with a JSON body."""
    return raw_request(base_url, method, path, json.dumps(payload).encode(),
                       {"Content-Type": "application/json", **(headers or {})})
