"""check-client's reports (JSON, JUnit XML, ``--compare``), ``ssemock.check_client``, the output contract,
and resilience grades read from the journal and the clock, on real client processes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ssemock
from ssemock.checkclient import ClientCheckFailed
from ssemock.checkclient.contract import PrintedEvent, read_output

from .checkclients import EXAMPLES, READER, ROOT, check_client, release_python, verdicts
from .processes import reap

CASSETTE = "openai-chat-finish-length-usage"
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)

# Retries at once, whatever the answer says (urllib; the events decoded from the whole body).
IMPATIENT = """
import json, os, sys, urllib.error, urllib.request
from ssemock.sse import Event, decode
body_file = os.environ.get("SSEMOCK_BODY_FILE")
for attempt in range(3):
    request = urllib.request.Request(os.environ["SSEMOCK_STREAM_URL"], method=os.environ["SSEMOCK_METHOD"],
                                     data=open(body_file, "rb").read() if body_file else None)
    try:
        body = urllib.request.urlopen(request, timeout=5).read()
    except urllib.error.HTTPError:
        continue
    for event in decode(body):
        print(json.dumps({"type": event.type, "data": event.data, "id": event.last_event_id}))
    sys.exit(0)
sys.exit(1)
"""


@given(st.lists(st.builds(PrintedEvent, TEXT, TEXT, st.one_of(st.none(), TEXT)), max_size=5))
def test_printed_events_read_back(events) -> None:
    lines = [json.dumps({"type": e.type, "data": e.data, **({} if e.id is None else {"id": e.id})}) for e in events]
    output = read_output("\n".join(lines).encode())
    assert output.mode == "events" and output.events == tuple(events)


def test_an_answer_and_what_breaks_the_contract() -> None:
    assert read_output(b'{\n "text": "Hi",\n "finish_reason": "stop"\n}\n').answer == {
        "text": "Hi",
        "finish_reason": "stop",
    }
    assert read_output(b'{"data": "a"}\nnot json\n').problem.startswith("line 2: ")
    assert read_output(b"[1, 2]").mode == "invalid"
    assert read_output(b"\xff").mode == "invalid"


def test_json_junit_and_compare_between_two_releases(tmp_path) -> None:
    adapter = str(EXAMPLES / "httpx_sse_reader.py")
    args = ("--cassette", CASSETTE, "--scenario", "line-separators,crlf")
    old, old_report = check_client(
        tmp_path, *args, command=[str(release_python("httpx-sse", "0.4.1", "httpx==0.28.1")), adapter]
    )
    assert old.returncode == 1
    (tmp_path / "old.json").write_text(json.dumps(old_report))
    junit = tmp_path / "junit.xml"
    new, _ = check_client(
        tmp_path,
        *args,
        "--compare",
        "old.json",
        "--junit",
        str(junit),
        command=[str(release_python("httpx-sse", "0.4.3", "httpx==0.28.1")), adapter],
    )
    assert new.returncode == 0, new.stdout
    assert f"{CASSETTE}/line-separators: fail -> pass" in new.stdout
    assert "1 changed (1 fixed, 0 newly failing), 0 new, 0 gone" in new.stdout
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("3", "0")
    assert [case.get("name") for case in suite] == [f"{CASSETTE}/{s}" for s in ("clean", "line-separators", "crlf")]
    failed = [c for c in old_report["cases"] if c["verdict"] == "fail"]
    assert [c["scenario"] for c in failed] == ["line-separators"]
    assert failed[0]["reproduce"].endswith(
        f"_ssemock/s/line-separators/v1 OPENAI_API_KEY=ssemock-placeholder-key SSEMOCK_METHOD=POST "
        f"SSEMOCK_STREAM_URL=http://127.0.0.1:8765/_ssemock/c/{CASSETTE}/_ssemock/s/line-separators"
        "/v1/chat/completions "
        f"{release_python('httpx-sse', '0.4.1')} {adapter}"
    )


def test_check_client_raises_with_the_table(tmp_path) -> None:
    python = release_python("httpx-sse", "0.4.1", "httpx==0.28.1")
    with pytest.raises(ClientCheckFailed) as failed:
        ssemock.check_client(
            [str(python), str(EXAMPLES / "httpx_sse_reader.py")], cassettes=(CASSETTE,), scenarios=("line-separators",)
        )
    assert isinstance(failed.value, AssertionError)
    assert f"{CASSETTE}/line-separators  conformance  FAIL" in str(failed.value)
    assert failed.value.report.counts() == {"pass": 1, "fail": 1}


def test_a_retry_before_retry_after_and_a_timeout_that_lies(tmp_path) -> None:
    script = tmp_path / "impatient.py"
    script.write_text(IMPATIENT)
    done, report = check_client(
        tmp_path, "--cassette", CASSETTE, "--scenario", "http-429", command=[sys.executable, str(script)]
    )
    reason = {c["scenario"]: c["reason"] for c in report["cases"]}
    assert verdicts(report) == {"clean": "pass", "http-429": "fail"}, reason
    assert reason["http-429"].startswith("request 2 came ") and reason["http-429"].endswith("before Retry-After: 2")
    # The reader waits 20 s for a byte, but says 1 s: it waits through the 3 s stall.
    done, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--scenario",
        "stall",
        "--client-timeout",
        "1",
        "--timeout",
        "15",
        command=[*READER, "--timeout", "20"],
    )
    assert done.returncode == 1
    assert {c["scenario"]: c["reason"] for c in report["cases"]}["stall-3s"] == (
        "waited through the 3 s stall (client timeout 1 s) and exited 0"
    )


def test_a_failure_is_shrunk_to_the_steps_it_hinges_on(tmp_path) -> None:
    python = release_python("httpx-sse", "0.4.1", "httpx==0.28.1")
    done, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--scenario",
        "torture",
        command=[str(python), str(EXAMPLES / "httpx_sse_reader.py")],
    )
    assert done.returncode == 1
    (torture,) = [c for c in report["cases"] if c["scenario"] == "torture"]
    head, *steps = torture["shrunk"].splitlines()
    assert head.startswith(f"shrunk to {len(steps)} step(s) (") and "stopped early" not in head
    assert 1 <= len(steps) <= 3 < 7  # torture has 7 steps
    # the step that puts raw U+2028, U+2029 and U+0085 into comments (the lines httpx-sse 0.4.1 splits)
    assert any(s.startswith("- line-separators: {") and "where: comments" in s for s in steps)
    assert "  - line-separators: {" in done.stdout


def test_the_reproduce_command_reproduces_against_ssemock_serve(tmp_path) -> None:
    python = release_python("httpx-sse", "0.4.1", "httpx==0.28.1")
    adapter = str(EXAMPLES / "httpx_sse_reader.py")
    _, report = check_client(
        tmp_path,
        "--cassette",
        CASSETTE,
        "--scenario",
        "line-separators",
        "--shrink-budget",
        "0",
        command=[str(python), adapter],
    )
    (case,) = [c for c in report["cases"] if c["verdict"] == "fail"]
    serve, client = case["reproduce"].split(" & sleep 1; ")
    words = shlex.split(serve)
    assert "SSEMOCK_BODY_FILE" not in client  # the recording's request has no body
    assert words[:4] == ["ssemock", "serve", "--port", "8765"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "ssemock", "serve", "--port", "0", *words[4:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]  # ssemock serving on http://127.0.0.1:PORT
        *assignments, program, script = shlex.split(client.replace("http://127.0.0.1:8765", url))
        env.update(a.split("=", 1) for a in assignments)
        buggy = subprocess.run([program, script], capture_output=True, timeout=60, env=env, check=True)
        right = subprocess.run(READER, capture_output=True, timeout=60, env=env, check=True)
    finally:
        reap(server)
    got, want = read_output(buggy.stdout).events, read_output(right.stdout).events
    assert "\u2028" in want[1].data and "\u2028" not in got[1].data  # as graded: event 2's data cut at U+2028


def test_the_cassettes_are_those_the_client_asks_for(tmp_path) -> None:
    done, report = check_client(
        tmp_path,
        "--scenario",
        "crlf",
        "--client-timeout",
        "5",
        command=[sys.executable, str(EXAMPLES / "openai_chat_answer.py")],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # the recordings whose stream answers POST /v1/chat/completions (not the MCP session's chat call)
    assert {c["cassette"] for c in report["cases"]} == {
        "openai-chat-finish-length-usage",
        "openai-chat-tool-calls-usage",
    }
    assert {c["verdict"] for c in report["cases"]} == {"pass"} and len(report["cases"]) == 4
