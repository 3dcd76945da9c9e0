"""check-client adapter: sseclient (btubbs/sseclient, over requests), an SSE-level reader.

    ssemock check-client --client-timeout 2 -- python examples/check-client/sseclient_reader.py --timeout 2

Reads the recorded stream (SSEMOCK_METHOD, SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE) with sseclient's
``SSEClient`` and prints one JSON line per event (type, data, and the last event ID once one was set).
Exits 1 on an error: an HTTP status other than 200, a broken or timed-out read.

Three things sseclient does on its own are bent here, and only these:

- it always sends GET: the session handed to it sends the recorded method and body instead;
- at the end of the body it prints the exception on stdout, waits its reconnection time and connects
  again, forever: the adapter ends the iteration at the end of the body instead (an unfinished event
  is dropped, as WHATWG says), and sseclient's own prints go to stderr so that stdout keeps the
  output contract;
- the reads and their decoding are sseclient's (it reads the socket beneath requests, ``read1`` of up
  to ``chunk_size`` bytes, and decodes with the charset requests finds: ISO-8859-1 for a ``text/*``
  type that declares none).
"""

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests
import sseclient


class EndOfBody(Exception):
    """The server closed the body: where sseclient would reconnect."""


class RecordedRequest:
    """A ``session`` for SSEClient whose ``get`` sends the recorded request (method and JSON body)."""

    def __init__(self, method: str, body: bytes | None) -> None:
        self.method = method
        self.body = body

    def get(self, url: str, *, timeout: float, headers: dict[str, str], **kwargs: Any) -> requests.Response:
        if self.body is not None:
            headers = {**headers, "Content-Type": "application/json"}
        return requests.request(self.method, url, data=self.body, headers=headers, timeout=timeout, **kwargs)


class Reader(sseclient.SSEClient):
    """SSEClient that stops at the end of the body instead of connecting again."""

    def iter_content(self) -> Iterator[bytes]:
        yield from super().iter_content()
        raise EndOfBody


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="requests connect and read timeout, seconds")
    timeout = parser.parse_args().timeout
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    session = RecordedRequest(os.environ.get("SSEMOCK_METHOD", "GET"), body)
    out, sys.stdout = sys.stdout, sys.stderr  # sseclient prints what it catches
    try:
        source = Reader(os.environ["SSEMOCK_STREAM_URL"], session=session, timeout=timeout)
        for event in source:
            line = {"type": event.event, "data": event.data}
            if source.last_id is not None:
                line["id"] = source.last_id
            print(json.dumps(line, ensure_ascii=False), file=out, flush=True)
    except EndOfBody:
        return 0
    except (requests.RequestException, OSError) as exc:
        print(f"sseclient: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
