"""``ssemock drift``: a recording asked again of a local provider whose format changes between runs.

The provider is a real aiohttp server on 127.0.0.1 sending OpenAI chat-completion chunks as OpenRouter
documents them (``: OPENROUTER PROCESSING`` comments, ``data: [DONE]``), with new ids, times and text on
every request; the recording is made by the real recorder from the openai SDK's request; ``ssemock
drift`` runs as its own process, its key read from the environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

from ssemock.bundled import bundled_cassettes as bundled_directory
from ssemock.cassette import Cassette, Chunk, Response, dumps, load, load_cassettes
from ssemock.drift import KINDS, Tier, compare, shape_of
from ssemock.drift.shape import OTHER_LINES
from ssemock.recorder import Recorder
from ssemock.sse import split_blocks

from .upstream import Upstream

KEY = "sk-drift-test-0123456789abcdefghijklmnop"
ROOT = Path(__file__).resolve().parent.parent


class DriftingProvider(Upstream):
    """``POST /v1/chat/completions`` streams; ``renamed`` sends ``delta.text`` for ``delta.content``, ``crlf`` ends
    lines with CRLF, ``first_delay`` seconds pass before the first byte, ``changes`` names more
    (:data:`CHANGES`). ``POST /v1/embeddings`` answers JSON. 401 without ``Bearer KEY``."""

    def __init__(self) -> None:
        super().__init__()
        self.renamed = False
        self.crlf = False
        self.first_delay = 0.0
        self.changes: set[str] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/v1/embeddings", self.embeddings)
        return app

    def _authorized(self, request: web.Request) -> bool:
        self.received.append({"headers": dict(request.headers)})
        return request.headers.get("Authorization") == f"Bearer {KEY}"

    async def chat(self, request: web.Request) -> web.StreamResponse:
        if not self._authorized(request):
            return web.json_response({"error": {"message": "Incorrect API key provided"}}, status=401)
        if "status-500" in self.changes:
            return web.json_response({"error": {"message": "Internal server error", "code": 500}}, status=500)
        if "redirect" in self.changes:  # a login page's redirect, to another host
            return web.Response(status=307, headers={"Location": "https://login.example/sso?next=/v1"})
        if "html" in self.changes:  # a proxy's page in place of the stream
            return web.Response(status=200, text="<html><body>Access denied</body></html>", content_type="text/html")
        if "not-gzip" in self.changes:  # labelled gzip, sent plain: the recorder cannot decode it to scan it
            body = b'data: {"choices": []}\n\ndata: [DONE]\n\n'
            return web.Response(body=body, headers={"Content-Type": "text/event-stream", "Content-Encoding": "gzip"})
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                   "X-Request-Id": f"req_{random.getrandbits(64):x}"}  # fmt: skip
        if "header" in self.changes:
            headers["X-Model-Region"] = "eu-west-1"
        await asyncio.sleep(self.first_delay)
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        end = "\r\n" if self.crlf else "\n"
        ident, created = f"gen-{random.getrandbits(48):x}", int(time.time())
        words = random.sample(["Hello", " there", " dear", " friend", " again", " today"], k=random.randint(2, 5))
        key = "text" if self.renamed else "content"
        if "no-comment" not in self.changes:
            comment = "keep-alive" if "comment-text" in self.changes else "OPENROUTER PROCESSING"
            await response.write(f": {comment}{end}{end}".encode())
        if "ping" in self.changes:
            await response.write(f"event: ping{end}data: {{}}{end}{end}".encode())
        deltas = [{"role": "assistant", key: ""}] + [{key: w} for w in words]
        for delta in deltas:
            chunk = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": "openai/gpt-4o",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            }
            self._change(chunk)
            await response.write(f"data: {json.dumps(chunk)}{end}{end}".encode())
            await asyncio.sleep(0.005)
        last = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": "openai/gpt-4o",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": len(words), "total_tokens": 9 + len(words)},
        }
        self._change(last)
        done = "" if "no-done" in self.changes else f"data: [DONE]{end}{end}"
        await response.write(f"data: {json.dumps(last)}{end}{end}{done}".encode())
        await response.write_eof()
        return response

    def _change(self, chunk: dict[str, Any]) -> None:
        if "created-string" in self.changes:
            chunk["created"] = str(chunk["created"])
        if "finish-reason-gone" in self.changes:
            del chunk["choices"][0]["finish_reason"]
        if "service-tier" in self.changes:
            chunk["service_tier"] = "default"

    async def embeddings(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"error": {"message": "Incorrect API key provided"}}, status=401)
        vector = [random.random() for _ in range(4)]
        return web.json_response(
            {
                "object": "list",
                "model": "text-embedding-3-small",
                "data": [{"object": "embedding", "index": 0, "embedding": vector}],
                "usage": {"prompt_tokens": 2, "total_tokens": 2},
            }
        )


CHANGES = {
    "comment-text": ("cosmetic", "comment-text", "", "'OPENROUTER PROCESSING'", "'keep-alive'", 0),
    "no-comment": ("changed", "comments-gone", "", "'OPENROUTER PROCESSING'", "", 4),
    "header": ("changed", "header-added", "x-model-region", "", "x-model-region", 4),
    "service-tier": ("changed", "key-added", "message: service_tier", "", "string", 4),
    "no-done": ("breaking", "sentinel-gone", "[DONE]", "[DONE]", "", 5),
    "created-string": ("breaking", "type-changed", "message: created", "number", "string", 5),
    "finish-reason-gone": ("breaking", "key-removed", "message: choices[*].finish_reason", "null | string", "", 5),
    "status-500": ("breaking", "status", "", "200", "500", 5),
}
"""A change of the provider's stream -> the one finding it gives on the chat interaction, and the exit status."""


