"""The plugin never answers with the wrong recording: a request of a test without a cassette (and no stub
for it) fails the test; so does a changed prompt."""

from __future__ import annotations

import pytest

from ssemock.cassette import load

from .sessions import INI, preload_clients
from .upstream import Upstream

pytest_plugins = ["pytester"]
preload_clients()

CHAT_TEST = """
import openai
import pytest

@pytest.mark.ssemock({marker})
def test_chat(ssemock):
    with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="sk-test", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="gpt-4o", messages=[{{"role": "user", "content": {prompt!r}}}], stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Café costs 3 €"
"""


def test_a_test_without_a_cassette_fails_naming_the_file_and_how_to_record(pytester: pytest.Pytester) -> None:
    """Its first request (no stub answers it) fails the test, whether the client raises or swallows the 404."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_bare="""
        import httpx
        import openai
        import pytest

        def test_no_cassette(sse_mock):
            # Before, a bundled stream answered this request and the test passed.
            response = httpx.post(sse_mock.url + "/v1/chat/completions", json={"model": "gpt-4o"})
            assert response.status_code == 404

        @pytest.mark.ssemock(scenario="keepalive")
        def test_scenario_only(ssemock_env):
            with openai.OpenAI(max_retries=0) as client:  # OPENAI_BASE_URL: the fake provider
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}])

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        def test_bundled_when_named(ssemock):
            response = httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "gpt-4o"})
            assert response.status_code == 200
        """
    )
    result = pytester.runpytest("--ssemock-target=https://api.openai.com", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    own = pytester.path / "cassettes" / "test_bare"
    result.stdout.fnmatch_lines([
        "*_ test_no_cassette _*",
        f"ssemock: test_no_cassette has no cassette: {own}/test_no_cassette.yaml does not exist and the test "
        "names none (record mode none: nothing is recorded, no request reaches the network).",
        "Record it: pytest --ssemock-record=once --ssemock-target=https://api.openai.com "
        "'test_bare.py::test_no_cassette'",
        "or name one: @pytest.mark.ssemock(cassette=NAME), a file beside the test, a configured cassette or a "
        "bundled one (alibaba-qwen-chat-emoji-split, *).",
        "Or answer it with stubs: sse_mock.reply(...) or sse_mock.on(...) (in the test, a fixture or a helper), "
        "@pytest.mark.ssemock(stubs=FILE) or --ssemock-stubs PATH.",
        "ssemock: 1 request was refused by the fake provider:",
        "#1 POST /v1/chat/completions -> 404 refused (ssemock_no_match)",
        "*_ test_scenario_only _*",
        "E * openai.NotFoundError: *",
        f"E * ssemock: test_scenario_only has no cassette: {own}/test_scenario_only.yaml does not exist*",
        "E * Record it: pytest --ssemock-record=once --ssemock-target=https://api.openai.com "
        "'test_bare.py::test_scenario_only'",
    ])


def test_a_changed_prompt_fails_against_the_tests_own_recording(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    recorded = "How much is a coffee?"
    pytester.makepyfile(test_prompt=CHAT_TEST.format(marker="", prompt=recorded))
    with Upstream() as upstream:
        pytester.runpytest("--ssemock-record=once", f"--ssemock-target={upstream.url}").assert_outcomes(passed=1)
        assert len(upstream.received) == 1
    own = pytester.path / "cassettes" / "test_prompt" / "test_chat.yaml"
    [interaction] = load(own).interactions
    assert interaction.request.json()["messages"] == [{"role": "user", "content": recorded}]

    pytester.runpytest().assert_outcomes(passed=1)  # replayed offline: the same prompt

    pytester.makepyfile(test_prompt=CHAT_TEST.format(marker="", prompt="How much is a tea?"))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "E * openai.NotFoundError: *",
        "E * ssemock: 1 request was refused by the fake provider:",
        "E * #1 POST /v1/chat/completions -> 404 refused (ssemock_no_match)",
        "E *   closest: cassettes/test_prompt/test_chat #0 POST /v1/chat/completions",
        "E *     body: messages[[]0[]].content: \"How much is a tea?\" != recorded \"How much is a coffee?\"",
        f"E * ssemock: the request differs from the recording {own} (compared on method, path, body). If the "
        "change is intended, record it again: delete the file and run",
        "E *   pytest --ssemock-record=once --ssemock-target=URL 'test_prompt.py::test_chat'",
        "E * or add the new request beside the old ones: pytest --ssemock-record=new_episodes *",
    ])

    # Comparing less is a choice the test states.
    marker = 'match_on=("method", "path")'
    pytester.makepyfile(test_prompt=CHAT_TEST.format(marker=marker, prompt="How much is a tea?"))
    pytester.runpytest().assert_outcomes(passed=1)


def test_match_on_on_the_marker_and_in_use_compares_the_body_of_a_named_cassette(pytester: pytest.Pytester) -> None:
    """The bundled anthropic recording keeps its request (pydantic-ai's test): the same request
    by the anthropic SDK matches it; a changed prompt is refused once the body is compared."""
    pytester.makeini(INI)
    pytester.makepyfile(
        test_named="""
        import anthropic
        import httpx
        import pytest

        NAME = "anthropic-messages-thinking"
        BODY_TOO = ("method", "path", "body")

        def ask(ssemock, prompt):
            with anthropic.Anthropic(base_url=ssemock.url, api_key="k", max_retries=0) as client:
                with client.messages.stream(
                    model="claude-sonnet-4-0", max_tokens=4096,
                    thinking={"type": "enabled", "budget_tokens": 1024},
                    messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
                ) as stream:
                    return [block.type for block in stream.get_final_message().content]

        @pytest.mark.ssemock(cassette=NAME, match_on=BODY_TOO)
        def test_recorded_prompt(ssemock):
            assert ask(ssemock, "How do I cross the street?") == ["thinking", "text"]

        @pytest.mark.ssemock(cassette=NAME, match_on=BODY_TOO)
        def test_changed_prompt(ssemock):
            ask(ssemock, "How do I cross the river?")

        @pytest.mark.ssemock(cassette=NAME)
        def test_a_named_cassette_answers_any_body_by_default(ssemock):
            assert ask(ssemock, "How do I cross the river?") == ["thinking", "text"]

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        def test_use(ssemock):
            ssemock.use(NAME, match_on=list(BODY_TOO))
            response = httpx.post(ssemock.url + "/v1/messages", json={"stream": True})
            assert response.status_code == 404

        @pytest.mark.ssemock(cassette=NAME, match_on="body")
        def test_a_string_is_refused(ssemock):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of test_a_string_is_refused*",
        "@pytest.mark.ssemock: match_on must be a non-empty list of matchers among method, path, query, body, prompt, "
        "got 'body'",
        "*_ test_changed_prompt _*",
        "E * closest: anthropic-messages-thinking #0 POST /v1/messages?beta=true",
        "E *   body: messages[[]0[]].content[[]0[]].text: \"How do I cross the river?\" != recorded "
        "\"How do I cross the street?\"",
        "*_ test_use _*",
        "  closest: anthropic-messages-thinking #0 POST /v1/messages?beta=true",
        "    body: max_tokens: missing, recorded 4096",
    ])
    assert "the request differs from the recording" not in result.stdout.str()  # not a recording of the test's


