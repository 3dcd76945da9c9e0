"""The replay server on the wire: exact bytes, exact chunks, recorded timing, endings, errors, admin."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, Chunk, End, Interaction, MockServer, Request, Response
from ssemock.cassette import save

from .rawclient import raw_json, raw_request

SSE = [("content-type", "text/event-stream")]


def _cassette(name: str, *interactions: Interaction) -> Cassette:
    return Cassette(name, list(interactions))


def test_every_bundled_interaction_is_replayed_byte_and_chunk_exact(bundled: dict[str, Cassette]) -> None:
    served = 0
    for cassette in bundled.values():
        with MockServer([cassette], scenarios=[], timing_scale=0) as server:
            for index, inter in enumerate(cassette.interactions):
                req = inter.request
                target = req.path + ("?" + "&".join(f"{k}={v}" for k, v in req.query) if req.query else "")
                got = raw_request(server.url, req.method, target, req.body or b"")
                assert server.requests[-1]["interaction"] == index, (cassette.name, index)
                assert got.status == inter.response.status
                assert got.chunks == [c.data for c in inter.response.chunks], (cassette.name, index)
                assert got.ending == "complete"
                for name, value in inter.response.headers:
                    if name.lower() not in {"transfer-encoding", "content-length", "connection"}:
                        assert (name.lower(), value) in got.headers, (cassette.name, name)
                served += 1
    assert served == 27  # every interaction of the 14 real recordings


def test_recorded_timing_is_kept_within_tolerance() -> None:
    gaps = [0.0, 0.05, 0.12, 0.02, 0.2, 0.001, 0.08, 0.03, 0.15, 0.01]
    times, t = [], 0.04
    for gap in gaps:
        t += gap
        times.append(round(t, 6))
    chunks = [Chunk(at, f"data: {i}\n\n".encode()) for i, at in enumerate(times)]
    resp = Response(200, None, SSE, chunks, start=0.03, end=End(times[-1], "clean"))
    cassette = _cassette("timed", Interaction(Request("GET", "/t"), resp))
    for scale in (1.0, 0.5):
        with MockServer([cassette], scenarios=[], timing_scale=scale) as server:
            got = raw_request(server.url, "GET", "/t")
            assert got.chunks == [c.data for c in chunks]
            errors = [arrived - scale * c.t for arrived, c in zip(got.times, chunks, strict=True)]
            # Never early: a timer fires at or after its deadline, however busy the machine. How late
            # is a speed figure, measured against a baseline in benchmarks/timing_fidelity.py.
            assert min(errors) > -0.002, errors


def test_untimed_recordings_are_sent_without_delay(bundled: dict[str, Cassette]) -> None:
    cassette = bundled["alibaba-qwen-chat-emoji-split"]
    with MockServer([cassette], scenarios=[]) as server:  # timing_scale 1, but "timing: none"
        got = raw_request(server.url, "POST", "/compatible-mode/v1/chat/completions", b"{}")
    assert len(got.chunks) == 276 and got.times[-1] < 2.0


def test_cut_and_reset_endings_are_distinguishable_from_a_clean_end() -> None:
    def inter(path: str, how: str) -> Interaction:
        return Interaction(Request("GET", path), Response(200, None, SSE, [Chunk(0, b"data: a\n\n"),
                                                                          Chunk(0, b"data: b")], end=End(0, how)))

    cassette = _cassette("ends", inter("/clean", "clean"), inter("/cut", "cut"), inter("/reset", "reset"))
    with MockServer([cassette], scenarios=[]) as server:
        assert raw_request(server.url, "GET", "/clean").ending == "complete"
        cut = raw_request(server.url, "GET", "/cut")
        assert (cut.ending, cut.chunks) == ("cut", [b"data: a\n\n", b"data: b"])
        assert raw_request(server.url, "GET", "/reset").ending == "reset"
        with httpx.Client() as client:
            with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
                client.get(server.url + "/cut")
            with pytest.raises(httpx.ReadError):
                client.get(server.url + "/reset")
        assert [e["outcome"] for e in server.requests] == ["complete", "cut", "reset", "cut", "reset"]


def _two_turns() -> Cassette:
    def turn(text: str, content: str) -> Interaction:
        body = f'{{"model":"m","messages":[{{"role":"user","content":"{text}"}}]}}'.encode()
        return Interaction(Request("POST", "/v1/chat/completions", body=body),
                           Response(200, None, SSE, [Chunk(0, f"data: {content}\n\n".encode())]))

    return _cassette("turns", turn("hello", "first"), turn("again", "second"))


def test_request_matching_by_json_value_not_bytes() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server:
        got = raw_json(server.url, "POST", "/v1/chat/completions",
                       {"messages": [{"content": "again", "role": "user"}], "model": "m"})
        assert got.body == b"data: second\n\n"


def test_no_match_is_a_json_404_naming_the_closest_interaction_and_the_difference() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server:
        r = httpx.post(server.url + "/v1/chat/completions",
                       json={"model": "m", "messages": [{"role": "user", "content": "hellp"}]})
        assert r.status_code == 404
        error = r.json()["error"]
        assert error["type"] == "ssemock_no_match"
        assert "POST /v1/chat/completions" in error["message"]
        assert "messages[0].content" in error["message"] and '"hellp" != recorded "hello"' in error["message"]
        assert error["closest"][0]["cassette"] == "turns"
        assert error["closest"][0]["differences"] == [
            'body: messages[0].content: "hellp" != recorded "hello"']
        journal = server.requests[-1]
        assert (journal["status"], journal["outcome"], journal["error"]["type"]) == (404, "refused",
                                                                                   "ssemock_no_match")


def test_explicit_cassette_by_header_or_path_prefix_answers_any_body() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server:
        by_header = raw_json(server.url, "POST", "/v1/chat/completions", {"other": 1},
                             headers={"X-SSEMock-Cassette": "turns"})
        by_prefix = raw_json(server.url, "POST", "/_ssemock/c/turns/v1/chat/completions", {"other": 1})
        # First unplayed interaction, in recording order.
        assert (by_header.body, by_prefix.body) == (b"data: first\n\n", b"data: second\n\n")


def test_bad_requests_get_json_errors_and_the_server_keeps_serving() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server, httpx.Client(base_url=server.url) as client:
        r = client.post("/_ssemock/c/nope/v1/chat/completions", content=b"{")
        assert r.status_code == 404 and r.json()["error"]["type"] == "ssemock_unknown_cassette"
        assert r.json()["error"]["known"] == ["turns"]
        r = client.post("/v1/chat/completions", headers={"X-SSEMock-Scenario": "nope"}, content=b"{")
        assert r.status_code == 400 and r.json()["error"]["type"] == "ssemock_unknown_scenario"
        r = client.post("/v1/chat/completions", content=b"\xff not json")
        assert r.status_code == 404 and "body:" in r.json()["error"]["message"]
        r = client.get("/_ssemock/nothing")
        assert r.status_code == 404 and r.json()["error"]["type"] == "ssemock_unknown_admin_path"
        health = client.get("/_ssemock/health").json()
        assert health.pop("tasks") >= 2  # at least this request's handler and its connection's
        assert health == {"status": "ok", "cassettes": 1, "scenarios": 0, "in_flight": 0}


@pytest.mark.parametrize(("method", "path", "kind"), [
    ("GET", "/_ssemock", "ssemock_unknown_admin_path"),
    ("GET", "/_ssemock/", "ssemock_unknown_admin_path"),
    ("POST", "/_ssemock/c", "ssemock_unknown_admin_path"),  # no cassette name: not the replay prefix
    ("POST", "/_ssemock/health", "ssemock_unknown_admin_path"),  # health answers GET only
    ("PROPFIND", "/_ssemock/x/y", "ssemock_unknown_admin_path"),
    ("POST", "/_ssemock/%63/turns/v1/chat/completions", "ssemock_unknown_admin_path"),  # an escaped "c"
    ("POST", "/_ssemockx/v1/chat/completions", "ssemock_no_match"),  # not under /_ssemock/: replayed
    ("POST", "/_ssemock/c/nope/v1/chat/completions", "ssemock_unknown_cassette"),
    ("PROPFIND", "/v1/%2F/x", "ssemock_no_match"),
])
def test_admin_paths_and_replay_paths_are_told_apart(method: str, path: str, kind: str) -> None:
    with MockServer([_two_turns()], scenarios=[]) as server:
        answer = raw_request(server.url, method, path, b"{}")
    assert answer.status == 404 and json.loads(answer.body)["error"]["type"] == kind


def test_replay_paths_answer_preflights_and_admin_paths_do_not() -> None:
    preflight = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    with MockServer([_two_turns()], scenarios=[]) as server, httpx.Client(base_url=server.url) as client:
        for path in ("/v1/chat/completions", "/_ssemock/c/turns/v1/chat/completions", "/"):
            allowed = client.options(path, headers=preflight)
            assert allowed.status_code == 200, path
            assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
        for path in ("/_ssemock", "/_ssemock/requests", "/_ssemock/x"):
            refused = client.options(path, headers=preflight)
            assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers, path
        hello = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
        answered = client.post("/v1/chat/completions", json=hello, headers={"Origin": "http://localhost:3000"})
        assert answered.text == "data: first\n\n"
        assert answered.headers["access-control-allow-origin"] == "http://localhost:3000"
        without = client.post("/v1/chat/completions", json=hello)  # no Origin: no CORS header
        assert without.text == "data: first\n\n" and "access-control-allow-origin" not in without.headers


def test_admin_endpoints_list_cassettes_and_manage_the_journal(bundled: dict[str, Cassette]) -> None:
    with MockServer(scenarios=[]) as server, httpx.Client(base_url=server.url) as client:
        listing = client.get("/_ssemock/cassettes").json()
        assert {c["name"] for c in listing} == set(bundled)
        gemini = next(c for c in listing if c["name"] == "gemini-streamgeneratecontent-crlf")
        assert gemini["interactions"][0]["request"] == (
            "POST /v1beta/models/gemini-2.0-flash-exp:streamGenerateContent?alt=sse")
        client.post("/v1/chat/completions", json={"model": "x", "stream": True})
        journal = client.get("/_ssemock/requests").json()
        assert [(e["path"], e["cassette"], e["outcome"]) for e in journal] == [
            ("/v1/chat/completions", "openai-chat-finish-length-usage", "complete")]
        assert client.delete("/_ssemock/requests").json() == {"cleared": 1}
        assert client.get("/_ssemock/requests").json() == []


def test_secrets_are_not_kept_in_the_journal() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server:
        httpx.post(server.url + "/v1/chat/completions?key=AIzaSECRET", json={},
                   headers={"Authorization": "Bearer sk-secret", "x-api-key": "sk-ant-secret"})
        entry = server.requests[-1]
    assert "sk-secret" not in str(entry) and "sk-ant-secret" not in str(entry) and "AIzaSECRET" not in str(entry)


def test_team_keys_passcodes_and_one_time_passwords_are_not_kept_in_the_journal() -> None:
    sent = {"X-Honeycomb-Team": "hcteam-journal-0123456789", "X-Passcode": "482913-journal", "X-Otp": "771204-journal"}
    with MockServer([_two_turns()], scenarios=[]) as server:
        httpx.post(server.url + "/v1/chat/completions?team=platform", json={}, headers=sent)
        entry = server.requests[-1]
    assert not any(value in str(entry) for value in sent.values())
    assert entry["query"] == {"team": "platform"}  # a query parameter "team" is data
    assert {k.lower() for k in entry["headers"]} & {k.lower() for k in sent} == set()


async def test_async_with_runs_in_the_current_loop() -> None:
    async with MockServer([_two_turns()], scenarios=[]) as server:
        async with httpx.AsyncClient() as client:
            r = await client.post(server.url + "/v1/chat/completions",
                                  json={"model": "m", "messages": [{"role": "user", "content": "hello"}]})
        assert r.text == "data: first\n\n"
        assert asyncio.get_running_loop() is not None and server.requests[0]["outcome"] == "complete"


def test_port_in_use_is_a_server_error() -> None:
    from ssemock import ServerError

    with (
        MockServer([_two_turns()], scenarios=[]) as first,
        pytest.raises(ServerError, match="cannot listen"),
        MockServer([], scenarios=[], port=first.port),
    ):
        pass


def test_cassette_in_a_subdirectory_is_reachable_by_an_encoded_prefix(tmp_path: Path) -> None:
    sub = tmp_path / "openai"
    save(_two_turns(), sub / "chat.yaml")
    with MockServer([tmp_path], scenarios=[]) as server:
        got = raw_json(server.url, "POST", "/_ssemock/c/openai%2Fchat/v1/chat/completions", {})
        assert (got.status, got.body) == (200, b"data: first\n\n")
        assert server.requests[-1]["cassette"] == "openai/chat"


def test_a_redacted_recorded_json_field_matches_any_value() -> None:
    body = b'{"model":"m","metadata":{"user_id":"REDACTED"}}'
    cassette = _cassette("scrubbed", Interaction(Request("POST", "/v1/messages", body=body),
                                                 Response(200, None, SSE, [Chunk(0, b"data: ok\n\n")])))
    with MockServer([cassette], scenarios=[]) as server:
        ok = raw_json(server.url, "POST", "/v1/messages", {"model": "m", "metadata": {"user_id": "u-123"}})
        other = raw_json(server.url, "POST", "/v1/messages", {"model": "n", "metadata": {"user_id": "u-123"}})
    assert (ok.status, ok.body) == (200, b"data: ok\n\n")
    assert other.status == 404


def test_a_body_labelled_gzip_that_is_not_gzip_is_a_400_and_the_server_keeps_serving() -> None:
    with MockServer([_two_turns()], scenarios=[]) as server, httpx.Client(base_url=server.url) as client:
        r = client.post("/v1/chat/completions", content=b"not gzip",
                        headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["type"] == "ssemock_bad_request"
        assert client.get("/_ssemock/health").status_code == 200


def test_a_prefix_without_a_provider_path_means_the_root_path() -> None:
    root = Interaction(Request("GET", "/"), Response(200, None, SSE, [Chunk(0, b"data: root\n\n")]))
    with MockServer([_cassette("root", root)], scenarios=[]) as server:
        assert raw_request(server.url, "GET", "/_ssemock/c/root").body == b"data: root\n\n"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"port": 99999}, "port must be an integer 0-65535"),
        ({"port": -1}, "port must be an integer 0-65535"),
        ({"timing_scale": float("inf")}, "finite number >= 0"),
        ({"timing_scale": float("nan")}, "finite number >= 0"),
        ({"timing_scale": -1}, "finite number >= 0"),
        ({"match_on": ()}, "non-empty list of matchers"),
        ({"match_on": ("method", "colour")}, "unknown matcher 'colour'"),
        ({"scenario": "nope"}, "no scenario named 'nope'"),
    ],
)
def test_invalid_options_are_config_errors(kwargs: dict[str, object], message: str) -> None:
    from ssemock import ConfigError

    with pytest.raises(ConfigError, match=message):
        MockServer([_two_turns()], scenarios=[], **kwargs)  # type: ignore[arg-type]


def test_a_single_directory_or_file_is_accepted_as_cassettes(tmp_path: Path) -> None:
    path = save(_two_turns(), tmp_path / "turns.yaml")
    for source in (str(tmp_path), tmp_path, path, str(path)):
        assert list(MockServer(source, scenarios=[]).state.cassettes) == ["turns"]


ANSWERED_THEN_SILENT = """ssemock_cassette: 1
name: answered-then-silent
interactions:
- request: {method: POST, path: /v1/ack}
  response:
    status: 204
    headers: {}
    start: 0.01
    chunks: []
    end: {t: 30.0, how: clean}
