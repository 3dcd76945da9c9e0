"""Provider-error triggers, each said in one YAML line on bundled recordings of different providers.

For each: a short client with the matching bug fails on it, while httpx-sse (a WHATWG parser) reads the
stream and the provider's SDK reports the error as the provider's documented error.

* an OpenRouter-style error chunk with a numeric ``"code": 429`` and no ``choices``, in a 200 stream
  (the recording ``openrouter-chat-keepalive-midstream-error`` has a numeric code; OpenRouter's docs
  show ``"server_error"`` with ``choices``);
* a Gemini error object with a chosen ``code``/``status`` (``RESOURCE_EXHAUSTED``), written bare after
  the events as in the recording ``gemini-vertex-error-mid-stream``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx_sse
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from ssemock import MockServer

TRIGGERS = {
    "openrouter-429": "- error-mid-stream: {provider: openrouter, code: 429, choices: false}",
    "openrouter-docs": "- error-mid-stream: {provider: openrouter}",  # code "server_error", with choices
    "gemini-429": "- error-mid-stream: {provider: gemini, code: 429, type: RESOURCE_EXHAUSTED}",
    "gemini-default": "- error-mid-stream: {provider: gemini}",  # 503 UNAVAILABLE
}
# (cassette, base path) of chat-completion recordings of three providers
CHAT = [
    ("openrouter-chat-keepalive-midstream-error", "/api/v1"),
    ("openai-chat-tool-calls-usage", "/v1"),
    ("alibaba-qwen-chat-emoji-split", "/compatible-mode/v1"),
]
# Gemini API and Vertex AI recordings
GEMINI = ["gemini-streamgeneratecontent-crlf", "gemini-vertex-error-mid-stream"]
GEMINI_PATH = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
CHAT_REQUEST = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
GEMINI_REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def test_each_trigger_is_one_yaml_line() -> None:
    assert all(len(text.splitlines()) == 1 for text in TRIGGERS.values())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockServer]:
    folder: Path = tmp_path_factory.mktemp("scenarios")
    for name, line in TRIGGERS.items():
        (folder / f"{name}.yaml").write_text(f"steps:\n{line}\n")
    # requests are matched on the method only: the cassette header picks the recording, whatever the path
    with MockServer(scenarios=[folder], timing_scale=0, match_on=["method"]) as running:
        yield running


def select(cassette: str, scenario: str) -> dict[str, str]:
    return {"X-SSEMock-Cassette": cassette, "X-SSEMock-Scenario": scenario}


# ---- the buggy clients (each as its author wrote it) -----------------------------------------------------------
def chat_text(url: str, headers: dict[str, str]) -> str:
    """Bug: reads ``chunk["choices"]`` unguarded (an empty list is fine, a missing key is not)."""
    text = ""
    with httpx.stream("POST", url + "/chat/completions", json=CHAT_REQUEST, headers=headers) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[len("data: "):])
            for choice in chunk["choices"]:
                text += choice["delta"].get("content") or ""
    return text


def chat_error_status(url: str, headers: dict[str, str]) -> int | None:
    """Bug: takes the error ``code`` for an HTTP status (true of the recording, not of OpenRouter's docs)."""
    with httpx.stream("POST", url + "/chat/completions", json=CHAT_REQUEST, headers=headers) as response:
        for line in response.iter_lines():
            if line.startswith("data: {"):
                chunk = json.loads(line[len("data: "):])
                if "error" in chunk:
                    return int(chunk["error"]["code"])
    return None


def gemini_text(url: str, headers: dict[str, str]) -> str:
    """Bug: reads only ``data:`` lines, so an error object written without a field name goes unseen."""
    text = ""
    with httpx.stream("POST", url + GEMINI_PATH, json=GEMINI_REQUEST, headers=headers) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                for part in json.loads(line[len("data: "):])["candidates"][0]["content"]["parts"]:
                    text += part.get("text", "")
    return text


def gemini_should_retry(url: str, headers: dict[str, str]) -> bool:
    """Bug: knows only the statuses it has seen (a table lookup on ``error.status``)."""
    body = httpx.post(url + GEMINI_PATH, json=GEMINI_REQUEST, headers=headers).text
    error = json.loads(body[body.rindex("\n{") + 1:])["error"]
    return {"UNAVAILABLE": True, "INTERNAL": True, "INVALID_ARGUMENT": False}[error["status"]]


# ---- what a WHATWG parser sees -------------------------------------------------------------------------------
def sse_events(url: str, headers: dict[str, str], *, gemini: bool = False) -> list[httpx_sse.ServerSentEvent]:
    path, body = (GEMINI_PATH, GEMINI_REQUEST) if gemini else ("/chat/completions", CHAT_REQUEST)
    with httpx.Client() as client, httpx_sse.connect_sse(client, "POST", url + path, json=body,
                                                         headers=headers) as source:
        assert source.response.status_code == 200
        return list(source.iter_sse())


# ---- OpenRouter-style error chunk: numeric code, no choices ---------------------------------------------------
@pytest.mark.parametrize(("cassette", "base"), CHAT)
def test_openrouter_error_chunk_numeric_code_no_choices(server: MockServer, cassette: str, base: str) -> None:
    headers = select(cassette, "openrouter-429")
    with pytest.raises(KeyError, match="choices"):
        chat_text(server.url + base, headers)

    events = sse_events(server.url + base, headers)
    error = json.loads(events[-2].data)
    assert events[-1].data == "[DONE]" and "choices" not in error
    assert error["error"]["code"] == 429 and error["object"] == "chat.completion.chunk"

    with openai.OpenAI(base_url=server.url + base, api_key="sk-test", max_retries=0) as client, \
            pytest.raises(openai.APIError) as caught:
        for _ in client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}],
                                                stream=True, extra_headers=headers):
            pass
    assert caught.value.message == error["error"]["message"] and caught.value.body == error["error"]
    assert caught.value.code == "429"  # the SDK keeps codes as strings


