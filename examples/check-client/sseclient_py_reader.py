"""check-client adapter: sseclient-py (mpetazzoni/sseclient, module ``sseclient``), an SSE-level reader.

    ssemock check-client --client-timeout 2 -- python examples/check-client/sseclient_py_reader.py --timeout 2

sseclient-py parses a stream it is handed: as its README shows, the adapter sends the recorded request
(SSEMOCK_METHOD, SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE) with requests (``stream=True``), checks what an
``EventSource`` checks before reading (status 200, content type text/event-stream), hands the response to
``sseclient.SSEClient`` and prints one JSON line per event of ``events()`` (type, data). No id: an event's
``id`` is that event's own field, not the last event ID. Exits 1 on a status other than 200, another
content type, a broken or timed-out read (requests' errors).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import requests
import sseclient


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="requests connect and read timeout, seconds")
    timeout = parser.parse_args().timeout
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    headers = {"Accept": "text/event-stream"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        response = requests.request(
            os.environ.get("SSEMOCK_METHOD", "GET"), os.environ["SSEMOCK_STREAM_URL"],
            data=body, headers=headers, stream=True, timeout=timeout,
        )
        response.raise_for_status()
        kind = response.headers.get("Content-Type", "")
        if kind.split(";")[0].strip().lower() != "text/event-stream":
            raise requests.RequestException(f"Content-Type {kind!r}")
        for event in sseclient.SSEClient(response).events():
            print(json.dumps({"type": event.event, "data": event.data}, ensure_ascii=False), flush=True)
    except requests.RequestException as exc:
        print(f"sseclient-py: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
