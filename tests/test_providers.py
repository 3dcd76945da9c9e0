"""The provider modules: recognition of every bundled recording, environment variables read by the real SDKs,
and error shapes compared with the bundled recordings that contain errors and with what the SDKs parse.

Right answers come from the recordings (``openai-responses-error-insufficient-quota``,
``gemini-vertex-error-mid-stream``, ``openrouter-chat-keepalive-midstream-error``; SOURCES.md), from the
providers' documented error formats (cited in each provider module), and from the SDKs' own parsing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import groq
import httpx
import openai
import pytest
import yaml
from google import genai
from google.genai import errors as genai_errors
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import MockServer, ScenarioError
from ssemock.mockserver import collect_cassettes
from ssemock.plan import Plan
from ssemock.providers import FORMS, NAMES, PROVIDERS, env_vars, provider_for
from ssemock.pytest_plugin import ENV_VARS
from ssemock.scenario import Scenario
from ssemock.scenario.providers import provider_of
from ssemock.sse import Event, decode

from .docs_examples import ROOT, page_blocks

CASSETTES = collect_cassettes(None)

# The provider of each bundled recording, from its provenance (host, SDK, source repository).
EXPECTED = {
    "alibaba-qwen-chat-emoji-split": ["openai-chat"],  # DashScope's OpenAI-compatible mode
    "anthropic-messages-max-tokens-partial-json": ["anthropic"],
    "anthropic-messages-thinking": ["anthropic"],
    "anthropic-messages-tool-use-gzip": ["anthropic"],
    "gemini-streamgeneratecontent-crlf": ["gemini"],
    "gemini-streamgeneratecontent-tool-call-thought-signature": ["gemini"] * 2,
    "gemini-vertex-error-mid-stream": ["gemini"],
    # an MCP server (generic) and the OpenAI chat calls of the agent that used it
    "mcp-deepwiki-ping-comments-crlf": ["generic"] * 3 + ["openai-chat"] + ["generic"] * 4 + ["openai-chat"],
    "openai-chat-finish-length-usage": ["openai-chat"],
    "openai-chat-tool-calls-usage": ["openai-chat"] * 2,
    "openai-responses-error-insufficient-quota": ["openai-responses"],
    "openai-responses-function-call": ["openai-responses"] * 2,
    "openrouter-chat-keepalive-midstream-error": ["openrouter"],
    # GET /api/v1/models, then two POST /api/v1/responses (OpenRouter's copy of the Responses API)
    "openrouter-responses-empty-comment-tool-calls": ["openrouter", "openai-responses", "openai-responses"],
}


def test_every_bundled_recording_is_listed() -> None:
    assert set(EXPECTED) == set(CASSETTES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recognised_from_the_recorded_request(name: str) -> None:
    found = [provider_for(i.request.path, (i.request.body or b"")[:4096].decode("utf-8", "replace")).name
             for i in CASSETTES[name].interactions]
    assert found == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recognised_from_the_response_without_the_path(name: str) -> None:
    """What ``provider: auto`` falls back on: the first payloads of a stream, when the path tells nothing."""
    for interaction, expected in zip(CASSETTES[name].interactions, EXPECTED[name], strict=True):
        head = interaction.response.body[:4096].decode("utf-8", "replace")
        kind = dict((k.lower(), v) for k, v in interaction.response.headers).get("content-type", "")
        if "event-stream" not in kind or b"\x1f\x8b" in interaction.response.body[:2]:
            continue  # a JSON answer or a gzip body: the path decides
        assert provider_for("/", head).name == expected
        plan = Plan.of(interaction.response, request=interaction.request)
        assert provider_of(plan).name == expected


@pytest.mark.parametrize(("path", "body", "expected"), [
    ("/openai/v1/chat/completions", '{"model": "llama-3.3-70b-versatile"}', "groq"),  # api.groq.com/openai/v1
    # Azure OpenAI's v1 API shares Groq's path; its first chunk carries prompt_filter_results
    ("/openai/v1/chat/completions", 'data: {"choices":[],"prompt_filter_results":[{"prompt_index":0}]}',
     "openai-chat"),
    ("/openai/deployments/gpt-4o/chat/completions", "", "openai-chat"),  # Azure's deployment path
    ("/v1/chat/completions", '{"model": "mistral-small-latest", "messages": []}', "mistral"),
    ("/v1/chat/completions", '{"model": "gpt-4o", "messages": []}', "openai-chat"),
    ("/v1/fim/completions", '{"model": "codestral-latest"}', "mistral"),
    ("/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4:streamRawPredict", "",
     "anthropic"),
    ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "", "gemini"),
])
def test_recognised_paths_of_providers_without_a_recording(path: str, body: str, expected: str) -> None:
    assert provider_for(path, body).name == expected


def test_registry_names_and_fallback() -> None:
    assert tuple(p.name for p in PROVIDERS) == NAMES
    assert set(NAMES) == {"openai-chat", "openai-responses", "anthropic", "gemini", "openrouter", "groq", "mistral",
                          "generic"}
    assert NAMES[-1] == "generic" and provider_for("/anything", "").name == "generic"


# ---- environment variables ------------------------------------------------------------------------------------
def test_env_vars_are_the_sdks_own_names() -> None:
    # openai / anthropic / groq SDKs read <NAME>_BASE_URL and <NAME>_API_KEY; google-genai reads
    # GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (google/genai/_base_url.py, _api_client.py).
    assert env_vars() == ENV_VARS
    assert {k: v for k, v in ENV_VARS.items() if "BASE_URL" in k} == {
        "OPENAI_BASE_URL": "{url}/v1", "ANTHROPIC_BASE_URL": "{url}", "GOOGLE_GEMINI_BASE_URL": "{url}",
        "GROQ_BASE_URL": "{url}"}
    assert {k for k in ENV_VARS if k.endswith("_API_KEY")} == {"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                                                               "GEMINI_API_KEY", "GROQ_API_KEY"}


def gemini_text(name: str) -> str:
    """The text of a Gemini recording's events, read with ssemock's WHATWG decoder."""
    body = CASSETTES[name].interactions[0].response.body
    parts = [p for e in decode(body) if isinstance(e, Event) and e.data.startswith("{")
             for c in json.loads(e.data).get("candidates", []) for p in c["content"]["parts"]]
    return "".join(p.get("text", "") for p in parts)


@pytest.mark.ssemock(cassette="gemini-streamgeneratecontent-crlf")
def test_ssemock_env_points_google_genai_at_the_fake_provider(ssemock_env: dict[str, str], ssemock: Any) -> None:
    assert ssemock_env["GOOGLE_GEMINI_BASE_URL"] == ssemock.url
    with genai.Client(http_options={"api_version": "v1beta"}) as client:  # base URL and key: the environment
        stream = client.models.generate_content_stream(model="gemini-2.0-flash-exp", contents="Hi")
        assert "".join(chunk.text or "" for chunk in stream) == gemini_text("gemini-streamgeneratecontent-crlf")
    ssemock.assert_requests(count=1, path="/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent")


def chat_text(name: str) -> str:
    """The text of an OpenAI chat recording's chunks, read with ssemock's WHATWG decoder."""
    body = CASSETTES[name].interactions[0].response.body
    chunks = [json.loads(e.data) for e in decode(body) if isinstance(e, Event) and e.data.startswith("{")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def test_groq_sdk_reads_the_environment_and_the_groq_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "groq-429.yaml").write_text("steps:\n- error-mid-stream: {provider: groq, status: 429}\n")
    chat = "openai-chat-finish-length-usage"
    # Groq answers on /openai/v1/…: matched on the method only, the cassette header picks the recording
    with MockServer(scenarios=[tmp_path], timing_scale=0, match_on=["method"]) as server:
        for name, value in ENV_VARS.items():  # what ssemock_env sets
            monkeypatch.setenv(name, value.format(url=server.url))
        with groq.Groq(max_retries=0) as client:
            def ask(**headers: str) -> list[Any]:
                return list(client.chat.completions.create(
                    model="llama-3.3-70b-versatile", messages=[{"role": "user", "content": "Hi"}], stream=True,
                    extra_headers={"X-SSEMock-Cassette": chat, **headers}))

            chunks = ask()
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == chat_text(chat)
            assert server.requests[0]["path"] == "/openai/v1/chat/completions"
            with pytest.raises(groq.APIError) as caught:
                ask(**{"X-SSEMock-Scenario": "groq-429"})
    assert caught.value.body == {"message": "The server had an error while processing your request.",
                                 "type": "tokens", "code": "rate_limit_exceeded"}


# ---- error shapes against the recordings ----------------------------------------------------------------------
def replay(name: str, steps: list[dict[str, Any]], index: int = 0) -> bytes:
    interaction = CASSETTES[name].interactions[index]
    plan = Plan.of(interaction.response, request=interaction.request)
    Scenario.from_dict({"steps": steps}).apply(plan)
    return plan.response.body


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (``error.code``, ``choices[].delta.role``)."""
    if isinstance(value, dict):
        out = set()
        for key, item in value.items():
            out |= {f"{prefix}{key}"} | key_paths(item, f"{prefix}{key}.")
        return out
    if isinstance(value, list):
        return set().union(*(key_paths(item, prefix[:-1] + "[].") for item in value)) if value else set()
    return set()


