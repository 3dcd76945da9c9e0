"""Name/value pair objects (HAR's ``{"name", "value"}``, Postman's ``{"key", "value"}``) lose the value of a
credential name, in request and streamed answer bodies, through the real recorder."""

from __future__ import annotations

import json
import secrets
import string
from pathlib import Path

from ssemock.cassette import load
from ssemock.recorder import Recorder
from ssemock.redact import Filter

from .rawclient import raw_json
from .upstream import Upstream


def random_secret() -> str:
    """32 random letters and digits: no key shape, found by its name only."""
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))


def test_the_value_of_a_credential_named_pair_in_a_request_body_is_redacted(tmp_path: Path) -> None:
    har, postman = random_secret(), random_secret()
    payload = {"model": "m", "headers": [
        {"name": "api_key", "value": har},
        {"key": "Authorization", "value": postman},
        {"name": "Accept", "value": "text/event-stream"},
    ]}
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="pairs") as rec:
        live = raw_json(rec.url, "POST", "/json", payload)
    [report] = rec.interactions
    assert live.status == 200
    assert json.loads(up.received[0]["body"]) == payload  # upstream gets the request untouched
    written = (tmp_path / "pairs.yaml").read_text()
    assert har not in written and postman not in written
    body = load(tmp_path / "pairs.yaml").interactions[0].request.body
    assert json.loads(body) == {"model": "m", "headers": [
        {"name": "api_key", "value": "REDACTED"},
        {"key": "Authorization", "value": "REDACTED"},
        {"name": "Accept", "value": "text/event-stream"},
    ]}
    assert "body headers.*.value (name api_key)" in report["filtered"]
    assert "body headers.*.value (key Authorization)" in report["filtered"]


def test_the_value_of_a_credential_named_pair_in_a_streamed_answer_is_redacted(tmp_path: Path) -> None:
    secret = random_secret()
    event = 'data: {"entries":[{"name":"x-api-key","value":"' + secret + '"},{"name":"model","value":"m"}]}\n\n'
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="answer") as rec:
        live = raw_json(rec.url, "POST", "/echo", {"say": event})
    [report] = rec.interactions
    assert live.body == event.encode()  # the client gets the answer untouched
    assert secret not in (tmp_path / "answer.yaml").read_text()
    [interaction] = load(tmp_path / "answer.yaml").interactions
    assert interaction.response.body == event.replace(secret, "REDACTED").encode()
    assert "response body: 1 secret(s) replaced (credential name)" in report["filtered"]


def test_pairs_whose_name_is_no_credential_keep_their_value() -> None:
    body = json.dumps({"headers": [{"name": "max_tokens", "value": "1024"}, {"name": "session_id", "value": "s1"}],
                       "params": [{"name": "q", "value": "weather"}]}).encode()
    clean, lines = Filter().body(body)
    assert json.loads(clean) == json.loads(body) and lines == []
