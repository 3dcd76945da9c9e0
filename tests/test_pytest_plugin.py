"""The pytest plugin, run in real pytest sessions (pytester) against the real replay server."""

from __future__ import annotations

import pytest

from ssemock.pytest_plugin import conformance_presets

from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()


# What the recordings carry, computed with our decoder: the expected side of the inner tests.
EXPECTED = '''
import json

from ssemock.mockserver import collect_cassettes
from ssemock.sse import decode

CASSETTES = collect_cassettes(None)


def events(name, index=0):
    return [e for e in decode(CASSETTES[name].interactions[index].response.body)]


def chat_text(name, index=0):
    """The text of an OpenAI chat completion stream: every delta.content, joined."""
    chunks = [json.loads(e.data) for e in events(name, index) if e.data != "[DONE]"]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def anthropic_text(name, index=0):
    """The text of an Anthropic Messages stream: every text_delta, joined."""
    payloads = [json.loads(e.data) for e in events(name, index)]
    return "".join(
        p["delta"]["text"] for p in payloads
        if p.get("type") == "content_block_delta" and p["delta"].get("type") == "text_delta"
    )
'''

CHAT = "/v1/chat/completions"


@pytest.fixture
def session(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory with strict settings and the expected-values module."""
    pytester.makeini(INI)
    pytester.makepyfile(expected=EXPECTED)
    return pytester


def test_sync_openai_client_reads_the_recorded_text(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_sync=f"""
        import openai
        import pytest
        from expected import chat_text

        pytestmark = pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")

        def test_chat(ssemock):
            with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k") as client:
                stream = client.chat.completions.create(
                    model="gpt-4o", messages=[{{"role": "user", "content": "Hi"}}], stream=True
                )
                text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            assert text == chat_text("openai-chat-finish-length-usage")
            [entry] = ssemock.assert_requests(count=1, path="{CHAT}", body={{"model": "gpt-4o"}})
            assert entry["cassette"] == "openai-chat-finish-length-usage"
            assert entry["outcome"] == "complete"

        def test_journal_is_reset_between_tests(ssemock):
            assert ssemock.requests == []
        """
    )
    session.runpytest("-p", "no:randomly").assert_outcomes(passed=2)


def test_async_clients_pytest_asyncio_anyio_and_aiohttp(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_async=f"""
        import aiohttp
        import httpx
        import openai
        import pytest
        from httpx_sse import aconnect_sse
        from expected import anthropic_text, chat_text, events
        from ssemock.sse import Decoder

        BODY = {{"model": "gpt-4o", "stream": True, "messages": [{{"role": "user", "content": "Hi"}}]}}

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        async def test_pytest_asyncio_openai(ssemock):
            async with openai.AsyncOpenAI(base_url=ssemock.url + "/v1", api_key="k") as client:
                stream = await client.chat.completions.create(
                    model="gpt-4o", messages=[{{"role": "user", "content": "Hi"}}], stream=True
                )
                text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
            assert text == chat_text("openai-chat-finish-length-usage")
            ssemock.assert_requests(count=1)

        @pytest.mark.anyio
        @pytest.mark.ssemock(cassette="anthropic-messages-thinking")
        async def test_anyio_httpx_sse(ssemock, anyio_backend):
            async with httpx.AsyncClient(base_url=ssemock.url) as client:
                async with aconnect_sse(client, "POST", "/v1/messages", json={{"stream": True}}) as source:
                    got = [(e.event, e.data) async for e in source.aiter_sse()]
            assert got == [(e.type, e.data) for e in events("anthropic-messages-thinking")]
            assert anthropic_text("anthropic-messages-thinking") != ""

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        async def test_aiohttp_client(ssemock):
            async with aiohttp.ClientSession() as http:
                async with http.post(ssemock.url + "{CHAT}", json=BODY) as response:
                    decoder = Decoder()
                    got = []
                    async for data in response.content.iter_any():
                        got += decoder.feed(data)
            assert [e.data for e in got] == [e.data for e in events("openai-chat-finish-length-usage")]
        """
    )
    session.runpytest().assert_outcomes(passed=3)


def test_unmatched_request_fails_the_test_with_the_closest_interaction(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_unmatched="""
        import httpx
        import openai
        import pytest

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage")
        def test_client_swallows_the_404(ssemock):
            response = httpx.post(ssemock.url + "/v1/embeddings", json={"input": "x"})
            assert response.status_code == 404

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage")
        def test_client_raises(ssemock):
            with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0) as client:
                client.embeddings.create(model="text-embedding-3-small", input="x")
        """
    )
    result = session.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_client_swallows_the_404 _*",
            "ssemock: 1 request was refused by the fake provider:",
            "#1 POST /v1/embeddings -> 404 refused (ssemock_no_match)",
            "  closest: openai-chat-tool-calls-usage #0 POST /v1/chat/completions",
            "    path: /v1/embeddings != recorded /v1/chat/completions",
            "*_ test_client_raises _*",
            "E * openai.NotFoundError: *",
            "E * ssemock: 1 request was refused by the fake provider:",
            "E *   closest: openai-chat-tool-calls-usage #0 POST /v1/chat/completions",
        ]
    )


def test_cassette_lookup_order_and_unknown_names(session: pytest.Pytester) -> None:
    own = """
        ssemock_cassette: 1
        interactions:
        - request: {method: POST, path: /v1/chat/completions}
          response:
            headers: {content-type: text/event-stream}
            events: [{data: %s}, {data: "[DONE]"}]
    """
    session.mkdir("cassettes")
    session.mkdir("cassettes/test_lookup")
    session.path.joinpath("cassettes/test_lookup/test_own.yaml").write_text(own % "own")
    session.path.joinpath("cassettes/test_lookup/named.yaml").write_text(own % "named")
    session.mkdir("shared")
    session.path.joinpath("shared/openai-chat-finish-length-usage.yaml").write_text(own % "configured")
    session.makepyfile(
        test_lookup=f"""
        import httpx
        import pytest
        from expected import events

        def datas(ssemock):
            response = httpx.post(ssemock.url + "{CHAT}", json={{"model": "m"}})
            return [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]

        def test_own(ssemock):
            assert datas(ssemock) == ["own", "[DONE]"]
            assert ssemock.requests[0]["cassette"] == "cassettes/test_lookup/test_own"

        @pytest.mark.ssemock(cassette="named")
        def test_named(ssemock):
            assert datas(ssemock) == ["named", "[DONE]"]

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        def test_configured_before_bundled(ssemock):
            assert datas(ssemock) == ["configured", "[DONE]"]

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage")
        def test_bundled(ssemock):
            assert datas(ssemock) == [e.data for e in events("openai-chat-tool-calls-usage")]

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage")
        def test_use_switches_cassette(ssemock):
            ssemock.use("named")
            assert datas(ssemock) == ["named", "[DONE]"]

        @pytest.mark.ssemock(cassette="no-such-cassette")
        def test_unknown(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usag")
        def test_misspelt(ssemock):
            pass
        """
    )
    result = session.runpytest("--ssemock-cassettes", "shared")
    result.assert_outcomes(passed=5, errors=2)
    base = session.path
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_unknown*",
            f"@pytest.mark.ssemock: no cassette named 'no-such-cassette'; searched: {base}/no-such-cassette; "
            f"{base}/cassettes/test_lookup/no-such-cassette.yaml; *; {base}/cassettes/no-such-cassette.yml; "
            "the configured directories (openai-chat-finish-length-usage); "
            "the bundled cassettes (alibaba-qwen-chat-emoji-split, *)",
            "*ERROR at setup of test_misspelt*",
            "@pytest.mark.ssemock: no cassette named 'openai-chat-tool-calls-usag'; "
            "did you mean 'openai-chat-tool-calls-usage'?; searched: *",
        ]
    )
    assert "During handling of the above exception" not in result.stdout.str()  # the message once, unchained


def test_cassette_directories_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI + "ssemock_cassettes = recorded\n")
    pytester.mkdir("recorded")
    pytester.path.joinpath("recorded/greeting.yaml").write_text(
        "ssemock_cassette: 1\ninteractions:\n- request: {method: GET, path: /hello}\n"
        "  response: {events: [{data: hi}]}\n"
    )
    pytester.makepyfile(
        test_ini="""
        import httpx, pytest

        @pytest.mark.ssemock(cassette="greeting")
        def test_greeting(ssemock):
            assert httpx.get(ssemock.url + "/hello").text == "data: hi\\n\\n"
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_journal_assertions_catch_a_client_that_replays_an_interrupted_generation(
    session: pytest.Pytester,
) -> None:
    session.mkdir("cassettes")
    session.path.joinpath("cassettes/interrupted.yaml").write_text(
        "ssemock_cassette: 1\ninteractions:\n- request: {method: POST, path: /v1/chat/completions}\n"
        "  response:\n    headers: {content-type: text/event-stream}\n"
        "    events: [{data: '{\"choices\": []}'}]\n    end: {how: cut}\n"
    )
    session.makepyfile(
        test_retry=f"""
        import httpx
        import pytest

        BODY = {{"model": "gpt-4o", "stream": True, "messages": [{{"role": "user", "content": "Hi"}}]}}

        def read(url, retries):
            for _ in range(retries + 1):
                try:
                    return httpx.post(url + "{CHAT}", json=BODY).text
                except httpx.HTTPError:
                    continue

        @pytest.mark.ssemock(cassette="interrupted")
        def test_naive_client_replays(ssemock):
            read(ssemock.url, retries=1)
            ssemock.assert_no_repeats()

        @pytest.mark.ssemock(cassette="interrupted")
        def test_careful_client_does_not(ssemock):
            read(ssemock.url, retries=0)
            ssemock.assert_no_repeats()
            [entry] = ssemock.assert_requests(count=1, outcome="cut")
            assert entry["chunks_sent"] == 1

        @pytest.mark.ssemock(cassette="interrupted")
        def test_count_mismatch_lists_the_journal(ssemock):
            read(ssemock.url, retries=1)
            ssemock.assert_requests(count=1, method="post")
        """
    )
    result = session.runpytest()
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "E * AssertionError: request #2 repeats #1 (POST /v1/chat/completions, same body); journal:",
            "E * #1 POST /v1/chat/completions -> 200 cut, 1 chunks, * bytes (cassettes/interrupted #0)",
            "E * #2 POST /v1/chat/completions -> 200 cut, 1 chunks, * bytes (cassettes/interrupted #0)",
            "E * AssertionError: expected 1 request(s) matching {'method': 'post'}, got 2; journal:",
        ]
    )


