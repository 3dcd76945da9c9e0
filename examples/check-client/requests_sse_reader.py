"""check-client adapter: requests-sse (its ``EventSource``, over requests), an SSE-level reader.

    ssemock check-client --client-timeout 2 -- python examples/check-client/requests_sse_reader.py --timeout 2

Opens ``requests_sse.EventSource`` on the recorded request (SSEMOCK_METHOD, SSEMOCK_STREAM_URL,
SSEMOCK_BODY_FILE) and prints one JSON line per event (type, data, and the last event ID once one was
set). Exits 1 when requests-sse raises: a status other than 200 (``InvalidStatusCodeError``), a content
type other than text/event-stream (``InvalidContentTypeError``), a failed connection.

At the end of the body, clean or broken, requests-sse calls ``on_error``, waits its reconnection time
and connects again, forever; a broken read it logs at debug level only. The adapter ends the iteration
at that first ``on_error`` with exit status 0 instead (the library reports nothing more), and
``max_connect_retry=0`` makes a failed first connection raise at once.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import requests
import requests_sse


class EndOfBody(Exception):
    """The body ended: where requests-sse would connect again."""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="requests connect and read timeout, seconds")
    timeout = parser.parse_args().timeout
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    opened: list[bool] = []

    def on_error() -> None:
        if opened:  # called before a reconnect; a failed connection raises its own error after this call
            raise EndOfBody

    try:
        with requests_sse.EventSource(
            os.environ["SSEMOCK_STREAM_URL"], method=os.environ.get("SSEMOCK_METHOD", "GET"), timeout=timeout,
            max_connect_retry=0, on_open=lambda: opened.append(True), on_error=on_error, data=body,
            headers={"Content-Type": "application/json"} if body is not None else {},
        ) as source:
            for event in source:
                line = {"type": event.type or "message", "data": event.data}
                if event.last_event_id:
                    line["id"] = event.last_event_id
                print(json.dumps(line, ensure_ascii=False), flush=True)
    except EndOfBody:
        return 0
    except requests.RequestException as exc:
        print(f"requests-sse: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