def payloads(body: bytes) -> list[tuple[str, Any]]:
    return [(e.type, json.loads(e.data)) for e in decode(body) if isinstance(e, Event) and e.data.startswith("{")]


def test_openai_responses_error_rebuilds_the_recording_byte_for_byte() -> None:
    name = "openai-responses-error-insufficient-quota"
    recorded = CASSETTES[name].interactions[0].response.body
    error = payloads(recorded)[2][1]["error"]
    body = replay(name, [{"error-mid-stream": {"after_events": 2, "message": error["message"],
                                               "type": "insufficient_quota", "code": "insufficient_quota"}}])
    assert body == recorded


def test_openai_responses_default_error_has_the_recorded_keys() -> None:
    name = "openai-responses-error-insufficient-quota"
    recorded = payloads(CASSETTES[name].interactions[0].response.body)
    ours = payloads(replay("openai-responses-function-call", [{"error-mid-stream": {"after_events": 2}}]))
    assert [t for t, _ in ours[2:]] == [t for t, _ in recorded[2:]] == ["error", "response.failed"]
    assert key_paths(ours[2][1]) == key_paths(recorded[2][1])
    assert key_paths(ours[3][1]["response"]["error"]) == key_paths(recorded[3][1]["response"]["error"])
    assert ours[3][1]["sequence_number"] == ours[2][1]["sequence_number"] + 1


