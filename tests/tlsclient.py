"""A TLS client that sees records: it reads the raw TCP bytes, splits them into TLS records by their headers
(RFC 8446 section 5.1: type, version, 2-byte length) and hands each record alone to Python's ``ssl``
(``SSLObject`` over memory BIOs), so each application-data record's plaintext is known exactly, and how the
connection ended: with a ``close_notify`` alert or with a bare TCP FIN."""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass, field


@dataclass
class Records:
    """What a TLS connection brought: each application-data record's plaintext, in order, and ``end``:
    ``close_notify`` (the alert came, then or not the FIN), ``eof`` (a FIN with no ``close_notify``: a
    truncation to the TLS layer) or ``open`` (the server kept the connection open past the timeout)."""

    plaintext: list[bytes] = field(default_factory=list)
    end: str = "open"

    @property
    def data(self) -> bytes:
        return b"".join(self.plaintext)


def tls_records(host: str, port: int, request: bytes, cafile: str, *, timeout: float = 10.0) -> Records:
    """Send ``request`` (an HTTP/1.1 request's bytes) over TLS 1.3 and read until the connection ends."""
    context = ssl.create_default_context(cafile=cafile)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.set_alpn_protocols(["http/1.1"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    got = Records()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        raw = bytearray()
        handshaken = False

        def feed_records() -> bool:
            """Hand each whole record alone to TLS; True once the connection's end was read."""
            nonlocal handshaken
            while len(raw) >= 5 and len(raw) >= 5 + int.from_bytes(raw[3:5], "big"):
                size = 5 + int.from_bytes(raw[3:5], "big")
                incoming.write(bytes(raw[:size]))
                del raw[:size]
                if not handshaken:
                    try:
                        tls.do_handshake()
                        handshaken = True
                        tls.write(request)
                    except ssl.SSLWantReadError:
                        pass
                    sock.sendall(outgoing.read())
                    continue
                try:
                    plain = tls.read(65_536)
                except ssl.SSLWantReadError:  # a record of the handshake layer (a session ticket)
                    continue
                except ssl.SSLZeroReturnError:
                    got.end = "close_notify"
                    return True
                if not plain:  # Python's ssl reads a close_notify alert as b"" (SSL_ERROR_ZERO_RETURN)
                    got.end = "close_notify"
                    return True
                got.plaintext.append(plain)
            return False

        try:
            tls.do_handshake()
        except ssl.SSLWantReadError:
            sock.sendall(outgoing.read())
        try:
            while True:
                data = sock.recv(65_536)
                if not data:
                    incoming.write_eof()
                    try:
                        tls.read(1)
                    except ssl.SSLZeroReturnError:
                        got.end = "close_notify"
                    except ssl.SSLError:  # SSLEOFError: EOF in violation of the protocol
                        got.end = "eof"
                    return got
                raw += data
                if feed_records():
                    return got
        except TimeoutError:
            return got
