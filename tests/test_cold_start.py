"""Starting a server: the cassette cache, no other command's modules imported, a broken file reported at
start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ssemock import CassetteError, ScenarioError
from ssemock.cassette.cache import SUBDIR
from ssemock.mockserver import MockServer
from ssemock.scenario import Scenario

from .conftest import REALWORLD
from .processes import reap

ROOT = Path(__file__).resolve().parent.parent
SPLIT = """ssemock_scenario: 1
name: split-lines
description: CRLF line ends, cut in 3-byte pieces
preserves: events
steps:
- line-endings: {eol: crlf}
- fragment: {mode: bytes, size: 3}
"""
# A server built once in another process: the bundled cassettes are in the cache of parsed cassettes.
SEEN_ONCE = "from ssemock.mockserver import MockServer; MockServer()"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache directory for this process and the processes it starts."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("SSEMOCK_CACHE_DIR", str(directory))
    yield directory


# Modules of other commands, which ``serve`` never imports (the package ``ssemock`` does not import them):
# importers, diff, plot, workers (imported with --workers), lint, and their heavy libraries.
NOT_SERVED = ("ssemock.importers", "ssemock.diff", "ssemock.plot", "ssemock.workers", "ssemock.hygiene", "difflib",
              "gunicorn", "matplotlib")


def seen_once() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SEEN_ONCE], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_cassette_directory_from_one_entry_is_the_parsed_one_and_follows_changes(
    cache: Path, tmp_path: Path
) -> None:
    from ssemock.cassette import load_cassettes

    source = Path(MockServer(scenarios=[]).state.cassettes["openai-chat-finish-length-usage"].path or "")
    directory = tmp_path / "cassettes"
    (directory / "sub").mkdir(parents=True)
    (directory / "a.yaml").write_bytes(source.read_bytes())
    (directory / "sub" / "b.yaml").write_bytes(source.read_bytes())
    parsed = load_cassettes(directory)
    assert list((cache / SUBDIR).glob("set-*")), "one entry for the directory"
    again = load_cassettes(directory)
    assert again == parsed and list(again) == ["a", "sub/b"]
    assert again["sub/b"].path == directory / "sub" / "b.yaml"
    real = (REALWORLD / "openai-chat-finish-length-usage.sse.bin").read_bytes()
    assert b"".join(c.data for c in again["a"].interactions[0].response.chunks) == real
    (directory / "sub" / "b.yaml").write_text("ssemock_cassette: 1\ninteractions: 7\n")
    with pytest.raises(CassetteError) as caught:
        load_cassettes(directory)
    assert "b.yaml" in str(caught.value) and "interactions" in str(caught.value)


def test_a_changed_file_is_validated_again_at_start(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "split-lines.yaml"
    path.write_text(SPLIT)
    MockServer(scenarios=[path])
    path.write_text(SPLIT.replace("size: 3", "size: -3"))
    with pytest.raises(ScenarioError) as caught:
        MockServer(scenarios=[path])
    assert str(path) in str(caught.value) and "steps[1].fragment.size" in str(caught.value)


def test_serve_replays_under_a_preset_scenario(cache: Path, tmp_path: Path) -> None:
    """A request naming the crlf preset gets the real recording with every line end made CRLF, the
    event stream unchanged."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--port", "0"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[-1]
        with httpx.stream("POST", url + "/v1/chat/completions", headers={"X-SSEMock-Scenario": "crlf"}, json={
            "model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}],
        }, timeout=60) as r:
            body = r.read()
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()
    real = (REALWORLD / "openai-chat-finish-length-usage.sse.bin").read_bytes()
    assert body == real.replace(b"\n", b"\r\n")  # the recording's line ends are LF