def test_gemini_error_rebuilds_the_vertex_recording_byte_for_byte() -> None:
    name = "gemini-vertex-error-mid-stream"
    recorded = CASSETTES[name].interactions[0].response.body
    error = json.loads(recorded.split(b"\n\n")[2])["error"]
    body = replay(name, [{"error-mid-stream": {"after_events": 2, "code": 499, "type": "CANCELLED",
                                               "message": error["message"], "extra": {"details": error["details"]}}}])
    assert body == recorded


def test_gemini_default_error_has_the_recorded_keys_but_the_optional_details() -> None:
    recorded = json.loads(CASSETTES["gemini-vertex-error-mid-stream"].interactions[0].response.body.split(b"\n\n")[2])
    body = replay("gemini-streamgeneratecontent-crlf", [{"error-mid-stream": {}}])
    ours = json.loads(body.split(b"\r\n\r\n")[1])
    # google.rpc.Status: details is a repeated field, absent when empty
    assert key_paths(recorded) - key_paths(ours) == {"error.details", "error.details[].@type", "error.details[].detail"}
    assert key_paths(ours) < key_paths(recorded)
    assert ours["error"]["code"] == 503 and ours["error"]["status"] == "UNAVAILABLE"


def test_openrouter_error_chunk_has_the_recorded_keys() -> None:
    name = "openrouter-chat-keepalive-midstream-error"
    recorded = payloads(CASSETTES[name].interactions[0].response.body)[-1][1]
    body = replay(name, [{"error-mid-stream": {"after_events": 3, "code": 400, "message": "Token limit reached"}}])
    events = [e.data for e in decode(body) if isinstance(e, Event)]
    ours = json.loads(events[-2])
    assert events[-1] == "[DONE]"
    assert ours["error"] == recorded["error"] == {"code": 400, "message": "Token limit reached"}
    assert list(ours) == [k for k in recorded if k != "usage"]  # same keys, same order; usage: see below
    # the recorded error chunk also reports the usage so far, which a replay cannot know
    assert key_paths(recorded) - key_paths(ours) == {p for p in key_paths(recorded) if p.startswith("usage")}
    assert ours["choices"][0]["finish_reason"] == "error"  # OpenRouter docs; the recording has null


