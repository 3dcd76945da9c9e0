"""A corpus of secrets sent through the real recorder in front of a real local upstream: names that look
like credentials (query, headers, JSON body), provider key shapes (plain, JSON-escaped, split across reads,
in the URL path, in headers, bodies and the streamed answer) and the credentials a request sent, echoed
back. Every file written under the cassettes directory is read afterwards: no byte of any secret."""

from __future__ import annotations

import base64
import gzip
import itertools
import json
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock.cassette import load
from ssemock.recorder import Recorder
from ssemock.redact import REDACTED

from .rawclient import raw_request
from .test_recorder_scale import RecorderProcess
from .upstream import Upstream

# Provider key shapes, as issued (values made up).
SHAPES = {
    "sk-proj": "sk-proj-Qz7Lw2Xc9Vb4Nm1As6Df3Gh8Jk5Lp0Oi2Uy7Tr4Ew9Qa",
    "sk": "sk-Rt5Yu8Io1Pa4Sd7Fg0Hj3Kl6Zx9Cv2Bn5Mq8We1",
    "sk-ant": "sk-ant-api03-Wq9Er2Ty5Ui8Op1As4Df7Gh0Jk3Lz6Xc9Vb2Nm5",
    "AIza": "AIzaSyB7c8D9e0F1g2H3i4J5k6L7m8N9o0P1q2R",
    "gsk_": "gsk_Lm4Nb7Vc0Xz3As6Df9Gh2Jk5Lq8Wr1Ty4Ui7Op0PaSdFgHjKlZx",
    "xai-": "xai-Hg5Fd8Sa1Qw4Er7Ty0Ui3Op6Lk9Jh2Gf5Ds8Az1Xc4Vb7Nm0QwErTyUiOpAsDfGhJkLzXcVbNm1234",
    "hf_": "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",
    "AKIA": "AKIAZ7Y6X5W4V3U2T1S0",
    "ghp_": "ghp_Zx9Cv8Bn7Mq6We5Rt4Yu3Io2Pa1Sd0Fg9Hj8K",
    "ya29.": "ya29.a0Ab_Cd-Ef0Gh1Ij2Kl3Mn4Op5Qr6St7Uv8Wx9",
    "pplx-": "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",
    "r8_": "r8_Po9Iu8Yt7Re6Wq5As4Df3Gh2Jk1Lz0Xc9Vb8",
    "jwt": ("eyJhbGciOiJSUzI1NiIsImtpZCI6ImNvcnB1cyJ9.eyJzdWIiOiJjb3JwdXMtdXNlciIsImV4cCI6MTk5OX0"
            ".c29tZS1zaWduYXR1cmUtYnl0ZXM"),
}

# A Telegram bot token (bot id, colon, 35 characters from "AA") and URL user info passwords (made up).
TELEGRAM = "7310493582:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
URL_PASSWORDS = ["Xk92mPq7v3RtZw", "s3cr3tPw9xQ2mN7z", "hT4kLm9qZr81Vb", "Wd5sQ1nB8vYc3K"]

# JSON string escapes (RFC 8259 section 7) as written in a JSON text.
JSON_ESCAPES = ["\\n", "\\t", "\\r\\n", "\\u2028", '\\"', "\\\\", "\\/", "\\b", "\\f", "\\u00e9"]


def _escaped(key: str, every: int = 3) -> str:
    """``key`` with every ``every``-th character written as a JSON ``\\u00XX`` escape."""
    return "".join(f"\\u{ord(c):04x}" if i % every == 0 else c for i, c in enumerate(key))


@dataclass
class Form:
    """One way a secret reaches the recorder: the request to send and the values that must not be written."""

    name: str
    path: str
    secrets: list[str]
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # a JSON document, or bytes sent as they are
    method: str = "POST"


