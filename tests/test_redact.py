"""The secret filter: defaults from the recorder issue, user additions, streamed scrubbing, and a corpus
of secrets sent through a real recorder: no secret byte may reach any file written."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock.errors import RecorderConfigError
from ssemock.recorder import Recorder
from ssemock.redact import KEY_PATTERN, REDACTED, Filter

from .rawclient import raw_json, raw_request
from .upstream import Upstream

# The defaults listed in the issue (names, not code constants).
ISSUE_REQUEST_HEADERS = ["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie",
                         "openai-organization", "openai-project"]
ISSUE_RESPONSE_HEADERS = ["set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"]
ISSUE_QUERY = ["key", "api_key", "access_token", "token"]

# Key shapes as the providers document them (values made up).
KEYS = [
    "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s",
    "sk-ant-api03-Zy8xW6vU4tS2rQ0pO8nM6lK4jI2hG0fE8dC6bA4",
    "AIzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T",
    "sk-svcacct-Qw3rTy5uIo7pAs9dFg1hJk3lZx5cVb7nM9",
]


def test_default_names_are_the_ones_the_issue_lists() -> None:
    f = Filter()
    assert set(ISSUE_REQUEST_HEADERS) <= f.secret_request_headers
    assert set(ISSUE_RESPONSE_HEADERS) <= f.secret_response_headers
    assert set(ISSUE_QUERY) <= f.secret_query_params
    kept, dropped = f.pairs([(h.title(), "x") for h in ISSUE_REQUEST_HEADERS] + [("Accept", "*/*")],
                            f.secret_request_headers)
    assert kept == [("Accept", "*/*")] and len(dropped) == len(ISSUE_REQUEST_HEADERS)


@pytest.mark.parametrize("key", [*KEYS, "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig-part", "bearer abcdefghijklmnop"])
def test_key_shaped_strings_are_scrubbed_anywhere(key: str) -> None:
    text, hits = Filter().text(f'{{"note": "use {key} here"}}')
    assert hits == 1 and key not in text and REDACTED in text


def test_user_additions_json_paths_regexes_headers() -> None:
    f = Filter(request_headers=frozenset({"X-Internal-Token"}), query_params=frozenset({"sig"}),
               json_paths=("metadata.user_id", "messages.*.name"), patterns=(r"corp-\d{6}",))
    assert "x-internal-token" in f.secret_request_headers and "sig" in f.secret_query_params
    body = json.dumps({"metadata": {"user_id": "u-42"}, "messages": [{"name": "ann", "content": "id corp-123456"}]})
    clean, report = f.body(body.encode())
    assert json.loads(clean) == {"metadata": {"user_id": REDACTED},
                                 "messages": [{"name": REDACTED, "content": f"id {REDACTED}"}]}
    assert "body metadata.user_id" in report
    with pytest.raises(RecorderConfigError):
        Filter(patterns=("(unclosed",))
    with pytest.raises(ValueError, match="empty string"):
        Filter(patterns=("x*",))


ESCAPED = [r"sk\u002dproj-Ab3dE5gH7jK9mN1pQ3sT5v", r"\u0041IzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T", r"\u0022"]
texts = st.lists(st.sampled_from(["data: ", "hello ", "\n\n", "é", "Bearer ", "-", "\\", *KEYS, *ESCAPED]),
                 max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 400), max_size=8))
def test_stream_scrubbing_equals_scrubbing_the_whole_body_however_it_is_split(text: str, cuts: list[int]) -> None:
    data = text.encode()
    points = sorted({c for c in cuts if c < len(data)} | {0, len(data)})
    reads = [data[a:b] for a, b in itertools.pairwise(points)]
    scrubber = Filter().scrubber()
    out = []
    for i, piece in enumerate(reads):
        out += scrubber.feed(float(i), piece)
    out += scrubber.close()
    joined = b"".join(d for _, d in out)
    assert joined == KEY_PATTERN.sub(REDACTED, text).encode()
    assert [t for t, _ in out] == sorted(t for t, _ in out)  # times keep their order
    assert not any(k.encode() in joined for k in KEYS + ESCAPED[:2])


def test_secrets_corpus_never_reaches_any_written_file(tmp_path: Path) -> None:
    secrets = {
        "authorization": "Bearer sk-proj-Corpus1Authorization0123456789",
        "proxy-authorization": "Basic cHJveHk6c2VjcmV0LXByb3h5LXBhc3M=",
        "x-api-key": "sk-ant-api03-CorpusXApiKey0123456789abcdef",
        "api-key": "azure-corpus-api-key-0f1e2d3c4b5a",
        "x-goog-api-key": "AIzaSyCorpusGoogKey0123456789abcdefghi",
        "cookie": "session=corpus-cookie-value-9a8b7c",
        "openai-organization": "org-CorpusOrganization42",
        "openai-project": "proj_CorpusProject42",
        "x-internal-token": "corpus-internal-token-77",
    }
    query_secrets = {"key": "AIzaSyCorpusQueryKey0123456789abcdefghij", "api_key": "corpus-query-api-key-1",
                     "access_token": "corpus-access-token-2", "token": "corpus-token-3", "sig": "corpus-sig-4"}
    response_secrets = {"Set-Cookie": "__cf_bm=corpus-set-cookie-5; Path=/", "OpenAI-Organization": "org-CorpusResp6",
                        "OpenAI-Project": "proj_CorpusResp7", "Anthropic-Organization-Id": "corpus-anthropic-org-8"}
    prompt_key = "sk-proj-CorpusKeyPastedIntoThePrompt0123"
    echoed_key = "sk-ant-api03-CorpusKeyEchoedInTheStream0123456"
    user_id, badge = "corpus-user-id-9", "corp-314159"
    f = Filter(request_headers=frozenset({"X-Internal-Token"}), query_params=frozenset({"sig"}),
               json_paths=("metadata.user_id",), patterns=(r"corp-\d{6}",))
    query = "&".join(f"{k}={v}" for k, v in query_secrets.items())
    with Upstream() as up:
        up.extra_headers = response_secrets
        with Recorder(up.url, tmp_path, filter=f, mode="all") as rec:
            headers = {k: v for k, v in secrets.items()}
            body = {"metadata": {"user_id": user_id}, "say": f"my key is {prompt_key}, badge {badge}"}
            raw_json(rec.url, "POST", f"/json?{query}", body, headers=headers)
            raw_json(rec.url, "POST", "/echo", {"say": f"data: your key {echoed_key} ok\n\n"}, headers=headers)
            raw_json(rec.url, "POST", "/gzip", {"say": f"gzip {echoed_key}"}, headers=headers)
            raw_request(rec.url, "POST", "/json?alt=sse", b"plain text body with " + prompt_key.encode(),
                        {"Content-Type": "text/plain", **headers})
            report = rec.interactions
    # The real credentials went upstream untouched.
    assert all(r["headers"]["Authorization"] == secrets["authorization"] for r in up.received)
    assert up.received[0]["query"] == query_secrets
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written, "nothing written"
    everything = [*secrets.values(), *query_secrets.values(), *response_secrets.values(), prompt_key, echoed_key,
                  user_id, badge, "corpus-set-cookie-5"]
    for path in written:
        content = path.read_bytes()
        for secret in everything:
            assert secret.encode() not in content, (path.name, secret)
        for key in re.findall(rb"sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}", content):
            pytest.fail(f"key-shaped string {key!r} in {path.name}")
    # What was removed is reported by name, never by value.
    assert any("request header authorization" in f.lower() for f in report[0]["filtered"])
    assert any("query key" in f for f in report[0]["filtered"])
    assert any("response body" in f for f in report[2]["filtered"])


def test_a_key_word_split_over_three_reads_is_still_scrubbed() -> None:
    key = "AIzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T"
    reads = [b"-hello A", b"I", b"zaS", key[4:].encode() + b"\n\n"]
    scrubber = Filter().scrubber()
    out = [piece for i, read in enumerate(reads) for piece in scrubber.feed(float(i), read)] + scrubber.close()
    assert b"".join(d for _, d in out) == b"-hello REDACTED\n\n"