def test_openrouter_error_without_choices() -> None:
    body = replay("openrouter-chat-keepalive-midstream-error", [{"error-mid-stream": {"code": 429, "choices": False}}])
    error = json.loads([e.data for e in decode(body) if isinstance(e, Event)][-2])
    assert "choices" not in error and error["error"]["code"] == 429 and error["object"] == "chat.completion.chunk"


# ---- HTTP errors, as the SDKs read them -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(timing_scale=0) as running:
        yield running


@pytest.fixture(scope="module")
def rate_limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockServer]:
    """A server whose scenario ``rate-limited`` is ``http-error: {status: 429}`` (the provider's own body)."""
    folder: Path = tmp_path_factory.mktemp("scenarios")
    for provider in ("auto", "groq", "mistral"):
        name = "rate-limited" if provider == "auto" else f"rate-limited-{provider}"
        (folder / f"{name}.yaml").write_text(
            f"steps:\n- http-error: {{status: 429, provider: {provider}, headers: {{retry-after: '1'}}}}\n")
    with MockServer(scenarios=[folder], timing_scale=0) as running:
        yield running


def headers(cassette: str, scenario: str = "rate-limited") -> dict[str, str]:
    return {"X-SSEMock-Cassette": cassette, "X-SSEMock-Scenario": scenario}


def test_http_429_openai_chat_and_responses(rate_limited: MockServer) -> None:
    with openai.OpenAI(base_url=rate_limited.url + "/v1", api_key="sk-test", max_retries=0) as client:
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}], stream=True,
                                           extra_headers=headers("openai-chat-tool-calls-usage"))
        # OpenAI's 429: type "requests", code "rate_limit_exceeded" (API reference, "Error codes")
        assert caught.value.code == "rate_limit_exceeded" and caught.value.type == "requests"
        with pytest.raises(openai.RateLimitError) as caught:
            client.responses.create(model="gpt-5", input="Hi", stream=True,
                                    extra_headers=headers("openai-responses-function-call"))
        # the message of OpenAI's 429 ("Error codes": "429 - Rate limit reached for requests")
        assert caught.value.body == {"message": "Rate limit reached for requests.", "type": "requests", "param": None,
                                     "code": "rate_limit_exceeded"}


def test_http_429_anthropic(rate_limited: MockServer) -> None:
    with anthropic.Anthropic(base_url=rate_limited.url, api_key="sk-ant-test", max_retries=0) as client, \
            pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(model="claude-sonnet-4-0", max_tokens=64, stream=True,
                               messages=[{"role": "user", "content": "Hi"}],
                               extra_headers=headers("anthropic-messages-thinking"))
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error" and body["request_id"].startswith("req_")
    # Anthropic docs, "Errors": 429 rate_limit_error, "Your account has hit a rate limit."
    assert body["error"] == {"type": "rate_limit_error", "message": "Your account has hit a rate limit."}


