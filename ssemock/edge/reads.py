"""Whether a client on this machine has read what the server wrote to it (Linux ``sock_diag``).

A chunk boundary reaches a socket-level reader (aiohttp ``iter_any()``, ``recv`` loops,
``requests``, Go) as the end of a read only if the reader takes the first chunk before the
second arrives. TCP tells the sender nothing of the reader's reads, but for a client on the same
machine the kernel knows how many bytes wait in the client's receive queue: the ``sock_diag``
netlink interface answers, for one connection given by its four-tuple, ``idiag_rqueue`` (bytes
received and not yet read: ``rcv_nxt - copied_seq``), the figure ``ss -tn`` shows as Recv-Q
(Linux ``net/ipv4/inet_diag.c``; ``man 7 sock_diag``), and with the ``INET_DIAG_INFO``
extension the client socket's ``tcp_info``, whose ``tcpi_bytes_received`` tells the bytes still
on their way (sent by the server's socket, ``tcpi_bytes_sent - tcpi_bytes_retrans`` of its own
``TCP_INFO``, and not yet received; ``tcpi_notsent_bytes`` those not yet sent: Linux 4.19 or
later). No privilege is needed.

:class:`ClientReads` asks it for the client's end of one connection. Where it cannot be seen
(a client on another host or in another network namespace, another operating system, netlink
refused) :func:`client_reads` returns None and the sending layer falls back to a fixed pace.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import socket
import struct
import threading

__all__ = ["ClientReads", "client_reads"]

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_INET_DIAG_INFO = 2
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
_REQUEST = struct.Struct("=BBBBI")  # inet_diag_req_v2: family, protocol, ext, pad, states
_PORTS = struct.Struct("!HH")  # inet_diag_sockid: source and destination port, network order
_TAIL = struct.Struct("=III")  # inet_diag_sockid: interface, cookie (two words)
_RQUEUE_AT = _HEADER.size + 4 + 48 + 4  # inet_diag_msg: family..retrans (4), sockid (48), expires, rqueue
_ATTRIBUTES_AT = _HEADER.size + 72  # rtattrs after the inet_diag_msg
_ATTRIBUTE = struct.Struct("=HH")  # rtattr: length, type
_U32 = struct.Struct("=I")
_U64 = struct.Struct("=Q")
_NO_COOKIE = 0xFFFFFFFF
# struct tcp_info offsets (linux/tcp.h)
_RECEIVED_AT, _NOTSENT_AT, _SENT_AT, _RETRANS_AT, _INFO_SIZE = 128, 144, 200, 208, 216

_lock = threading.Lock()
_netlink: list[tuple[int, socket.socket]] = []
"""The process's netlink socket, with the process id it was opened in (a forked worker opens its own)."""
_sequence = itertools.count(1)


def _ask(query: bytes) -> bytes:
    """Send one ``sock_diag`` request and return its answer (one socket a process, one question at a time).

    The kernel answers while ``send`` runs, so the socket never blocks: an answer not there at once
    raises ``BlockingIOError`` (an ``OSError``), and one left from an earlier question is skipped by its
    sequence number.
    """
    with _lock:
        if not _netlink or _netlink[0][0] != os.getpid():
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG)
            sock.setblocking(False)
            _netlink[:] = [(os.getpid(), sock)]
        sock = _netlink[0][1]
        sequence = next(_sequence) & 0xFFFFFFFF
        sock.send(query[:8] + _U32.pack(sequence) + query[12:])
        while True:
            answer = sock.recv(8192)
            if len(answer) >= _HEADER.size and _HEADER.unpack_from(answer)[3] == sequence:
                return answer


class ClientReads:
    """The client's end of one TCP connection on this machine, as the kernel sees it.

    Args:
        sock: the server's socket of the connection.
        query: the ``sock_diag`` request naming the client's socket (from :func:`client_reads`).
    """

    __slots__ = ("_query", "_sock")

    def __init__(self, sock: socket.socket, query: bytes) -> None:
        self._sock = sock
        self._query = query

    def unread(self) -> int | None:
        """Bytes the server's socket holds that the client has not read yet: not yet sent, on their
        way, or received by the client's kernel and not taken by the client. None once the
        connection is gone (or the kernel no longer answers)."""
        try:
            own = self._sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _INFO_SIZE)
            answer = _ask(self._query)
        except OSError:
            return None
        if len(own) < _INFO_SIZE or len(answer) < _ATTRIBUTES_AT or _HEADER.unpack_from(answer)[1] == _NLMSG_ERROR:
            return None
        info = _client_info(answer)
        if info is None:
            return None
        sent: int = _U64.unpack_from(own, _SENT_AT)[0] - _U64.unpack_from(own, _RETRANS_AT)[0]
        on_the_way = sent - int(_U64.unpack_from(info, _RECEIVED_AT)[0])
        unsent, unread = int(_U32.unpack_from(own, _NOTSENT_AT)[0]), int(_U32.unpack_from(answer, _RQUEUE_AT)[0])
        return unsent + max(on_the_way, 0) + unread


def _client_info(answer: bytes) -> bytes | None:
    """The client socket's ``tcp_info`` from a ``sock_diag`` answer (its ``INET_DIAG_INFO`` attribute)."""
    end = min(len(answer), _HEADER.unpack_from(answer)[0])
    pos = _ATTRIBUTES_AT
    while pos + _ATTRIBUTE.size <= end:
        length, kind = _ATTRIBUTE.unpack_from(answer, pos)
        if length < _ATTRIBUTE.size:
            return None
        if kind == _INET_DIAG_INFO:
            info = answer[pos + _ATTRIBUTE.size: pos + length]
            return info if len(info) >= _RECEIVED_AT + 8 else None
        pos += (length + 3) & ~3
    return None


def client_reads(sock: socket.socket | None) -> ClientReads | None:
    """The client's reads of the connection ``sock`` (the server's socket), or None where they
    cannot be seen: not TCP, not Linux, the client not on this machine's network namespace."""
    if sock is None or sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return None
    try:
        local, peer = sock.getsockname(), sock.getpeername()
        size = 4 if sock.family == socket.AF_INET else 16
        # the client's socket: its source is our peer, its destination our local address
        ident = (_PORTS.pack(peer[1], local[1]) + _address(peer[0], size) + _address(local[0], size)
                 + _TAIL.pack(0, _NO_COOKIE, _NO_COOKIE))
        ext = 1 << (_INET_DIAG_INFO - 1)
        body = _REQUEST.pack(sock.family, socket.IPPROTO_TCP, ext, 0, 0xFFFFFFFF) + ident
        query = _HEADER.pack(_HEADER.size + len(body), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 0, 0) + body
        reads = ClientReads(sock, query)
    except (OSError, ValueError, AttributeError):
        return None
    return reads if reads.unread() is not None else None


def _address(text: str, size: int) -> bytes:
    """An address as ``inet_diag_sockid`` holds it: 16 bytes, an IPv4 one in the first four."""
    packed = ipaddress.ip_address(text.split("%", 1)[0]).packed
    if len(packed) != size:
        raise ValueError(f"address {text!r} is not of the socket's family")
    return packed.ljust(16, b"\0")
