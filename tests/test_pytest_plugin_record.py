"""The plugin's record modes, in real pytest sessions, against a local upstream on 127.0.0.1."""

from __future__ import annotations

import pytest

from ssemock.cassette import load
from ssemock.sse import decode

from .sessions import INI, preload_clients
from .upstream import SCRIPTS, Upstream

pytest_plugins = ["pytester"]
preload_clients()



def inner_test(expected: list[str]) -> str:
    return f"""
import httpx
from ssemock.sse import decode

def test_chat(ssemock):
    response = httpx.post(ssemock.url + "/v1/chat/completions", json={{"model": "m", "stream": True}})
    assert [e.data for e in decode(response.content)] == {expected!r}
"""


def test_once_records_a_missing_cassette_then_replays_it_offline(pytester: pytest.Pytester) -> None:
    script, _ = SCRIPTS["chat"]
    recorded = b"".join(data for _, data in script)
    pytester.makeini(INI)
    pytester.makepyfile(test_rec=inner_test([e.data for e in decode(recorded)]))
    cassette_file = pytester.path / "cassettes" / "test_rec" / "test_chat.yaml"
    with Upstream() as upstream:
        pytester.runpytest("--ssemock-record=once", f"--ssemock-target={upstream.url}").assert_outcomes(passed=1)
        assert len(upstream.received) == 1
        cassette = load(cassette_file)
        [interaction] = cassette.interactions
        assert interaction.request.path == "/v1/chat/completions"
        assert interaction.response.body == recorded
        assert len(interaction.response.chunks) == len(script)

        # Default mode none: replayed from the file beside the test; the upstream hears nothing.
        pytester.runpytest().assert_outcomes(passed=1)
        # once with the cassette present: replayed too.
        pytester.runpytest("--ssemock-record=once", f"--ssemock-target={upstream.url}").assert_outcomes(passed=1)
        assert len(upstream.received) == 1

        # all: always forwarded and appended to the cassette.
        pytester.runpytest("--ssemock-record=all", f"--ssemock-target={upstream.url}").assert_outcomes(passed=1)
        assert len(upstream.received) == 2
        assert len(load(cassette_file).interactions) == 2


def test_target_from_the_marker_and_a_missing_target(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    with Upstream() as upstream:
        pytester.makepyfile(
            test_marker=f"""
            import httpx
            import pytest

            @pytest.mark.ssemock(target="{upstream.url}", cassette="greeting")
            def test_marker_target(ssemock):
                response = httpx.post(ssemock.url + "/v1/chat/completions", json={{}})
                assert response.status_code == 200
                [interaction] = ssemock.assert_requests(count=1, path="/v1/chat/completions")
                assert interaction["action"] == "recorded"
                # the replay journal's record, in a record mode too
                seen = (interaction["method"], interaction["status"], interaction["outcome"])
                assert seen == ("POST", 200, "complete")
                assert interaction["bytes_sent"] == len(response.content) and interaction["chunks_sent"] >= 1
                assert {{"seq", "query", "body", "cassette", "interaction", "scenario", "seed"}} <= set(interaction)

            @pytest.mark.ssemock(cassette="never-recorded")
            def test_no_target(ssemock):
                pass
            """
        )
        result = pytester.runpytest("--ssemock-record=new_episodes")
    result.assert_outcomes(passed=1, errors=1)
    assert (pytester.path / "cassettes" / "test_marker" / "greeting.yaml").is_file()
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.ssemock: record mode new_episodes needs the upstream provider: --ssemock-target URL, "
            "the ini key ssemock_target, or @pytest.mark.ssemock(target=URL)"
        ]
    )


def test_unknown_record_mode_in_the_ini_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI + "ssemock_record_mode = sometimes\n")
    pytester.makepyfile(test_x="def test_x(ssemock):\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ssemock_record_mode: 'sometimes' is not one of none, once, new_episodes, all*"])


def test_in_a_record_mode_the_markers_scenario_breaks_the_client_and_the_cassette_keeps_the_stream(
    pytester: pytest.Pytester,
) -> None:
    """``scenario="cut-mid-event"`` while recording: the test's httpx client sees the stream cut inside its second
    event; the cassette holds the upstream's whole stream, which a replay then serves under the same cut."""
    script, _ = SCRIPTS["chat"]
    recorded = b"".join(data for _, data in script)
    pytester.makeini(INI)
    pytester.makepyfile(
        test_rec="""
import httpx
import pytest

@pytest.mark.ssemock(scenario="cut-mid-event")
def test_chat(ssemock):
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(ssemock.url + "/v1/chat/completions", json={"model": "m", "stream": True})
"""
    )
    with Upstream() as upstream:
        pytester.runpytest("--ssemock-record=once", f"--ssemock-target={upstream.url}").assert_outcomes(passed=1)
    [interaction] = load(pytester.path / "cassettes" / "test_rec" / "test_chat.yaml").interactions
    assert interaction.response.body == recorded and interaction.response.end.how == "clean"
    pytester.runpytest().assert_outcomes(passed=1)  # replayed under the same scenario: cut the same way
