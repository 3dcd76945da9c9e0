"""Volatile request body fields, through the real recorder, replay server and clients: a field ignored
(per server, per cassette, per test) no longer stops a recording from matching; a field dropped by the
recorder never reaches the cassette; the 404 of a near miss names the field; prompt-level matching.

The recordings are made by the recorder from a local upstream (``tests/upstream.py``, whose ``chat``
script streams "Café costs 3 €") with the openai SDK sending ``metadata.trace_id``, as an app adding a
trace id to every request does."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from ssemock import MockServer
from ssemock.cassette import load, save
from ssemock.cli import main
from ssemock.errors import ConfigError, RecorderConfigError
from ssemock.recorder import Recorder
from ssemock.sse import decode

from .processes import reap
from .sessions import INI, preload_clients
from .upstream import Upstream

pytest_plugins = ["pytester"]
preload_clients()

CHAT_TEXT = "Café costs 3 €"  # what the upstream's chat script streams
PROMPT = [{"role": "user", "content": "How much is a coffee?"}]


def ask(base_url: str, trace_id: str, **extra: Any) -> str:
    """The text the openai SDK assembles from a streamed chat answer to PROMPT carrying ``trace_id``."""
    with openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=PROMPT,
            stream=True,
            metadata={"trace_id": trace_id, "app": "shop"},
            **extra,
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette directory holding one recording of PROMPT made with trace id ``trace-recorded``."""
    directory = tmp_path_factory.mktemp("recorded")
    with Upstream() as up, Recorder(up.url, directory, cassette="chat") as rec:
        assert ask(rec.url + "/v1", "trace-recorded") == CHAT_TEXT
    assert load(directory / "chat.yaml").interactions[0].request.json()["metadata"] == {
        "trace_id": "trace-recorded",
        "app": "shop",
    }
    return directory


def test_a_changed_trace_id_matches_when_the_server_ignores_it(recorded: Path) -> None:
    with MockServer([recorded], scenarios=[], ignore_body=["metadata.trace_id"]) as server:
        assert ask(server.url + "/v1", "trace-replayed") == CHAT_TEXT
        assert server.requests[-1]["cassette"] == "chat"


def test_a_changed_trace_id_fails_with_a_near_miss_naming_it_when_not_ignored(recorded: Path) -> None:
    with MockServer([recorded], scenarios=[]) as server, pytest.raises(openai.NotFoundError) as caught:
        ask(server.url + "/v1", "trace-replayed")
    error = caught.value.body
    assert isinstance(error, dict) and error["type"] == "ssemock_no_match"
    assert 'metadata.trace_id: "trace-replayed" != recorded "trace-recorded"' in error["message"]
    top = error["closest"][0]
    assert (top["cassette"], top["interaction"], top["field"]) == ("chat", 0, "metadata.trace_id")
    assert top["differences"] == ['body: metadata.trace_id: "trace-replayed" != recorded "trace-recorded"']
    assert "ignored" not in top


def test_another_difference_is_still_refused_and_named_when_the_trace_id_is_ignored(recorded: Path) -> None:
    with (
        MockServer([recorded], scenarios=[], ignore_body=["metadata.trace_id"]) as server,
        pytest.raises(openai.NotFoundError) as caught,
    ):
        ask(server.url + "/v1", "trace-replayed", temperature=0.5)
    top = caught.value.body["closest"][0]
    assert top["field"] == "temperature"
    assert top["differences"] == ["body: temperature: 0.5 not in the recording"]


def test_the_near_miss_says_when_an_ignored_field_was_the_only_difference_of_the_body(recorded: Path) -> None:
    """The path differs (an SDK pointed at another base path): the body would match but for the trace id."""
    with (
        MockServer([recorded], scenarios=[], ignore_body=["metadata.trace_id"]) as server,
        pytest.raises(openai.NotFoundError) as caught,
    ):
        ask(server.url + "/openai/v1", "trace-replayed")
    error: Any = caught.value.body
    top = error["closest"][0]
    assert top["differences"] == ["path: /openai/v1/chat/completions != recorded /v1/chat/completions"]
    assert top["ignored"] == ["metadata.trace_id"]
    assert "its body differs only in the ignored metadata.trace_id" in error["message"]


def test_a_cassette_ignores_the_fields_its_file_names(recorded: Path, tmp_path: Path) -> None:
    cassette = load(recorded / "chat.yaml")
    save(dataclasses.replace(cassette, ignore_body=("metadata.trace_id",)), tmp_path / "chat.yaml")
    text = (tmp_path / "chat.yaml").read_text(encoding="utf-8")
    assert "match:\n  ignore_body:\n  - metadata.trace_id\n" in text
    with MockServer([tmp_path], scenarios=[]) as server:
        assert ask(server.url + "/v1", "trace-replayed") == CHAT_TEXT
    with MockServer([recorded], scenarios=[]) as server, pytest.raises(openai.NotFoundError):
        ask(server.url + "/v1", "trace-replayed")  # the same recording without the file's match: refused