def imported_by_serve(tmp_path: Path) -> set[str]:
    """The modules ``python -m ssemock serve --port 0`` imported from its start to its answer to
    ``GET /_ssemock/health`` (as ``-X importtime`` lists them)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = tmp_path / "imports.txt"
    with log.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "ssemock", "serve", "--port", "0"],
                                env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            health = httpx.get(url + "/_ssemock/health", timeout=60).json()
            assert health["status"] == "ok" and health["cassettes"] == 14
        finally:
            reap(proc)
    lines = [line.split("|") for line in log.read_text().splitlines() if line.startswith("import time:")]
    return {parts[-1].strip() for parts in lines[1:]}  # the first line is the header


def test_serve_imports_no_other_commands_modules(cache: Path, tmp_path: Path) -> None:
    seen_once()  # the bundled cassettes cached, as by any start after the first
    modules = imported_by_serve(tmp_path)
    assert {"aiohttp.web", "ssemock.server", "ssemock.cassette.cache", "ssemock.scanner.names"} <= modules
    assert sorted(m for m in modules if m.startswith(NOT_SERVED)) == []


def test_the_redaction_names_every_providers_own_headers() -> None:
    """The header names the redaction writes out (so that serving needs no provider module) are every
    provider's, and the generic ones."""
    from ssemock.providers import PROVIDERS
    from ssemock.redact import SECRET_REQUEST_HEADERS, SECRET_RESPONSE_HEADERS

    generic_request, generic_response = {"authorization", "proxy-authorization", "cookie"}, {"set-cookie"}
    assert set(SECRET_REQUEST_HEADERS) == generic_request.union(*(p.secret_request_headers for p in PROVIDERS))
    assert set(SECRET_RESPONSE_HEADERS) == generic_response.union(*(p.secret_response_headers for p in PROVIDERS))


def test_the_journal_drops_provider_headers(tmp_path: Path) -> None:
    """The providers' own header names (``openai-organization``: no credential word in it) are
    removed from the journal, although a server imports no provider module."""
    name = "openai-chat-finish-length-usage"
    cassette = MockServer(scenarios=[]).state.cassettes[name]
    with MockServer([cassette], scenarios=[]) as server:
        request = cassette.interactions[0].request
        r = httpx.post(server.url + request.path, content=request.body, timeout=60, headers={
            "Content-Type": "application/json", "OpenAI-Organization": "org-Secret1", "OpenAI-Project": "proj_S2",
            "X-Goog-Api-Key": "AIzaS3", "X-Request-Tag": "kept"})
        assert r.status_code == 200
        [entry] = server.requests
    assert entry["cassette"] == name
    assert entry["headers"]["X-Request-Tag"] == "kept"
    assert not {"OpenAI-Organization", "OpenAI-Project", "X-Goog-Api-Key"} & set(entry["headers"])


def test_the_model_classes_keep_their_dataclass_behaviour() -> None:
    """The cassette and scenario classes are dataclasses: their fields, equality (a parsed body's cache
    left out), repr and ``replace``."""
    import dataclasses

    from ssemock import Chunk, End, Interaction, Request, Response

    request = Request("POST", "/v1/chat/completions", body=b"{}")
    response = Response(200, headers=[("content-type", "text/event-stream")], chunks=[Chunk(0.5, b"data: x\n\n")],
                        end=End(0.75))
    assert [f.name for f in dataclasses.fields(Request)] == [
        "method", "path", "query", "headers", "body", "body_sha256", "body_size", "_parsed", "_body_key"]
    assert request.json_view() == {} and request == Request("POST", "/v1/chat/completions", body=b"{}")  # parsed: equal
    assert request != Request("POST", "/v1/chat/completions", body=b"[]") and request != ("POST",)
    assert dataclasses.replace(response, status=201) == Response(
        201, None, [("content-type", "text/event-stream")], [Chunk(0.5, b"data: x\n\n")], 0.0, End(0.75, "clean"))
    assert dataclasses.replace(response, status=201) != response
    assert repr(Interaction(request, response)) == (
        "Interaction(request=Request(method='POST', path='/v1/chat/completions', query=[], headers=[], body=b'{}', "
        "body_sha256=None, body_size=None), response=Response(status=200, reason=None, headers=[('content-type', "
        "'text/event-stream')], chunks=[Chunk(t=0.5, data=b'data: x\\n\\n')], start=0.0, end=End(t=0.75, how='clean'), "
        "timed=True, body_not_recorded=None))")
    assert dataclasses.asdict(Interaction(request, response))["response"]["end"] == {"t": 0.75, "how": "clean"}
    scenario = Scenario("a", [], "one", "events", source="a.yaml")
    assert scenario == Scenario("a", [], "one", "events") and repr(scenario) == (
        "Scenario(name='a', steps=[], description='one', preserves='events', probability=None)")
    assert dataclasses.replace(scenario, name="b").name == "b"
