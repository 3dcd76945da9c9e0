"""Every key shape that starts with a literal prefix (each such rule of the gitleaks catalogue, keys made from
its own regex by tests/keyshapes.py, and ssemock's own forms), followed by punctuation or a non-ASCII character
as prompts, paths, query strings, forms and Markdown write it, in every place a request or its answer carries
text: URL path, query value, request and answer headers, JSON body (plain and escaped), form and multipart
bodies, SSE data (JSON and not), split across reads. Through a real ``ssemock record`` in front of a real local
upstream, no byte of any key reaches a file written or the progress lines; ``ssemock check`` finds each one in
a hand-made cassette; and a request holding a hundred keys leaves RE2 quiet."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import signal
import string
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
import yaml

from ssemock.cli import main

from .keyshapes import prefixed_shapes
from .rawclient import raw_request
from .test_recorder_scale import RecorderProcess
from .test_secrets_corpus import SHAPES
from .upstream import Upstream

# What follows a key in prose, Markdown, paths and query strings; by the places that can carry each.
FOLLOWERS = [".", ",", ")", "]", "}", "/", "?", "&", "#", ">", "*", "`", "|", "!", ":", "%", "@", "+", "é", "。",
             "…", "\n"]
LINE_FOLLOWERS = [f for f in FOLLOWERS if f != "\n"]
ASCII_FOLLOWERS = [f for f in LINE_FOLLOWERS if f.isascii()]
PLACES = ["query", "request header", "JSON body", "JSON body (escaped)", "form body", "multipart body", "URL path",
          "URL path (in parentheses)", "SSE data (JSON)", "SSE data (escaped JSON)", "SSE data (text)",
          "SSE data (split across reads)", "answer header"]


# ssemock's own forms (as the corpus of tests/test_secrets_corpus.py has them), and an Amazon Bedrock short-lived
# API key: its prefix, then base64 of a presigned URL (values made up).
OWN_SHAPES = [*SHAPES.values(), "bedrock-api-key-" + base64.b64encode(
    b"bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="
    b"ASIAZ7Y6X5W4V3U2T1S0%2F20250101%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Expires=43200"
    b"&X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08&Version=1").decode()]


def _variant(key: str, seed: int) -> str:
    """``key`` with its last third replaced by characters of the same kind (upper, lower, digit; others kept)."""
    rng = random.Random(f"{key}/{seed}")
    kinds = (string.ascii_uppercase, string.ascii_lowercase, string.digits)
    cut = len(key) - len(key) // 3
    return key[:cut] + "".join(rng.choice(next((k for k in kinds if c in k), c)) for c in key[cut:])


@dataclass
class KeyMaker:
    """A new key for each place of each shape: catalogue keys from their rule, our own forms by variation."""

    by_shape: dict[int, list[str]] = field(default_factory=dict)

    def __call__(self, shape: int, place: int) -> str:
        key = self._key(shape, place)
        self.by_shape.setdefault(shape, []).append(key)
        return key

    @staticmethod
    @cache
    def _key(shape: int, seed: int) -> str:
        catalogue = prefixed_shapes()
        if shape < len(catalogue):
            return catalogue[shape].key(seed)
        return _variant(OWN_SHAPES[shape - len(catalogue)], seed)

    @property
    def made(self) -> list[str]:
        return [key for keys in self.by_shape.values() for key in keys]

    def leaks(self, content: bytes) -> list[str]:
        """The keys made of which a piece of 12 bytes (or their own part, when shorter) is in ``content``: the part
        after what the keys of the same shape share (its literal prefix: ``dop_v1_``, a rule's name)."""
        pieces: dict[bytes, str] = {}
        short: dict[bytes, str] = {}
        for shape, keys in self.by_shape.items():
            shared = len(os.path.commonprefix([*keys, self._key(shape, 1 << 20)]))  # noqa: RUF071 (a prefix of text)
            for key in keys:
                own = key[shared:].encode()
                if len(own) < 12:
                    short[own] = key
                pieces.update((own[i : i + 12], key) for i in range(len(own) - 11))
        found = {pieces[content[i : i + 12]] for i in range(len(content) - 11) if content[i : i + 12] in pieces}
        found |= {key for own, key in short.items() if own in content}
        return sorted(found)


SHAPE_COUNT = len(prefixed_shapes()) + len(OWN_SHAPES)


def _follower(shape: int, place: int, choices: list[str]) -> str:
    return choices[(shape + 7 * place) % len(choices)]


@dataclass
class Sent:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


def _requests(shape: int, new_key: KeyMaker) -> list[Sent]:
    """Three requests carrying keys of one shape in every place (a new key in each place)."""
    def keyed(place: str, choices: list[str] = FOLLOWERS) -> str:
        i = PLACES.index(place)
        return new_key(shape, i) + _follower(shape, i, choices)

    data = [
        json.dumps({"text": f"Here: {keyed('SSE data (JSON)')} done"}, ensure_ascii=False),
        json.dumps({"text": f"Here: {keyed('SSE data (escaped JSON)')} done"}),
        f"key {keyed('SSE data (text)')} plain",
    ]
    split_key = keyed("SSE data (split across reads)")
    say = "".join(f"data: {line}\n\n" for line in data) + f"data: then **{split_key}** more\n\n"
    at = len(say.encode()) - len(f"{split_key}** more\n\n".encode())
    cut_inside, cut_after = at + len(split_key) // 2, at + len(split_key.encode()) - 1  # before its follower
    header = f"see {keyed('answer header', ASCII_FOLLOWERS)}"
    answer = {"say_hex": say.encode().hex(), "header_hex": header.encode().hex(), "cuts": [cut_inside, cut_after]}
    prompt = {"messages": [{"role": "user", "content": f"My key is {keyed('JSON body')} Thanks"}], **answer}
    body = (json.dumps(prompt, ensure_ascii=False)[:-1] + ', "note": '
            + json.dumps(f"and {keyed('JSON body (escaped)')} too") + "}")  # "\u00e9", "\n": JSON escapes
    boundary = uuid.uuid4().hex
    multipart = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
                 f"see {keyed('multipart body')} ok\r\n--{boundary}--\r\n").encode()
    json_type = {"Content-Type": "application/json"}
    return [
        Sent("POST", "/split?" + urlencode({"note": f"see {keyed('query')}"}),
             {**json_type, "X-Note": f"see {keyed('request header', ASCII_FOLLOWERS)}"},
             body.encode()),
        Sent("POST", quote(f"/any/v1/files/{keyed('URL path', LINE_FOLLOWERS)}content"),
             {"Content-Type": "application/x-www-form-urlencoded"},
             urlencode({"note": f"see {keyed('form body')}", "page": "2"}).encode()),
        Sent("PUT", quote(f"/any/v1/notes/({keyed('URL path (in parentheses)', LINE_FOLLOWERS)})"),
             {"Content-Type": f"multipart/form-data; boundary={boundary}"}, multipart),
    ]


