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


def test_chromium_pages_of_other_origins_cannot_read_or_clear_the_journal() -> None:
    """Real page loads and fetches: another origin, a name rebound to 127.0.0.1, the server's own origin."""
    script = Path(__file__).parent / "node" / "admin-api.mjs"
    with MockServer([collect_cassettes(None)[CASSETTE]], scenarios=[], timing_scale=0, match_on=("path",)) as server:
        done = subprocess.run(["node", str(script), server.url], capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        result = json.loads(done.stdout)
        journal_left = server.requests
    cross, rebound, same = result["crossOrigin"], result["rebound"], result["sameOrigin"]
    # Another origin: the browser withholds the journal, its DELETE preflight is refused, a no-cors
    # request is opaque (and refused by the server); replay streams stay readable through CORS.
    assert "blocked" in cross["read"] and "blocked" in cross["clear"] and cross["noCors"] == {"opaque": True}
    assert cross["replay"]["status"] == 200 and cross["replay"]["body"].startswith("data: ")
    # DNS rebinding: same origin for the browser, a foreign Host for the server.
    assert rebound["status"] == 421
    for name in ("read", "clear", "noCors"):
        assert rebound[name]["status"] == 421, name
        assert json.loads(rebound[name]["body"])["error"]["type"] == "ssemock_misdirected_host"
    # The developer's own page: the journal holds both replays and the browser's two favicon requests
    # to this server (the script waits for them, so none lands between the read and the clear), then
    # the page clears it.
    def replays(entries: list[dict[str, object]]) -> int:
        return sum(e["path"] == "/v1/chat/completions" for e in entries)

    assert result["favicons"] is True
    journal = json.loads(same["read"]["body"])
    assert same["read"]["status"] == 200 and replays(journal) == 2
    assert sorted(e["path"] for e in journal) == ["/favicon.ico"] * 2 + ["/v1/chat/completions"] * 2
    assert same["clear"]["status"] == 200 and json.loads(same["clear"]["body"]) == {"cleared": len(journal)}
    assert replays(journal_left) == 1  # the same-origin page's replay, after clearing
