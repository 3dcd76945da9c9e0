"""The admin API belongs to the developer: other origins and other Host names are refused.

Real requests carrying the headers a browser sends (``Origin``, ``Sec-Fetch-Site``, a
preflight's ``Access-Control-Request-Method``) and the ``Host`` a page reached through
DNS rebinding sends (its own name), against the real server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette, Chunk, ConfigError, Interaction, MockServer, Recorder, Request, Response

from .upstream import Upstream

SSE = [("content-type", "text/event-stream")]
ADMIN = [("GET", "/_ssemock/requests"), ("DELETE", "/_ssemock/requests"), ("GET", "/_ssemock/health"),
         ("GET", "/_ssemock/cassettes"), ("GET", "/_ssemock/scenarios"), ("GET", "/_ssemock/metrics"),
         ("GET", "/_ssemock/stubs"), ("POST", "/_ssemock/stubs"), ("DELETE", "/_ssemock/stubs"),
         ("GET", "/_ssemock/scenario"), ("PUT", "/_ssemock/scenario"), ("DELETE", "/_ssemock/scenario"),
         ("GET", "/_ssemock/chaos"), ("PUT", "/_ssemock/chaos"), ("DELETE", "/_ssemock/chaos"),
         ("GET", "/_ssemock/nothing")]


def _cassette() -> Cassette:
    inter = Interaction(Request("POST", "/v1/chat/completions"), Response(200, None, SSE, [Chunk(0, b"data: hi\n\n")]))
    return Cassette("hi", [inter])


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as shared:  # one client: making one costs more than a request
        yield shared


def _journal_kept(server: MockServer, client: httpx.Client) -> None:
    client.post(server.url + "/v1/chat/completions", content=b"{}")
    assert server.requests, "a replayed request is journaled"


@pytest.mark.parametrize(("method", "path"), ADMIN)
@pytest.mark.parametrize("headers", [
    {"Origin": "https://evil.example"},
    {"Origin": "null"},  # sandboxed frames, file:// pages
    {"Origin": "http://localhost:3000"},  # another port is another origin
    {"Sec-Fetch-Site": "cross-site"},  # a no-cors request carries no Origin, but this
    {"Sec-Fetch-Site": "same-site"},  # another port of 127.0.0.1 is the same site, not the same origin
])
def test_admin_requests_from_another_origin_are_refused_and_change_nothing(
    server: MockServer, client: httpx.Client, method: str, path: str, headers: dict[str, str]
) -> None:
    _journal_kept(server, client)
    before = len(server.requests)
    r = client.request(method, server.url + path, headers=headers)
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "ssemock_cross_origin"
    assert "access-control-allow-origin" not in r.headers
    assert len(server.requests) == before  # DELETE cleared nothing


@pytest.mark.parametrize(("method", "path"), ADMIN)
def test_preflights_for_admin_paths_are_not_granted(
    server: MockServer, client: httpx.Client, method: str, path: str
) -> None:
    r = client.options(server.url + path, headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "content-type"})
    assert r.status_code == 403
    assert not any(h.startswith("access-control-") for h in r.headers)


def test_replay_paths_stay_open_to_pages_of_this_machine(server: MockServer, client: httpx.Client) -> None:
    """(Other origins: tests/test_edges_cors.py.)"""
    origin = {"Origin": "http://localhost:3000"}
    pre = client.options(server.url + "/_ssemock/s/crlf/v1/chat/completions", headers={
        **origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "http://localhost:3000"
    r = client.post(server.url + "/v1/chat/completions", content=b"{}", headers=origin)
    assert (r.status_code, r.text) == (200, "data: hi\n\n")
    assert r.headers["access-control-allow-origin"] == "http://localhost:3000"


@pytest.mark.parametrize("headers", [
    {},  # curl, Python clients
    {"Sec-Fetch-Site": "none"},  # the address typed in the browser
    {"Sec-Fetch-Site": "same-origin"},
])
def test_same_origin_and_non_browser_admin_requests_are_answered(
    server: MockServer, client: httpx.Client, headers: dict[str, str]
) -> None:
    _journal_kept(server, client)
    own = {"Origin": server.url, **headers} if headers.get("Sec-Fetch-Site") == "same-origin" else headers
    r = client.get(server.url + "/_ssemock/requests", headers=own)
    assert r.status_code == 200 and r.json()[-1]["path"] == "/v1/chat/completions"
    assert client.delete(server.url + "/_ssemock/requests", headers=own).json()["cleared"] >= 1


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:{port}", "localhost:{port}", "LOCALHOST", "[::1]:{port}",
                                  "127.1.2.3:{port}", "app.localhost:{port}"])
def test_loopback_host_names_reach_the_admin_api(server: MockServer, client: httpx.Client, host: str) -> None:
    r = client.get(server.url + "/_ssemock/health", headers={"Host": host.format(port=server.port)})
    assert r.status_code == 200 and r.json()["status"] == "ok"


@settings(max_examples=40, deadline=None)
@given(name=st.from_regex(r"[a-z][a-z0-9-]{0,15}(\.[a-z][a-z0-9-]{0,10}){0,2}", fullmatch=True))
def test_a_host_name_of_another_site_is_refused_as_dns_rebinding(
    server: MockServer, client: httpx.Client, name: str
) -> None:
    """A page on ``evil.example`` whose name now resolves to 127.0.0.1 sends ``Host: evil.example``."""
    if name == "localhost" or name.endswith(".localhost"):
        return
    host = f"{name}:{server.port}"
    for method, path in ADMIN:
        r = client.request(method, server.url + path, headers={"Host": host, "Origin": f"http://{host}"})
        assert r.status_code == 421, (name, path)
        assert r.json()["error"]["type"] == "ssemock_misdirected_host"
    replay = client.post(server.url + "/v1/chat/completions", content=b"{}", headers={"Host": host})
    assert replay.status_code == 200  # replay paths are for any page anyway


def test_allowed_hosts_and_a_wildcard_bind_widen_the_host_check(client: httpx.Client) -> None:
    with MockServer([_cassette()], scenarios=[], host="0.0.0.0", allowed_hosts=["ssemock"]) as server:
        url = f"http://127.0.0.1:{server.port}/_ssemock/health"
        for host, status in [("ssemock:1", 200), ("10.1.2.3:8080", 200), ("[fe80::1]", 200), ("127.0.0.1", 200),
                             ("evil.example", 421), ("ssemock.evil.example", 421)]:
            assert client.get(url, headers={"Host": host}).status_code == status, host


@pytest.mark.parametrize("hosts", [["bad host"], ["a:80"], ["x/y"], [""], "ssemock"])
def test_bad_allowed_host_names_are_config_errors(hosts: object) -> None:
    with pytest.raises(ConfigError, match="allowed host"):
        MockServer([_cassette()], scenarios=[], allowed_hosts=hosts)  # type: ignore[arg-type]


def test_the_recorder_guards_its_own_admin_path(client: httpx.Client, tmp_path: object) -> None:
    with Upstream() as up, Recorder(up.url, str(tmp_path)) as rec:
        health = rec.url + "/_ssemock/health"
        assert client.get(health).json()["status"] == "ok"
        assert client.get(health, headers={"Origin": "https://evil.example"}).status_code == 403
        assert client.get(health, headers={"Host": "evil.example"}).status_code == 421
        assert client.get(rec.url + "/_ssemock/x", headers={"Origin": "https://evil.example"}).status_code == 403
        assert up.received == []


def test_a_recording_with_its_providers_cors_headers_still_answers_browsers(client: httpx.Client) -> None:
    """OpenRouter's and OpenAI's recorded answers carry Access-Control-* headers of their own."""
    recorded = [*SSE, ("Access-Control-Allow-Origin", "*"), ("Access-Control-Expose-Headers", "X-Generation-Id")]
    response = Response(200, None, recorded, [Chunk(0, b"data: x\n\n")])
    inter = Interaction(Request("POST", "/v1/chat/completions"), response)
    with MockServer([Cassette("cors", [inter])], scenarios=[], timing_scale=0) as server:
        browser = client.post(server.url + "/v1/chat/completions", content=b"{}",
                              headers={"Origin": "http://localhost:3000"})
        plain = client.post(server.url + "/v1/chat/completions", content=b"{}")
    assert (browser.status_code, browser.text) == (200, "data: x\n\n")
    assert browser.headers["access-control-allow-origin"] == "http://localhost:3000"
    assert plain.headers["access-control-allow-origin"] == "*"  # as recorded, for clients that are no browser
    assert plain.headers["access-control-expose-headers"] == "X-Generation-Id"


def test_the_recorder_refuses_rebound_names_and_foreign_origins_on_every_path(
    client: httpx.Client, tmp_path: Path
) -> None:
    """The recorder forwards with the target's credentials: a page must not use it at all."""
    with Upstream() as up:
        target = up.url.replace("http://", "http://user:PASS@")
        with Recorder(target, str(tmp_path)) as rec:
            rebound = client.post(rec.url + "/any/rebind", content=b"{}",
                                  headers={"Host": "evil.example:8182", "Origin": "http://evil.example:8182"})
            foreign = client.post(rec.url + "/any/page", content=b"{}", headers={"Origin": "https://evil.example"})
            preflight = client.options(rec.url + "/any/page", headers={
                "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
            fetched = client.post(rec.url + "/any/site", content=b"{}", headers={"Sec-Fetch-Site": "cross-site"})
            assert up.received == []  # nothing forwarded
            sdk = openai.OpenAI(api_key="sk-test", base_url=rec.url + "/v1", max_retries=0)
            chunks = list(sdk.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                      stream=True))
            same_origin = client.post(rec.url + "/any/own", content=b"{}", headers={"Origin": rec.url})
    assert (rebound.status_code, rebound.json()["error"]["type"]) == (421, "ssemock_misdirected_host")
    assert "the recorder answers under localhost" in rebound.json()["error"]["message"]
    for refused in (foreign, preflight, fetched):
        assert (refused.status_code, refused.json()["error"]["type"]) == (403, "ssemock_cross_origin")
        assert "target's credentials" in refused.json()["error"]["message"]
        assert "access-control-allow-origin" not in refused.headers
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert same_origin.status_code == 404 and same_origin.json()["error"]["type"] == "not_found"  # the upstream's
    assert [r["path"] for r in up.received] == ["/v1/chat/completions", "/any/own"]