def _forms() -> list[Form]:
    forms: list[Form] = []
    opaque = iter(f"Opq{n:02d}-corpus-{n * 7919:06d}-value" for n in range(1, 100))
    # Query parameter names the issue saw reach disk, and the other cloud signing names.
    for name in ["apikey", "api-key", "auth", "sig", "X-Amz-Signature", "password", "client_secret", "key",
                 "access_token", "X-Amz-Credential", "X-Amz-Security-Token"]:
        value = next(opaque)
        forms.append(Form(f"query {name}", f"/json?alt=sse&{name}={quote(value)}", [value], body={"q": 1}))
    # Header names the issue saw reach disk, and the providers' own auth headers.
    # Team keys (Honeycomb's), passcodes and one-time passwords: credentials by kind.
    for name in ["anthropic-api-key", "x-api-token", "X-Auth-Token", "x-api-key", "api-key", "x-goog-api-key",
                 "X-Custom-Session", "X-Honeycomb-Team", "X-Passcode", "X-Otp", "X-TOTP-Code"]:
        value = next(opaque)
        forms.append(Form(f"header {name}", "/json", [value], headers={name: value}, body={"q": 1}))
    bearer = next(opaque)
    forms.append(Form("header Authorization: Bearer (opaque)", "/json", [bearer],
                      headers={"Authorization": f"Bearer {bearer}"}, body={"q": 1}))
    user, password = "corpus-user", next(opaque)
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    forms.append(Form("header Proxy-Authorization: Basic", "/json", [password, basic],
                      headers={"Proxy-Authorization": f"Basic {basic}"}, body={"q": 1}))
    cookie = next(opaque)
    forms.append(Form("header Cookie", "/json", [cookie], headers={"Cookie": f"sid={cookie}; theme=dark"},
                      body={"q": 1}))
    # JSON body fields named like credentials, at any depth.
    for doc_path in [("api_key",), ("password",), ("metadata", "clientSecret"), ("auth", "token")]:
        value = next(opaque)
        doc: dict[str, Any] = {"model": "m", "max_tokens": 8}
        node = doc
        for part in doc_path[:-1]:
            node = node.setdefault(part, {})
        node[doc_path[-1]] = value
        forms.append(Form(f"body {'.'.join(doc_path)}", "/json", [value], body=doc))
    # Key shapes pasted into a prompt (request body) and echoed in the streamed answer, split in 7-byte writes.
    for name, key in SHAPES.items():
        say = f'data: {{"choices":[{{"delta":{{"content":"my key is {key} ok"}}}}]}}\n\n'
        forms.append(Form(f"shape {name} in prompt and stream", "/echo", [key], body={"say": say}))
    # JSON-escaped in the streamed answer (the prompt holds it plain).
    for name in ["sk-proj", "AIza", "gsk_", "ghp_", "jwt", "AKIA"]:
        key = SHAPES[name]
        say = f'data: {{"text":"key {_escaped(key)} here"}}\n\n'
        forms.append(Form(f"shape {name} JSON-escaped in stream", "/echo", [key, _escaped(key)], body={"say": say}))
    # Right after and before a JSON string escape in the streamed answer (LLM text is JSON strings with "\n").
    escapes = itertools.cycle(JSON_ESCAPES)
    for name, key in SHAPES.items():
        escape = next(escapes)
        say = f'data: {{"choices":[{{"delta":{{"content":"Here is a key:{escape}{key}{escape}next"}}}}]}}\n\n'
        forms.append(Form(f"shape {name} after a JSON escape in stream", "/echo", [key], body={"say": say}))
    # Escaped twice: a JSON body echoed inside a JSON string ("sk\\u002dproj-…").
    for name in ["sk-proj", "AIza", "jwt"]:
        key = SHAPES[name]
        echoed_body = json.dumps({"m": f"line\n{key}"}).replace(key, _escaped(key))
        say = f"data: {json.dumps({'echo': echoed_body})}\n\n"
        twice = _escaped(key).replace("\\", "\\\\")
        assert twice in say
        forms.append(Form(f"shape {name} escaped twice in stream", "/echo", [key, twice], body={"say": say}))
    # In the URL path; a credential sent echoed in the answer's error message (whatever its shape).
    forms.append(Form("shape sk-proj in URL path", f"/any/v1/keys/{SHAPES['sk-proj']}/usage", [SHAPES["sk-proj"]],
                      method="GET"))
    token = next(opaque)
    forms.append(Form("credential sent echoed from the URL path", f"/any/bot{token}/sendMessage?token={token}",
                      [token], method="GET"))
    echoed = next(opaque)
    forms.append(Form("credential sent echoed in the stream", "/echo", [echoed],
                      headers={"x-api-key": echoed}, body={"say": f"data: you sent {echoed}\n\n"}))
    # A Telegram bot token in the URL path (the Bot API's own form), echoed by the answer's error message.
    forms.append(Form("telegram bot token in URL path", f"/any/bot{TELEGRAM}/sendMessage", [TELEGRAM],
                      method="GET"))
    forms.append(Form("telegram bot token in a query value", f"/json?forward_to=bot{TELEGRAM}", [TELEGRAM],
                      body={"q": 1}))
    say = f'data: {{"text":"call https:\\/\\/api.telegram.org\\/bot{TELEGRAM}\\/getMe"}}\n\n'
    forms.append(Form("telegram bot token in prompt and stream", "/echo", [TELEGRAM], body={"say": say}))
    # The password of a URL's user info: in the URL path, in a query value, in the prompt and the streamed answer (JSON
    # escapes "/" or not), percent-encoded in a form-like body; the user and the host stay.
    forms.append(Form("URL password in URL path", f"/any/fetch/https://hook:{URL_PASSWORDS[3]}@hooks.example.com/in",
                      [URL_PASSWORDS[3]], method="GET"))
    forms.append(Form("URL password in a query value", "/json?callback=" + quote(
        f"https://hook:{URL_PASSWORDS[0]}@hooks.example.com/in", safe=""), [URL_PASSWORDS[0]], body={"q": 1}))
    say = (f'data: {{"text":"use postgres://app:{URL_PASSWORDS[1]}@db.internal:5432/prod or '
           f'https:\\/\\/bot:{URL_PASSWORDS[1]}@api.example.com\\/v1"}}\n\n')
    forms.append(Form("URL password in prompt and stream", "/echo", [URL_PASSWORDS[1]], body={"say": say}))
    forms.append(Form("URL password percent-encoded in a body", "/any/hook", [URL_PASSWORDS[2]], body=(
        f"callback=https%3A%2F%2Fhook%3A{URL_PASSWORDS[2]}%40hooks.example.com%2Fin&mode=push").encode()))
    # A gzip answer holding a key.
    forms.append(Form("shape in a gzip answer", "/gzip", [SHAPES["ghp_"]], body={"say": f"k {SHAPES['ghp_']} k"}))
    return forms


