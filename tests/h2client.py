"""A raw HTTP/2 client on a socket and the ``h2`` state machine, that keeps each DATA frame, its arrival time,
and how the stream ended (``END_STREAM``, ``RST_STREAM`` and its code, ``GOAWAY`` and its last stream id).

It controls its own flow-control window: ``window`` is its initial stream window (``SETTINGS_INITIAL_WINDOW_SIZE``),
and it sends ``WINDOW_UPDATE`` for what it read at once (``ack=True``) or never.
"""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import h2.config
import h2.connection
import h2.events
import h2.settings


@dataclass
class H2Response:
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    frames: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # arrival of each DATA frame, s after the request was sent
    ended: bool = False  # END_STREAM
    reset_code: int | None = None  # RST_STREAM's error code
    goaway: tuple[int, int] | None = None  # GOAWAY's (error code, last stream id)
    closed: bool = False  # the server closed the connection
    stream_id: int = 0
    windows: list[int] = field(default_factory=list)  # the stream's receive window after each DATA frame was read

    @property
    def body(self) -> bytes:
        return b"".join(self.frames)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name.lower()), None)


def h2_request(
    base_url: str,
    method: str,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    *,
    window: int = 65_535,
    ack: bool = True,
    timeout: float = 30.0,
    cafile: str | None = None,
    query: list[tuple[str, str]] | None = None,
    streams_before: int = 0,
) -> H2Response:
    """Send one request (after ``streams_before`` ``GET /_ssemock/health`` streams, answered first) and read
    its answer until its stream ends, is reset, or the connection ends."""
    url = urlsplit(base_url)
    assert url.hostname is not None and url.port is not None
    sock: socket.socket = socket.create_connection((url.hostname, url.port), timeout=timeout)
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=cafile)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(sock, server_hostname=url.hostname)
        assert sock.selected_alpn_protocol() == "h2"  # type: ignore[attr-defined]
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.local_settings = h2.settings.Settings(
        client=True,
        initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window, h2.settings.SettingCodes.ENABLE_PUSH: 0},
    )
    conn.initiate_connection()
    if window > 65_535:  # the connection's window too (RFC 9113 section 6.9.2: it starts at 65,535)
        conn.increment_flow_control_window(window - 65_535)
    sock.sendall(conn.data_to_send())
    authority = url.netloc
    for _ in range(streams_before):
        sid = conn.get_next_available_stream_id()
        conn.send_headers(
            sid,
            [(":method", "GET"), (":path", "/_ssemock/health"), (":scheme", url.scheme), (":authority", authority)],
            end_stream=True,
        )
        sock.sendall(conn.data_to_send())
        _read(sock, conn, sid, H2Response(stream_id=sid), ack=True, timeout=timeout)
    target = path + ("?" + urlencode(query) if query else "")
    fields = [(":method", method), (":path", target), (":scheme", url.scheme), (":authority", authority)]
    fields += [(k.lower(), v) for k, v in (headers or {}).items()]
    stream_id = conn.get_next_available_stream_id()
    conn.send_headers(stream_id, fields, end_stream=not body)
    if body:
        conn.send_data(stream_id, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    response = H2Response(stream_id=stream_id)
    try:
        _read(sock, conn, stream_id, response, ack=ack, timeout=timeout)
    finally:
        sock.close()
    return response


def _read(
    sock: socket.socket,
    conn: h2.connection.H2Connection,
    stream_id: int,
    response: H2Response,
    *,
    ack: bool,
    timeout: float,
) -> None:
    start = time.monotonic()
    deadline = start + timeout
    while not (response.ended or response.reset_code is not None or response.goaway or response.closed):
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            data = b""
        if not data:
            response.closed = True
            break
        for event in conn.receive_data(data):
            _event(event, conn, stream_id, response, ack, time.monotonic() - start)
        out = conn.data_to_send()
        if out:
            sock.sendall(out)


def _event(
    event: h2.events.Event,
    conn: h2.connection.H2Connection,
    stream_id: int,
    response: H2Response,
    ack: bool,
    now: float,
) -> None:
    if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream_id:
        headers = event.headers or []
        response.status = int(dict(headers)[":status"])  # type: ignore[arg-type]
        response.headers = [(str(k), str(v)) for k, v in headers if not str(k).startswith(":")]
    elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream_id:
        if event.data:  # (an empty DATA frame only carries END_STREAM)
            response.frames.append(event.data)
            response.times.append(now)
        if ack and event.flow_controlled_length:
            conn.acknowledge_received_data(event.flow_controlled_length, stream_id)  # WINDOW_UPDATE past half
        response.windows.append(conn.streams[stream_id].inbound_flow_control_window)
    elif isinstance(event, h2.events.DataReceived) and event.flow_controlled_length:
        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id or 0)
    elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream_id:
        response.ended = True
    elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream_id:
        response.reset_code = int(event.error_code or 0)
    elif isinstance(event, h2.events.ConnectionTerminated):
        response.goaway = (int(event.error_code or 0), int(event.last_stream_id or 0))