def record(provider: DriftingProvider, directory: Path) -> Path:
    """One cassette, ``chat.yaml``: a streamed chat completion and an embedding, as the openai SDK asks them."""
    with (
        Recorder(provider.url, directory, cassette="chat") as rec,
        openai.OpenAI(base_url=f"{rec.url}/v1", api_key=KEY, max_retries=0) as client,
    ):
        stream = client.chat.completions.create(
            model="openai/gpt-4o", messages=[{"role": "user", "content": "Say hello"}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        client.embeddings.create(model="text-embedding-3-small", input="hi")
    return directory / "chat.yaml"


def drift(*args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    """Run ``ssemock drift ARGS --json`` as a process; its exit status, JSON document and stderr."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "DRIFT_KEY": KEY, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "ssemock", "drift", *args, "--json"],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert KEY not in proc.stdout + proc.stderr  # the key is never printed
    return proc.returncode, json.loads(proc.stdout) if proc.stdout else None, proc.stderr


def bundled_cassettes() -> dict[str, Cassette]:
    return load_cassettes(bundled_directory())


AUTH = "Authorization: Bearer ${DRIFT_KEY}"


def test_an_unchanged_provider_gives_no_finding_and_exit_0(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
        assert provider.received[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert (status, doc["findings"], doc["not_compared"], doc["compared"]) == (0, [], [], 2)


def test_a_renamed_key_and_crlf_are_exactly_two_findings_in_their_tiers(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.renamed = provider.crlf = True
        status, doc, stderr = drift(str(cassette), "--target", provider.url, "--header", AUTH)
    found = [(f["tier"], f["kind"], f["subject"], f["recorded"], f["now"], f["interaction"]) for f in doc["findings"]]
    assert found == [
        (
            "breaking",
            "key-renamed",
            "message: choices[*].delta",
            "choices[*].delta.content",
            "choices[*].delta.text",
            0,
        ),
        ("changed", "line-endings", "", "lf", "crlf", 0),
    ]
    assert (status, doc["worst"], doc["counts"]) == (5, "breaking", {"breaking": 1, "changed": 1, "cosmetic": 0})
    assert "1 breaking, 1 changed, 0 cosmetic; exit 5" in stderr


def test_fail_on_breaking_lets_a_changed_finding_pass(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.crlf = True
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH, "--fail-on", "breaking")
        changed, _, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
    assert [(f["tier"], f["kind"]) for f in doc["findings"]] == [("changed", "line-endings")]
    assert (status, changed) == (0, 4)


def test_update_replaces_the_drifted_recording_and_a_rerun_finds_nothing(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        embedding = load(cassette).interactions[1]
        provider.renamed = provider.crlf = True
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH, "--update")
        assert (status, doc["updated"]) == (5, [str(cassette)])
        again, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
    assert (again, doc["findings"]) == (0, [])
    updated = load(cassette)
    body = updated.interactions[0].response.body
    assert b'"text": ' in body and b'"content": ' not in body and b"\r\n\r\n" in body
    assert updated.interactions[1] == embedding  # the other interaction kept as it was
    assert updated.provenance["drift_updated_interactions"] == [0]
    assert KEY not in cassette.read_text()
    assert not list(tmp_path.glob(".*"))  # no temporary file left


def test_a_provider_that_cannot_be_reached_is_not_compared_exit_1(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        url = provider.url
    status, doc, _ = drift(str(cassette), "--target", url, "--header", AUTH)
    assert (status, doc["compared"], len(doc["not_compared"])) == (1, 0, 2)
    assert doc["not_compared"][0]["error"].startswith(f"not recorded: upstream {url} failed")


def test_a_key_written_on_the_command_line_gets_a_warning_and_is_never_printed(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        status, doc, stderr = drift(str(cassette), "--target", provider.url, "--header", f"Authorization: Bearer {KEY}")
    assert "warning: the value of --header Authorization is visible to other local users" in stderr
    assert (status, doc["findings"]) == (0, [])  # drift() asserts that KEY is in neither output


@pytest.mark.parametrize(
    ("option", "error", "indexes"),
    [
        (["--max-response-size", "200"], "the answer is over 200 bytes: not compared", [0, 1]),
        (["--timeout", "0.5"], "no complete answer within 0.5 s: not compared", [0]),
    ],
)
def test_an_answer_over_its_bound_is_not_compared_exit_1(
    tmp_path: Path, option: list[str], error: str, indexes: list[int]
) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.first_delay = 1.0
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH, *option)
    assert (status, doc["findings"]) == (1, [])
    assert [(n["interaction"], n["error"]) for n in doc["not_compared"]] == [(i, error) for i in indexes]


def test_a_wrong_key_is_a_status_finding_only_and_update_keeps_the_recording(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        before = cassette.read_bytes()
        status, doc, _ = drift(
            str(cassette), "--target", provider.url, "--header", AUTH, "--update",
            env={"DRIFT_KEY": "sk-wrong-key-0123456789abcdef"},
        )  # fmt: skip
    assert [(f["kind"], f["recorded"], f["now"]) for f in doc["findings"]] == [("status", "200", "401")] * 2
    assert (status, doc["updated"], cassette.read_bytes()) == (5, [], before)
    assert [n["reason"] for n in doc["not_updated"]] == [
        "the provider answered 401 now; the recording of a 200 is kept"
    ] * 2


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("redirect", "the provider answered 307 now; the recording of a 200 is kept"),
        ("html", "the answer is no event stream now (Content-Type 'text/html; charset=utf-8'); the recorded "
                 "event stream is kept"),
        ("not-gzip", "the new answer's body was not recorded (Content-Encoding 'gzip' does not decode"),
    ],
)  # fmt: skip
def test_update_keeps_a_stream_that_a_redirect_a_page_or_an_unrecorded_body_would_replace(
    tmp_path: Path, change: str, reason: str
) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        before = cassette.read_bytes()
        provider.changes.add(change)
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH, "--update")
    assert (status, doc["updated"], cassette.read_bytes()) == (5, [], before)
    assert [(n["interaction"], n["reason"][: len(reason)]) for n in doc["not_updated"]] == [(0, reason)]


def test_the_lines_name_each_finding_under_its_tier(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.renamed = provider.crlf = True
        proc = subprocess.run(
            [sys.executable, "-m", "ssemock", "drift", str(cassette), "--target", provider.url, "--header", AUTH],
            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "DRIFT_KEY": KEY}, timeout=120,
        )  # fmt: skip
    where = f"{cassette} #0 POST /v1/chat/completions"
    assert proc.stdout.splitlines() == [
        "breaking (1)",
        f"  {where}: key-renamed message: choices[*].delta: choices[*].delta.content -> choices[*].delta.text",
        "changed (1)",
        f"  {where}: line-endings: lf -> crlf",
    ]
    assert proc.returncode == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--header", "Authorization: Bearer ${NO_SUCH_VARIABLE}"],
            "the environment variable NO_SUCH_VARIABLE is not set",
        ),
        (["--max-interactions", "1"], "2 interactions in 1 cassette file(s), over --max-interactions 1"),
        (["--header", "no colon"], "expected 'NAME: VALUE'"),
        # a length of its own held each request until --timeout (300 s)
        (["--header", "Content-Length: 5"], "--header: Content-Length is a header drift sets itself"),
        (["--header", "X-SSEMock-Cassette: other"], "--header: X-SSEMock-Cassette is a header drift sets itself"),
        (["--target", "http://[::1"], "target 'http://[::1': Invalid IPv6 URL"),
        (["--target", "http://127.0.0.1:99999"], "target 'http://127.0.0.1:99999': Port out of range"),
    ],
)
def test_bad_input_exits_2_naming_the_option(tmp_path: Path, args: list[str], message: str) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text(dumps(bundled_cassettes()["openai-chat-tool-calls-usage"]))  # 2 interactions
    proc = subprocess.run(
        [sys.executable, "-m", "ssemock", "drift", str(cassette), "--target", "http://127.0.0.1:9", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 3  # (argparse: usage, then the error)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_kind_of_change_is_exactly_its_one_finding(tmp_path: Path, change: str) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.changes.add(change)
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
    found = [(f["tier"], f["kind"], f["subject"], f["recorded"], f["now"]) for f in doc["findings"]]
    assert (found, status) == ([CHANGES[change][:5]], CHANGES[change][5])
    assert all(f["interaction"] == 0 for f in doc["findings"])  # the embedding did not change


def test_a_new_event_type_is_a_changed_finding_with_the_field_it_needs(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        cassette = record(provider, tmp_path)
        provider.changes.add("ping")
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
    found = [(f["tier"], f["kind"], f["subject"]) for f in doc["findings"]]
    assert (found, status) == ([("changed", "event-type-new", "ping"), ("changed", "field-added", "event")], 4)


def test_timing_within_the_tolerance_is_cosmetic_and_beyond_it_changed(tmp_path: Path) -> None:
    with DriftingProvider() as provider:
        provider.first_delay = 0.4
        cassette = record(provider, tmp_path)
        provider.first_delay = 1.0  # 0.6 s later: over the 0.25 s floor, within a factor 3
        status, doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH)
        strict, strict_doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH,
                                      "--timing-tolerance", "2")  # fmt: skip
        off, off_doc, _ = drift(str(cassette), "--target", provider.url, "--header", AUTH, "--no-timing")
    assert [(f["tier"], f["kind"], f["subject"]) for f in doc["findings"]] == [
        ("cosmetic", "timing-within", "first byte")
    ]
    assert [(f["tier"], f["kind"]) for f in strict_doc["findings"]] == [("changed", "timing")]
    assert (status, strict, off, off_doc["findings"]) == (0, 4, 0, [])


@pytest.mark.parametrize(
    "name",
    [
        "gemini-streamgeneratecontent-crlf",
        "mcp-deepwiki-ping-comments-crlf",
        "anthropic-messages-thinking",
        "openrouter-chat-keepalive-midstream-error",
        "anthropic-messages-tool-use-gzip",
    ],
)
def test_a_real_recording_has_no_finding_against_itself(name: str) -> None:
    response = bundled_cassettes()[name].interactions[0].response
    assert compare(shape_of(response), shape_of(response)) == []


def test_shapes_of_real_recordings_read_their_documented_framing() -> None:
    cassettes = bundled_cassettes()
    gemini = shape_of(cassettes["gemini-streamgeneratecontent-crlf"].interactions[0].response)
    assert gemini.line_endings == "crlf" and gemini.types == ["message"]
    assert gemini.paths["message"]["candidates[*].content.parts[*].text"] == {"string"}
    anthropic = shape_of(cassettes["anthropic-messages-tool-use-gzip"].interactions[0].response)  # decoded first
    assert anthropic.types[0] == "message_start" and "message_stop" in anthropic.types
    openrouter = shape_of(cassettes["openrouter-chat-keepalive-midstream-error"].interactions[0].response)
    assert "OPENROUTER PROCESSING" in openrouter.comments


def test_every_kind_has_a_tier_and_the_tiers_are_ordered() -> None:
    assert set(KINDS.values()) == set(Tier)
    assert Tier.BREAKING > Tier.CHANGED > Tier.COSMETIC


def _without_blocks(response: Response, prefix: bytes) -> Response:
    """``response`` with the event blocks starting with ``prefix`` left out (one chunk, same timing)."""
    body = b"".join(block for block in split_blocks(response.body) if not block.startswith(prefix))
    return Response(response.status, None, response.headers, [Chunk(0.0, body)], timed=False)


def test_an_event_type_gone_from_a_real_anthropic_stream_is_one_breaking_finding() -> None:
    recorded = bundled_cassettes()["anthropic-messages-thinking"].interactions[0].response
    now = _without_blocks(recorded, b"event: ping")
    assert [(f.tier, f.kind, f.subject) for f in compare(shape_of(recorded), shape_of(now))] == [
        (Tier.BREAKING, "event-type-gone", "ping")
    ]


def test_bare_json_lines_of_a_real_vertex_error_are_other_lines_not_fields() -> None:
    shape = shape_of(bundled_cassettes()["gemini-vertex-error-mid-stream"].interactions[0].response)
    assert shape.fields == {"data", OTHER_LINES}
