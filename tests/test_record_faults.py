"""Faults on live traffic: ``ssemock record --scenario`` / ``--chaos`` break what the client gets from the real
provider (here a local aiohttp upstream) while the cassette keeps the upstream's own bytes.

Through ``ssemock record`` in a process of its own and the openai SDK.
"""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from ssemock.cassette import load
from ssemock.chaos import draw
from ssemock.recorder import Recorder

from .upstream import SCRIPTS, Upstream

MESSAGES = [{"role": "user", "content": "What does the coffee cost?"}]
WRITES = [data for _, data in SCRIPTS["chat"][0]]  # what the upstream sends to /v1/chat/completions


@contextlib.contextmanager
def record(tmp_path: Path, target: str, *argv: str) -> Iterator[tuple[str, Path]]:
    """``ssemock record`` in its own process; its URL and the file its stderr (the progress lines) goes to, which
    holds every line once the recorder has stopped (SIGTERM)."""
    err = tmp_path / "stderr"
    with (
        err.open("w") as err_file,
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ssemock",
                "record",
                "--target",
                target,
                "--port",
                "0",
                "--cassettes",
                str(tmp_path / "cassettes"),
                "--cassette",
                "live",
                *argv,
            ],
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert first.startswith("ssemock recording on "), err.read_text()
            yield first.split()[3], err
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0, err.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)


def test_record_scenario_cut_mid_event_breaks_the_client_and_the_cassette_keeps_the_whole_stream(
    tmp_path: Path,
) -> None:
    with Upstream() as up, record(tmp_path, up.url, "--scenario", "cut-mid-event") as (url, err):
        got: list[str] = []
        with openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0) as client:
            stream = client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
            with pytest.raises(openai.APIConnectionError):
                got.extend(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    # The first event (the role and "Café", its é split across two writes) arrived; the connection closed
    # inside the second (" costs 3 €"), without the chunked terminator.
    assert got == ["Café"]
    [line] = [line for line in err.read_text().splitlines() if line.startswith("[1] ")]
    assert line.startswith("[1] recorded POST /v1/chat/completions -> 200, ") and line.endswith(
        "; sent under cut-mid-event"
    ), line
    [interaction] = load(tmp_path / "cassettes" / "live.yaml").interactions
    assert b"".join(c.data for c in interaction.response.chunks) == b"".join(WRITES)
    assert interaction.response.end.how == "clean" and interaction.response.status == 200


def test_record_chaos_draws_as_the_replay_server_does_and_records_the_upstream_answers(tmp_path: Path) -> None:
    """``--chaos http-429=0.5 --seed 5``: request N gets the preset's 429 when its draw (seed 5, seq N) is below
    0.5; every cassette entry is the upstream's 200 stream."""
    count = 8
    with Upstream() as up, record(tmp_path, up.url, "--chaos", "http-429=0.5", "--seed", "5") as (url, err):
        statuses, retry_after = [], []
        with openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0) as client:
            for _ in range(count):
                try:
                    text = "".join(
                        c.choices[0].delta.content or ""
                        for c in client.chat.completions.create(model="gpt-4o", messages=MESSAGES, stream=True)
                        if c.choices
                    )
                    assert text == "Café costs 3 €"
                    statuses.append(200)
                except openai.RateLimitError as exc:
                    statuses.append(exc.status_code)
                    retry_after.append(exc.response.headers["retry-after"])
    drawn = [draw(5, seq) for seq in range(1, count + 1)]
    assert statuses == [429 if value < 0.5 else 200 for value in drawn]
    assert 429 in statuses and 200 in statuses  # seed 5 draws both in 8 requests
    assert retry_after == ["2"] * statuses.count(429)  # the http-429 preset's header
    lines = [line for line in err.read_text().splitlines() if line.startswith("[")]
    for line, value in zip(lines, drawn, strict=True):
        fault = "http-429" if value < 0.5 else "none"
        assert line.endswith(f"fault {fault} (draw {value:.6f})"), line
        assert ("; sent under http-429;" in line) == (value < 0.5), line
    interactions = load(tmp_path / "cassettes" / "live.yaml").interactions
    assert [i.response.status for i in interactions] == [200] * count
    assert all(b"".join(c.data for c in i.response.chunks) == b"".join(WRITES) for i in interactions)


def test_record_refuses_an_unknown_scenario(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ssemock",
            "record",
            "--target",
            "http://127.0.0.1:9",
            "--port",
            "0",
            "--cassettes",
            str(tmp_path),
            "--scenario",
            "cut-mid-evnt",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(
        "ssemock: error: no scenario named 'cut-mid-evnt'; did you mean 'cut-mid-event'?; known: "), done.stderr


def test_a_replayed_answer_of_the_recorder_is_sent_under_the_scenario_too(tmp_path: Path) -> None:
    """Record mode ``once`` on an existing cassette replays it: under ``--scenario http-429`` its client gets
    the 429, and the cassette is not touched."""
    with Upstream() as up:
        with Recorder(up.url, tmp_path, cassette="live") as rec:
            first = httpx.post(f"{rec.url}/v1/chat/completions", json={"model": "gpt-4o", "messages": MESSAGES})
        saved = (tmp_path / "live.yaml").read_bytes()
        progress = io.StringIO()
        with Recorder(up.url, tmp_path, cassette="live", scenario="http-429", progress=progress) as rec:
            again = httpx.post(f"{rec.url}/v1/chat/completions", json={"model": "gpt-4o", "messages": MESSAGES})
    assert first.status_code == 200 and first.content == b"".join(WRITES)
    assert again.status_code == 429 and again.headers["retry-after"] == "2"
    [line] = progress.getvalue().splitlines()
    assert line.startswith("[1] replayed POST /v1/chat/completions -> 200, ") and line.endswith(
        "; sent under http-429"
    ), line
    assert (tmp_path / "live.yaml").read_bytes() == saved
