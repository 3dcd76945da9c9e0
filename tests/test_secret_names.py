"""Values under credential names, through the real recorder in front of a real local upstream.

Every test sends secrets the way a client really does (a form POST, a multipart upload,
an OAuth token answer, an OpenAI Realtime ``session.created`` event, NDJSON…), checks
that the upstream got them untouched and the client got the upstream's answer
untouched, then reads back every file the recorder wrote (names and bytes) for them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import parse_qsl

import httpx
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette
from ssemock.cassette import load
from ssemock.recorder import Recorder
from ssemock.redact import REDACTED, ChunkScrubber, Filter
from ssemock.sse import decode

from .upstream import SSE_HEADERS, Upstream


class EchoUpstream(Upstream):
    """The fake provider plus: ``/raw`` echoes the raw body (as a JSON string), ``/token`` answers
    an OAuth token, ``/events`` streams :attr:`events` as SSE cut at the request's ``cuts``."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[object] = []

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/raw", self.raw)
        app.router.add_post("/oauth/token", self.token)
        app.router.add_post("/events", self.stream_events)
        return app

    async def raw(self, request: web.Request) -> web.Response:
        body = await self._keep(request)
        return web.json_response({"received": body.decode("utf-8", "replace")})

    async def token(self, request: web.Request) -> web.Response:
        await self._keep(request)
        # RFC 6749 §5.1 successful access token response.
        return web.json_response({"access_token": "OPAQUEACCESS2YhbGciOiJSUzI1", "token_type": "Bearer",
                                  "expires_in": 3600, "refresh_token": "OPAQUEREFRESHtGzv3JOkF0XG5Qx2TlKWIA",
                                  "scope": "read"})

    async def stream_events(self, request: web.Request) -> web.StreamResponse:
        doc = json.loads(await self._keep(request))
        text = "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n" for e in self.events).encode()
        resp = web.StreamResponse(headers=SSE_HEADERS)
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        cuts = sorted({c for c in doc.get("cuts", []) if 0 < c < len(text)})
        for a, b in zip([0, *cuts], [*cuts, len(text)]):
            await resp.write(text[a:b])
            await asyncio.sleep(0.002)  # one read each, most of the time
        await resp.write_eof()
        return resp


def written(directory: Path) -> list[tuple[str, bytes]]:
    """Every file under ``directory``: (path relative to it, bytes)."""
    return [(str(p.relative_to(directory)), p.read_bytes()) for p in sorted(directory.rglob("*")) if p.is_file()]


def assert_nowhere(directory: Path, *secrets: str) -> None:
    files = written(directory)
    assert files, "nothing was written"
    for name, data in files:
        for secret in secrets:
            assert secret not in name, (secret, name)
            assert secret.encode() not in data, (secret, name)


def only_interaction(directory: Path) -> Cassette:
    files = sorted(directory.rglob("*.yaml"))
    assert len(files) == 1, files
    return load(files[0])


def test_form_fields_named_like_credentials_are_redacted_and_their_echo_too(tmp_path: Path) -> None:
    form = {"grant_type": "client_credentials", "client_id": "app-42", "client_secret": "FORMSECRETq7Zx",
            "api_key": "FORMKEY9f8e7d6c", "password": "FORMPW-hunter2!"}
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = httpx.post(f"{rec.url}/raw", data=form)
    sent = dict(parse_qsl(up.received[0]["body"].decode()))
    assert sent == form  # upstream got the real values
    assert dict(parse_qsl(answer.json()["received"])) == form  # and the client the real echo
    assert_nowhere(tmp_path, "FORMSECRETq7Zx", "FORMKEY9f8e7d6c", "FORMPW-hunter2!", "FORMPW-hunter2%21")
    inter = only_interaction(tmp_path).interactions[0]
    stored = dict(parse_qsl((inter.request.body or b"").decode()))
    assert stored == {"grant_type": "client_credentials", "client_id": "app-42", "client_secret": REDACTED,
                      "api_key": REDACTED, "password": REDACTED}


