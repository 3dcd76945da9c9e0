"""A request's length limit cuts a stub's text, as the providers do: at that many tokens, with each
provider's length finish (OpenAI chat ``finish_reason: "length"``; Responses ``status: "incomplete"``,
``incomplete_details.reason: "max_output_tokens"``; Anthropic ``stop_reason: "max_tokens"``; Gemini
``finishReason: "MAX_TOKENS"``), read by the providers' SDKs against the ``ssemock`` fixture.

The expected cut follows the documented token-like rule (:mod:`ssemock.providers.tokens`: the
pre-tokenization pattern of OpenAI's tokenizers): ``"The capital of the UK is London."`` is
``The`` ``␣capital`` ``␣of`` ``␣the`` ``␣UK`` ``␣is`` ``␣London`` ``.``.
"""

from __future__ import annotations

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

from ssemock.testing import SSEMockFixture

TEXT = "The capital of the UK is London."
FIVE = "The capital of the UK"  # its first five tokens


def test_openai_chat_max_tokens_cuts_the_text_with_finish_reason_length(ssemock: SSEMockFixture) -> None:
    ssemock.reply(TEXT, times=3)
    with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0) as client:
        messages = [{"role": "user", "content": "Capital of the UK?"}]
        text, finish, usage = "", None, None
        for chunk in client.chat.completions.create(  # type: ignore[call-overload]
                model="gpt-4o-mini", messages=messages, max_tokens=5, stream=True,
                stream_options={"include_usage": True}):
            usage = chunk.usage or usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                finish = choice.finish_reason or finish
        assert (text, finish) == (FIVE, "length")
        assert usage is not None and usage.completion_tokens == 5
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages,  # type: ignore[arg-type]
                                                max_completion_tokens=5)
        assert (answer.choices[0].message.content, answer.choices[0].finish_reason) == (FIVE, "length")
        whole = client.chat.completions.create(model="gpt-4o-mini", messages=messages,  # type: ignore[arg-type]
                                               max_tokens=8)
        assert (whole.choices[0].message.content, whole.choices[0].finish_reason) == (TEXT, "stop")


def test_responses_max_output_tokens_ends_incomplete(ssemock: SSEMockFixture) -> None:
    ssemock.reply(TEXT, times=2)
    client = openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0)
    with client, client.responses.create(model="gpt-5", input="Capital of the UK?", max_output_tokens=5,
                                         stream=True) as stream:
        events = list(stream)
        answer = client.responses.create(model="gpt-5", input="Capital of the UK?", max_output_tokens=5)
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == FIVE
    last = events[-1]
    assert last.type == "response.incomplete" and last.response.status == "incomplete"
    for final in (last.response, answer):
        assert final.output_text == FIVE and final.status == "incomplete"
        assert final.incomplete_details is not None and final.incomplete_details.reason == "max_output_tokens"


def test_anthropic_max_tokens_stops_with_max_tokens(ssemock: SSEMockFixture) -> None:
    ssemock.reply(TEXT)
    client = anthropic.Anthropic(base_url=ssemock.url, api_key="k", max_retries=0)
    with client, client.messages.stream(model="claude-haiku-4-5", max_tokens=5,
                                         messages=[{"role": "user", "content": "Capital of the UK?"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == FIVE
    assert (final.stop_reason, final.usage.output_tokens) == ("max_tokens", 5)


def test_gemini_max_output_tokens_finishes_with_max_tokens(ssemock: SSEMockFixture) -> None:
    ssemock.reply(TEXT)
    client = genai.Client(api_key="k", http_options=genai_types.HttpOptions(base_url=ssemock.url))
    try:
        chunks = list(client.models.generate_content_stream(
            model="gemini-2.0-flash", contents="Capital of the UK?",
            config=genai_types.GenerateContentConfig(max_output_tokens=5)))
    finally:
        client.close()
    assert "".join(c.text or "" for c in chunks) == FIVE
    assert chunks[-1].candidates is not None
    assert chunks[-1].candidates[0].finish_reason == genai_types.FinishReason.MAX_TOKENS


def test_a_stub_that_names_its_finish_reason_is_sent_whole(ssemock: SSEMockFixture) -> None:
    ssemock.reply(TEXT, finish_reason="stop")
    with anthropic.Anthropic(base_url=ssemock.url, api_key="k", max_retries=0) as client:
        answer = client.messages.create(model="claude-haiku-4-5", max_tokens=5,
                                        messages=[{"role": "user", "content": "Capital of the UK?"}])
    assert answer.content[0].text == TEXT and answer.stop_reason == "end_turn"  # type: ignore[union-attr]
