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


def _variants() -> tuple[list[dict[str, object]], list[dict[str, object]], list[str]]:
    """Name/value pairs as AWS, HAR, Postman and others write them, in any letter case: the pairs with a
    credential name and a random secret, the same with ``REDACTED`` for it, and the secrets."""
    forms: list[tuple[dict[str, object], str]] = [
        ({"name": "api_key"}, "value"),  # HAR
        ({"key": "Authorization"}, "value"),  # Postman
        ({"Name": "api_key"}, "Value"),
        ({"Key": "api_key"}, "Value"),  # AWS tags
        ({"ParameterKey": "DbPassword"}, "ParameterValue"),  # CloudFormation parameters
        ({"Name": "/prod/app/db-password", "Type": "SecureString"}, "Value"),  # SSM PutParameter
        ({"Namespace": "aws:elasticbeanstalk:application:environment", "OptionName": "API_KEY"}, "Value"),
        ({"NAME": "CLIENT_SECRET"}, "VALUE"),
        ({"key": "x-api-key"}, "Value"),
        ({"tag_key": "auth_token"}, "tag_value"),
    ]
    sent, stored, secrets_ = [], [], []
    for members, value in forms:
        secret = random_secret()
        secrets_.append(secret)
        sent.append({**members, value: secret})
        stored.append({**members, value: "REDACTED"})
    return sent, stored, secrets_


# Pairs whose name is no credential: both members stay, though "Key" and "ParameterKey" have a credential word.
HARMLESS = [{"Key": "Environment", "Value": "prod"}, {"ParameterKey": "InstanceType", "ParameterValue": "t3.micro"},
            {"Name": "/prod/app/region", "Value": "eu-west-1", "Type": "String"},
            {"NAME": "LOG_LEVEL", "VALUE": "info"}]


def test_pairs_in_any_letter_case_lose_their_value_and_keep_their_name_in_a_request(tmp_path: Path) -> None:
    sent, stored, secrets_ = _variants()
    payload = {"Tags": sent, "Parameters": HARMLESS, "TagFilters": [{"Key": "password", "Values": [secrets_[0]]}]}
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="aws") as rec:
        live = raw_json(rec.url, "POST", "/json", payload)
    [report] = rec.interactions
    assert live.status == 200 and json.loads(up.received[0]["body"]) == payload
    written = (tmp_path / "aws.yaml").read_text()
    assert not [s for s in secrets_ if s in written]
    body = load(tmp_path / "aws.yaml").interactions[0].request.body
    assert json.loads(body) == {"Tags": stored, "Parameters": HARMLESS,
                                "TagFilters": [{"Key": "password", "Values": ["REDACTED"]}]}
    for line in ("body Tags.*.Value (Key api_key)", "body Tags.*.ParameterValue (ParameterKey DbPassword)",
                 "body Tags.*.Value (Name /prod/app/db-password)", "body Tags.*.VALUE (NAME CLIENT_SECRET)",
                 "body Tags.*.tag_value (tag_key auth_token)", "body TagFilters.*.Values (Key password)"):
        assert line in report["filtered"], line
    assert not [line for line in report["filtered"] if "Environment" in line or "InstanceType" in line]


def test_pairs_in_any_letter_case_lose_their_value_in_a_streamed_answer(tmp_path: Path) -> None:
    sent, stored, secrets_ = _variants()
    events = [f"data: {json.dumps({'Parameters': [pair, *HARMLESS]})}\n\n" for pair in sent]
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="answer") as rec:
        live = raw_json(rec.url, "POST", "/echo", {"say": "".join(events)})
    assert live.body == "".join(events).encode()
    assert not [s for s in secrets_ if s in (tmp_path / "answer.yaml").read_text()]
    [interaction] = load(tmp_path / "answer.yaml").interactions
    body = interaction.response.body.decode()
    lines = [json.loads(line.removeprefix("data: ")) for line in body.split("\n\n") if line]
    assert lines == [{"Parameters": [pair, *HARMLESS]} for pair in stored]


def test_check_finds_the_value_of_a_pair_in_any_case_and_not_its_name() -> None:
    sent, _, _ = _variants()
    found = Filter().scan(json.dumps({"Tags": sent, "Parameters": HARMLESS}).encode())
    assert len(found) == len(sent)
    assert not Filter().scan(json.dumps({"Parameters": HARMLESS}).encode())


def test_a_credential_named_member_beside_a_value_is_a_credential_not_a_pair_name() -> None:
    secret = random_secret()
    clean, lines = Filter().body(json.dumps({"metric": {"api_key": secret, "value": 3}}).encode())
    assert json.loads(clean) == {"metric": {"api_key": "REDACTED", "value": 3}} and lines == ["body metric.api_key"]