def test_a_whole_object_and_every_item_of_a_list_can_be_ignored(recorded: Path) -> None:
    with (
        MockServer([recorded], scenarios=[], ignore_body=["metadata", "messages[*].name"]) as server,
        openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0) as client,
    ):
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            stream=True,
            messages=[{**PROMPT[0], "name": "alice"}],
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == CHAT_TEXT


@pytest.fixture
def serve(recorded: Path) -> Iterator[str]:
    """``ssemock serve`` of the recording, ignoring ``metadata.trace_id``: its URL."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ssemock",
            "serve",
            "--cassettes",
            str(recorded),
            "--port",
            "0",
            "--ignore-body-field",
            "metadata.trace_id",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip().removeprefix("ssemock serving on ")
    finally:
        reap(proc)


def test_ssemock_serve_ignores_the_fields_of_its_option(serve: str) -> None:
    body = load_body("trace-replayed")
    with httpx.stream("POST", serve + "/v1/chat/completions", json=body, timeout=10) as response:
        assert response.status_code == 200
        events = decode(response.read())
    assert events[-1].data == "[DONE]"
    body["metadata"]["app"] = "other"  # not ignored
    refused = httpx.post(serve + "/v1/chat/completions", json=body, timeout=10)
    assert refused.status_code == 404
    assert refused.json()["error"]["closest"][0]["field"] == "metadata.app"


def load_body(trace_id: str) -> dict[str, Any]:
    """The JSON body the openai SDK sends for PROMPT (as the recording holds it), with ``trace_id``."""
    return {
        "messages": PROMPT,
        "model": "gpt-4o-mini",
        "stream": True,
        "metadata": {"trace_id": trace_id, "app": "shop"},
    }


def test_the_recorder_drops_named_fields_from_the_stored_body_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, drop_body=["metadata.trace_id", "user"]) as rec:
        assert ask(rec.url + "/v1", "trace-1", user="u-1") == CHAT_TEXT
        assert ask(rec.url + "/v1", "trace-2", user="u-2") == CHAT_TEXT
        rows = rec.interactions
    # The upstream got the requests whole.
    sent = [json.loads(r["body"]) for r in up.received]
    assert [(b["metadata"]["trace_id"], b["user"]) for b in sent] == [("trace-1", "u-1"), ("trace-2", "u-2")]
    # One cassette (the fingerprint is of the stored body), its bodies without the fields, its match saying so.
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == 1
    cassette = load(files[0])
    assert cassette.dropped_body == ("metadata.trace_id", "user")
    assert "match:\n  dropped_body:\n  - metadata.trace_id\n  - user\n" in files[0].read_text(encoding="utf-8")
    assert [i.request.json()["metadata"] for i in cassette.interactions] == [{"app": "shop"}, {"app": "shop"}]
    assert all("user" not in i.request.json() for i in cassette.interactions)
    assert rows[0]["filtered"] == [
        "request header authorization",
        "body metadata.trace_id dropped",
        "body user dropped",
    ]
    assert main(["inspect", str(files[0])]) == 0
    assert "  match dropped_body: metadata.trace_id, user\n" in capsys.readouterr().out
    # Replay ignores what was dropped.
    with MockServer([tmp_path], scenarios=[]) as server:
        assert ask(server.url + "/v1", "trace-3", user="u-3") == CHAT_TEXT


def test_dropping_a_field_from_an_existing_cassette_writes_it_again_saying_so(recorded: Path, tmp_path: Path) -> None:
    (tmp_path / "chat.yaml").write_bytes((recorded / "chat.yaml").read_bytes())
    with (
        Upstream() as up,
        Recorder(up.url, tmp_path, cassette="chat", mode="new_episodes", drop_body=["metadata.trace_id"]) as rec,
    ):
        assert ask(rec.url + "/v1", "trace-recorded") == CHAT_TEXT  # replayed: the recording matches
        assert ask(rec.url + "/v1", "trace-new") == CHAT_TEXT  # new_episodes: played once already, so recorded
    assert len(up.received) == 1
    cassette = load(tmp_path / "chat.yaml")
    assert cassette.dropped_body == ("metadata.trace_id",)
    assert [i.request.json()["metadata"] for i in cassette.interactions] == [
        {"trace_id": "trace-recorded", "app": "shop"},
        {"app": "shop"},
    ]  # the earlier one is kept as it was


def test_prompt_level_matching_compares_model_last_user_message_and_turn(recorded: Path) -> None:
    with MockServer([recorded], scenarios=[], match_on=["prompt"]) as server:
        # Other parameters, another trace id, another path prefix: the same prompt.
        assert ask(server.url + "/openai/v1", "trace-replayed", temperature=0.2) == CHAT_TEXT
        with (
            pytest.raises(openai.NotFoundError) as caught,
            openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0) as client,
        ):
            client.chat.completions.create(
                model="gpt-4o-mini",
                stream=True,
                messages=[
                    *PROMPT,
                    {"role": "assistant", "content": CHAT_TEXT},
                    {"role": "user", "content": "And a tea?"},
                ],
            )
    top = caught.value.body["closest"][0]
    assert top["differences"] == [
        "prompt: last user message 'And a tea?' does not equal 'How much is a coffee?'; turn 2 is not 1"
    ]


def test_prompt_level_matching_refuses_another_provider_and_model(recorded: Path) -> None:
    with MockServer([recorded], scenarios=[], match_on=["method", "prompt"]) as server:
        with (
            openai.OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0) as client,
            pytest.raises(openai.NotFoundError) as caught,
        ):
            client.chat.completions.create(model="gpt-4o", stream=True, messages=PROMPT)
        assert caught.value.body["closest"][0]["differences"] == ["prompt: model 'gpt-4o' is not 'gpt-4o-mini'"]
        anthropic_path = httpx.post(
            server.url + "/v1/messages", json={"model": "gpt-4o-mini", "max_tokens": 10, "messages": PROMPT}, timeout=10
        )
        assert anthropic_path.status_code == 404
        assert anthropic_path.json()["error"]["closest"][0]["differences"] == [
            "prompt: provider anthropic is not openai-chat"
        ]


def test_bad_body_paths_are_refused_with_the_option_named() -> None:
    with pytest.raises(ConfigError, match=r"ignore_body: body path 'messages\[\*': expected keys separated by"):
        MockServer([], ignore_body=["messages[*"])
    with pytest.raises(RecorderConfigError, match="drop_body: expected at most 64 body paths, got 65"):
        Recorder("http://127.0.0.1:9", "cassettes", drop_body=[f"f{i}" for i in range(65)])


INNER_ASK = f"""
import openai
import pytest