def test_multipart_fields_named_like_credentials_are_redacted_and_their_echo_too(tmp_path: Path) -> None:
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = httpx.post(f"{rec.url}/raw", data={"api_key": "MULTIKEYz8Y7x6W5", "purpose": "fine-tune"},
                            files={"file": ("train.jsonl", b'{"prompt":"hi"}\n', "application/jsonl")})
    assert b"MULTIKEYz8Y7x6W5" in up.received[0]["body"]
    assert "MULTIKEYz8Y7x6W5" in answer.json()["received"]
    assert_nowhere(tmp_path, "MULTIKEYz8Y7x6W5")
    body = only_interaction(tmp_path).interactions[0].request.body or b""
    assert b'name="api_key"\r\n\r\nREDACTED\r\n' in body
    assert b'name="purpose"\r\n\r\nfine-tune\r\n' in body and b'{"prompt":"hi"}' in body


def test_an_oauth_token_answer_keeps_its_shape_without_its_tokens(tmp_path: Path) -> None:
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = httpx.post(f"{rec.url}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": "x" * 12})
    assert answer.json()["access_token"] == "OPAQUEACCESS2YhbGciOiJSUzI1"
    assert_nowhere(tmp_path, "OPAQUEACCESS2YhbGciOiJSUzI1", "OPAQUEREFRESHtGzv3JOkF0XG5Qx2TlKWIA")
    inter = only_interaction(tmp_path).interactions[0]
    body = json.loads(b"".join(c.data for c in inter.response.chunks))
    assert body == {"access_token": REDACTED, "token_type": "Bearer", "expires_in": 3600,
                    "refresh_token": REDACTED, "scope": "read"}


REALTIME = {"type": "session.created", "event_id": "event_1",
            "session": {"id": "sess_001", "object": "realtime.session", "model": "gpt-4o-realtime-preview",
                        "voice": "alloy",
                        "client_secret": {"value": "ek_EPHEMERALabc123XYZ", "expires_at": 1734000000}}}
# Not credentials although named like them: Anthropic's thinking signature, OpenAI's logprobs tokens.
SIGNATURE = {"type": "content_block_delta", "index": 0,
             "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxThinkSig"}}
LOGPROBS = {"choices": [{"index": 0, "delta": {"content": "Hi"},
                         "logprobs": {"content": [{"token": "Hi", "logprob": -0.01, "bytes": [72, 105],
                                                   "top_logprobs": []}]}}]}


# A cut 20 bytes into the signature event: the piece written alone still holds the whole signature pair.
SIGNATURE_CUT = len(f"data: {json.dumps(REALTIME, separators=(',', ':'))}\n\n") + 20


@pytest.mark.parametrize("cuts", [[], [40, 120, 200], list(range(1, 600, 7)), [SIGNATURE_CUT]],
                         ids=["whole", "3-cuts", "every-7", "signature-line-cut"])
def test_sse_data_lines_lose_the_values_under_credential_names_only(cuts: list[int], tmp_path: Path) -> None:
    events = [REALTIME, SIGNATURE, LOGPROBS]
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        up.events = events
        live = httpx.post(f"{rec.url}/events", json={"cuts": cuts})
    assert [json.loads(e.data) for e in decode(live.content)] == events
    assert_nowhere(tmp_path, "ek_EPHEMERALabc123XYZ")
    recorded = b"".join(c.data for c in only_interaction(tmp_path).interactions[0].response.chunks)
    got = [json.loads(e.data) for e in decode(recorded)]
    want = json.loads(json.dumps(events))
    want[0]["session"]["client_secret"]["value"] = REDACTED
    assert got == want


