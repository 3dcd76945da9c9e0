"""The secret filter: names by their words, key shapes (gitleaks catalogue and our own forms), the
credentials a request sent, and bulk scrubbing of a body that arrives in reads."""

from __future__ import annotations

import base64
import itertools
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock.errors import RecorderConfigError
from ssemock.redact import GITLEAKS_COMMIT, REDACTED, Credentials, Filter, is_credential_name
from ssemock.scanner.own_rules import default_scanner
from ssemock.scanner.shapes import load_gitleaks

# Names the issue saw reach disk, and credential names of the providers' own documentation.
CREDENTIAL_NAMES = [
    "apikey", "api-key", "auth", "sig", "X-Amz-Signature", "password", "client_secret", "anthropic-api-key",
    "x-api-token", "X-Auth-Token", "api_key", "Authorization", "Proxy-Authorization", "x-goog-api-key", "Cookie",
    "Set-Cookie", "access_token", "refresh_token", "X-Amz-Security-Token", "X-Amz-Credential", "xApiKey",
    "APIKey", "apiKEY", "passwd", "private_key", "sessionToken", "session", "credentials", "secret", "key",
    "token", "OAuth-Token", "x-session-token", "password_hash",
]
# Words and plurals that are no credential (usage counts, limits, tokenizer settings, pagination...).
PLAIN_NAMES = [
    "max_tokens", "input_tokens", "prompt_tokens", "completion_tokens", "max_output_tokens", "maxOutputTokens",
    "tokenizer", "keywords", "monkey", "author", "authority", "x-ratelimit-remaining-tokens",
    "anthropic-ratelimit-input-tokens-limit", "cache_creation_input_tokens", "budget_tokens", "keyboard",
    "signal", "session_id", "stop_token_ids", "token_count", "key_name", "public_key", "prompt_cache_key",
    "Idempotency-Key", "Access-Control-Allow-Credentials", "thoughtSignature", "progressToken",
    "nextPageToken", "auth_type", "Content-Type", "x-stainless-retry-count", "anthropic-version",
]


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_names_holding_a_credential_word_are_credentials(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plurals_counts_and_descriptions_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


def test_words_and_names_can_be_added_and_allowed() -> None:
    f = Filter(secret_words=frozenset({"PIN"}), allow_names=frozenset({"X-Session-Hint"}))
    assert f.is_secret_name("card_pin") and not Filter().is_secret_name("card_pin")
    assert not f.is_secret_name("x-session-hint") and Filter().is_secret_name("x-session-hint")
    with pytest.raises(RecorderConfigError, match="must not be empty"):
        Filter(secret_words=frozenset({""}))
    with pytest.raises(RecorderConfigError, match="credential min length"):
        Filter(credential_min_length=2)


# Key shapes as the providers document them (values made up, lengths as issued).
KEYS = {
    "openai project": "sk-proj-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7s",
    "openai legacy": "sk-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sWq",
    "anthropic": "sk-ant-api03-Zy8xW6vU4tS2rQ0pO8nM6lK4jI2hG0fE8dC6bA4",
    "google": "AIzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T",
    "groq": "gsk_Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sWq12Er34Ty",
    "xai": "xai-Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sAb3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5o",
    "huggingface": "hf_AbcdefGhijkLmnopQrstUvwxYzabcdEfgh",
    "aws": "AKIAIOSFODNN7EXAMPLQ",
    "github": "ghp_Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5",
    "google oauth": "ya29.a0AfH6SMBx3Zk9Qw-Ab3dE5gH7jK9mN1pQ",
    "perplexity": "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",
    "replicate": "r8_Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQs",
    "slack (catalogue only)": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe (catalogue only)": "sk_live_4eC39HqLyjWDarjtT1zdp7dcAb12",
}


def _escape(key: str, positions: tuple[int, ...]) -> str:
    """``key`` with the characters at ``positions`` written as JSON ``\\u00XX`` escapes."""
    return "".join(f"\\u{ord(c):04x}" if i in positions else c for i, c in enumerate(key))


@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_key_shapes_are_replaced_plain_and_json_escaped(key: str) -> None:
    f = Filter()
    for text in (key, _escape(key, (0,)), _escape(key, (2, 5)), key.replace("/", "\\/"), "\\u0022" + key):
        clean, hits = f.text(f'{{"note": "use {text} here"}}')
        if text != key and "catalogue only" in next(k for k, v in KEYS.items() if v == key):
            continue  # the catalogue's own rules match raw text only
        assert hits == 1 and text not in clean and REDACTED in clean, text
    assert f.text(f"Bearer {key}")[0] == f"Bearer {REDACTED}"


# Every JSON string escape (RFC 8259 section 7), as written in a JSON text, with what it stands for.
JSON_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\r": "\r", "\\r\\n": "\r\n", "\\b": "\b", "\\f": "\f",
                '\\"': '"', "\\\\": "\\", "\\/": "/", "\\u2028": "\u2028", "\\u00e9": "é", "\\u0001": "\x01",
                "\\u0022": '"', "\\u0020": " ", "\\ud83d\\ude00": "\U0001f600"}


