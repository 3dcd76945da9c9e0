"""Hostile input, one kind per section: each is refused with a clear error, nothing is lost,
and the server goes on answering. Real servers on 127.0.0.1, real clients (httpx, raw sockets)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock import (
    Cassette,
    CassetteError,
    Chunk,
    ConfigError,
    Interaction,
    MockServer,
    Recorder,
    Request,
    Response,
    ScenarioError,
)
from ssemock.bundled import bundled_cassettes, bundled_scenarios
from ssemock.cli import main
from ssemock.limits import JOURNAL_BODY, JOURNAL_CAPACITY, MAX_JSON_DEPTH, MAX_REQUEST_BODY

from .upstream import Upstream

CHAT = "openai-chat-finish-length-usage"
CHAT_PATH = "/v1/chat/completions"
NOWHERE = "/v1/no-cassette-answers-this"


def nested(depth: int) -> bytes:
    """A JSON body whose arrays and objects nest ``depth`` levels deep."""
    return b'{"messages":' * (depth // 2) + b"[" * (depth - depth // 2) + b"]" * (depth - depth // 2) \
        + b"}" * (depth // 2)


def error_of(response: httpx.Response) -> dict[str, object]:
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert isinstance(error, dict)
    return error


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(max_request_body=64 * 1024, journal_capacity=5, journal_body_limit=1024) as running:
        yield running


# ---- 1. request body size --------------------------------------------------------------------
def test_a_body_over_the_limit_gets_413_naming_the_limit_and_the_option(server: MockServer) -> None:
    big = b"x" * (64 * 1024 + 1)
    answer = httpx.post(server.url + CHAT_PATH, content=big)
    assert answer.status_code == 413
    error = error_of(answer)
    assert error["type"] == "ssemock_body_too_large" and error["limit"] == 64 * 1024
    assert "65536 bytes" in str(error["message"]) and "--max-request-body" in str(error["message"])
    assert server.requests[-1]["outcome"] == "refused" and server.requests[-1]["status"] == 413
    # Exactly at the limit: read and matched as usual (no cassette has this path: 404).
    assert httpx.post(server.url + NOWHERE, content=big[:-1]).status_code == 404


def test_a_chunked_body_over_the_limit_gets_413_too(server: MockServer) -> None:
    def pieces() -> Iterator[bytes]:
        for _ in range(100):
            yield b"y" * 1024  # 100 KiB, no Content-Length

    answer = httpx.post(server.url + CHAT_PATH, content=pieces())
    assert answer.status_code == 413 and error_of(answer)["type"] == "ssemock_body_too_large"


def test_a_declared_huge_body_is_refused_before_any_byte_is_read(server: MockServer) -> None:
    url = httpx.URL(server.url)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(f"POST {CHAT_PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: {1 << 40}\r\n\r\n".encode())
        head = sock.recv(65536)  # answered although no body byte was sent
    assert head.startswith(b"HTTP/1.1 413 ")
    assert b"ssemock_body_too_large" in head and b"connection: close" in head.lower()
    assert httpx.get(server.url + "/_ssemock/health").status_code == 200  # still answering


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(64 * 1024 - 4, 64 * 1024 + 4) | st.integers(0, 200_000), chunked=st.booleans())
def test_413_exactly_past_the_limit_however_the_body_is_framed(server: MockServer, size: int, chunked: bool) -> None:
    body = b"z" * size
    content = iter([body[i:i + 4096] for i in range(0, size, 4096)]) if chunked else body
    answer = httpx.post(server.url + NOWHERE, content=content)
    assert answer.status_code == (413 if size > 64 * 1024 else 404)


def test_the_defaults_and_bad_options() -> None:
    assert (MAX_REQUEST_BODY, JOURNAL_CAPACITY, JOURNAL_BODY, MAX_JSON_DEPTH) == (32 << 20, 1000, 64 << 10, 128)
    for option in ({"max_request_body": -1}, {"journal_capacity": 0}, {"journal_body_limit": 1.5}):
        with pytest.raises(ConfigError, match=next(iter(option))):
            MockServer(**option)
    with pytest.raises(ConfigError, match="max_request_body: expected an integer >= 0"):
        Recorder("http://127.0.0.1:9", max_request_body=-5)


def test_cli_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--port", "0", "--journal-capacity", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "journal_capacity: expected an integer from 1 to 10000000, got 0" in err


# ---- 2. JSON depth ---------------------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(1, 2000))
def test_json_nesting_past_the_bound_gets_400_never_500(server: MockServer, depth: int) -> None:
    answer = httpx.post(server.url + NOWHERE, content=nested(depth), headers={"Content-Type": "application/json"})
    if depth > MAX_JSON_DEPTH:
        assert answer.status_code == 400
        error = error_of(answer)
        assert error["type"] == "ssemock_json_too_deep" and error["limit"] == MAX_JSON_DEPTH
    else:
        assert answer.status_code == 404 and error_of(answer)["type"] == "ssemock_no_match"


def test_the_depth_bound_is_an_option(tmp_path: Path) -> None:
    with MockServer(max_json_depth=3) as shallow:
        assert httpx.post(shallow.url + NOWHERE, content=nested(3)).status_code == 404
        answer = httpx.post(shallow.url + NOWHERE, content=nested(4))
    error = error_of(answer)
    assert answer.status_code == 400 and error["limit"] == 3 and "max_json_depth" in str(error["message"])
    with pytest.raises(ConfigError, match=r"max_json_depth: expected an integer from 1 to 256, got 257"):
        MockServer(max_json_depth=257)
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="d", max_json_depth=200) as rec:
        assert httpx.post(rec.url + "/json", content=nested(200)).status_code == 200
        refused = httpx.post(rec.url + "/json", content=nested(201))
    assert refused.status_code == 400 and "--max-json-depth" in str(error_of(refused)["message"])
    assert len(up.received) == 1


def test_the_recorder_refuses_deep_json_and_forwards_nothing(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="deep") as rec:
        deep = httpx.post(rec.url + "/json", content=nested(990), headers={"Content-Type": "application/json"})
        shallow = httpx.post(rec.url + "/json", content=nested(MAX_JSON_DEPTH))
    assert deep.status_code == 400 and error_of(deep)["type"] == "ssemock_json_too_deep"
    assert shallow.status_code == 200
    assert [r["body_size"] for r in up.received] == [len(nested(MAX_JSON_DEPTH))]  # only the shallow one


def _bytes_name(method: str, path: str, body: bytes) -> str:
    """The file name of a request whose body is named by its bytes (not parsed)."""
    digest = hashlib.sha256(f"{method} {path}\n".encode() + body).hexdigest()[:12]
    return f"{method.lower()}-{path.strip('/').replace('/', '-')}-{digest}"


def test_a_deep_or_huge_body_gets_its_cassette_name_from_its_bytes(tmp_path: Path) -> None:
    """200,000 levels (1.4 MB, over the 1 MiB parsed for matching, so forwarded) and a 2 MiB
    JSON body: named by the digest of their bytes, never parsed; small JSON bodies by value."""
    deep = b'{"a":' * 200_000 + b"1" + b"}" * 200_000
    huge = json.dumps({"b": "x" * (2 << 20), "a": 1}).encode()
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        answers = [httpx.post(rec.url + "/any/deep", content=deep, timeout=60),
                   httpx.post(rec.url + "/any/huge", content=huge, timeout=60),
                   httpx.post(rec.url + "/any/small", content=b'{"b": 2, "a": 1}')]
    assert [a.status_code for a in answers] == [404, 404, 404]  # the upstream's own answer, relayed
    assert answers[0].json()["error"]["type"] == "not_found"
    assert [r["body_size"] for r in up.received] == [len(deep), len(huge), 16]
    small = hashlib.sha256(b'POST /any/small\n{"a":1,"b":2}').hexdigest()[:12]
    assert sorted(p.stem for p in tmp_path.glob("*.yaml")) == sorted(
        [_bytes_name("POST", "/any/deep", deep), _bytes_name("POST", "/any/huge", huge), f"post-any-small-{small}"])


def test_the_recorder_refuses_a_body_over_its_limit_and_forwards_nothing(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="big", max_request_body=1000) as rec:
        refused = httpx.post(rec.url + "/json", content=b"{}" + b" " * 1000)
        fine = httpx.post(rec.url + "/json", content=b"{}")
    assert refused.status_code == 413 and error_of(refused)["limit"] == 1000
    assert "--max-request-body" in str(error_of(refused)["message"])
    assert fine.status_code == 200 and len(up.received) == 1


# ---- 3. times in cassettes -------------------------------------------------------------------
@pytest.mark.parametrize("t", ["1e308", ".inf", ".nan", "-1.0", "86400.001"])
def test_an_unservable_time_is_refused_at_load_naming_file_and_field(tmp_path: Path, t: str) -> None:
    (tmp_path / "late.yaml").write_text(
        "ssemock_cassette: 1\ninteractions:\n- request: {method: POST, path: /v1/x}\n"
        f"  response:\n    chunks: [{{t: 0.5, text: 'data: a\\n\\n'}}, {{t: {t}, text: 'data: b\\n\\n'}}]\n",
        encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        MockServer(tmp_path)
    assert caught.value.file == str(tmp_path / "late.yaml")
    assert caught.value.field == "interactions[0].response.chunks[1].t"
    assert "a number from 0 to 86400" in caught.value.expected


# ---- 4. YAML: anchors, aliases and duplicate keys in every file ------------------------------
BOMB = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n")


@pytest.mark.parametrize("before", ["", "date: 2024-01-01\n"])
def test_an_alias_bomb_in_a_scenario_file_is_refused_at_once(tmp_path: Path, before: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text("ssemock_scenario: 1\nname: bomb\n" + before + "steps:\n- http-error:\n    status: 500\n"
                    "    json:\n      " + BOMB.replace("\n", "\n      "), encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(ScenarioError) as caught:
        MockServer(scenarios=tmp_path)
    assert time.perf_counter() - started < 5  # expanding it would take minutes and gigabytes
    assert caught.value.file == str(path) and caught.value.field.startswith("line ")
    assert "anchors or aliases" in caught.value.expected and len(str(caught.value)) < 400


@pytest.mark.parametrize("before", ["", "when: 2024-01-01\n"])
def test_an_alias_bomb_in_a_cassette_is_refused_even_after_the_fast_path_steps_aside(
    tmp_path: Path, before: str
) -> None:
    (tmp_path / "bomb.yaml").write_text("ssemock_cassette: 1\n" + before + "provenance:\n  " +
                                        BOMB.replace("\n", "\n  ") + "\ninteractions: []\n", encoding="utf-8")
    with pytest.raises(CassetteError, match=r"bomb\.yaml: line \d+: expected YAML without anchors or aliases"):
        MockServer(tmp_path)


def test_an_alias_bomb_in_a_vcr_cassette_is_refused_on_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bomb.yaml").write_text("interactions: []\nversion: 1\nextra:\n  " + BOMB.replace("\n", "\n  "),
                                        encoding="utf-8")
    assert main(["import", "vcr", str(tmp_path / "bomb.yaml"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bomb.yaml: line 4: expected YAML without anchors or aliases" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("kind", "text", "line"), [
    ("scenario", "ssemock_scenario: 1\nname: a\nsteps: []\nname: b\n", 4),
    ("cassette", "ssemock_cassette: 1\ninteractions: []\ninteractions: []\n", 3),
    ("cassette", "ssemock_cassette: 1\nprovenance: {when: 2024-01-01, a: 1, a: 2}\ninteractions: []\n", 2),
])
def test_duplicate_keys_are_refused_with_the_line(tmp_path: Path, kind: str, text: str, line: int) -> None:
    (tmp_path / "dup.yaml").write_text(text, encoding="utf-8")
    error = ScenarioError if kind == "scenario" else CassetteError
    with pytest.raises(error) as caught:
        MockServer(tmp_path) if kind == "cassette" else MockServer(scenarios=tmp_path)
    assert caught.value.field == f"line {line}" and caught.value.expected == "unique keys in every mapping"


def test_an_error_message_never_renders_a_huge_value(tmp_path: Path) -> None:
    huge = "[" + ", ".join(["[" + ", ".join(["x"] * 1000) + "]"] * 90) + "]"  # 90,000 items, under 1 MiB, 90 steps
    (tmp_path / "s.yaml").write_text(f"ssemock_scenario: 1\nname: s\nsteps: {huge}\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        MockServer(scenarios=tmp_path)
    shown = str(caught.value).rsplit(", got ", 1)[1]
    assert shown == "['x', 'x', 'x', 'x', 'x', 'x', ...]" and caught.value.field == "steps[0]"


# ---- 5. the journal: a ring, large bodies as digest + size + prefix ---------------------------
def test_the_journal_keeps_the_latest_entries_and_large_bodies_by_digest(server: MockServer) -> None:
    server.reset()
    large = json.dumps({"prompt": "é" * 5000}).encode()  # over the 1 KiB journal limit of this server
    for i in range(7):
        httpx.post(server.url + CHAT_PATH, json={"n": i}, headers={"X-SSEMock-Cassette": CHAT})
    httpx.post(server.url + CHAT_PATH, content=large, headers={"X-SSEMock-Cassette": CHAT})
    entries = server.requests
    assert [e["seq"] for e in entries] == [4, 5, 6, 7, 8]  # capacity 5, oldest dropped first
    assert [e["body"] for e in entries[:4]] == [{"n": i} for i in range(3, 7)]
    kept = entries[-1]["body"]
    assert kept["sha256"] == hashlib.sha256(large).hexdigest() and kept["size"] == len(large)
    assert large.decode().startswith(kept["prefix"]) and 500 <= len(kept["prefix"]) <= 1024
    admin = httpx.get(server.url + "/_ssemock/requests").json()
    assert [e["seq"] for e in admin] == [4, 5, 6, 7, 8]


# ---- 6. one name, two files ------------------------------------------------------------------
def test_two_cassettes_with_one_name_are_refused_naming_both_files(tmp_path: Path) -> None:
    source = Path(bundled_cassettes()) / f"{CHAT}.yaml"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(source, tmp_path / folder / "x.yaml")
    with pytest.raises(CassetteError) as caught:
        MockServer([tmp_path / "a", tmp_path / "b"])
    message = str(caught.value)
    assert str(tmp_path / "a" / "x.yaml") in message and str(tmp_path / "b" / "x.yaml") in message
    shutil.copy(source, tmp_path / "a" / "x.yml")  # one folder, two suffixes
    with pytest.raises(CassetteError, match=r"x\.yml: name: .*x\.yaml already defines it"):
        MockServer(tmp_path / "a")


def test_two_scenarios_with_one_name_are_refused_but_a_preset_may_be_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder, file in (("a", "one.yaml"), ("b", "two.yaml")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / file).write_text("ssemock_scenario: 1\nname: same\nsteps: []\n", encoding="utf-8")
    assert main(["serve", "--port", "0", "--scenarios", str(tmp_path / "a"), "--scenarios", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path / "a" / "one.yaml") in err and str(tmp_path / "b" / "two.yaml") in err
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "crlf.yaml").write_text("ssemock_scenario: 1\nname: crlf\nsteps: []\n", encoding="utf-8")
    with MockServer(scenarios=[bundled_scenarios(), tmp_path / "c"]) as replaced:
        assert replaced.state.scenarios["crlf"].steps == []


# ---- 7. request methods are HTTP tokens ------------------------------------------------------
@pytest.mark.parametrize("method", [b"G T", b"G(T", b"G\x01T", b"G\xffT", b'G"T', b"GET\x00"])
def test_a_method_that_is_not_a_token_gets_400(server: MockServer, method: bytes) -> None:
    url = httpx.URL(server.url)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(method + b" /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        head = sock.recv(65536)
    assert head.split(b" ", 2)[1] == b"400"
    assert httpx.get(server.url + "/_ssemock/health").status_code == 200


@pytest.mark.parametrize("head", [
    b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # request line over 8,190 bytes
    b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(129)) + b"\r\n",  # 130 headers
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"y" * 8200 + b"\r\n\r\n",  # a header over 8,190 bytes
])
def test_request_lines_and_headers_past_their_bounds_get_400(server: MockServer, head: bytes) -> None:
    url = httpx.URL(server.url)
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(head)
        answer = sock.recv(65536)
    assert answer.split(b" ", 2)[1] == b"400"
    assert httpx.get(server.url + "/_ssemock/health").status_code == 200


def test_a_cassette_method_that_is_not_a_token_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text("ssemock_cassette: 1\ninteractions:\n- request: {method: 'GET /x HTTP/1.1'}\n"
                                     "  response: {}\n", encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        MockServer(tmp_path)
    assert caught.value.field == "interactions[0].request.method" and "RFC 9110" in caught.value.expected


# ---- 8. the event loop keeps answering -------------------------------------------------------
async def test_large_bodies_leave_the_loop_answering(tmp_path: Path) -> None:
    """Structure, not wall time: while large hostile bodies are read, parsed and journaled,
    the server's own loop keeps running its callbacks (a loop-lag probe counts them)."""
    ticks = 0

    async def probe() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    async with MockServer(max_request_body=16 << 20, timing_scale=0) as server:
        task = asyncio.create_task(probe())
        async with httpx.AsyncClient(timeout=60) as client:
            bodies = [b"[" + b"0," * (4 << 20) + b"0]", nested(100_000), json.dumps({"p": "x" * (7 << 20)}).encode()]
            before = ticks
            answers = await asyncio.gather(*(client.post(server.url + NOWHERE, content=b) for b in bodies))
            during = ticks - before
        task.cancel()
        assert [a.status_code for a in answers] == [404, 400, 404]
        assert during >= 2  # the probe ran while the bodies were handled
        journaled = sorted((e.body or {}).get("size", 0) for e in server.state.journal)
        assert journaled == sorted([0, len(bodies[0]), len(bodies[2])])  # the refused deep one: no body


