"""The conformance matrix on every bundled real recording, read by real clients.

For each semantics- or payload-preserving preset, the events a client sees equal what the
same client sees on the clean replay (type and data, or type and JSON value for the
payload-preserving presets); for our decoder they also equal what a WHATWG parser
dispatches from the recorded bytes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

import ssemock
from ssemock import MockServer
from ssemock.mockserver import collect_cassettes, collect_scenarios

from .sseclients import Seen, Stream, read_with_decoder, read_with_httpx_sse, read_with_node, sse_streams, view

MATRIX = ssemock.conformance_matrix()
PRESETS = collect_scenarios(None)
STREAMS = sse_streams(collect_cassettes(None))


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: MockServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def test_the_matrix_is_the_preserving_presets_of_the_issue() -> None:
    preserving = [
        "split-bytes", "split-random", "split-utf8", "split-crlf", "crlf", "cr", "mixed-eol", "bom",
        "keepalive", "multiline-data", "no-space", "extra-fields", "meta-blocks", "json-separators", "long-lines",
        "split-crlf-multiline", "torture",
        "proxy-rechunk", "buffer-4k", "buffer-16k", "gzip-buffered", "http10", "split-utf8-event-end",
    ]
    assert ssemock.conformance_matrix() == sorted(preserving)
    payloads = ("json-separators", "long-lines", "multiline-data", "split-crlf-multiline", "torture")
    assert {PRESETS[n].preserves for n in payloads} == {"payloads"}


def test_every_bundled_recording_is_covered() -> None:
    covered = {s.cassette for s in STREAMS}
    assert len(covered) == 14 and len(STREAMS) >= 17
    assert all(s.truth() for s in STREAMS), "every stream dispatches events"


CLEAN: dict[tuple[str, Stream], Any] = {}  # what each client saw on the clean replay of each stream
Reader = Callable[[httpx.Client, Stream, "str | None"], Seen]
READERS: dict[str, Reader] = {"decoder": read_with_decoder, "httpx-sse": read_with_httpx_sse}

# Findings: real clients that fail a preserving preset (strict: the test fails when they are fixed).
GENAI_LINES = ("google-genai 3.6.1 ({}): a line that does not start with 'data: ' (with the space) is read as a line of"
               " raw JSON, so {} raises UnknownApiResponseError ('Failed to parse response as JSON')")
FINDINGS = {
    ("bom", "httpx-sse"): "httpx-sse 0.4.3 keeps a leading U+FEFF: the first field name becomes '\ufeffdata'"
                          " or '\ufeffevent', so the first event is lost or loses its type (WHATWG strips one BOM)",
    ("meta-blocks", "httpx-sse"): "httpx-sse 0.4.3 dispatches an event with empty data for a block holding only"
                                  " 'retry:' or 'id:' (WHATWG: no dispatch when the data buffer is empty)",
    ("cr", "node"): "eventsource-parser 3.1.1 holds a final bare CR waiting for an LF and has no end-of-stream"
                    " call, so the last event of a CR-framed stream is never dispatched",
    ("mixed-eol", "node"): "eventsource-parser 3.1.1: as for cr, when the stream's last line end is a bare CR",
    ("bom", "openai"): "openai SDK: its SSE decoder keeps a leading U+FEFF, so the first event is lost",
    ("meta-blocks", "openai"): "openai SDK: a block with only 'retry:' or 'id:' is dispatched with empty data,"
                               " and json.loads('') raises JSONDecodeError out of the stream",
    ("bom", "anthropic"): "anthropic SDK: its SSE decoder keeps a leading U+FEFF, so message_start is lost",
    **{(name, "google-genai"): GENAI_LINES.format(name, trigger) for name, trigger in {
        "bom": "'\ufeffdata: {…}'", "keepalive": "': OPENROUTER PROCESSING'", "extra-fields": "'id: 1'",
        "meta-blocks": "'retry: 3000'", "no-space": "'data:{…}'", "torture": "': OPENROUTER PROCESSING'"}.items()},
}


def cases(*readers: str) -> list[object]:
    """(scenario, reader) parameters; known client failures are strict xfails."""
    out = []
    for reader in readers:
        for name in MATRIX:
            reason = FINDINGS.get((name, reader))
            xfail = pytest.mark.xfail(strict=True, raises=(AssertionError, ValueError), reason=reason)
            marks = [xfail] if reason else []
            out.append(pytest.param(name, reader, marks=marks, id=f"{name}-{reader}"))
    return out


@pytest.mark.parametrize(("scenario", "reader"), cases(*READERS))
def test_python_readers_see_the_clean_events(
    server: MockServer, client: httpx.Client, scenario: str, reader: str
) -> None:
    preserves = PRESETS[scenario].preserves
    for stream in STREAMS:
        if (reader, stream) not in CLEAN:
            server.reset()
            CLEAN[reader, stream] = READERS[reader](client, stream, None)
        clean = CLEAN[reader, stream]
        server.reset()
        got = READERS[reader](client, stream, scenario)
        assert server.requests[0]["scenario"] == scenario and server.requests[0]["outcome"] == "complete"
        assert view(got, preserves) == view(clean, preserves), stream.id
        if reader == "decoder":
            assert clean == stream.truth(), stream.id


@pytest.mark.parametrize(("scenario", "reader"), cases("node"))
def test_node_eventsource_parser_sees_the_clean_events(
    server: MockServer, scenario: str, reader: str, node: str
) -> None:
    preserves = PRESETS[scenario].preserves
    server.reset()
    clean = read_with_node(server.url, STREAMS, None)
    server.reset()
    got = read_with_node(server.url, STREAMS, scenario)
    assert [len(c) for c in clean] == [len(s.truth()) for s in STREAMS]
    for stream, before, after in zip(STREAMS, clean, got):
        assert view(after, preserves) == view(before, preserves), stream.id


# ---- provider SDKs --------------------------------------------------------------------
SDK_DEFAULTS: dict[str, dict[str, Any]] = {
    "/chat/completions": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]},
    "/responses": {"model": "gpt-5", "input": "Hi"},
    "/messages": {"model": "claude-3-7-sonnet-20250219", "max_tokens": 1024,
                  "messages": [{"role": "user", "content": "Hi"}]},
}


def sdk_streams(kind: str) -> list[Stream]:
    return [s for s in STREAMS if s.path.endswith(kind)]


def sdk_outcome(server: MockServer, stream: Stream, scenario: str | None) -> tuple[str, Any, str]:
    """What the provider's SDK makes of the stream: its parsed events and the text it assembles,
    or the exception it raises."""
    kind = next(k for k in SDK_DEFAULTS if stream.path.endswith(k))
    body = json.loads(stream.body) if stream.body else {}
    body.pop("stream", None)
    kwargs = {k: body.pop(k, v) for k, v in SDK_DEFAULTS[kind].items()}
    kwargs.update(stream=True, extra_body=body, extra_headers={k: v for k, v in stream.headers(scenario).items()
                                                                if k.startswith("X-")})
    server.reset()
    try:
        if kind == "/messages":
            with anthropic.Anthropic(base_url=server.url + stream.path[: -len("/v1/messages")], api_key="sk-ant-test",
                                     max_retries=0) as a_client:
                events: list[Any] = list(a_client.messages.create(**kwargs))
            text = "".join(getattr(e.delta, "text", "") or getattr(e.delta, "thinking", "")
                           for e in events if e.type == "content_block_delta")
        else:
            with openai.OpenAI(base_url=server.url + stream.path[: -len(kind)], api_key="sk-test",
                               max_retries=0) as o_client:
                if kind == "/responses":
                    events = list(o_client.responses.create(**kwargs))
                    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
                else:
                    events = list(o_client.chat.completions.create(**kwargs))
                    text = "".join(c.delta.content or "" for e in events for c in e.choices)
    except (openai.OpenAIError, anthropic.AnthropicError) as exc:
        return ("raised", type(exc).__name__, str(exc))
    return ("events", [e.model_dump() for e in events], text)


SDK_STREAMS = {
    "openai": sdk_streams("/chat/completions") + sdk_streams("/responses"),
    "anthropic": sdk_streams("/messages"),
}


@pytest.mark.parametrize(("scenario", "reader"), cases(*SDK_STREAMS))
def test_openai_and_anthropic_sdks_assemble_the_clean_text(server: MockServer, scenario: str, reader: str) -> None:
    streams = SDK_STREAMS[reader]
    assert len(streams) >= 3
    texts = 0
    for stream in streams:
        clean = CLEAN.get((reader, stream)) or CLEAN.setdefault((reader, stream), sdk_outcome(server, stream, None))
        got = sdk_outcome(server, stream, scenario)
        assert got == clean, stream.id
        texts += bool(clean[2])
    assert texts >= 2, "the SDK assembles text from the recordings"


# ---- google-genai: Gemini recordings, each served alone (the SDK writes its own request body) --------------
GEMINI_STREAMS = [s for s in STREAMS
                  if s.path.startswith("/v1beta/models/") and s.path.endswith(":streamGenerateContent")]


@pytest.fixture(scope="module")
def gemini_server() -> Iterator[MockServer]:
    cassettes = collect_cassettes(None)
    alone = [dataclasses.replace(cassettes[s.cassette], name=s.id.replace("#", "-"),
                                 interactions=[cassettes[s.cassette].interactions[s.index]]) for s in GEMINI_STREAMS]
    with MockServer(alone, match_on=("method", "path"), timing_scale=0) as running:
        yield running


def genai_outcome(server: MockServer, stream: Stream, scenario: str | None) -> tuple[str, Any]:
    """The chunks google-genai makes of the stream (its HTTP response left out), or the error it raises."""
    headers = {k: v for k, v in stream.headers(scenario).items() if k.startswith("X-")}
    headers["X-SSEMock-Cassette"] = stream.id.replace("#", "-")
    model = stream.path.removeprefix("/v1beta/models/").removesuffix(":streamGenerateContent")
    options = {"base_url": server.url, "api_version": "v1beta", "headers": headers}
    server.reset()
    with genai.Client(api_key="AIza-test", http_options=options) as client:  # type: ignore[arg-type]
        try:
            return ("chunks", [c.model_dump(mode="json", exclude_none=True, exclude={"sdk_http_response"})
                               for c in client.models.generate_content_stream(model=model, contents="Hi")])
        except (genai_errors.APIError, genai_errors.UnknownApiResponseError) as exc:
            return ("raised", f"{type(exc).__name__}: {str(exc)[:60]}")


@pytest.mark.parametrize(("scenario", "reader"), cases("google-genai"))
def test_google_genai_makes_the_clean_chunks(gemini_server: MockServer, scenario: str, reader: str) -> None:
    assert len(GEMINI_STREAMS) == 3
    for stream in GEMINI_STREAMS:
        clean = CLEAN.get((reader, stream)) or CLEAN.setdefault((reader, stream),
                                                                genai_outcome(gemini_server, stream, None))
        assert clean[0] == "chunks" and clean[1], stream.id
        assert genai_outcome(gemini_server, stream, scenario) == clean, stream.id
        assert gemini_server.requests[0]["outcome"] == "complete"


# ---- one-bug readers: each passes every single preset of the first round, not the combined one -----
def interpret(lines: Iterable[str]) -> Seen:
    """WHATWG field rules on ready-made lines (the event type is reset when an event is dispatched)."""
    seen: Seen = []
    kind, data = "", []
    for line in lines:
        name, _, value = line.partition(":")
        if line == "" and data:
            seen.append((kind or "message", "\n".join(data)))
            kind, data = "", []
        elif name == "data":
            data.append(value.removeprefix(" "))
        elif name == "event":
            kind = value.removeprefix(" ")
    return seen


def read_cr_then_lf_twice(client: httpx.Client, stream: Stream, scenario: str | None) -> Seen:
    """Bug: each read is split at CRLF, CR or LF on its own, so a CR ending one read and the LF
    starting the next are two line ends (an extra blank line)."""
    lines: list[str] = []
    rest = ""
    with client.stream(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario)) as r:
        for text in r.iter_text():
            *done, rest = re.split(r"\r\n|\r|\n", rest + text)
            lines += done
    return interpret([lines[0].removeprefix("\ufeff"), *lines[1:]] if lines else [])


def read_with_splitlines(client: httpx.Client, stream: Stream, scenario: str | None) -> Seen:
    """Bug: the whole body is split with ``str.splitlines()``, which also ends lines at U+2028, U+2029,
    U+0085 (and other characters SSE does not end lines at)."""
    r = client.request(stream.method, stream.path, content=stream.body, headers=stream.headers(scenario))
    return interpret(r.text.removeprefix("\ufeff").splitlines())


ONE_BUG = {"cr-then-lf": read_cr_then_lf_twice, "splitlines": read_with_splitlines}
FIRST_ROUND = [n for n in MATRIX if n not in ("split-crlf-multiline", "torture")]
ONE_BUG_STREAMS = [s for s in STREAMS if s.cassette in (
    "openai-chat-tool-calls-usage", "anthropic-messages-thinking", "gemini-streamgeneratecontent-crlf")]


@pytest.mark.parametrize(("reader", "caught_by"), [
    ("cr-then-lf", ["split-crlf-multiline", "torture"]),
    ("splitlines", ["torture"]),
])
def test_a_one_bug_reader_passes_every_single_preset_but_the_combined_one_catches_it(
    server: MockServer, client: httpx.Client, reader: str, caught_by: list[str]
) -> None:
    assert len({s.cassette.split("-")[0] for s in ONE_BUG_STREAMS}) == 3
    failed: dict[str, list[str]] = {}
    for stream in ONE_BUG_STREAMS:
        clean = ONE_BUG[reader](client, stream, None)
        assert clean == stream.truth(), "the reader is right on the recording as it is"
        for name in MATRIX:
            preserves = PRESETS[name].preserves
            if view(ONE_BUG[reader](client, stream, name), preserves) != view(clean, preserves):
                failed.setdefault(name, []).append(stream.cassette)
    assert not set(FIRST_ROUND) & set(failed), "passes every preset of the first round"
    assert failed == {name: [s.cassette for s in ONE_BUG_STREAMS] for name in caught_by}


IDS_THEN_COMMENTS = "extra-fields,keepalive"  # every event has an id:, a comment block follows it
BLANK_AFTER_ID = ("{} dispatches an event with empty data for the blank line that ends a comment block once an id:"
                  " was seen (it tests the last event ID, which is never reset; WHATWG: no dispatch without data)")


@pytest.mark.parametrize("reader", [
    "decoder",
    pytest.param("httpx-sse", marks=pytest.mark.xfail(strict=True, raises=AssertionError,
                                                      reason=BLANK_AFTER_ID.format("httpx-sse 0.4.3"))),
    pytest.param("openai", marks=pytest.mark.xfail(strict=True, raises=ValueError, reason=BLANK_AFTER_ID.format(
        "the openai SDK") + "; json.loads('') then raises JSONDecodeError out of the stream")),
])
def test_ids_then_keepalive_comments_keep_the_events(server: MockServer, client: httpx.Client, reader: str) -> None:
    """Found by composing two presets: each alone passes; together they break httpx-sse and the openai SDK."""
    stream = next(s for s in STREAMS if s.cassette == "openai-chat-tool-calls-usage")
    if reader == "openai":
        assert sdk_outcome(server, stream, IDS_THEN_COMMENTS) == sdk_outcome(server, stream, None)
    else:
        assert READERS[reader](client, stream, IDS_THEN_COMMENTS) == stream.truth()


def test_the_docs_list_the_google_genai_findings() -> None:
    """docs/how-to/break-a-stream.md's list of real clients that fail a preserving preset names google-genai's,
    as found above."""
    readme = (Path(__file__).parent.parent / "docs/how-to/break-a-stream.md").read_text(encoding="utf-8")
    start = readme.index("Real clients that fail a preserving preset")
    paragraph = readme[start : readme.index("\n\n", start)]
    said = paragraph[paragraph.index("google-genai 3.6.1") :].split(" and passes the other presets")[0]
    found = sorted(name for name, reader in FINDINGS if reader == "google-genai")
    assert sorted(re.findall(r"under (.*?) \(", said.replace("\n", " "))[0].replace(" and", ",").split(", ")) == \
        [f"`{name}`" for name in found]