@pytest.mark.parametrize("escape", JSON_ESCAPES, ids=[repr(e) for e in JSON_ESCAPES])
@pytest.mark.parametrize("key", KEYS.values(), ids=KEYS.keys())
def test_a_key_next_to_any_json_escape_is_replaced_and_the_line_stays_json(key: str, escape: str) -> None:
    for before, after in ((escape, escape), (escape, " "), (" ", escape), (escape, escape + "next line")):
        line = f'data: {{"c":"Here is a key:{before}{key}{after}"}}'
        clean, hits = Filter().text(line)
        value = json.loads(clean.removeprefix("data: "))["c"]  # still JSON
        assert hits == 1 and key not in value, line
        # Nothing but the key is gone: the escapes around it decode as they did.
        plain = json.loads(line.removeprefix("data: "))["c"]
        assert value == plain.replace(key, REDACTED), line


@pytest.mark.parametrize("key", [v for k, v in KEYS.items() if "catalogue only" not in k])
def test_a_key_whose_characters_are_escaped_twice_is_replaced(key: str) -> None:
    # A JSON body echoed inside a JSON string: "sk\\u002dproj-…" (and "sk\\\\u002d…" a level deeper).
    body = '{"m": "line\\n' + _escape(key, (2, 5)) + '\\tend"}'  # escapes around it escaped twice too
    once = json.dumps({"echo": body})
    twice = json.dumps({"echo": once})
    for line, level in ((once, 1), (twice, 2)):
        clean, hits = Filter().text(line)
        decoded = json.loads(clean)
        for _ in range(level):
            decoded = json.loads(decoded["echo"])
        assert hits == 1 and decoded == {"m": f"line\n{REDACTED}\tend"}, line


CATALOGUE_ONLY = {v for k, v in KEYS.items() if "catalogue only" in k}
def test_a_credential_sent_or_a_user_pattern_never_cuts_a_json_escape() -> None:
    # A value that begins with the letter of an escape ("n" of "\\n") or ends with a backslash.
    line = b'data: {"c":"line\\nopaque-cred-value-1234\\"x\\\\tcorp-123456\\u0022"}'
    clean, rules = Filter(patterns=(r"corp-\d{6}\\u00",)).scrub(line, Credentials(["nopaque-cred-value-1234\\"]))
    assert json.loads(clean.removeprefix(b"data: ")) == {"c": f'line\n{REDACTED}"x\\t{REDACTED}"'}
    assert rules == {"credential sent": 1, "pattern": 1}


KEY_TEXT = st.text(st.characters(codec="utf-8"), max_size=20)
AROUND = st.sampled_from(["\n", "\t", "\r", "\r\n", "\b", "\f", '"', "\\", "/", "\u2028", "\u2029", "\x01", "é",
                          "\U0001f600", " ", "\n\n"])


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(list(KEYS.values())), prefix=KEY_TEXT, suffix=KEY_TEXT, before=AROUND, after=AROUND,
       ascii_only=st.booleans(), escaped_slash=st.booleans())
def test_scrubbing_a_json_string_embedding_a_key_gives_valid_json_without_the_key(
    key: str, prefix: str, suffix: str, before: str, after: str, ascii_only: bool, escaped_slash: bool,
) -> None:
    if key in CATALOGUE_ONLY:  # the catalogue's rules end a key only at a quote, a space or an escape
        ascii_only = escaped_slash = True
    text = prefix + before + key + after + suffix
    encoded = json.dumps(text, ensure_ascii=ascii_only)
    if escaped_slash:
        encoded = encoded.replace("/", "\\/")  # JSON may escape "/" too
    clean, hits = Filter().text(encoded)
    value = json.loads(clean)
    assert hits >= 1 and REDACTED in value
    assert key not in value and key[-8:] not in value.replace(prefix, "").replace(suffix, "")


