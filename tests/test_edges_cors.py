"""Which web pages may read replay answers: loopback origins by default, others when given (CORS);
errors to pages of other origins do not tell the cassettes nor the recorded prompts.

Real requests with the headers browsers send (``Origin``, a preflight's ``Access-Control-Request-*``)
against the real server on 127.0.0.1; tests/test_browser.py has Chromium's side.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from ssemock import Cassette, Chunk, ConfigError, Interaction, MockServer, Request, Response
from ssemock.cli import main
from ssemock.stubs import on

SSE = [("content-type", "text/event-stream")]
PROMPT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "What is the secret launch date?"}]}
PATH = "/v1/chat/completions"
ANSWER = b'data: {"choices":[{"delta":{"content":"March 3"}}]}\n\n'
LOOPBACK = ["http://localhost:3000", "https://localhost", "http://127.0.0.1:5173", "http://127.0.0.2:8000",
            "http://[::1]:8080", "http://app.localhost:3000", "HTTP://LOCALHOST:3000"]
FOREIGN = ["https://evil.example", "http://evil.test:8000", "null", "http://localhost.evil.example",
           "http://127.0.0.1.nip.io", "http://0.0.0.0:3000", "http://192.168.1.20:3000", "file://"]


def _cassette() -> Cassette:
    request = Request("POST", PATH, body=json.dumps(PROMPT).encode())
    return Cassette("launch-plans", [Interaction(request, Response(200, None, SSE, [Chunk(0, ANSWER)]))])


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer([_cassette()], scenarios=[], timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as shared:
        yield shared


def _preflight(client: httpx.Client, url: str, origin: str) -> httpx.Response:
    return client.options(url, headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                        "Access-Control-Request-Headers": "content-type"})


@pytest.mark.parametrize("origin", LOOPBACK)
def test_pages_of_this_machine_read_replays(server: MockServer, client: httpx.Client, origin: str) -> None:
    url = f"{server.url}/_ssemock/c/launch-plans{PATH}"
    pre = _preflight(client, url, origin)
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == origin
    answer = client.post(url, json=PROMPT, headers={"Origin": origin})
    assert answer.status_code == 200 and answer.content == ANSWER
    assert answer.headers["access-control-allow-origin"] == origin


@pytest.mark.parametrize("origin", FOREIGN)
def test_pages_of_other_origins_get_no_cors_headers(server: MockServer, client: httpx.Client, origin: str) -> None:
    url = f"{server.url}/_ssemock/c/launch-plans{PATH}"
    assert _preflight(client, url, origin).status_code == 403  # the browser never sends the request
    # A simple request (text/plain POST) is sent without preflight: answered, but with no
    # Access-Control-Allow-Origin, so the browser does not give the answer to the page.
    answer = client.post(url, content=b"{}", headers={"Origin": origin, "Content-Type": "text/plain"})
    assert answer.status_code == 200
    assert not [h for h in answer.headers if h.lower().startswith("access-control-")]


def test_a_recorded_access_control_header_never_reaches_another_origin(client: httpx.Client) -> None:
    headers = [*SSE, ("access-control-allow-origin", "*")]
    answer = Response(200, None, headers, [Chunk(0, ANSWER)])
    recorded = Cassette("open", [Interaction(Request("GET", "/v1/x"), answer)])
    with MockServer([recorded], scenarios=[], timing_scale=0) as server:
        foreign = client.get(server.url + "/v1/x", headers={"Origin": "https://evil.example"})
        plain = client.get(server.url + "/v1/x")
    assert foreign.content == ANSWER and "access-control-allow-origin" not in foreign.headers
    assert plain.headers["access-control-allow-origin"] == "*"  # as recorded, for clients that are not pages


def test_origins_given_are_allowed_too_and_star_allows_every_origin(client: httpx.Client) -> None:
    with MockServer([_cassette()], scenarios=[], timing_scale=0,
                    cors_origins=["HTTPS://App.Example:443/", "http://10.0.0.5:3000", "null"]) as server:
        url = server.url + PATH
        for origin in ("https://app.example", "http://10.0.0.5:3000", "null", "http://localhost:3000"):
            assert _preflight(client, url, origin).headers["access-control-allow-origin"] == origin
            answer = client.post(url, json=PROMPT, headers={"Origin": origin})
            assert answer.headers["access-control-allow-origin"] == origin
        for origin in ("https://app.example:8443", "http://app.example", "https://evil.example"):
            assert _preflight(client, url, origin).status_code == 403
            answer = client.post(url, json=PROMPT, headers={"Origin": origin})
            assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    with MockServer([_cassette()], scenarios=[], timing_scale=0, cors_origins=["*"]) as server:
        answer = client.post(server.url + PATH, json=PROMPT, headers={"Origin": "https://evil.example"})
        assert answer.content == ANSWER and answer.headers["access-control-allow-origin"] == "https://evil.example"


@pytest.mark.parametrize("origins", [["ftp://app.example"], ["https://app.example/path"], [""], ["app.example"],
                                     ["https://user@app.example"], ["https://app.example:99999"], [None], "*"])
def test_an_origin_that_is_not_one_is_refused(origins: object) -> None:
    with pytest.raises(ConfigError, match="cors_origins"):
        MockServer(cors_origins=origins)  # type: ignore[arg-type]


def test_serve_takes_cors_origins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--cors-origin", "app.example"]) == 2
    assert "cors_origins: expected an origin" in capsys.readouterr().err
    with subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--cors-origin",
                           "https://app.example", "--cors-origin", "https://other.example"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            path = f"{url}/_ssemock/c/openai-chat-finish-length-usage{PATH}"
            for origin, allowed in (("https://app.example", True), ("https://other.example", True),
                                    ("http://[::1]:3000", True), ("https://evil.example", False)):
                answer = httpx.post(path, json={}, headers={"Origin": origin}, timeout=30)
                assert answer.status_code == 200
                assert answer.headers.get("access-control-allow-origin") == (origin if allowed else None)
        finally:
            proc.terminate()
            proc.wait(30)


# ---- errors to other origins ------------------------------------------------------------------
ASKED = {"model": "gpt-4o", "messages": [{"role": "user", "content": "?"}]}


@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost:3000", "null"])
def test_errors_to_pages_of_other_origins_keep_the_cassettes_and_prompts_private(
    server: MockServer, client: httpx.Client, origin: str,
) -> None:
    """Allowed by CORS or not: a page of another origin (localhost:3000 included) learns neither the
    cassette names nor how its request differs from a recorded one; the journal keeps the whole error."""
    headers = {"Origin": origin, "Content-Type": "text/plain"}
    unknown = client.post(f"{server.url}/_ssemock/c/nope{PATH}", content=b"{}", headers=headers)
    assert unknown.status_code == 404
    error = unknown.json()["error"]
    assert error["type"] == "ssemock_unknown_cassette" and "known" not in error
    assert "launch-plans" not in unknown.text and "/_ssemock/requests" in error["message"]
    assert error["message"].startswith("no cassette named 'nope'; a web page of another origin is not told the "
                                       "cassettes served: see the journal")
    assert server.requests[-1]["error"]["known"] == ["launch-plans"]

    missed = client.post(server.url + PATH, content=json.dumps(ASKED).encode(), headers=headers)
    assert missed.status_code == 404
    error = missed.json()["error"]
    assert error["type"] == "ssemock_no_match" and not {"closest", "closest_stub", "differences"} & set(error)
    assert "secret launch date" not in missed.text and "launch-plans" not in missed.text
    assert error["message"].startswith("no recorded interaction matches POST /v1/chat/completions")
    told = "; a web page of another origin is not told which ones come closest nor how they differ: "
    assert told in error["message"]
    assert "journal" in error["message"] and "/_ssemock/requests" in error["message"]
    kept = server.requests[-1]["error"]
    assert kept["closest"][0]["cassette"] == "launch-plans"
    assert "secret launch date" in json.dumps(kept["closest"][0]["differences"])


@pytest.mark.parametrize("same", [False, True])
def test_errors_to_curl_and_the_servers_own_pages_tell_everything(
    server: MockServer, client: httpx.Client, same: bool,
) -> None:
    headers = {"Origin": server.url} if same else {}
    unknown = client.post(f"{server.url}/_ssemock/c/nope{PATH}", content=b"{}", headers=headers)
    assert unknown.json()["error"]["known"] == ["launch-plans"]
    missed = client.post(server.url + PATH, content=json.dumps(ASKED).encode(), headers=headers)
    error = missed.json()["error"]
    assert error["closest"][0]["cassette"] == "launch-plans"
    assert "secret launch date" in json.dumps(error["closest"][0]["differences"])


def test_a_stub_servers_no_match_to_another_origin_tells_no_stub() -> None:
    stub = on(model="gpt-4o", contains="launch code").reply("The code is 0000")
    with MockServer(cassettes=[], scenarios=[], stubs=stub, timing_scale=0) as server:
        local = httpx.post(server.url + PATH, json=ASKED, timeout=30)
        foreign = httpx.post(server.url + PATH, json=ASKED, headers={"Origin": "https://evil.example"}, timeout=30)
    assert local.status_code == foreign.status_code == 404
    assert "closest_stub" in local.json()["error"] and "launch code" in local.text
    assert "closest_stub" not in foreign.json()["error"] and "launch code" not in foreign.text


def test_an_unknown_scenario_to_another_origin_lists_no_scenario_names() -> None:
    """The scenarios a user serves are named after their own work: a page of another origin naming one that
    is not served learns which are (``known``) no more than the cassettes; curl does; the journal keeps it."""
    from ssemock import Scenario

    own = Scenario.from_dict({"ssemock_scenario": 1, "name": "acme-billing-outage", "steps": [{"bom": {}}]})
    with MockServer([_cassette()], scenarios=[own], timing_scale=0) as server, httpx.Client(timeout=30) as client:
        url = f"{server.url}/_ssemock/s/nope{PATH}"
        page = {"Origin": "https://evil.example", "Content-Type": "text/plain"}
        foreign = client.post(url, content=b"{}", headers=page)
        assert foreign.status_code == 400 and foreign.json()["error"]["type"] == "ssemock_unknown_scenario"
        assert "acme-billing-outage" not in foreign.text and "known" not in foreign.json()["error"]
        assert foreign.json()["error"]["message"].startswith(
            "a scenario named is not served; a web page of another origin is not told which one, nor the scenarios "
            "served: see the journal")
        assert server.requests[-1]["error"]["known"] == ["acme-billing-outage"]
        told = client.post(url, content=b"{}")
        assert told.status_code == 400 and told.json()["error"]["known"] == ["acme-billing-outage"]
        # A list of no names at all (",") is no scenario either: refused, not served as recorded.
        empty = client.post(f"{server.url}/_ssemock/s/,{PATH}", content=json.dumps(PROMPT).encode())
        assert empty.status_code == 400 and empty.json()["error"]["type"] == "ssemock_unknown_scenario"


# ---- pages reaching the server through DNS rebinding ------------------------------------------------
def _rebound(server: MockServer, name: str = "evil.example") -> dict[str, str]:
    """The headers of a page on ``name`` whose name now resolves to 127.0.0.1: a simple request (no
    preflight) to its own origin, which the browser lets the page read whatever the CORS headers."""
    host = f"{name}:{server.port}"
    return {"Host": host, "Origin": f"http://{host}", "Content-Type": "text/plain"}


def _nothing_told(answer: httpx.Response) -> None:
    assert answer.status_code == 403 and answer.json()["error"]["type"] == "ssemock_cross_origin"
    assert "DNS rebinding" in answer.json()["error"]["message"]
    for private in ("March 3", "launch-plans", "secret launch date", "acme-billing-outage", "known", "closest"):
        assert private not in answer.text
    assert not [h for h in answer.headers if h.lower().startswith("access-control-")]


def test_a_page_reaching_the_server_through_dns_rebinding_reads_no_replay_and_no_error() -> None:
    """Its ``Origin`` equals ``http://`` + its ``Host`` (the browser sees one origin, CORS withholds
    nothing): the server refuses it, since the name is none it answers under; the journal keeps it."""
    from ssemock import Scenario

    own = Scenario.from_dict({"ssemock_scenario": 1, "name": "acme-billing-outage", "steps": [{"bom": {}}]})
    with MockServer([_cassette()], scenarios=[own], timing_scale=0) as server, httpx.Client(timeout=30) as client:
        page = _rebound(server)
        for url, body in ((server.url + PATH, json.dumps(PROMPT)),  # a match
                          (server.url + PATH, json.dumps(ASKED)),  # no match: closest
                          (f"{server.url}/_ssemock/c/nope{PATH}", "{}"),  # known cassettes
                          (f"{server.url}/_ssemock/s/nope{PATH}", "{}")):  # known scenarios
            _nothing_told(client.post(url, content=body.encode(), headers=page))
            assert server.requests[-1]["outcome"] == "refused" and server.requests[-1]["status"] == 403
        # The same name with a port of its own is cross-origin to the browser: CORS withholds it.
        elsewhere = client.post(server.url + PATH, content=json.dumps(ASKED).encode(),
                                headers={**page, "Origin": "http://evil.example"})
        assert elsewhere.status_code == 404 and "closest" not in elsewhere.json()["error"]
        assert "access-control-allow-origin" not in elsewhere.headers


def test_a_rebound_pages_same_origin_get_without_origin_is_refused_by_its_fetch_metadata(client: httpx.Client) -> None:
    """A same-origin ``GET`` (``EventSource``, ``fetch``) carries no ``Origin``; browsers say
    ``Sec-Fetch-Site: same-origin`` instead. Under a rebound name: refused; under the server's own
    name, or without the header (curl, SDKs), answered in full."""
    with MockServer([_cassette()], scenarios=[], timing_scale=0, match_on=["path"]) as server:
        fetch = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Accept": "text/event-stream"}
        rebound = {**fetch, "Host": f"evil.example:{server.port}"}
        for url in (server.url + PATH, f"{server.url}/_ssemock/c/nope{PATH}", server.url + "/v1/other"):
            _nothing_told(client.get(url, headers=rebound))
        own = {**fetch, "Host": f"localhost:{server.port}"}
        replay = client.get(server.url + PATH, headers=own)
        assert (replay.status_code, replay.content) == (200, ANSWER)
        assert client.get(f"{server.url}/_ssemock/c/nope{PATH}", headers=own).json()["error"]["known"] == [
            "launch-plans"]
        for headers in ({"Host": f"evil.example:{server.port}"},  # curl, an SDK: no page
                        {**rebound, "Sec-Fetch-Site": "none"}):  # the address typed in the browser
            assert client.get(server.url + PATH, headers=headers).content == ANSWER
            missed = client.get(server.url + "/v1/other", headers=headers)
            assert missed.json()["error"]["closest"][0]["cassette"] == "launch-plans"


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "app.localhost:{port}", "ssemock:{port}"])
def test_a_page_under_a_name_the_server_answers_under_is_of_its_own_origin(client: httpx.Client, host: str) -> None:
    with MockServer([_cassette()], scenarios=[], timing_scale=0, allowed_hosts=["ssemock"]) as server:
        own = host.format(port=server.port)
        page = {"Host": own, "Origin": f"http://{own}", "Content-Type": "text/plain"}
        replay = client.post(server.url + PATH, content=json.dumps(PROMPT).encode(), headers=page)
        assert (replay.status_code, replay.content) == (200, ANSWER)
        unknown = client.post(f"{server.url}/_ssemock/c/nope{PATH}", content=b"{}", headers=page)
        assert unknown.json()["error"]["known"] == ["launch-plans"]
        missed = client.post(server.url + PATH, content=json.dumps(ASKED).encode(), headers=page)
        assert missed.json()["error"]["closest"][0]["cassette"] == "launch-plans"


@pytest.mark.parametrize("host", ["ssemock:8080", "evil.example:{port}", "10.0.0.7"])
def test_requests_without_origin_are_answered_under_any_host(
    server: MockServer, client: httpx.Client, host: str,
) -> None:
    """curl, SDKs, a Docker Compose service name: no ``Origin``, no page, everything told."""
    headers = {"Host": host.format(port=server.port)}
    replay = client.post(server.url + PATH, json=PROMPT, headers=headers)
    assert (replay.status_code, replay.content) == (200, ANSWER)
    unknown = client.post(f"{server.url}/_ssemock/c/nope{PATH}", content=b"{}", headers=headers)
    assert unknown.json()["error"]["known"] == ["launch-plans"]
    missed = client.post(server.url + PATH, content=json.dumps(ASKED).encode(), headers=headers)
    assert missed.json()["error"]["closest"][0]["cassette"] == "launch-plans"


def test_every_origin_allowed_lets_a_rebound_page_read_replays_but_not_errors(client: httpx.Client) -> None:
    """``--cors-origin '*'``: every page may read replays (through CORS, rebinding or not); errors to
    pages of other origins still leave out the cassettes and the recorded prompts."""
    with MockServer([_cassette()], scenarios=[], timing_scale=0, cors_origins=["*"]) as server:
        page = _rebound(server)
        replay = client.post(server.url + PATH, content=json.dumps(PROMPT).encode(), headers=page)
        assert (replay.status_code, replay.content) == (200, ANSWER)
        unknown = client.post(f"{server.url}/_ssemock/c/nope{PATH}", content=b"{}", headers=page)
        assert unknown.status_code == 404 and "launch-plans" not in unknown.text
        missed = client.post(server.url + PATH, content=json.dumps(ASKED).encode(), headers=page)
        assert missed.status_code == 404 and "closest" not in missed.json()["error"]
        assert "secret launch date" not in missed.text


def test_serve_with_workers_refuses_a_rebound_page_too() -> None:
    """``ssemock serve --workers 2``: the workers' servers are the same application on the same edge."""
    with subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0", "--workers", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            port = int(url.rsplit(":", 1)[1])
            bundled = f"{url}/_ssemock/c/openai-chat-finish-length-usage{PATH}"
            for target in (bundled, f"{url}/_ssemock/c/nope{PATH}", url + PATH):
                page = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}",
                        "Content-Type": "text/plain"}
                refused = httpx.post(target, content=b'{"model":"x"}', headers=page, timeout=30)
                assert (refused.status_code, refused.json()["error"]["type"]) == (403, "ssemock_cross_origin")
                assert "known" not in refused.text and "closest" not in refused.text
            plain = httpx.post(bundled, json={}, headers={"Host": "ssemock:8080"}, timeout=30)
            assert plain.status_code == 200 and plain.text.startswith("data: ")
            told = httpx.post(f"{url}/_ssemock/c/nope{PATH}", json={}, headers={"Host": "ssemock:8080"}, timeout=30)
            assert "openai-chat-finish-length-usage" in told.json()["error"]["known"]
        finally:
            proc.terminate()
            proc.wait(30)