FORMS = _forms()


def _encodings(secret: str) -> list[bytes]:
    """The byte forms a secret could be written in: plain, JSON-escaped, percent-encoded, base64."""
    forms = {secret, json.dumps(secret)[1:-1], quote(secret, safe=""), base64.b64encode(secret.encode()).decode()}
    return [f.encode() for f in forms]


def _written(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file()]


def _assert_clean(directory: Path, secrets: list[str]) -> int:
    files = _written(directory)
    assert files, "nothing written"
    for path in files:
        content = path.read_bytes()
        name = str(path.relative_to(directory)).lower().encode()  # file names are built lower case
        for secret in secrets:
            for form in _encodings(secret):
                assert form not in content, (path.name, secret)
                assert form.lower() not in name, (path.name, secret)
    return len(files)


def _send(url: str, form: Form, cassette: str | None) -> None:
    body = b"" if form.body is None else form.body if isinstance(form.body, bytes) else json.dumps(form.body).encode()
    headers = {**({"X-SSEMock-Cassette": cassette} if cassette else {}), **form.headers}
    if form.body is not None:
        headers["Content-Type"] = "application/json"
    raw_request(url, form.method, form.path, body, headers)


def test_the_corpus_has_every_form_of_the_issue() -> None:
    assert len(FORMS) >= 40
    names = " ".join(f.name for f in FORMS)
    for expected in ["query apikey", "query api-key", "query auth", "query sig", "query X-Amz-Signature",
                     "query password", "query client_secret", "header anthropic-api-key", "header x-api-token",
                     "header X-Auth-Token", "header X-Honeycomb-Team", "header X-Passcode", "header X-Otp",
                     "body api_key", "body password", "URL path", "JSON-escaped",
                     *(f"shape {k} after a JSON escape" for k in SHAPES), "escaped twice",
                     *(f"shape {k} " for k in SHAPES), "telegram bot token in URL path",
                     "telegram bot token in a query value", "telegram bot token in prompt and stream",
                     "URL password in URL path",
                     "URL password in a query value", "URL password in prompt and stream",
                     "URL password percent-encoded"]:
        assert expected in names, expected