def test_every_duplicate_key_counts_and_each_value_is_a_credential_sent(tmp_path: Path) -> None:
    body = (b'{"api_key":"DUPFIRSTa1b2c3d4","api_key":"DUPSECONDe5f6g7h8",'
            b'"say":"first DUPFIRSTa1b2c3d4 then DUPSECONDe5f6g7h8"}')
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        live = httpx.post(f"{rec.url}/echo", content=body, headers={"Content-Type": "application/json"})
    assert live.text == "first DUPFIRSTa1b2c3d4 then DUPSECONDe5f6g7h8"
    assert_nowhere(tmp_path, "DUPFIRSTa1b2c3d4", "DUPSECONDe5f6g7h8")
    assert up.received


def test_a_schema_keeps_its_shape_but_not_its_values(tmp_path: Path) -> None:
    params = {"credentials": {"type": "string", "value": "SCHEMALOOKq1w2e3", "default": "SCHEMADEFr4t5y6"},
              "secret": {"type": "string", "enum": ["ENUMVALu7i8o9p0"]},
              "password": {"type": "string", "description": "the user's password"},
              "token": {"type": "string", "examples": ["EXAMPLEa1s2d3f4"], "const": "CONSTg5h6j7k8"}}
    say = "SCHEMALOOKq1w2e3 SCHEMADEFr4t5y6 ENUMVALu7i8o9p0 EXAMPLEa1s2d3f4 CONSTg5h6j7k8"
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        httpx.post(f"{rec.url}/echo", json={"tools": [{"parameters": {"properties": params}}], "say": say})
    assert json.loads(up.received[0]["body"])["tools"][0]["parameters"]["properties"] == params
    assert_nowhere(tmp_path, *say.split())
    stored = only_interaction(tmp_path).interactions[0].request.json()["tools"][0]["parameters"]["properties"]
    assert stored == {"credentials": {"type": "string", "value": REDACTED, "default": REDACTED},
                      "secret": {"type": "string", "enum": [REDACTED]},
                      "password": {"type": "string", "description": "the user's password"},
                      "token": {"type": "string", "examples": [REDACTED], "const": REDACTED}}


def test_a_jsessionid_path_parameter_is_kept_out_of_the_path_and_the_file_name(tmp_path: Path) -> None:
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = httpx.get(f"{rec.url}/any/account;jsessionid=JSESSIONa9s8d7f6g5h4")
    assert up.received[0]["path"] == "/any/account;jsessionid=JSESSIONa9s8d7f6g5h4"
    assert answer.status_code == 404 and "JSESSIONa9s8d7f6g5h4" in answer.text
    assert_nowhere(tmp_path, "JSESSIONa9s8d7f6g5h4")
    assert only_interaction(tmp_path).interactions[0].request.path == "/any/account;jsessionid=REDACTED"


@pytest.mark.parametrize("content_type, body, secrets", [
    ("application/x-ndjson",
     b'{"user":"ann","password":"NDJSONPWz1x2c3v4"}\n{"user":"bob","password":"NDJSONPWb5n6m7q8"}\n',
     ["NDJSONPWz1x2c3v4", "NDJSONPWb5n6m7q8"]),
    ("application/json", b'{"model":"gpt-4o","api_key":"BROKENKEYbrokenkey",', ["BROKENKEYbrokenkey"]),  # not JSON
    ("text/plain", b"login user=ann password=PLAINPWplainpw api_key=PLAINKEYplainkey\n",
     ["PLAINPWplainpw", "PLAINKEYplainkey"]),
], ids=["ndjson", "broken-json", "text"])
def test_ndjson_broken_json_and_text_bodies_lose_credential_values(
    content_type: str, body: bytes, secrets: list[str], tmp_path: Path,
) -> None:
    with EchoUpstream() as up, Recorder(up.url, tmp_path) as rec:
        answer = httpx.post(f"{rec.url}/raw", content=body, headers={"Content-Type": content_type})
    assert up.received[0]["body"] == body and answer.json()["received"] == body.decode()
    assert_nowhere(tmp_path, *secrets)


