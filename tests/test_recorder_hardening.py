"""The recorder against hostile or careless input: credentials in the target URL, keys in
paths and cassette names, encoded request bodies, bad names and options, its own admin
path, JSON-escaped keys. Real servers on 127.0.0.1, real clients, no mocks."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import logging
import signal
import socket
import time
from pathlib import Path

import httpx
import pytest

from ssemock.cassette import load
from ssemock.cli import main
from ssemock.errors import ConfigError, RecorderConfigError
from ssemock.recorder import Recorder
from ssemock.redact import Filter

from .rawclient import raw_json, raw_request
from .test_recorder_scale import RecorderProcess
from .upstream import Upstream

PASSWORD = "hunter2pass"


def test_credentials_in_the_target_go_upstream_as_basic_auth_and_nowhere_else(tmp_path: Path) -> None:
    with Upstream() as up:
        host = up.url.removeprefix("http://")
        target = f"http://alice:{PASSWORD}@{host}"
        proc = RecorderProcess(target, tmp_path, "--cassette", "c", shown=f"http://***@{host}")
        answer = raw_json(proc.url, "POST", "/json", {"q": 1})
        status, err = proc.finish(signal.SIGTERM)
    assert answer.status == 200 and status == 0
    sent = up.received[0]["headers"]
    assert sent["Host"] == host
    assert sent["Authorization"] == "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    written = (tmp_path / "c.yaml").read_text()
    for text in (proc.first_line, err, written):
        assert PASSWORD not in text and "alice" not in text
    cassette = load(tmp_path / "c.yaml")
    assert cassette.provenance["target"] == f"http://***@{host}"
    assert dict((k.lower(), v) for k, v in cassette.interactions[0].request.headers)["host"] == host


def test_the_clients_own_authorization_wins_over_the_targets_user_info(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url.replace("http://", "http://bob:pw@"), tmp_path) as rec:
        assert rec.target == up.url.replace("http://", "http://***@")
        raw_json(rec.url, "POST", "/json", {}, headers={"Authorization": "Bearer mine"})
    assert up.received[0]["headers"]["Authorization"] == "Bearer mine"


PATH_KEY = "sk-proj-HHHHHHHHHHHHHHHHHHHHHHHHH16"


def assert_no_key(text: str, *keys: str) -> None:
    for key in keys:
        assert key.lower() not in text.lower(), text


def test_a_key_in_the_path_or_cassette_name_reaches_no_file_name_nor_progress_line(tmp_path: Path) -> None:
    progress = io.StringIO()
    upper = "SK-PROJ-UPPERCASEUPPERCASEUPPER"
    with Upstream() as up, Recorder(up.url, tmp_path, progress=progress) as rec:
        answer = raw_request(rec.url, "GET", f"/v1/models/{PATH_KEY}/x")
        raw_json(rec.url, "POST", "/json", {}, headers={"X-SSEMock-Cassette": f"team/{PATH_KEY}"})
        raw_json(rec.url, "POST", "/json", {}, headers={"X-SSEMock-Cassette": upper})
        raw_request(rec.url, "GET", f"/v1/{upper}/y")
    assert answer.status == 404  # the upstream's own answer, recorded
    names = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.yaml")]
    assert len(names) == 4 and "team/REDACTED.yaml" in names
    for text in [*names, progress.getvalue()]:
        assert_no_key(text, PATH_KEY, upper)
    assert not any(PATH_KEY in p.read_text() for p in tmp_path.rglob("*.yaml"))
    assert any(n.startswith("get-v1-models-redacted-x-") for n in names)


def test_the_automatic_cassette_name_is_the_scrubbed_requests_and_tells_no_secret(tmp_path: Path) -> None:
    """Requests that differ only in their secrets are one request once scrubbed: one cassette name (a
    name from the secret would let its 48 bits be checked against guesses offline); the name's digest is
    that of the request as the cassette holds it; another prompt is another name."""
    def login(password: str, key: str, prompt: str = "Summarize my inbox") -> dict[str, object]:
        return {"model": "gpt-4o", "user": "ann", "password": password,
                "messages": [{"role": "user", "content": f"{prompt} with {key}"}]}

    keys = ("sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4", "sk-proj-" + "z9Y8x7W6v5U4t3S2r1Q0p9O8n7M6")
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        for body in (login("hunter2", keys[0]), login("letmein", keys[1]), login("hunter2", keys[0], "Reply to Bob")):
            assert httpx.post(rec.url + "/json", json=body, timeout=30).status_code == 200
    assert len(up.received) == 3 and b"hunter2" in up.received[0]["body"]  # the upstream had them all
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == 2
    by_count = {len(load(f).interactions): f for f in files}
    same = load(by_count[2])
    recorded = [json.loads(i.request.body or b"") for i in same.interactions]
    assert recorded[0] == recorded[1] and recorded[0]["password"] == "REDACTED"
    digest = hashlib.sha256(b"POST /json\n" + json.dumps(recorded[0], sort_keys=True, separators=(",", ":")).encode())
    assert by_count[2].stem == f"post-json-{digest.hexdigest()[:12]}"
    assert by_count[1].stem.startswith("post-json-") and by_count[1] != by_count[2]
    for text in (by_count[1].read_text(), by_count[2].read_text()):
        assert_no_key(text, "hunter2", "letmein", *keys)


def test_a_credential_sent_in_the_path_of_a_refused_request_reaches_no_progress_line(tmp_path: Path) -> None:
    opaque = "Opq-refused-path-credential-4711"  # no known shape: replaced as the credential the headers send
    progress = io.StringIO()
    with Upstream() as up, Recorder(up.url, tmp_path, max_request_body=16, progress=progress) as rec:
        large = raw_request(rec.url, "POST", f"/v1/files/{opaque}/content", b"x" * 32, {"X-Api-Key": opaque})
        admin = raw_request(rec.url, "GET", f"/_ssemock/{opaque}", headers={"Authorization": f"Bearer {opaque}"})
    assert (large.status, admin.status) == (413, 404) and up.received == []
    lines = progress.getvalue().splitlines()
    assert [line.split(" -> ")[0] for line in lines] == ["[1] refused POST /v1/files/REDACTED/content",
                                                         "[2] refused GET /_ssemock/REDACTED"]
    assert_no_key(progress.getvalue(), opaque)


def test_a_gzip_request_body_is_forwarded_and_recorded_decoded(tmp_path: Path) -> None:
    payload = {"model": "gpt-4o", "say": "hello"}
    packed = gzip.compress(json.dumps(payload).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip", "X-SSEMock-Cassette": "z"}
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = raw_request(rec.url, "POST", "/echo", packed, headers)
    assert answer.status == 200 and answer.body == b"hello"
    sent = up.received[0]
    assert json.loads(sent["body"]) == payload and "Content-Encoding" not in sent["headers"]
    assert sent["headers"]["Content-Length"] == str(len(sent["body"]))
    request = load(tmp_path / "z.yaml").interactions[0].request
    assert request.json() == payload
    assert "content-encoding" not in {k.lower() for k, _ in request.headers}


def test_a_malformed_gzip_request_body_is_a_400_json_error_without_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The client got its 400, and the recorder logged three chained tracebacks (aiohttp read the rest
    of the body after the answer)."""
    caplog.set_level(logging.DEBUG)
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = raw_request(rec.url, "POST", "/json", b"not gzip at all", headers)
        assert rec.interactions[0]["action"] == "refused"
        time.sleep(0.2)  # aiohttp reads what is left of the body after the answer
    assert answer.status == 400 and json.loads(answer.body)["error"] == {
        "type": "ssemock_bad_request_body",
        "message": "cannot read the request body: Can not decode content-encoding: gzip"}
    assert up.received == [] and list(tmp_path.iterdir()) == []
    assert [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


def test_an_http_2_request_line_is_a_505_and_never_forwarded(tmp_path: Path) -> None:
    """It was forwarded and recorded, and answered with the status line ``HTTP/2.0 404``."""
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        port = int(rec.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /json HTTP/2.0\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
            answer = b""
            while data := sock.recv(65536):
                answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 505 HTTP Version Not Supported\r\n")
    assert json.loads(body)["error"]["type"] == "ssemock_http_version_not_supported"
    assert up.received == [] and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["a" * 300, "/".join(["b" * 150] * 8), "../up", "/tmp/evil"],
                         ids=["300-chars", "1207-chars", "dot-dot", "absolute"])
def test_a_bad_or_too_long_cassette_name_is_a_400_json_error(name: str, tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = raw_json(rec.url, "POST", "/json", {}, headers={"X-SSEMock-Cassette": name})
    assert answer.status == 400 and json.loads(answer.body)["error"]["type"] == "ssemock_bad_cassette"
    assert up.received == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(RecorderConfigError):
        Recorder(up.url, tmp_path, cassette=name)


def test_the_longest_allowed_cassette_name_is_written(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c" * 200) as rec:
        assert raw_json(rec.url, "POST", "/json", {}).status == 200
    assert (tmp_path / f"{'c' * 200}.yaml").is_file()


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(["record", *argv])
    except SystemExit as exc:  # argparse's own errors: text that is not a number
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("where", ["file", "file/below", "/etc/passwd"])
def test_a_cassettes_path_that_is_a_file_is_refused_at_start(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "file"
    plain.write_text("keep me\n")
    path = where if where.startswith("/") else str(tmp_path / where)
    before = Path(path.split("/below")[0]).read_bytes()
    status, out, err = run_cli("--target", "http://127.0.0.1:1", "--cassettes", path, "--port", "0",
                               capsys=capsys)
    assert (status, out) == (2, "")
    assert err.startswith("ssemock: error: ") and err.count("\n") == 1 and "not a directory" in err
    assert Path(path.split("/below")[0]).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    with pytest.raises(RecorderConfigError):
        Recorder("http://127.0.0.1:1", path)


BAD_OPTIONS = {
    "--max-body-size -5": (["--max-body-size", "-5"], {"max_body_size": -5}),
    "--grace -1": (["--grace", "-1"], {"grace": -1.0}),
    "--read-timeout 0": (["--read-timeout", "0"], {"read_timeout": 0.0}),
    "--read-timeout nan": (["--read-timeout", "nan"], {"read_timeout": float("nan")}),
    "--filter-json ''": (["--filter-json", ""], {"filter": lambda: Filter(json_paths=("",))}),
    "--filter-json a..b": (["--filter-json", "a..b"], {"filter": lambda: Filter(json_paths=("a..b",))}),
    "--filter-header ''": (["--filter-header", ""], {"filter": lambda: Filter(request_headers=frozenset({""}))}),
    "--filter-regex (a)\\1": (["--filter-regex", r"(a)\1"], {"filter": lambda: Filter(patterns=(r"(a)\1",))}),
    "--port -1": (["--port", "-1"], {"port": -1}),
    "--port 99999": (["--port", "99999"], {"port": 99999}),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_bad_options_are_one_line_and_exit_2_and_the_same_from_python(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, kwargs = BAD_OPTIONS[case]
    port = [] if "--port" in argv else ["--port", "0"]
    status, out, err = run_cli("--target", "http://127.0.0.1:1", "--cassettes", str(tmp_path), *port, *argv,
                               capsys=capsys)
    assert (status, out) == (2, "")
    assert err.startswith(("ssemock: error: ", "ssemock record: error: argument --")) and err.count("\n") == 1, err
    with pytest.raises(ConfigError):  # RecorderConfigError, or a limit's or network option's ConfigError
        Recorder("http://127.0.0.1:1", tmp_path, **{k: v() if callable(v) else v for k, v in kwargs.items()})
    assert list(tmp_path.iterdir()) == []


def test_edge_values_are_accepted(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, max_body_size=0, grace=0, read_timeout=0.5,
                                    cassette="e") as rec:
        assert raw_json(rec.url, "POST", "/json", {"a": 1}).status == 200
    request = load(tmp_path / "e.yaml").interactions[0].request
    assert request.body_size == len(b'{"a": 1}')


def test_the_recorder_answers_its_own_health_and_never_forwards_admin_paths(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        health = raw_request(rec.url, "GET", "/_ssemock/health")
        others = [raw_request(rec.url, method, path) for method, path in
                  [("POST", "/_ssemock/health"), ("GET", "/_ssemock/requests"), ("GET", "/_ssemock"),
                   ("POST", "/_SSEMOCK/health"), ("GET", "/_SSEMock/requests"), ("GET", "/_SseMock"),
                   ("POST", "//_ssemock/health"), ("POST", "/./_ssemock/health"), ("POST", "/v1/../_ssemock/health")]]
        escaped = raw_request(rec.url, "GET", "/%5Fssemock/health")  # the same path: the recorder's own answer
        raw_request(rec.url, "GET", "/_ssemockish/x")  # not the admin prefix: forwarded
        assert [i["action"] for i in rec.interactions] == ["refused"] * 9 + ["recorded"]
    assert health.status == 200 and (health.header("content-type") or "").startswith("application/json")
    assert json.loads(health.body) == {"status": "ok", "record_mode": "all", "target": up.url, "cassettes": 0}
    assert [o.status for o in others] == [404] * 9
    assert {json.loads(o.body)["error"]["type"] for o in others} == {"ssemock_admin_path"}
    assert escaped.status == 200 and json.loads(escaped.body) == json.loads(health.body)
    assert up.received == [] and [p.name for p in tmp_path.iterdir()] == [rec.interactions[-1]["cassette"] + ".yaml"]
    assert [i.request.path for i in load(tmp_path / f"{rec.interactions[-1]['cassette']}.yaml").interactions] == [
        "/_ssemockish/x"]


ESCAPED_KEYS = [
    r"sk\u002dproj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9c",
    r"AIza\u0053yD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T",
    r"\u0073k-ant-api03-Zy8xW6vU4tS2rQ0pO8nM6lK4j",
    r"Bearer eyJhbGciOiJIUzI1NiJ9\/e30\u002esig",
]


@pytest.mark.parametrize("key", ESCAPED_KEYS)
def test_json_escaped_keys_in_a_streamed_answer_are_scrubbed(key: str, tmp_path: Path) -> None:
    event = f'data: {{"note": "your key {key} ok"}}\n\n'
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="e") as rec:
        live = raw_json(rec.url, "POST", "/echo", {"say": event})
    [report] = rec.interactions  # complete once the recorder has stopped
    assert live.body == event.encode()  # the client gets the answer untouched
    written = (tmp_path / "e.yaml").read_text()
    decoded = json.loads(event.removeprefix("data: "))["note"]
    assert key not in written and decoded.split()[-2] not in written
    body = load(tmp_path / "e.yaml").interactions[0].response.body
    expected = "your key Bearer REDACTED ok" if key.startswith("Bearer") else "your key REDACTED ok"
    assert json.loads(body.decode().removeprefix("data: ")) == {"note": expected}
    assert any(line.startswith("response body: 1 secret(s) replaced (") for line in report["filtered"])


def test_the_recording_how_to_says_the_once_mode_as_coded() -> None:
    """docs/how-to/record-production-prompts.md, *Which cassette*: ``once`` replays a cassette that existed
    when first used and records into a new one (the options themselves are in the generated CLI reference)."""
    page = (Path(__file__).resolve().parent.parent / "docs/how-to/record-production-prompts.md").read_text()
    assert "only replays existing ones" not in page
    assert "a cassette that existed when first used is only\nreplayed" in page


@pytest.mark.parametrize("coding", ["gzip, gzip", "gzip, identity", "x-gzip", "X-GZIP"])
def test_a_request_body_in_codings_aiohttp_leaves_is_decoded_scanned_and_recorded_plain(
    coding: str, tmp_path: Path
) -> None:
    """The recorder stored such a body as its compressed bytes (base64 of gzip holding the key), and
    ``ssemock check`` found nothing: aiohttp's parser undoes one gzip, not two nor x-gzip."""
    key = "sk-proj-" + "Q7x9" * 8 + "dE9fG"
    payload = {"api_key": key, "messages": [{"role": "user", "content": f"my key is {key}."}]}
    body = json.dumps(payload).encode()
    for _ in range(2 if coding.startswith("gzip, gzip") else 1):
        body = gzip.compress(body, mtime=0)
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c") as rec:
        answer = raw_request(rec.url, "POST", "/json", body, {"Content-Type": "application/json",
                                                              "Content-Encoding": coding})
    assert answer.status == 200
    assert json.loads(up.received[0]["body"]) == payload  # forwarded decoded
    assert "Content-Encoding" not in up.received[0]["headers"]
    text = (tmp_path / "c.yaml").read_text(encoding="utf-8")
    assert key not in text and "REDACTED" in text
    [interaction] = load(tmp_path / "c.yaml").interactions
    assert interaction.request.json()["api_key"] == "REDACTED"
    assert "content-encoding" not in {k.lower() for k, _ in interaction.request.headers}


@pytest.mark.parametrize(("coding", "status", "code"), [
    ("gzip, br", 415, "ssemock_unsupported_encoding"), ("foo", 415, "ssemock_unsupported_encoding"),
    ("gzip, gzip", 400, "ssemock_bad_request_body"),  # not gzip twice
])
def test_a_request_body_in_codings_ssemock_cannot_undo_is_refused_and_never_recorded(
    coding: str, status: int, code: str, tmp_path: Path
) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c") as rec:
        answer = raw_request(rec.url, "POST", "/json", b"abcde", {"Content-Encoding": coding})
    assert (answer.status, json.loads(answer.body)["error"]["type"]) == (status, code)
    assert up.received == [] and list(tmp_path.iterdir()) == []
