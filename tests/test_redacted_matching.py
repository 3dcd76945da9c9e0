"""Secrets the recorder removed from a request's path or query still select their interaction on replay:
the filter's placeholder in a recorded path segment or query value matches any value there (and nothing
else of the recording does), and a miss still names the closest interaction."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import httpx
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st

from ssemock import Cassette, Interaction, MockServer, Recorder, Request, Response
from ssemock.cassette import load
from ssemock.match_index import redacted_fits
from ssemock.redact import REDACTED
from ssemock.sse import decode

TOKEN = "7310493582:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"  # made up, in the Bot API's form
OTHER = "5550001111:BBHdqTcvCH1vGWJxfSeofSAs0K5PALDsawZ"
GEMINI_KEY = "AIzaSyA-not-a-real-key-0123456789abcde"
# What the Bot API's streaming-style answer looks like here: two events, in two writes.
EVENTS = [b'data: {"ok":true,"result":{"text":"Hel"}}\n\n', b'data: {"ok":true,"result":{"text":"lo"}}\n\n']


async def _bot(request: web.Request) -> web.StreamResponse:
    if request.match_info["token"] != TOKEN:
        return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for event in EVENTS:
        await response.write(event)
    await response.write_eof()
    return response


@pytest.fixture
async def upstream() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/bot{token}/sendMessage", _bot)
    app.router.add_post("/v1beta/models/gemini:streamGenerateContent", _bot_by_key)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def _bot_by_key(request: web.Request) -> web.StreamResponse:
    request.match_info["token"] = TOKEN if request.query.get("key") == GEMINI_KEY else "no"  # type: ignore[index]
    return await _bot(request)


async def _post(session: aiohttp.ClientSession, url: str, **kwargs: object) -> tuple[int, bytes, str]:
    async with session.post(url, json={"chat_id": 42, "text": "hi"}, **kwargs) as answer:  # type: ignore[arg-type]
        return answer.status, await answer.read(), answer.headers.get("Content-Type", "")


async def test_a_bot_token_in_the_path_is_kept_out_of_the_cassette_and_the_real_token_replays(
    upstream: str, tmp_path: Path
) -> None:
    async with aiohttp.ClientSession() as session:
        async with Recorder(upstream, tmp_path, cassette="bot") as recorder:
            recorded = await _post(session, f"{recorder.url}/bot{TOKEN}/sendMessage")
        assert recorded == (200, b"".join(EVENTS), "text/event-stream")
        text = (tmp_path / "bot.yaml").read_text()
        assert TOKEN not in text and TOKEN.split(":")[1] not in text
        [interaction] = load(tmp_path / "bot.yaml").interactions
        assert interaction.request.path == "/botREDACTED/sendMessage"
        async with MockServer(tmp_path / "bot.yaml", timing_scale=0) as server:
            status, body, kind = await _post(session, f"{server.url}/bot{TOKEN}/sendMessage")
            assert (status, kind) == (200, "text/event-stream")
            assert [e.data for e in decode(body)] == [e.data for e in decode(b"".join(EVENTS))]
            # Any token in that place: the recording does not know the real one.
            assert (await _post(session, f"{server.url}/bot{OTHER}/sendMessage"))[0] == 200
            # Everything else of the path is compared as written.
            for wrong in (f"/bot{TOKEN}/sendMessages", f"/xbot{TOKEN}/sendMessage", f"/bot{TOKEN}/x/sendMessage",
                          "/bot/sendMessage", f"/bot{TOKEN}/sendmessage"):
                status, body, _ = await _post(session, f"{server.url}{wrong}")
                assert status == 404, wrong
                error = json.loads(body)["error"]
                assert error["type"] == "ssemock_no_match"
                assert "closest: bot #0 POST /botREDACTED/sendMessage, which differs in path: " in error["message"]
                assert error["closest"][0]["differences"][0].startswith("path: ")
        async with MockServer(tmp_path / "bot.yaml", timing_scale=0, match_on=("method", "path", "query")) as server:
            assert (await _post(session, f"{server.url}/bot{TOKEN}/sendMessage"))[0] == 200


async def test_a_key_in_the_query_is_kept_out_of_the_cassette_and_the_real_key_replays(
    upstream: str, tmp_path: Path
) -> None:
    path = "/v1beta/models/gemini:streamGenerateContent"
    query = {"alt": "sse", "key": GEMINI_KEY}
    async with aiohttp.ClientSession() as session:
        async with Recorder(upstream, tmp_path, cassette="gemini") as recorder:
            assert (await _post(session, f"{recorder.url}{path}", params=query))[0] == 200
        assert GEMINI_KEY not in (tmp_path / "gemini.yaml").read_text()
        on = ("method", "path", "query", "body")
        # (The replay server drops credential-named query parameters before matching, as the recorder does.)
        async with MockServer(tmp_path / "gemini.yaml", timing_scale=0, match_on=on) as server:
            status, body, _ = await _post(session, f"{server.url}{path}", params=query)
            assert (status, body) == (200, b"".join(EVENTS))
            status, body, _ = await _post(session, f"{server.url}{path}", params={**query, "alt": "json"})
            assert status == 404 and b"alt=sse" in body


@pytest.mark.parametrize("match_on", [("method", "path"), ("method", "path", "query")])
def test_the_placeholder_matches_only_where_it_stands(match_on: tuple[str, ...]) -> None:
    """A recorded path or query value holding the placeholder matches any value in that segment or value;
    a recorded path with no placeholder, or with other text (``*``, ``.*``), matches only itself."""
    cassette = Cassette("c", [
        Interaction(Request("GET", "/v1/files/REDACTED/content", [("v", "x"), ("u", "tokREDACTED")]),
                    Response(200, headers=[("content-type", "text/plain")])),
        Interaction(Request("GET", "/v1/.*/*", []), Response(201, headers=[("content-type", "text/plain")])),
    ])
    with MockServer(cassette, match_on=match_on) as server:

        def status(path: str) -> int:
            return httpx.get(server.url + path).status_code

        assert status("/v1/files/file-abc123/content?v=x&u=tok123") == 200
        assert status("/v1/.*/*") == 201
        assert status("/v1/files/a/b/content?v=x&u=tok123") == 404  # one segment only
        assert status("/v1/files//content?v=x&u=tok123") == 404  # a value, not none
        assert status("/v1/xx/yy") == 404 and status("/v1/.*/x") == 404
        if "query" in match_on:
            assert status("/v1/files/f/content?v=y&u=tok123") == 404
            assert status("/v1/files/f/content?v=x&u=abc") == 404
            assert status("/v1/files/f/content?v=x") == 404


def _fits_by_regex(received: str, recorded: str) -> bool:
    """The rule as a regular expression (fine for short texts): each placeholder any non-empty text."""
    return re.fullmatch("(?s)" + ".+".join(map(re.escape, recorded.split(REDACTED))), received) is not None


@given(st.lists(st.sampled_from(["a", "b", "ab", "", REDACTED]), max_size=6).map("".join),
       st.text(alphabet="abR", max_size=12))
def test_the_placeholder_rule_is_the_regular_expression_one(recorded: str, received: str) -> None:
    assert redacted_fits(received, recorded) == _fits_by_regex(received, recorded)
    filled = recorded.replace(REDACTED, "x")  # each placeholder filled: always fits
    assert redacted_fits(filled, recorded)


def test_a_long_request_path_against_many_placeholders_is_decided_at_once() -> None:
    """The backtracking form took 12 s for 100 characters against six placeholders; the path is
    decided in one pass over the text, at aiohttp's longest request line too."""
    recorded = "/v1/" + "REDACTEDa" * 20 + "REDACTEDab"
    cassette = Cassette("c", [Interaction(Request("GET", recorded, []),
                                          Response(200, headers=[("content-type", "text/plain")]))])
    with MockServer(cassette, match_on=("method", "path")) as server, httpx.Client(timeout=30) as client:
        for n in (100, 8000):
            started = time.process_time()
            assert client.get(f"{server.url}/v1/{'a' * n}c").status_code == 404
            assert time.process_time() - started < 5  # (the client's CPU, the server being in this process)
        assert client.get(f"{server.url}/v1/{'xa' * 20}xab").status_code == 200
