"""Options as records: ``Limits`` and ``NetworkOptions``, their checks, and the command-line flags made from
their fields (``--limit NAME=VALUE`` and the long flags). Real servers on 127.0.0.1, real clients."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import ConfigError, Limits, MockServer, NetworkOptions, Recorder
from ssemock.cli import build_parser, main
from ssemock.config import knobs
from ssemock.edge.arguments import knob_value
from ssemock.recorder import ProgressRow

from .processes import reap
from .sessions import INI, preload_clients
from .upstream import Upstream

pytest_plugins = ["pytester"]
NOWHERE = "/v1/no-cassette-answers-this"
SERVE_FIELDS = ("max_request_body", "max_json_depth", "max_scenario_growth", "journal_capacity",
                "journal_body_limit", "header_timeout", "body_timeout", "backlog", "grace")


def test_serve_limit_refuses_a_larger_body_with_the_documented_413(tmp_path: Path) -> None:
    """``ssemock serve --limit max_request_body=1KiB``: a 2 KiB body is answered 413 ``ssemock_body_too_large``
    naming the limit (docs/reference/limits.md), a body of 1 KiB is read (and answered 404: no cassette holds it)."""
    argv = [sys.executable, "-m", "ssemock", "serve", "--port", "0", "--limit", "max_request_body=1KiB"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("ssemock serving on ")
        refused = httpx.post(url + NOWHERE, content=b"x" * 2048)
        read = httpx.post(url + NOWHERE, content=b"x" * 1024)
    finally:
        reap(proc)
    error = refused.json()["error"]
    assert refused.status_code == 413 and error["type"] == "ssemock_body_too_large" and error["limit"] == 1024
    assert "larger than 1024 bytes" in error["message"]
    assert read.status_code == 404 and read.json()["error"]["type"] == "ssemock_no_match"


@pytest.mark.parametrize(("argv", "needle"), [
    (["--limit", "max_requst_body=1KiB"],
     "argument --limit: unknown name 'max_requst_body': expected NAME=VALUE, NAME one of max_request_body, "),
    (["--limit", "max_request_body"], "argument --limit: no '=' in 'max_request_body': expected NAME=VALUE"),
    (["--limit", "max_request_body=1.5KiB"],
     "argument --limit: max_request_body: expected a size in bytes (65536, 64KiB, 120MB or 1GiB), got '1.5KiB'"),
    (["--limit", "max_request_body=64M"],  # M alone: MB (10**6) or MiB (2**20)?
     "argument --limit: max_request_body: expected a size in bytes (65536, 64KiB, 120MB or 1GiB), got '64M'"),
    (["--limit", "header_timeout=5 s"],
     "argument --limit: header_timeout: expected a number of seconds (30, 30s or 500ms), got '5 s'"),
    (["--limit", "max_json_depth=2KiB"], "argument --limit: max_json_depth: expected an integer, got '2KiB'"),
    (["--max-request-body", "1 MiB"],
     "argument --max-request-body: expected a size in bytes (65536, 64KiB, 120MB or 1GiB), got '1 MiB'"),
])
def test_a_bad_limit_text_exits_2_with_one_line(argv: list[str], needle: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--port", "0", *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and needle in err, err


@pytest.mark.parametrize(("argv", "line"), [
    (["--limit", "max_request_body=-1KiB"], "max_request_body: expected an integer >= 0 (bytes), got -1024"),
    (["--limit", "max_json_depth=257"], "max_json_depth: expected an integer from 1 to 256, got 257"),
    (["--limit", "journal_capacity=0"], "journal_capacity: expected an integer from 1 to 10000000, got 0"),
    (["--limit", "header_timeout=0ms"], "header_timeout: expected a finite number of seconds > 0, got 0.0"),
    (["--limit", "grace=-1s"], "grace: expected a finite number of seconds >= 0, got -1.0"),
    (["--limit", "backlog=65536"], "backlog: expected an integer from 1 to 65535, got 65536"),
])
def test_a_limit_out_of_its_bounds_exits_2_naming_field_range_and_value(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", *argv]) == 2
    assert capsys.readouterr().err == f"ssemock: error: serve: {line}\n"


def test_record_takes_the_limits_it_reads_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["record", "--target", "http://127.0.0.1:9", "--limit", "journal_capacity=5"])
    err = capsys.readouterr().err
    assert "unknown name 'journal_capacity': expected NAME=VALUE, NAME one of max_request_body, max_json_depth, " \
           "header_timeout, body_timeout, backlog, grace" in err


@pytest.mark.parametrize(("command", "fields"), [
    ("serve", SERVE_FIELDS),
    ("record", ("max_request_body", "max_json_depth", "header_timeout", "body_timeout", "backlog", "grace")),
])
def test_help_lists_every_field_with_its_unit_and_default(
    command: str, fields: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in fields:
        assert f"{name} (" in help_text, name
    for shown in ("max_request_body (bytes, default 32MiB)", "max_json_depth (levels, default 128)",
                  "header_timeout (seconds, default 30s)", "backlog (connections, default 2048)"):
        assert shown in help_text
    if command == "serve":
        assert "journal_body_limit (bytes, default 64KiB)" in help_text and "grace (seconds, default 0.1s)" in help_text
    else:
        assert "journal_capacity" not in help_text


def test_each_field_of_the_records_is_a_limit_name_and_its_flag_sets_the_same_value() -> None:
    """One destination per field: ``--limit NAME=`` and the long flag both set it, the last given wins."""
    names = [k.name for record in (Limits, NetworkOptions) for k in knobs(record) if k.kind != "names"]
    assert tuple(names) == SERVE_FIELDS
    parser = build_parser("serve")
    args = parser.parse_args(["serve", "--max-request-body", "64MiB", "--limit", "max_request_body=2KiB"])
    assert args.max_request_body == 2048
    args = parser.parse_args(["serve", "--limit", "max_request_body=2KiB", "--max-request-body", "100"])
    assert args.max_request_body == 100
    args = parser.parse_args(["serve", "--limit", "body_timeout=500ms", "--limit", "journal_capacity=7"])
    assert (args.body_timeout, args.journal_capacity, args.header_timeout) == (0.5, 7, 30.0)


@pytest.mark.parametrize(("name", "text", "value"), [
    ("max_request_body", "64MiB", 64 << 20), ("max_request_body", "1kib", 1024), ("max_request_body", "1GiB", 1 << 30),
    ("max_request_body", "512B", 512), ("max_request_body", "65536", 65536), ("max_request_body", "64MB", 64_000_000),
    ("max_request_body", "2kB", 2000), ("header_timeout", "30s", 30.0),
    ("header_timeout", "1.5", 1.5), ("header_timeout", "250ms", 0.25), ("backlog", "128", 128),
])
def test_values_take_their_units(name: str, text: str, value: float) -> None:
    spec = {k.name: k for record in (Limits, NetworkOptions) for k in knobs(record)}[name]
    assert knob_value(spec, text) == value


def test_the_records_are_checked_once_when_made() -> None:
    with pytest.raises(ConfigError, match=r"^max_json_depth: expected an integer from 1 to 256, got 0$"):
        Limits(max_json_depth=0)
    with pytest.raises(ConfigError, match=r"^journal_body_limit: expected an integer >= 0 \(bytes\), got True$"):
        Limits(journal_body_limit=True)  # a bool is no size
    with pytest.raises(ConfigError, match=r"^max_request_body: expected an integer >= 0 \(bytes\), got 1.5$"):
        dataclasses.replace(Limits(), max_request_body=1.5)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Limits().max_request_body = 1  # type: ignore[misc]
    assert NetworkOptions(allowed_hosts=["App.Example"]).allowed_hosts == frozenset({"app.example"})  # type: ignore[arg-type]


def test_mockserver_honours_its_limits_record() -> None:
    limits = Limits(max_request_body=100, journal_capacity=2, journal_body_limit=10, max_json_depth=3)
    with MockServer(limits=limits, network=NetworkOptions(header_timeout=5)) as server:
        assert server.limits is limits and server.network.header_timeout == 5
        refused = httpx.post(server.url + NOWHERE, content=b"x" * 101)
        deep = httpx.post(server.url + NOWHERE, content=b"[[[[0]]]]")
        for n in range(3):
            httpx.post(server.url + NOWHERE, content=b"y" * (20 + n))
        journal = server.requests
    assert refused.status_code == 413 and refused.json()["error"]["limit"] == 100
    assert "Limits(max_request_body=BYTES)" in refused.json()["error"]["message"]
    assert deep.status_code == 400 and deep.json()["error"]["type"] == "ssemock_json_too_deep"
    assert [e["seq"] for e in journal] == [4, 5] and [e["body"]["size"] for e in journal] == [21, 22]  # type: ignore[index]


def test_the_keywords_that_predate_the_records_still_set_their_fields() -> None:
    server = MockServer(max_request_body=5, grace=2.0, limits=Limits(journal_capacity=3))
    assert (server.limits.max_request_body, server.limits.journal_capacity, server.network.grace) == (5, 3, 2.0)
    with pytest.raises(TypeError, match=r"^MockServer\(\) got an unexpected keyword argument 'max_requst_body'$"):
        MockServer(max_requst_body=5)
    with pytest.raises(ConfigError, match=r"^journal_capacity: expected an integer from 1 to 10000000, got 0$"):
        MockServer(journal_capacity=0)
    with pytest.raises(TypeError, match="'journal_capacity'"):  # not a bound of the recorder
        Recorder("http://127.0.0.1:9", journal_capacity=5)
    with pytest.raises(ConfigError, match=r"^max_request_body: expected an integer >= 0 \(bytes\), got -5$"):
        Recorder("http://127.0.0.1:9", max_request_body=-5)
    assert Recorder("http://127.0.0.1:9").network.grace == 5.0  # the recorder's own default


def test_the_recorder_honours_its_limits_record(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c", limits=Limits(max_request_body=100)) as rec:
        refused = httpx.post(rec.url + "/json", content=b'{"q": "' + b"x" * 100 + b'"}')
        forwarded = httpx.post(rec.url + "/json", json={"q": 1})
    assert refused.status_code == 413 and refused.json()["error"]["limit"] == 100
    assert forwarded.status_code == 200 and len(up.received) == 1
    assert [(r["action"], r["status"]) for r in rec.interactions] == [("refused", 413), ("recorded", 200)]


def test_a_progress_row_reads_as_the_progress_module_shows_it() -> None:
    row = ProgressRow("POST", "/v1/chat/completions", 200, "recorded", "post-v1-chat-completions-1a2b3c4d5e6f",
                      12345, 87, 45, 0.412, 4.810, "clean", ["request header authorization"], seq=3)
    assert row.line() == (
        "[3] recorded POST /v1/chat/completions -> 200, 12345 bytes in 87 chunks, 45 events, first byte 0.412 s, "
        "4.810 s, clean; cassette post-v1-chat-completions-1a2b3c4d5e6f (filtered: request header authorization)")
    refused = ProgressRow("GET", "/_ssemock/x", 404, "refused", seq=1)
    assert refused.line() == "[1] refused GET /_ssemock/x -> 404"


def test_a_conftest_overrides_the_plugin_s_limits(pytester: pytest.Pytester) -> None:
    """The session's server takes the root conftest's ``ssemock_limits``: a body over them is refused, which
    fails the test with the refusal (as any request the fake provider refuses)."""
    preload_clients()
    pytester.makeini(INI)
    pytester.makeconftest("""
import pytest
from ssemock import Limits

@pytest.fixture(scope="session")
def ssemock_limits():
    return Limits(max_request_body=1024)
""")
    pytester.makepyfile(test_small="""
import httpx
import pytest

@pytest.mark.ssemock(cassette="openai-chat-finish-length-usage")
def test_a_large_body_is_refused(ssemock):
    answer = httpx.post(ssemock.url + "/v1/chat/completions", content=b"x" * 2048)
    assert answer.status_code == 413 and answer.json()["error"]["limit"] == 1024
""")
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["#1 POST /v1/chat/completions -> 413 refused (ssemock_body_too_large)",
                                 "  request body larger than 1024 bytes; the limit is set by *"])


def test_a_journal_capacity_past_its_bound_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^journal_capacity: expected an integer from 1 to 10000000, got "):
        Limits(journal_capacity=2**70)


def test_the_url_of_a_server_on_an_ipv6_address_brackets_it() -> None:
    with MockServer(host="::1") as server:
        assert server.url.startswith("http://[::1]:")
        assert httpx.get(server.url + "/_ssemock/health").json()["status"] == "ok"