BODY = ("method", "path", "body")
PROMPT = {PROMPT!r}


def ask(url, trace_id):
    with openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="gpt-4o-mini", messages=PROMPT, stream=True, metadata={{"trace_id": trace_id, "app": "shop"}}
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
"""


def test_a_marker_the_fixture_and_ssemock_config_ignore_body_fields(pytester: pytest.Pytester, recorded: Path) -> None:
    (pytester.path / "cassettes").mkdir()
    (pytester.path / "cassettes" / "chat.yaml").write_bytes((recorded / "chat.yaml").read_bytes())
    pytester.makeini(INI)
    pytester.makepyfile(
        test_marker=INNER_ASK
        + """
@pytest.mark.ssemock(cassette="chat", match_on=BODY, ignore_body=["metadata.trace_id"])
def test_marker(ssemock):
    assert ask(ssemock.url, "trace-x") == "Café costs 3 €"


@pytest.mark.ssemock(cassette="chat", match_on=BODY)
def test_not_ignored(ssemock):
    ask(ssemock.url, "trace-x")


def test_use(ssemock):
    ssemock.use("chat", match_on=BODY, ignore_body=["metadata.trace_id"])
    assert ask(ssemock.url, "trace-y") == "Café costs 3 €"


@pytest.mark.ssemock(cassette="chat", ignore_body=["metadata..trace_id"])
def test_bad_path(ssemock):
    pass
""",
        test_config=INNER_ASK
        + """
from ssemock.pytest_config import SSEMockConfig


@pytest.fixture(scope="module")
def ssemock_config():
    return SSEMockConfig(match_on=BODY, ignore_body=("metadata.trace_id",))


@pytest.mark.ssemock(cassette="chat")
def test_config(ssemock):
    assert ask(ssemock.url, "trace-z") == "Café costs 3 €"


@pytest.mark.ssemock(cassette="chat", ignore_body=())
def test_turned_off(ssemock):
    ask(ssemock.url, "trace-z")
""",
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=2, errors=1)
    result.stdout.fnmatch_lines_random(
        [
            "*ERROR at setup of test_bad_path*",
            "*@pytest.mark.ssemock: ignore_body: body path 'metadata..trace_id': expected keys separated by '.'*",
            '*body: metadata.trace_id: "trace-x" != recorded "trace-recorded"*',
            '*body: metadata.trace_id: "trace-z" != recorded "trace-recorded"*',
        ]
    )
