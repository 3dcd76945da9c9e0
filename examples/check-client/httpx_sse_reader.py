"""check-client adapter: httpx-sse, an SSE-level reader.

    ssemock check-client --client-timeout 2 -- python examples/check-client/httpx_sse_reader.py --timeout 2

Sends the recorded request (SSEMOCK_METHOD, SSEMOCK_STREAM_URL, SSEMOCK_BODY_FILE) with httpx, reads
it with httpx-sse's ``iter_sse`` and prints one JSON line per event (type, data, id). Exits 1 on an
error: an HTTP status other than 200, a content type other than text/event-stream (httpx-sse's
SSEError), a broken or timed-out read.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import httpx
import httpx_sse


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=10.0, help="httpx read timeout, seconds")
    timeout = parser.parse_args().timeout
    body_file = os.environ.get("SSEMOCK_BODY_FILE")
    body = Path(body_file).read_bytes() if body_file else None
    headers = {"Content-Type": "application/json"} if body is not None else {}
    try:
        with (
            httpx.Client(timeout=httpx.Timeout(timeout)) as client,
            httpx_sse.connect_sse(
                client,
                os.environ.get("SSEMOCK_METHOD", "GET"),
                os.environ["SSEMOCK_STREAM_URL"],
                content=body,
                headers=headers,
            ) as source,
        ):
            source.response.raise_for_status()
            for sse in source.iter_sse():
                print(json.dumps({"type": sse.event, "data": sse.data, "id": sse.id}, ensure_ascii=False), flush=True)
    except (httpx.HTTPError, httpx_sse.SSEError) as exc:
        print(f"httpx-sse: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main())