@pytest.mark.parametrize(("cassette", "base"), CHAT)
def test_openrouter_documented_string_code(server: MockServer, cassette: str, base: str) -> None:
    # OpenRouter's documented "server_error" breaks the reader that the recording's numeric code suits
    headers = select(cassette, "openrouter-docs")
    with pytest.raises(ValueError, match="server_error"):
        chat_error_status(server.url + base, headers)
    chat_text(server.url + base, headers)  # with choices, the text reader copes

    events = sse_events(server.url + base, headers)
    error = json.loads(events[-2].data)
    assert error["error"]["code"] == "server_error" and error["choices"][0]["finish_reason"] == "error"
    with openai.OpenAI(base_url=server.url + base, api_key="sk-test", max_retries=0) as client, \
            pytest.raises(openai.APIError) as caught:
        list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}], stream=True,
                                            extra_headers=headers))
    assert caught.value.code == "server_error"


def test_the_recorded_numeric_code_suits_the_int_reader(server: MockServer) -> None:
    headers = {"X-SSEMock-Cassette": "openrouter-chat-keepalive-midstream-error"}
    assert chat_error_status(server.url + "/api/v1", headers) == 400


# ---- Gemini error object with a chosen code/status ------------------------------------------------------------
def first_texts(events: list[httpx_sse.ServerSentEvent]) -> str:
    return "".join(p.get("text", "") for e in events for p in json.loads(e.data)["candidates"][0]["content"]["parts"])


@pytest.mark.parametrize("cassette", GEMINI)
def test_gemini_error_with_chosen_code_and_status(server: MockServer, cassette: str) -> None:
    headers = select(cassette, "gemini-429")
    events = sse_events(server.url, headers, gemini=True)  # the bare JSON lines are no SSE fields
    assert len(events) >= 1 and all("candidates" in json.loads(e.data) for e in events)
    # the text reader returns a cut answer as if it were whole
    whole = first_texts(sse_events(server.url, {"X-SSEMock-Cassette": cassette}, gemini=True))
    assert gemini_text(server.url, headers) == first_texts(events) != whole and whole.startswith(first_texts(events))
    with pytest.raises(KeyError, match="RESOURCE_EXHAUSTED"):
        gemini_should_retry(server.url, headers)
    assert gemini_should_retry(server.url, select(cassette, "gemini-default")) is True  # the status it knows

    options: Any = {"base_url": server.url, "api_version": "v1beta", "headers": headers,
                    "retry_options": {"attempts": 1}}
    with genai.Client(api_key="AIza-test", http_options=options) as client, \
            pytest.raises(genai_errors.ClientError) as caught:
        for _ in client.models.generate_content_stream(model="gemini-2.0-flash", contents="Hi"):
            pass
    assert (caught.value.code, caught.value.status) == (429, "RESOURCE_EXHAUSTED")
    assert caught.value.message == "The server had an error while processing your request."


@pytest.mark.parametrize("cassette", ["openai-chat-finish-length-usage", "anthropic-messages-thinking"])
def test_gemini_error_object_on_recordings_of_other_providers(server: MockServer, cassette: str) -> None:
    """The same line on any recording: the events before it stay, the error object follows them bare."""
    headers = select(cassette, "gemini-429")
    whole = sse_events(server.url, {"X-SSEMock-Cassette": cassette}, gemini=True)
    events = sse_events(server.url, headers, gemini=True)
    assert [(e.event, e.data) for e in events] == [(e.event, e.data) for e in whole[:1]]
    with pytest.raises(KeyError, match="RESOURCE_EXHAUSTED"):
        gemini_should_retry(server.url, headers)