def test_the_catalogue_is_the_shipped_gitleaks_one_with_its_licence() -> None:
    here = Path(__import__("ssemock.scanner", fromlist=["x"]).__file__).parent
    config = tomllib.loads((here / "gitleaks.toml").read_text())
    assert "MIT License" in (here / "gitleaks-LICENSE").read_text()
    assert len(GITLEAKS_COMMIT) == 40
    rules = load_gitleaks()
    path_bound = [r["id"] for r in config["rules"] if "path" in r or "regex" not in r]
    assert len(rules) == len(config["rules"]) - len(path_bound) > 200
    # A stop word of the catalogue and an allow-listed placeholder are not secrets.
    assert Filter().text('api_key = "your-api-key-here"')[1] == 0


def test_ordinary_text_is_left_alone() -> None:
    text = ("They said the key to the monkey is an API token; access the authority with a password. "
            "task-management-system-design, desk-research-methodology, max_tokens=1024")
    assert Filter().text(text) == (text, 0)


def test_user_additions_json_paths_regexes_headers() -> None:
    f = Filter(request_headers=frozenset({"X-Internal-Thing"}), query_params=frozenset({"tenant"}),
               json_paths=("metadata.user_id", "messages.*.name"), patterns=(r"corp-\d{6}",))
    body = json.dumps({"metadata": {"user_id": "u-42"}, "messages": [{"name": "ann", "content": "id corp-123456"}]})
    clean, report = f.body(body.encode())
    assert json.loads(clean) == {"metadata": {"user_id": REDACTED},
                                 "messages": [{"name": REDACTED, "content": f"id {REDACTED}"}]}
    assert "body metadata.user_id" in report
    redacted = f.request("/v1", [("tenant", "acme-tenant-1"), ("alt", "sse")], [("X-Internal-Thing", "x")], None)
    assert redacted.query == [("alt", "sse")] and redacted.headers == []
    with pytest.raises(RecorderConfigError):
        Filter(patterns=("(unclosed",))
    with pytest.raises(ValueError, match="empty string"):
        Filter(patterns=("x*",))


def test_json_fields_named_like_credentials_are_redacted_at_any_depth_and_schemas_kept() -> None:
    body = {
        "model": "gpt-4o", "max_tokens": 64, "api_key": "corpus-body-api-key-1", "password": "hunter2-corpus",
        "auth": {"type": "bearer", "value": "corpus-nested-auth-value-2"},
        "tools": [{"function": {"parameters": {"properties": {"password": {"type": "string"}}}}}],
        "messages": [{"role": "user", "content": "hi", "thinking": None}],
        "metadata": {"clientSecret": "corpus-client-secret-3", "session_id": "s-1"},
    }
    redacted = Filter().request("/v1/chat", [], [], json.dumps(body).encode())
    doc = json.loads(redacted.body or b"")
    assert doc["api_key"] == doc["password"] == doc["metadata"]["clientSecret"] == REDACTED
    assert doc["auth"] == {"type": REDACTED, "value": REDACTED}
    assert doc["tools"] == body["tools"] and doc["max_tokens"] == 64 and doc["metadata"]["session_id"] == "s-1"
    assert {"corpus-body-api-key-1", "hunter2-corpus", "corpus-nested-auth-value-2",
            "corpus-client-secret-3"} <= redacted.credentials.values
    lines = redacted.report.lines()
    assert "body api_key" in lines and "body metadata.clientSecret" in lines
    assert not any("corpus" in line for line in lines)  # names, never values


def test_the_credentials_sent_are_replaced_wherever_they_appear_whatever_their_shape() -> None:
    basic = base64.b64encode(b"alice:opaque-pass-77").decode()
    redacted = Filter().request(
        "/v1/users/opaque-query-secret-99/profile", [("apikey", "opaque-query-secret-99")],
        [("Authorization", "Bearer opaque-bearer-token-42"), ("Proxy-Authorization", f"Basic {basic}"),
         ("Cookie", "sid=opaque-cookie-value-5; theme=dark")], b"",
    )
    assert redacted.path == f"/v1/users/{REDACTED}/profile"
    creds = redacted.credentials
    answer = (b'data: {"echo": "opaque-bearer-token-42 opaque\\u002dpass-77 opaque-cookie-value-5 '
              b'opaque-query-secret-99 opaque%2Dquery", "theme": "dark"}\n\n')
    clean, rules = Filter().scrub(answer, creds)
    for secret in (b"opaque-bearer-token-42", b"opaque\\u002dpass-77", b"opaque-cookie-value-5",
                   b"opaque-query-secret-99"):
        assert secret not in clean
    assert rules["credential sent"] == 4 and b'"theme": "dark"' in clean
    # Values too short or too common to be searched everywhere are only removed where they were.
    assert not Credentials(["dark", "disabled", "12345"]).values


ESCAPED = [r"sk\u002dproj-Ab3dE5gH7jK9mN1pQ3sT5v", r"\u0041IzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T",
           r"gsk\u005fAb3dE5gH7jK9mN1pQ3sT5vX7", r"hf\\u005fAbcdefGhijkLmnopQrstUvwxYz", r"\u0022"]
