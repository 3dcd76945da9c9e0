"""The pytest plugin with stubs: a test that stubs (in its body, a fixture or a helper) needs no cassette,
and only stubs answer it; a request of a test that has neither a stub for it nor a cassette fails the test."""

from __future__ import annotations

import pytest

from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()


def test_inline_stubs_need_no_cassette_and_nothing_else_answers(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_inline="""
        import httpx
        import openai

        def test_reply(ssemock):
            ssemock.reply("Hello from a stub")
            with openai.OpenAI(base_url=ssemock.url + "/v1", api_key="k", max_retries=0) as client:
                answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            assert answer.choices[0].message.content == "Hello from a stub"

        def test_stubbed_then_unmatched(ssemock):
            ssemock.on(contains="weather").call_tool("get_weather", {"city": "Paris"}).then_reply("Sunny")
            # a bundled recording would answer this path: with stubs only, nothing does
            httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "gpt-4o", "messages": []})

        def test_no_stub_no_cassette(ssemock):
            httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "gpt-4o", "messages": []})

        def test_no_request(ssemock):
            pass  # nothing asked, nothing missing
        """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*_ test_stubbed_then_unmatched _*",
        "ssemock: test_stubbed_then_unmatched has no cassette: *",
        "*closest stub: on(contains='weather') step 1: call get_weather*",
        "*_ test_no_stub_no_cassette _*",
        "ssemock: test_no_stub_no_cassette has no cassette: *",
        "#1 POST /v1/chat/completions -> 404 refused (ssemock_no_match)",
    ], consecutive=False)


def test_stub_files_from_the_command_line_and_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makefile(".yaml", hello="ssemock_stubs: 1\nstubs: [{reply: {text: Hello from a file}}]\n")
    pytester.makepyfile(test_files="""
        import httpx
        import pytest

        @pytest.mark.ssemock(stubs="hello.yaml")
        def test_marker(ssemock):
            body = httpx.post(ssemock.url + "/v1/messages", json={"model": "c", "max_tokens": 100,
                              "messages": [{"role": "user", "content": "hi"}]}).json()
            assert body["content"][0]["text"] == "Hello from a file"

        def test_session_option(ssemock):
            body = httpx.post(ssemock.url + "/v1/messages", json={"model": "c", "max_tokens": 100,
                              "messages": [{"role": "user", "content": "hi"}]}).json()
            assert body["content"][0]["text"] == "Hello from a file"
        """)
    pytester.runpytest("-p", "no:randomly", "-k", "marker").assert_outcomes(passed=1)
    pytester.runpytest("-p", "no:randomly", "--ssemock-stubs", "hello.yaml").assert_outcomes(passed=2)


def test_stubs_from_a_fixture_or_a_helper_answer_without_a_mark(pytester: pytest.Pytester) -> None:
    """Which stubs a test has is known when its request arrives: a fixture or a helper function may
    add them (the plugin once guessed it from the test function's own code, and missed these)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_fixture="""
        import httpx
        import pytest

        import ssemock  # the fixture sse_mock does not hide the package


        @pytest.fixture
        def fake(sse_mock):
            sse_mock.reply("from fixture")
            return sse_mock

        def greet(mock, text):
            mock.on(contains="hi").reply(text)

        def ask(url):
            return httpx.post(url + "/v1/messages", json={"model": "c", "max_tokens": 100,
                              "messages": [{"role": "user", "content": "hi"}]}).json()["content"][0]["text"]

        def test_from_a_fixture(fake):
            assert ask(fake.url) == "from fixture"

        def test_from_a_helper(sse_mock):
            greet(sse_mock, "from helper")
            assert ask(sse_mock.url) == "from helper"
            assert isinstance(sse_mock, ssemock.testing.SSEMockFixture)
            [entry] = sse_mock.assert_requests(count=1, outcome="complete")
            assert entry["stub"] == "on(contains='hi') step 1: reply 'from helper'"  # as the README names it

        @pytest.mark.ssemock(stubs=[])  # what such a test once needed: still accepted
        def test_marked(fake):
            assert ask(fake.url) == "from fixture"
        """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=3)


def test_each_test_gets_its_own_stubs_and_journal_from_its_first_request(pytester: pytest.Pytester) -> None:
    """The set-up hands its reset to the server's thread without waiting: it is still made
    before the test's first request (and whatever the previous test left is gone)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_order="""
        import httpx
        import pytest

        CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}

        @pytest.mark.parametrize("n", range(30))
        def test_own(ssemock, n):
            ssemock.reply(f"answer {n}")
            with httpx.Client() as client:
                first = client.post(ssemock.url + "/v1/chat/completions", json=CHAT).json()
                refused = client.post(ssemock.url + "/v1/chat/completions", json=CHAT)
            assert first["choices"][0]["message"]["content"] == f"answer {n}"
            assert refused.status_code == 404
            assert [e["outcome"] for e in ssemock.requests] == ["complete", "refused"]
        """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=30)  # each by its own refused request only
    result.stdout.fnmatch_lines(["*ssemock: 1 request was refused by the fake provider:*"])
    assert "2 requests were refused" not in result.stdout.str()