def test_env_fixture_points_sdks_at_the_fake_provider(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_env="""
        import anthropic
        import openai
        import pytest
        from expected import anthropic_text, chat_text

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
        def test_openai_from_env(ssemock_env, ssemock):
            assert ssemock_env["OPENAI_BASE_URL"] == ssemock.url + "/v1"
            with openai.OpenAI() as client:
                stream = client.chat.completions.create(
                    model="gpt-4o", messages=[{"role": "user", "content": "Hi"}], stream=True
                )
                text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            assert text == chat_text("openai-chat-finish-length-usage")

        @pytest.mark.ssemock(cassette="anthropic-messages-thinking")
        def test_anthropic_from_env(ssemock_env, ssemock):
            with anthropic.Anthropic() as client:
                with client.messages.stream(
                    model="claude-sonnet-4-20250514", max_tokens=1024,
                    messages=[{"role": "user", "content": "Hi"}],
                ) as stream:
                    text = "".join(stream.text_stream)
            assert text == anthropic_text("anthropic-messages-thinking")
            ssemock.assert_requests(count=1, path="/v1/messages")
        """
    )
    session.runpytest().assert_outcomes(passed=2)


def test_matrix_runs_the_test_once_per_conformance_preset(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_matrix=f"""
        import json
        import httpx
        import pytest
        from expected import events
        from ssemock.sse import decode

        def payloads(events):
            return [e.data if e.data == "[DONE]" else json.loads(e.data) for e in events]

        @pytest.mark.ssemock(cassette="openai-chat-finish-length-usage", matrix=True, timing_scale=0)
        def test_payloads_survive(ssemock, request):
            body = httpx.post(ssemock.url + "{CHAT}", json={{}}).content
            assert payloads(decode(body)) == payloads(events("openai-chat-finish-length-usage"))
            ssemock.assert_requests(count=1, scenario=request.node.callspec.id)
        """
    )
    presets = conformance_presets()
    assert presets, "the bundled scenarios hold no conformance preset"
    result = session.runpytest("-v")
    result.assert_outcomes(passed=len(presets))
    result.stdout.fnmatch_lines([f"test_matrix.py::test_payloads_survive[[]{name}[]] PASSED*" for name in presets])