def test_names_that_are_not_credentials_stay_in_answers() -> None:
    text = ('{"usage":{"input_tokens":5,"output_tokens":7},"max_tokens":9,"session_id":"s-1",'
            '"stop_reason":"end_turn","keywords":"monkey business"}')
    assert Filter().text(text) == (text, 0)
    assert Filter().text("data: " + text + "\n\n") == ("data: " + text + "\n\n", 0)


def _events_body(n: int) -> bytes:
    filler = [{"choices": [{"index": 0, "delta": {"content": f"part {i} of the answer\n"}}]} for i in range(n)]
    return "".join(f"data: {json.dumps(e, separators=(',', ':'))}\n\n"
                   for e in [*filler, REALTIME, *filler, SIGNATURE]).encode()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.lists(st.integers(1, 4000), max_size=30), st.sampled_from([64, 700, 1 << 20]))
def test_a_streamed_body_loses_the_value_wherever_reads_and_batches_are_cut(
    filler: int, cuts: list[int], batch: int,
) -> None:
    body = _events_body(filler)
    f = Filter()
    scrubber = ChunkScrubber(f.scan, batch=batch)
    out = []
    points = sorted({c for c in cuts if c < len(body)})
    for i, (a, b) in enumerate(zip([0, *points], [*points, len(body)])):
        out += scrubber.feed(float(i), body[a:b])
    out += scrubber.close()
    kept = b"".join(data for _, data in out)
    assert b"EPHEMERAL" not in kept
    assert kept == f.scrub(body)[0]  # the same as the whole body scrubbed at once
    assert SIGNATURE["delta"]["signature"].encode() in kept  # type: ignore[index]


def test_a_piece_of_a_thinking_or_logprobs_event_keeps_its_signature_and_tokens() -> None:
    # A read cut inside an event is not JSON: the exemptions still hold for what the piece says.
    piece = 'nt_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA"}}\n'
    assert Filter().text(piece) == (piece, 0)
    piece = '"logprobs":{"content":[{"token":"Hello","logprob":-0.01,"bytes":[72'
    assert Filter().text(piece) == (piece, 0)
    assert Filter().text('{"type":"thinking","api_key":"PIECEKEYpiecekey",') == (
        '{"type":"thinking","api_key":"REDACTED",', 1)


def test_team_keys_passcodes_and_one_time_passwords_are_credentials_by_kind(tmp_path: Path) -> None:
    """Honeycomb's ``X-Honeycomb-Team`` (its API key), ``X-Passcode``, ``X-Otp``: dropped from the request and
    replaced where echoed; a ``team`` field or query parameter is data and stays."""
    team, passcode, otp = "hcaik_01hq9ZcorpusTEAMKEY7w3", "passcode-583920-x", "otp-771204-corpus"
    body = {"team": "platform", "mfa": {"otp": otp, "otp_length": 6}, "user": {"passcode": passcode}}
    with EchoUpstream() as up, Recorder(up.url, tmp_path, cassette="kinds") as rec:
        live = httpx.post(f"{rec.url}/raw?team=backend", json=body,
                          headers={"X-Honeycomb-Team": team, "X-Passcode": passcode, "X-Otp": otp})
    [report] = rec.interactions
    assert live.status_code == 200 and json.loads(live.json()["received"]) == body  # untouched upstream and back
    assert {k.lower(): v for k, v in up.received[0]["headers"].items()}["x-honeycomb-team"] == team
    assert_nowhere(tmp_path, team, passcode, otp)
    [interaction] = load(tmp_path / "kinds.yaml").interactions
    assert not {"x-honeycomb-team", "x-passcode", "x-otp"} & {k.lower() for k, _ in interaction.request.headers}
    assert json.loads(interaction.request.body or b"") == {
        "team": "platform", "mfa": {"otp": REDACTED, "otp_length": 6}, "user": {"passcode": REDACTED}}
    assert interaction.request.query == [("team", "backend")]
    for name in ("request header x-honeycomb-team", "request header x-passcode", "request header x-otp",
                 "body mfa.otp", "body user.passcode"):
        assert name in report["filtered"], name
