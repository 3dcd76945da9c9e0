"""A browser EventSource from another origin, under a scenario chosen by path prefix (CORS).

Headless Chromium (Debian ``chromium``) driven by playwright-core (tests/node/eventsource.mjs)
opens a page on its own origin whose ``EventSource`` reads the replay server.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ssemock import MockServer
from ssemock.mockserver import collect_cassettes
from ssemock.sse import Event, decode

SCRIPT = Path(__file__).parent / "node" / "eventsource.mjs"
CASSETTE = "openai-chat-finish-length-usage"


def test_chromium_eventsource_from_another_origin_under_a_scenario_prefix(node: str, chromium: Path) -> None:
    recorded = collect_cassettes(None)[CASSETTE].interactions[0].response.body
    expected = [e.data for e in decode(recorded) if isinstance(e, Event)]
    assert len(expected) == 5 and expected[-1] == "[DONE]"
    # EventSource sends GET; the recording answers POST: match on the path only.
    with MockServer(timing_scale=0, match_on=("path",)) as server:
        base = server.url
        url = f"{base}/_ssemock/s/split-crlf,keepalive/_ssemock/c/{CASSETTE}/v1/chat/completions"
        done = subprocess.run([node, str(SCRIPT), url], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        (entry,) = server.requests
    assert result["errors"] == 0
    assert [e["data"] for e in result["events"]] == expected
    assert {e["type"] for e in result["events"]} == {"message"}
    assert entry["method"] == "GET" and entry["scenario"] == "split-crlf,keepalive"
    origin = {k.lower(): v for k, v in entry["headers"].items()}["origin"]
    assert origin == result["origin"] and not base.endswith(origin.rsplit(":", 1)[1])