def test_no_secret_of_the_corpus_reaches_any_file_written(tmp_path: Path) -> None:
    response_secret = "Opq-set-cookie-corpus-777"
    with Upstream() as up:
        up.extra_headers = {"Set-Cookie": f"__sess={response_secret}; Path=/"}
        with Recorder(up.url, tmp_path, mode="all") as rec:
            for i, form in enumerate(FORMS):
                _send(rec.url, form, f"corpus/{i:02d}")
            report = rec.interactions
    # The real credentials went upstream untouched.
    sent = {k.lower(): v for r in up.received for k, v in r["headers"].items()}
    assert sent["x-auth-token"] == FORMS[[f.name for f in FORMS].index("header X-Auth-Token")].secrets[0]
    every = [s for f in FORMS for s in f.secrets] + [response_secret]
    files = _assert_clean(tmp_path, every)
    assert files == len(FORMS)
    # Every cassette loads, and the answers that held no secret are kept as they were.
    for path in _written(tmp_path):
        load(path)
    # The progress reports say what was removed, by name and by rule, never a value.
    by_cassette = {r["cassette"]: r["filtered"] for r in report}
    assert "query X-Amz-Signature" in by_cassette["corpus/04"]
    assert "request header anthropic-api-key" in by_cassette["corpus/11"]
    assert any(line.startswith("response body: 1 secret(s) replaced (credential sent)") for line in
               by_cassette[f"corpus/{[f.name for f in FORMS].index('credential sent echoed in the stream'):02d}"])
    assert any("(jwt" in line or "ssemock-jwt" in line for lines in by_cassette.values() for line in lines)
    assert not any(s in line for lines in by_cassette.values() for line in lines for s in every)


def test_no_secret_of_the_corpus_reaches_a_cassette_named_by_fingerprint(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        for form in FORMS:
            _send(rec.url, form, None)  # the file name comes from the request: path words and a digest
    _assert_clean(tmp_path, [s for f in FORMS for s in f.secrets])
    assert len(_written(tmp_path)) > 10


def test_the_command_line_recorder_writes_no_secret_either(tmp_path: Path) -> None:
    picked = [f for f in FORMS if f.name.startswith(("query sig", "header x-api-token", "body password",
                                                     "shape jwt", "credential sent echoed", "telegram",
                                                     "URL password"))]
    with Upstream() as up:
        rec = RecorderProcess(up.url, tmp_path, "--record-mode", "all")
        try:
            for i, form in enumerate(picked):
                _send(rec.url, form, f"cli-{i}")
        finally:
            status, err = rec.finish(signal.SIGTERM)
    assert status == 0, err
    secrets = [s for f in picked for s in f.secrets]
    assert _assert_clean(tmp_path, secrets) == len(picked)
    assert not any(s in err for s in secrets)  # the progress lines name, never show
    assert "query sig" in err and "request header x-api-token" in err and "body password" in err
    assert "GET /any/botREDACTED/sendMessage -> 404" in err  # the path as the cassette holds it


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from([*SHAPES.values(), _escaped(SHAPES["sk-proj"]), _escaped(SHAPES["jwt"], 2)]),
       cuts=st.lists(st.integers(1, 120), max_size=6))
def test_a_key_split_at_any_point_across_reads_is_never_written(tmp_path_factory: Any, key: str,
                                                                 cuts: list[int]) -> None:
    directory = tmp_path_factory.mktemp("split")
    say = f'data: {{"text":"the key {key} ends here"}}\n\n'
    with Upstream() as up, Recorder(up.url, directory, mode="all", cassette="split") as rec:
        live = raw_request(rec.url, "POST", "/split", json.dumps({"say": say, "cuts": cuts}).encode(),
                           {"Content-Type": "application/json"})
    assert live.body == say.encode()  # the client gets the raw bytes
    _assert_clean(directory, [key])
    [interaction] = load(directory / "split.yaml").interactions
    assert interaction.response.body.replace(b"REDACTED", b"") == say.replace(key, "").encode()


@pytest.mark.parametrize("encoding", ["gzip"])
def test_the_gzip_form_is_stored_decoded_and_scrubbed(tmp_path: Path, encoding: str) -> None:
    form = next(f for f in FORMS if f.name == "shape in a gzip answer")
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all", cassette="gz") as rec:
        live = raw_request(rec.url, "POST", form.path, json.dumps(form.body).encode(),
                           {"Content-Type": "application/json"})
    assert gzip.decompress(live.body).count(SHAPES["ghp_"].encode()) == 1  # the client got it as sent
    [interaction] = load(tmp_path / "gz.yaml").interactions
    assert interaction.response.header("content-encoding") is None
    assert b"REDACTED" in interaction.response.body


def test_words_and_allowed_names_from_the_command_line(tmp_path: Path) -> None:
    pin, hint = "Pin-9876-5432-1098", "keep-me-visible-42"
    with Upstream() as up:
        rec = RecorderProcess(up.url, tmp_path, "--record-mode", "all", "--filter-word", "pin",
                              "--allow-name", "X-Session-Hint")
        try:
            _send(rec.url, Form("words", f"/json?card_pin={pin}", [pin], headers={"X-Session-Hint": hint},
                                body={"q": 1}), "words")
        finally:
            status, err = rec.finish(signal.SIGTERM)
    assert status == 0, err
    _assert_clean(tmp_path, [pin])
    [interaction] = load(tmp_path / "words.yaml").interactions
    assert ("X-Session-Hint", hint) in interaction.request.headers
    assert "query card_pin" in err


