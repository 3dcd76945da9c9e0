"""A page of a foreign origin in headless Chromium cannot read replays; a page of this machine can.

tests/node/foreign-origin.mjs (playwright-core, Debian ``chromium``) serves one page on 127.0.0.1
under the name ``evil.test`` (resolved to 127.0.0.1 by the browser only), so that the page's
origin is foreign while its requests go to the server at 127.0.0.1, then the same page under
127.0.0.1 (another port: a loopback origin).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ssemock import MockServer
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

SCRIPT = Path(__file__).parent / "node" / "foreign-origin.mjs"
CASSETTE = "openai-chat-finish-length-usage"
REPLAY = f"/_ssemock/c/{CASSETTE}/v1/chat/completions"


def test_chromium_page_of_a_foreign_origin_cannot_read_a_replay(node: str, chromium: Path) -> None:
    recorded = collect_cassettes(None)[CASSETTE].interactions[0].response.body
    expected = [e.data for e in decode(recorded) if isinstance(e, Event)]
    # EventSource sends GET; the recording answers POST: match on the path only.
    with MockServer([collect_cassettes(None)[CASSETTE]], scenarios=[], timing_scale=0, match_on=("path",)) as server:
        done = subprocess.run([node, str(SCRIPT), server.url, REPLAY], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        journal = server.requests
    foreign, loopback = result["foreign"], result["loopback"]
    assert foreign["origin"].startswith("http://evil.test:") and loopback["origin"].startswith("http://127.0.0.1:")
    # The page of this machine reads the stream, the 404, and the EventSource's events.
    assert loopback["simple"]["status"] == loopback["json"]["status"] == 200
    assert [e.data for e in decode(loopback["simple"]["body"].encode()) if isinstance(e, Event)] == expected
    assert loopback["unknown"]["status"] == 404 and "known" not in json.loads(loopback["unknown"]["body"])["error"]
    assert loopback["eventSource"] == {"events": expected, "errors": 0}
    # The foreign page reads nothing: the browser withholds every answer.
    for name in ("simple", "json", "unknown"):
        assert "Failed to fetch" in foreign[name]["blocked"], name
    assert foreign["eventSource"] == {"events": [], "errors": 1}
    # The server did answer the requests that need no preflight (text/plain POSTs, EventSource's GET):
    # it is the browser that kept the answers from the page.
    origins = [{k.lower(): v for k, v in e["headers"].items()}.get("origin") for e in journal]
    sent = [(e["method"], e["status"]) for e, o in zip(journal, origins, strict=True) if o == foreign["origin"]]
    assert sorted(sent) == [("GET", 200), ("POST", 200), ("POST", 404)]