def test_marker_errors_are_clear(session: pytest.Pytester) -> None:
    session.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.ssemock(cassete="openai-chat-tool-calls-usage")
        def test_typo(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", scenario="no-such-scenario")
        def test_unknown_scenario(ssemock):
            pass
        """
    )
    result = session.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.ssemock: unknown argument 'cassete'; valid: cassette, scenario, matrix, timing_scale, "
            "target, match_on, ignore_body, stubs, chaos, seed",
            "@pytest.mark.ssemock: ssemock: scenario: expected a scenario name, one of *, got 'no-such-scenario'",
        ]
    )


def test_marker_values_of_the_wrong_type_or_range_are_clear_set_up_errors(session: pytest.Pytester) -> None:
    """``cassette=123`` was a raw TypeError traceback; ``timing_scale=-1`` was accepted."""
    session.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.ssemock(cassette=123)
        def test_number_as_cassette(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", timing_scale=-1)
        def test_negative_scale(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", timing_scale="fast")
        def test_text_scale(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", match_on="body")
        def test_match_on_string(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", match_on=["method", "bodyy"])
        def test_unknown_matcher(ssemock):
            pass

        @pytest.mark.ssemock(cassette="openai-chat-tool-calls-usage", timing_scale=0)
        def test_fine(ssemock):
            pass
        """
    )
    session.makepyfile(test_matrix="""
        import pytest

        @pytest.mark.ssemock(matrix=3)
        def test_matrix_number(ssemock):
            pass
        """)
    result = session.runpytest("-p", "no:randomly", "test_bad.py")
    result.assert_outcomes(passed=1, errors=5)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.ssemock: cassette: expected a cassette name (str), got 123",
        "*@pytest.mark.ssemock: timing_scale: timing scale must be a finite number >= 0, got -1",
        "*@pytest.mark.ssemock: timing_scale: timing scale must be a finite number >= 0, got 'fast'",
        "*@pytest.mark.ssemock: match_on must be a non-empty list of matchers among *, got 'body'",
        "*@pytest.mark.ssemock: unknown matcher 'bodyy'; valid: *",
    ])
    matrix = session.runpytest("-p", "no:randomly", "test_matrix.py")  # found while collecting
    matrix.assert_outcomes(errors=1)
    matrix.stdout.fnmatch_lines(["*@pytest.mark.ssemock: matrix: expected True, False or a list of scenario names, *"])
    for run in (result, matrix):
        assert "Traceback" not in run.stdout.str() and "TypeError" not in run.stdout.str()