PIECES = ["data: ", "hello ", "\n\n", "é", "Bearer ", "-", "\\", "sk", "-----BEGIN PRIVATE KEY-----\n",
          "opaque-sent-credential-77", *(f" {key}" for key in [*KEYS.values(), *ESCAPED]),
          *(f"{escape}{key}" for escape in (r"\n", r"\u2028", r"\t") for key in KEYS.values()), r"\"", r"\n"]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 600), max_size=10), batch=st.sampled_from([1, 7, 64, 1 << 20]))
def test_stream_scrubbing_equals_scrubbing_the_whole_body_however_it_is_split(
    text: str, cuts: list[int], batch: int,
) -> None:
    data = text.encode()
    points = sorted({c for c in cuts if c < len(data)} | {0, len(data)})
    reads = [data[a:b] for a, b in itertools.pairwise(points)]
    creds = Credentials(["opaque-sent-credential-77"])
    scrubber = Filter().scrubber(creds)
    scrubber._batch = batch  # scan after every few bytes too, not only per MiB
    out = []
    for i, piece in enumerate(reads):
        out += scrubber.feed(float(i), piece)
    out += scrubber.close()
    joined = b"".join(d for _, d in out)
    whole, rules = Filter().scrub(data, creds)
    assert joined == whole
    assert scrubber.hits == sum(rules.values())
    assert [t for t, _ in out] == sorted(t for t, _ in out)  # times keep their order
    own = [v for k, v in KEYS.items() if "catalogue only" not in k]  # the catalogue's need a separator after
    for secret in [*own, *ESCAPED[:4], "opaque-sent-credential-77"]:
        assert secret.encode() not in joined


def test_a_key_word_split_over_three_reads_is_still_scrubbed() -> None:
    key = "AIzaSyD4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T"
    reads = [b"-hello A", b"I", b"zaS", key[4:].encode() + b"\n\n"]
    scrubber = Filter().scrubber()
    out = [piece for i, read in enumerate(reads) for piece in scrubber.feed(float(i), read)] + scrubber.close()
    assert b"".join(d for _, d in out) == b"-hello REDACTED\n\n"


def test_the_scanner_reads_a_mebibyte_of_plain_stream_without_a_hit() -> None:
    event = b'data: {"choices":[{"index":0,"delta":{"content":"lorem ipsum dolor sit amet "}}]}\n\n'
    assert default_scanner().find(event * ((1 << 20) // len(event))) == []


TELEGRAM = "7310493582:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"  # made up, in the Bot API's form
USER_INFO = [  # (text, what it must become)
    ("https://alice:Xk92-mPq7v3RtZ@example.com/x", "https://alice:REDACTED@example.com/x"),
    ("postgres://app:s3cr3t@db.internal:5432/prod", "postgres://app:REDACTED@db.internal:5432/prod"),
    ("redis://:Zq8mW3pL0x@cache:6379/0", "redis://:REDACTED@cache:6379/0"),
    ("https://u:p@ss:w0rd@host.example/x", "https://u:REDACTED@host.example/x"),  # the last "@" ends it
    ('{"u":"https:\\/\\/bob:Pw9xQ2mN7z@api.example.com\\/v1"}',
     '{"u":"https:\\/\\/bob:REDACTED@api.example.com\\/v1"}'),
    ("cb=https%3A%2F%2Fcarol%3AhT4%2521kLm9q%40hooks.example.com%2Fx",
     "cb=https%3A%2F%2Fcarol%3AREDACTED%40hooks.example.com%2Fx"),
    (f"/bot{TELEGRAM}/sendMessage", "/botREDACTED/sendMessage"),
    (f'{{"bot_token_here":"{TELEGRAM}"}}', '{"bot_token_here":"REDACTED"}'),
]


@pytest.mark.parametrize(("text", "expected"), USER_INFO)
def test_url_user_info_passwords_and_telegram_bot_tokens_are_replaced(text: str, expected: str) -> None:
    assert Filter().text(text)[0] == expected


def test_the_catalogues_telegram_rule_wants_its_word_and_an_assignment() -> None:
    # Why the path form needs a rule of ours: the catalogue's matches only "TELEGRAM_TOKEN=…"-like text.
    [rule] = [r for r in load_gitleaks() if r.id == "telegram-bot-api-token"]
    assert rule.regex.search(f"TELEGRAM_BOT_TOKEN={TELEGRAM}\n".encode())
    assert not rule.regex.search(f"/bot{TELEGRAM}/sendMessage".encode())