def test_the_corpus_holds_every_prefixed_rule_of_the_catalogue() -> None:
    ids = {s.rule.id for s in prefixed_shapes()}
    # The forms seen leaking before punctuation, among the 108 rules whose key names itself.
    assert {"npm-access-token", "digitalocean-pat", "stripe-access-token", "sendgrid-api-token",
            "vault-service-token", "grafana-service-account-token", "pulumi-api-token",
            "databricks-api-token"} <= ids
    assert len(ids) >= 100
    maker = KeyMaker()
    for shape in range(SHAPE_COUNT):
        _requests(shape, maker)
    assert len(set(maker.made)) == len(maker.made) == SHAPE_COUNT * len(PLACES)  # one new key in each place


def test_no_key_before_punctuation_reaches_a_file_or_the_progress_lines(tmp_path: Path) -> None:
    maker = KeyMaker()
    sent = [(f"s{shape:03d}-{n}", request) for shape in range(SHAPE_COUNT)
            for n, request in enumerate(_requests(shape, maker))]
    with Upstream() as up:
        rec = RecorderProcess(up.url, tmp_path, "--record-mode", "all")
        try:
            def send(item: tuple[str, Sent]) -> int:
                name, r = item
                headers = {"X-SSEMock-Cassette": name, **r.headers}
                return raw_request(rec.url, r.method, r.target, r.body, headers).status

            with ThreadPoolExecutor(4) as pool:
                statuses = list(pool.map(send, sent))
        finally:
            status, err = rec.finish(signal.SIGTERM)
    assert status == 0, err[-2000:]
    assert statuses == [200, 404, 404] * SHAPE_COUNT
    # The upstream got every key as it was sent.
    assert sum(1 for r in up.received if r["headers"].get("X-Note", "").startswith("see ")) == SHAPE_COUNT
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == len(sent)
    for path in files:
        assert maker.leaks(path.read_bytes()) == [], path.name
    assert maker.leaks(err.encode()) == []
    assert err.count("\n") >= len(sent)  # one progress line per request at least
    assert "DFA out of memory" not in err