def test_a_credential_min_length_below_four_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from ssemock.cli import main

    assert main(["record", "--target", "http://127.0.0.1:1", "--port", "0", "--credential-min-length", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssemock: error: ") and err.count("\n") == 1 and "credential min length" in err


def test_a_large_fast_answer_is_relayed_raw_and_written_clean(tmp_path: Path) -> None:
    """24 MiB as fast as the connections go: the part the scan cannot keep up with waits for it
    unscanned after the client's last byte; keys at its start, middle and end (one split across
    two writes) never reach the file, and the progress line counts what was replaced."""
    keys = [SHAPES["ghp_"], SHAPES["sk-proj"], SHAPES["jwt"]]
    filler = "x" * (8 << 20)
    say = f"data: {keys[0]}\n\n{filler}data: {keys[1]}\n\n{filler}{filler[:-100]}data: {keys[2]}\n\n"
    cut = say.index(keys[2]) + len(keys[2]) // 2
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all", cassette="large") as rec:
        live = raw_request(rec.url, "POST", "/split", json.dumps({"say": say, "cuts": [cut]}).encode(),
                           {"Content-Type": "application/json"})
    [listed] = rec.interactions
    assert live.body == say.encode()  # the client gets the raw bytes
    _assert_clean(tmp_path, keys)
    [interaction] = load(tmp_path / "large.yaml").interactions
    expected = say
    for key in keys:
        expected = expected.replace(key, "REDACTED")
    assert interaction.response.body == expected.encode()
    assert listed["bytes"] == len(expected) and "response body: 3 secret(s) replaced" in " ".join(listed["filtered"])


def test_keys_next_to_json_escapes_are_replaced_and_every_stored_line_still_parses(tmp_path: Path) -> None:
    picked = [f for f in FORMS if "after a JSON escape" in f.name or "escaped twice" in f.name]
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        for i, form in enumerate(picked):
            _send(rec.url, form, f"esc-{i:02d}")
    _assert_clean(tmp_path, [s for f in picked for s in f.secrets])
    for i, form in enumerate(picked):
        [interaction] = load(tmp_path / f"esc-{i:02d}.yaml").interactions
        [line] = [x for x in interaction.response.body.decode().splitlines() if x.startswith("data: ")]
        stored = json.loads(line.removeprefix("data: "))  # still JSON: no escape was cut
        sent = json.loads(form.body["say"].strip().removeprefix("data: "))
        key = form.secrets[0]
        if "escaped twice" in form.name:
            # The echoed body is still JSON too, and only the key is gone from it.
            assert json.loads(stored["echo"]) == {"m": f"line\n{REDACTED}"}, form.name
        else:
            content = sent["choices"][0]["delta"]["content"]
            assert stored["choices"][0]["delta"]["content"] == content.replace(key, REDACTED), form.name


# Text that looks like user info or a token without being one: kept byte for byte.
ORDINARY = [
    "http://example.com:8080/", "see http://example.com:8080 or mail admin@example.com", "mailto:ann@example.com",
    "a:b@c in prose", "https://user@host.example/x", "ssh://git@github.com:22/org/repo", "http://[::1]:8080/x",
    "postgres://user:password@localhost/db", "https://USER:${PASSWORD}@host.example", "user:pass@host",
    "x=http://h.example/p?a=b:c@d", "at 12:30:45, id 1699999999:ok", "ratio 123456:A-short-suffix",
]


def test_ordinary_urls_addresses_and_times_are_recorded_as_sent(tmp_path: Path) -> None:
    text = "; ".join(ORDINARY)
    say = f"data: {json.dumps({'text': text})}\n\n"
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="plain") as rec:
        live = raw_request(rec.url, "POST", "/echo?" + "&".join(f"u{i}={quote(o)}" for i, o in enumerate(ORDINARY)),
                           json.dumps({"say": say, "note": text}).encode(), {"Content-Type": "application/json"})
    [listed] = rec.interactions
    assert live.body == say.encode() and listed["filtered"] == []
    [interaction] = load(tmp_path / "plain.yaml").interactions
    assert interaction.request.query == [(f"u{i}", o) for i, o in enumerate(ORDINARY)]
    assert json.loads(interaction.request.body or b"") == {"say": say, "note": text}
    assert interaction.response.body == say.encode()
