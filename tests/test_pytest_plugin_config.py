"""The plugin's configuration fixtures (``ssemock_config``, ``ssemock_cassette_dir``, ``ssemock_cassette_name``),
overridden per directory and per module, and scenario names given as a tuple."""

from __future__ import annotations

import textwrap

import pytest

from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()

# The inner tests' expected side: the recording, and the "crlf" preset's documented effect on it
# (every line end a CRLF).
EXPECTED = '''
from ssemock.mockserver import collect_cassettes

CHAT = "openai-chat-finish-length-usage"
RECORDED = collect_cassettes(None)[CHAT].interactions[0].response.body
CRLF = RECORDED.replace(b"\\n", b"\\r\\n")
'''

ASK = '''
import httpx
import pytest
from expected import CHAT, CRLF, RECORDED


def ask(mock):
    return httpx.post(mock.url + "/v1/chat/completions", json={"model": "gpt-4o"}).content
'''


@pytest.fixture
def session(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    pytester.makepyfile(expected=EXPECTED)
    return pytester


def test_a_conftest_override_of_ssemock_config_changes_the_default_scenario_of_its_directory(
    session: pytest.Pytester,
) -> None:
    session.mkpydir("faulty").joinpath("conftest.py").write_text(textwrap.dedent("""
        import pytest
        from ssemock.pytest_plugin import SSEMockConfig

        @pytest.fixture(scope="module")
        def ssemock_config():
            return SSEMockConfig(scenario=("crlf",), timing_scale=0)
        """))
    session.path.joinpath("faulty", "test_faulty.py").write_text(ASK + textwrap.dedent("""
        @pytest.mark.ssemock(cassette=CHAT)
        def test_default_scenario(sse_mock):
            assert ask(sse_mock) == CRLF
            assert sse_mock.requests[0]["scenario"] == "crlf"

        @pytest.mark.ssemock(cassette=CHAT, scenario=())  # the marker turns the directory's default off
        def test_marker_over_config(sse_mock):
            assert ask(sse_mock) == RECORDED
            assert sse_mock.requests[0]["scenario"] is None
        """))
    session.mkpydir("plain").joinpath("test_plain.py").write_text(ASK + textwrap.dedent("""
        @pytest.mark.ssemock(cassette=CHAT)
        def test_no_override_here(sse_mock):
            assert ask(sse_mock) == RECORDED
            assert sse_mock.requests[0]["scenario"] is None
        """))
    session.runpytest("-p", "no:randomly").assert_outcomes(passed=3)


def test_scenario_names_as_a_tuple_in_the_marker(session: pytest.Pytester) -> None:
    session.makepyfile(test_tuple=ASK + textwrap.dedent("""
        @pytest.mark.ssemock(cassette=CHAT, scenario=("crlf", "split-bytes"), timing_scale=0)
        def test_tuple(ssemock):
            assert ask(ssemock) == CRLF  # split-bytes changes the chunks, not the bytes
            assert ssemock.requests[0]["scenario"] == "crlf,split-bytes"

        @pytest.mark.ssemock(cassette=CHAT, scenario="crlf")  # one name: a string still
        def test_one_name(ssemock):
            assert ask(ssemock) == CRLF

        @pytest.mark.ssemock(cassette=CHAT, scenario=("crlf", ""))
        def test_empty_name(ssemock):
            pass
        """))
    result = session.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.ssemock: scenario: an empty name in ('crlf', '')"])


def test_the_cassette_folder_and_name_fixtures_say_where_a_tests_own_cassette_is(session: pytest.Pytester) -> None:
    session.makeconftest("""
        import pytest

        @pytest.fixture(scope="module")
        def ssemock_cassette_dir(request):
            return request.path.parent / "recorded"

        @pytest.fixture
        def ssemock_cassette_name(request):
            return "shared-" + request.node.name
        """)
    session.mkdir("recorded").joinpath("shared-test_own.yaml").write_text(textwrap.dedent("""
        ssemock_cassette: 1
        interactions:
        - request: {method: POST, path: /v1/chat/completions}
          response:
            headers: {content-type: text/event-stream}
            events: [{data: moved}]
        """))
    session.makepyfile(test_moved=ASK + textwrap.dedent("""
        def test_own(sse_mock):
            assert ask(sse_mock) == b"data: moved\\n\\n"

        def test_missing(sse_mock):
            ask(sse_mock)
        """))
    result = session.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        f"ssemock: test_missing has no cassette: {session.path}/recorded/shared-test_missing.yaml does not exist *",
    ])


def test_a_mapping_from_ssemock_config_is_checked_like_the_record(session: pytest.Pytester) -> None:
    session.makepyfile(test_mapping=ASK + textwrap.dedent("""
        @pytest.fixture
        def ssemock_config():  # a module's own override, in pytest-recording's dict shape
            return {"scenario": "crlf", "timing_scale": 0}

        @pytest.mark.ssemock(cassette=CHAT)
        def test_mapping(sse_mock):
            assert ask(sse_mock) == CRLF
        """))
    session.makepyfile(test_typo=textwrap.dedent("""
        import pytest

        @pytest.fixture
        def ssemock_config():
            return {"scenarios": "crlf"}

        def test_typo(sse_mock):
            pass
        """))
    result = session.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*ssemock: ssemock_config: unknown key 'scenarios'; valid: scenario, match_on, ignore_body, timing_scale, "
         "target"])