def _interaction(shape: int, keys: KeyMaker) -> dict[str, object]:
    """A new key of ``shape`` followed by punctuation in each place ``check`` reads."""
    def keyed(place: int, choices: list[str] = ASCII_FOLLOWERS) -> str:
        return keys(shape, place) + _follower(shape, place, choices)

    return {
        "request": {"method": "POST", "path": f"/v1/files/{keyed(0)}content",
                    "query": [["note", f"see {keyed(1)}"]], "headers": {"x-note": f"see {keyed(2)}"},
                    "body": {"text": f"My key is {keyed(3, FOLLOWERS)} ok"}},
        "response": {"status": 200, "headers": {"x-echo": keyed(4)},
                     "chunks": [{"text": f"data: {json.dumps({'text': keyed(5, FOLLOWERS)})}\n\n"}]},
    }


def _cassette(keys: KeyMaker) -> dict[str, object]:
    """One interaction per shape (:func:`_interaction`)."""
    interactions = [_interaction(shape, keys) for shape in range(SHAPE_COUNT)]
    return {"ssemock_cassette": 1, "name": "punctuation", "interactions": interactions}


def test_check_finds_each_key_before_punctuation_in_a_hand_made_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    keys = KeyMaker()
    target = tmp_path / "punctuation.yaml"
    target.write_text(yaml.safe_dump(_cassette(keys), sort_keys=False, allow_unicode=True))
    assert main(["check", str(target)]) == 1
    out = capsys.readouterr().out
    found = {(int(m[1]), m[2]) for m in re.finditer(r"interaction (\d+): ([^:]+): 1 secret \(", out)}
    places = ["request path", "query parameter 'note'", "request header 'x-note'", "request body",
              "response header 'x-echo'", "response body"]
    missing = {(i, p) for i in range(SHAPE_COUNT) for p in places} - found
    assert not missing, sorted(missing)[:20]
    assert keys.leaks(out.encode()) == []


def test_a_request_holding_a_hundred_keys_leaves_re2_quiet_and_the_cassette_clean(tmp_path: Path) -> None:
    """Every key the request held is searched again in its answer (credentials sent): the pattern of 120
    keys stays within RE2's memory budget, so RE2 logs no "DFA out of memory" and misses nothing."""
    maker = KeyMaker()
    keys = [maker(shape % SHAPE_COUNT, 100 + shape) for shape in range(120)]
    say = "".join(f"data: {json.dumps({'text': f'key {k}. ok'})}\n\n" for k in keys)
    with Upstream() as up:
        rec = RecorderProcess(up.url, tmp_path, "--record-mode", "all")
        try:
            live = raw_request(rec.url, "POST", "/split", json.dumps({"say": say, "cuts": [7, 900, 5000]}).encode(),
                               {"Content-Type": "application/json", "X-SSEMock-Cassette": "many"})
        finally:
            status, err = rec.finish(signal.SIGTERM)
    assert status == 0, err[-2000:]
    assert live.body == say.encode()
    assert "DFA out of memory" not in err and "re2.cc" not in err
    written = (tmp_path / "many.yaml").read_bytes()
    assert maker.leaks(written) == []
    assert written.count(b"REDACTED") >= 2 * len(keys)  # in the request body and in the answer