def test_a_cassette_named_from_the_recording_folder_compares_the_body(pytester: pytest.Pytester) -> None:
    """Where the plugin writes recordings (``cassettes/<module>/``) the body is compared by default,
    whether the test names the cassette or not; a hand-written cassette elsewhere keeps the old default."""
    pytester.makeini(INI)
    greeting = """
        ssemock_cassette: 1
        interactions:
        - request: {method: POST, path: /v1/chat/completions, body: {json: {prompt: hello}}}
          response:
            headers: {content-type: text/event-stream}
            events: [{data: hi}]
    """
    pytester.mkdir("cassettes")
    pytester.mkdir("cassettes/test_folder")
    pytester.path.joinpath("cassettes/test_folder/greeting.yaml").write_text(greeting)
    pytester.path.joinpath("cassettes/shared-greeting.yaml").write_text(greeting)
    pytester.makepyfile(
        test_folder="""
        import httpx
        import pytest

        def answer(ssemock, prompt):
            return httpx.post(ssemock.url + "/v1/chat/completions", json={"prompt": prompt}).status_code

        @pytest.mark.ssemock(cassette="greeting")
        def test_recorded_here_same(ssemock):
            assert answer(ssemock, "hello") == 200

        @pytest.mark.ssemock(cassette="greeting")
        def test_recorded_here_changed(ssemock):
            assert answer(ssemock, "goodbye") == 404

        @pytest.mark.ssemock(cassette="shared-greeting")
        def test_elsewhere_changed(ssemock):
            assert answer(ssemock, "goodbye") == 200
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*_ test_recorded_here_changed _*",
        "    body: prompt: \"goodbye\" != recorded \"hello\"",
        "ssemock: the request differs from the recording */cassettes/test_folder/greeting.yaml (compared on "
        "method, path, body)*",
    ])