def test_ssemock_serve_takes_its_bounds_from_the_command_line(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--max-request-body", "100",
         "--journal-capacity", "2", "--journal-body-limit", "10"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("ssemock serving on ")
        refused = httpx.post(url + NOWHERE, content=b"x" * 101)
        assert refused.status_code == 413 and "100 bytes" in str(error_of(refused)["message"])
        for n in range(3):
            httpx.post(url + NOWHERE, content=b"y" * (20 + n))
        journal = httpx.get(url + "/_ssemock/requests").json()
        assert [e["seq"] for e in journal] == [3, 4]
        assert [e["body"]["size"] for e in journal] == [21, 22] and journal[0]["body"]["prefix"] == "y" * 21
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize("t", [1e308, float("inf"), float("nan"), -0.5])
def test_a_cassette_built_in_code_with_an_unservable_time_is_refused(t: float) -> None:
    chunks = [Chunk(0.1, b"data: a\n\n"), Chunk(t, b"data: b\n\n")]
    cassette = Cassette("code", [Interaction(Request("POST", "/v1/x"), Response(chunks=chunks))])
    with pytest.raises(CassetteError) as caught:
        MockServer(cassette)
    assert (caught.value.file, caught.value.field) == ("<cassette code>", "interactions[0].response.chunks[1].t")
    # Times out of order are harmless in code (End() left at 0): accepted as before.
    chunks[1].t = 0.2
    assert MockServer(cassette).state.cassettes["code"] is cassette


def test_a_huge_binary_value_in_an_error_is_shown_cut(tmp_path: Path) -> None:
    blob = base64.b64encode(b"\x00" * (4 << 20)).decode()
    (tmp_path / "b.yaml").write_text(f"ssemock_cassette: 1\nname: !!binary {blob}\n", encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        MockServer(tmp_path)
    assert caught.value.field == "name" and isinstance(caught.value.got, bytes)
    shown = str(caught.value).rsplit(", got ", 1)[1]
    assert shown.startswith("b'\\x00\\x00") and shown.endswith("...") and len(shown) == 80