- request: {method: GET, path: /v1/doc}
  response:
    status: 200
    headers: {content-type: application/json}
    start: 0.01
    chunks:
    - {t: 0.02, text: '{"ok": true}'}
    end: {t: 30.0, how: clean}
"""


def _outcomes(server: MockServer, count: int) -> list[tuple[str, int | None, str | None]]:
    """The journal's (path, status, outcome) once ``count`` entries have an outcome (at most 20 s)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        entries = server.requests
        if len(entries) >= count and all(e["outcome"] is not None for e in entries):
            break
        time.sleep(0.02)
    return [(e["path"], e["status"], e["outcome"]) for e in server.requests]


@pytest.mark.parametrize("framing", ["length", None])
def test_a_client_leaving_after_a_whole_answer_during_the_recorded_end_is_journaled_complete(
    tmp_path: Path, framing: str | None
) -> None:
    """The recorded end comes 30 s after the answer: a client that read a whole answer (a 204's head, a
    Content-Length body) and closed its connection meanwhile had all of it; one still waiting for the end of
    a chunked body had not."""
    (tmp_path / "answered-then-silent.yaml").write_text(ANSWERED_THEN_SILENT)
    scenarios = []
    if framing:
        (tmp_path / "length.yaml").write_text(
            f"ssemock_scenario: 1\nname: framed\nsteps:\n- framing: {{mode: {framing}}}\n")
        scenarios = [tmp_path / "length.yaml"]
    with MockServer(tmp_path / "answered-then-silent.yaml", scenarios=scenarios,
                    scenario="framed" if framing else None) as server:
        with httpx.Client(timeout=10) as client:
            ack = client.post(f"{server.url}/v1/ack")
            assert (ack.status_code, ack.content) == (204, b"")
        if framing:
            with httpx.Client(timeout=10) as client:
                doc = client.get(f"{server.url}/v1/doc")
                assert (doc.status_code, doc.json()) == (200, {"ok": True})
        else:  # chunked: the body ends with the recorded end; a client leaving before has not had it all
            with httpx.Client(timeout=10) as client, client.stream("GET", f"{server.url}/v1/doc") as doc:
                assert next(doc.iter_raw()) == b'{"ok": true}'
        assert _outcomes(server, 2) == [("/v1/ack", 204, "complete"),
                                        ("/v1/doc", 200, "complete" if framing else "client_gone")]