def test_http_429_gemini(rate_limited: MockServer) -> None:
    options = {"base_url": rate_limited.url, "api_version": "v1beta", "retry_options": {"attempts": 1},
               "headers": headers("gemini-streamgeneratecontent-crlf")}
    with genai.Client(api_key="AIza-test", http_options=options) as client, \
            pytest.raises(genai_errors.ClientError) as caught:
        list(client.models.generate_content_stream(model="gemini-2.0-flash-exp", contents="Hi"))
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")  # Google's own message


def test_http_429_openrouter_has_a_numeric_code(rate_limited: MockServer) -> None:
    with openai.OpenAI(base_url=rate_limited.url + "/api/v1", api_key="sk-or-v1-test", max_retries=0) as client, \
            pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="x/y", messages=[{"role": "user", "content": "Hi"}], stream=True,
                                       extra_headers=headers("openrouter-chat-keepalive-midstream-error"))
    assert caught.value.body == {"code": 429, "message": "Too Many Requests"}  # OpenRouter docs: code is a number
    assert caught.value.code == "429"  # the openai SDK turns it into a string


@pytest.mark.parametrize(("provider", "expected"), [
    # Groq docs, "Errors": {"error": {"message", "type", "code"}}, 429 type "tokens" (or "requests")
    ("groq", {"error": {"message": "Too Many Requests", "type": "tokens", "code": "rate_limit_exceeded"}}),
    # Mistral: a flat object, code a string of digits
    ("mistral",
     {"object": "error", "message": "Too Many Requests", "type": "rate_limited", "param": None, "code": "1300"}),
])
def test_http_429_groq_and_mistral(rate_limited: MockServer, provider: str, expected: Any) -> None:
    """No recording of either: the provider is named (``auto`` reads the recording the reply comes from)."""
    response = httpx.post(rate_limited.url + "/v1/chat/completions", json={"model": "m", "messages": []},
                          headers=headers("openai-chat-tool-calls-usage", f"rate-limited-{provider}"))
    assert response.status_code == 429 and response.headers["retry-after"] == "1"
    assert response.json() == expected


