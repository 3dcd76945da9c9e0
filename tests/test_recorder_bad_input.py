"""The recorder keeps what it is given, however odd: a JSON body holding a lone surrogate
(valid JSON, escaped as ``\\ud800``), such JSON in a streamed answer's ``data:`` lines and
in a JSON answer, a request header whose bytes are not UTF-8. Each is written to its
cassette (nothing "NOT WRITTEN") and replayed to the same request by a MockServer.
User filter patterns run in linear time (RE2) whatever the input. Real recorder in front
of a real local upstream; real clients."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest

from ssemock import MockServer
from ssemock.cassette import load
from ssemock.errors import RecorderConfigError
from ssemock.recorder import Recorder
from ssemock.redact import Filter

from .rawclient import raw_request
from .upstream import Upstream

LONE = b'{"messages":[{"role":"user","content":"\\ud800 and \\udfff"}],"\\udc00":1}'
LONE_WITH_KEY = b'{"api_key":"k3y-Zx81Qw4Lm0Rt","messages":[{"content":"\\ud83d"}]}'
STREAMED = 'data: {"choices":[{"delta":{"content":"\\ud800"}}]}\n\ndata: [DONE]\n\n'
JSON_ANSWER = '{"choices":[{"message":{"content":"half an emoji: \\ud83d"}}]}'
JSON_HEADERS = {"Content-Type": "application/json"}


def raw_exchange(url: str, request: bytes) -> bytes:
    """Send raw request bytes on one connection (``Connection: close``) and read the whole answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(request.replace(b"HOST", url.removeprefix("http://").encode()))
        data = b""
        while piece := sock.recv(1 << 16):
            data += piece
    return data


def test_lone_surrogates_in_bodies_and_answers_are_recorded_losslessly_and_replayed(tmp_path: Path) -> None:
    progress = io.StringIO()
    say = json.dumps({"say": STREAMED}).encode()  # the upstream streams it back: escapes and all
    answer = json.dumps({"say": JSON_ANSWER}).encode()
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="lone", progress=progress) as rec:
        live = [raw_request(rec.url, "POST", "/json", LONE, JSON_HEADERS),
                raw_request(rec.url, "POST", "/json", LONE_WITH_KEY, JSON_HEADERS),
                raw_request(rec.url, "POST", "/echo", say, JSON_HEADERS),
                raw_request(rec.url, "POST", "/split", answer, JSON_HEADERS)]
        forwarded = [r["body"] for r in up.received]
    assert [r.status for r in live] == [200, 200, 200, 200]
    assert forwarded == [LONE, LONE_WITH_KEY, say, answer]  # the upstream got the bytes sent
    assert live[2].body == STREAMED.encode() and live[3].body == JSON_ANSWER.encode()
    lines = progress.getvalue().splitlines()
    assert len(lines) == 4 and not any("NOT WRITTEN" in line for line in lines), lines

    text = (tmp_path / "lone.yaml").read_text(encoding="utf-8")
    assert "k3y-Zx81Qw4Lm0Rt" not in text
    recorded = load(tmp_path / "lone.yaml").interactions
    assert len(recorded) == 4
    assert recorded[0].request.body == LONE  # kept as its text: byte for byte
    assert json.loads(recorded[1].request.body or b"") == {"api_key": "REDACTED", "messages": [{"content": "\ud83d"}]}
    assert recorded[2].response.body == STREAMED.encode()
    assert recorded[3].response.body == JSON_ANSWER.encode()

    # The same requests (the real key again) replay the recorded answers.
    with MockServer([tmp_path], scenarios=[], timing_scale=0) as server:
        replayed = [raw_request(server.url, "POST", "/json", LONE, JSON_HEADERS),
                    raw_request(server.url, "POST", "/json", LONE_WITH_KEY, JSON_HEADERS),
                    raw_request(server.url, "POST", "/echo", say, JSON_HEADERS),
                    raw_request(server.url, "POST", "/split", answer, JSON_HEADERS)]
    assert [r.status for r in replayed] == [200, 200, 200, 200]
    assert [r.body for r in replayed] == [r.body for r in live]


def test_the_same_json_key_spelled_with_a_lone_surrogate_matches_whatever_its_escape_case(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="case") as rec:
        assert raw_request(rec.url, "POST", "/json", b'{"q":"\\uD800"}', JSON_HEADERS).status == 200
    with MockServer([tmp_path], scenarios=[], timing_scale=0) as server:
        # Another spelling of the same JSON value: matched as JSON, not as bytes.
        again = raw_request(server.url, "POST", "/json", b'{ "q" : "\\ud800" }', JSON_HEADERS)
        other = raw_request(server.url, "POST", "/json", b'{"q":"\\ud801"}', JSON_HEADERS)
    assert again.status == 200 and json.loads(again.body)["id"] == "chatcmpl-1"
    assert other.status == 404 and json.loads(other.body)["error"]["type"] == "ssemock_no_match"


def test_a_request_header_that_is_not_utf8_is_recorded_byte_for_byte_as_latin1(tmp_path: Path) -> None:
    progress = io.StringIO()
    request = (b"POST /json HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nX-Note: caf\xe9 \xff\r\n"
               b"Content-Length: 2\r\nConnection: close\r\n\r\n{}")
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="header", progress=progress) as rec:
        answer = raw_exchange(rec.url, request)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert "NOT WRITTEN" not in progress.getvalue()
    [inter] = load(tmp_path / "header.yaml").interactions
    note = dict(inter.request.headers)["X-Note"]
    assert note.encode("latin-1") == b"caf\xe9 \xff"
    with MockServer([tmp_path], scenarios=[], timing_scale=0) as server:
        assert raw_exchange(server.url, request).startswith(b"HTTP/1.1 200 ")


def test_a_user_pattern_takes_linear_time_on_any_input(tmp_path: Path) -> None:
    # (a+)+$ backtracks 2**n steps on n letters and no end under a backtracking engine (Python's re):
    # with 48 letters the recorder would not answer for days. RE2 answers at once.
    evil = "a" * 48 + "!"
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="p", filter=Filter(patterns=("(a+)+$",))) as rec:
        answer = raw_request(rec.url, "POST", f"/echo?q={'a' * 48}", json.dumps({"say": evil}).encode(),
                             JSON_HEADERS)
        health = raw_request(rec.url, "GET", "/_ssemock/health")
    assert answer.status == 200 and answer.body == evil.encode() and health.status == 200
    [inter] = load(tmp_path / "p.yaml").interactions
    assert inter.request.query == [("q", "REDACTED")]  # the pattern applies: a whole value matched
    assert json.loads(inter.request.body or b"") == {"say": evil} and inter.response.body == evil.encode()
    # The same pattern on 8 MiB of letters without an end.
    big = b"a" * (8 << 20) + b"!"
    assert Filter(patterns=("(a+)+$",)).scrub(big) == (big, {})


@pytest.mark.parametrize("pattern", [r"(sk-\w+)\1", r"key(?=[0-9])", r"(?<=Bearer )\S+", r"(?P<k>x)(?P=k)"])
def test_a_pattern_re2_cannot_take_is_refused_naming_the_option(pattern: str) -> None:
    with pytest.raises(RecorderConfigError, match=r"--filter-regex / Filter\(patterns=\).*RE2.*no backreferences"):
        Filter(patterns=(pattern,))