# ---- fields: named errors, bounds -----------------------------------------------------------------------------
@pytest.mark.parametrize(("step", "field", "expected"), [
    ({"error-mid-stream": {"code": 4.5}}, "error-mid-stream.code", "a string of at most 256 characters, an integer"),
    ({"error-mid-stream": {"code": 2**53}}, "error-mid-stream.code", "an integer below 2**53 in size"),
    ({"error-mid-stream": {"code": "x" * 257}}, "error-mid-stream.code", "a string of at most 256 characters"),
    ({"error-mid-stream": {"type": ""}}, "error-mid-stream.type", "a non-empty string of at most 256 characters"),
    ({"error-mid-stream": {"message": "m" * 65_537}}, "error-mid-stream.message", "at most 65536 characters"),
    ({"error-mid-stream": {"status": 600}}, "error-mid-stream.status", "an HTTP status code 100-599"),
    ({"error-mid-stream": {"form": "xml"}}, "error-mid-stream.form", "one of sse | json"),
    ({"error-mid-stream": {"choices": "no"}}, "error-mid-stream.choices", "true or false"),
    ({"error-mid-stream": {"provider": "azure"}}, "error-mid-stream.provider", "one of auto | openrouter"),
    ({"error-mid-stream": {"extra": ["details"]}}, "error-mid-stream.extra", "a mapping of field names to JSON"),
    ({"error-mid-stream": {"extra": {"a": "x" * 65_536}}}, "error-mid-stream.extra", "at most 65536 bytes"),
    ({"http-error": {"json": {"error": 1}, "code": 429}}, "http-error.code", "either a json or text body, or the"),
    ({"http-error": {"text": "busy", "provider": "gemini"}}, "http-error.provider", "either a json or text body"),
])
def test_error_fields_are_checked(step: dict[str, Any], field: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        Scenario.from_dict({"steps": [step]}, source="errors.yaml")
    assert caught.value.file == "errors.yaml" and caught.value.field == f"steps[0].{field}"
    assert expected in caught.value.expected


def test_describe_leaves_out_the_provider_defaults() -> None:
    steps = [{"error-mid-stream": {"code": 429, "choices": False}}, {"http-error": {"status": 503, "type": "x"}}]
    described = Scenario.from_dict({"steps": steps}).describe()["steps"]
    assert described[0]["error-mid-stream"] == {"after_events": 1, "provider": "auto", "code": 429, "choices": False,
                                                "message": "The server had an error while processing your request."}
    assert Scenario.from_dict({"steps": described}).describe()["steps"] == described
    assert "code" not in described[1]["http-error"] and described[1]["http-error"]["type"] == "x"


# ---- the docs' examples ----------------------------------------------------------------------------------------
def test_the_provider_errors_examples_of_the_docs_send_what_they_say() -> None:
    """docs/how-to/break-a-stream.md, *Provider errors*: its table has one row per provider, and its three
    scenario files send the error their comments describe."""
    text = (ROOT / "docs/how-to/break-a-stream.md").read_text(encoding="utf-8")
    assert sorted(re.findall(r"^\| `([a-z-]+)` \|", text, re.M)) == sorted(NAMES), "one row per provider"
    examples = page_blocks("docs/how-to/break-a-stream.md", "yaml")
    openrouter_style, gemini_style, http = (yaml.safe_load(example)["steps"] for example in examples)

    chunk = json.loads([e.data for e in decode(replay("openai-chat-tool-calls-usage", openrouter_style))
                        if isinstance(e, Event)][-2])
    assert chunk["error"]["code"] == 429 and "choices" not in chunk

    body = replay("gemini-streamgeneratecontent-crlf", gemini_style)
    assert json.loads(body.split(b"\r\n\r\n")[1])["error"] == {
        "code": 429, "message": "The server had an error while processing your request.",
        "status": "RESOURCE_EXHAUSTED"}

    interaction = CASSETTES["anthropic-messages-thinking"].interactions[0]
    plan = Plan.of(interaction.response, request=interaction.request)
    Scenario.from_dict({"steps": http}).apply(plan)
    assert plan.response.status == 429 and ("retry-after", "2") in plan.response.headers
    assert json.loads(plan.response.body)["error"] == {"type": "rate_limit_error",
                                                       "message": "Your account has hit a rate limit."}



# ---- property: what a step asks for is what the client reads ---------------------------------------------------
def _error_objects(value: Any, message: str) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if value.get("message") == message:
            yield value
        for item in value.values():
            yield from _error_objects(item, message)
    elif isinstance(value, list):
        for item in value:
            yield from _error_objects(item, message)


@settings(max_examples=150, deadline=None)
@given(provider=st.sampled_from(NAMES), form=st.sampled_from(FORMS), message=st.text(min_size=1, max_size=40),
       code=st.one_of(st.none(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=20)),
       kind=st.text(min_size=1, max_size=20))
def test_any_message_code_and_type_arrive_unchanged(provider: str, form: str, message: str, code: Any,
                                                     kind: str) -> None:
    recorded = CASSETTES["openai-chat-finish-length-usage"].interactions[0].response.body
    first = recorded[: recorded.index(b"\n\n") + 2]
    step = {"provider": provider, "form": form, "message": message, "code": code, "type": kind}
    body = replay("openai-chat-finish-length-usage", [{"error-mid-stream": step}])
    assert body.startswith(first)
    rest = body[len(first):]
    if form == "json":
        value = json.loads(rest)  # the bare JSON text, nothing else (no [DONE] either)
    else:
        value = json.loads(next(e.data for e in decode(rest) if isinstance(e, Event)))
    found = next(_error_objects(value, message))
    code_of = found["code"]
    assert code_of == code and type(code_of) is type(code)
    type_key = "status" if provider == "gemini" else "type"
    assert found[type_key] == kind
