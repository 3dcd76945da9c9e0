"""Cassette hygiene: ``ssemock check`` (format, size, secrets, age), the pre-commit hook, and the
``recorded_at`` that the recorder writes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml

from ssemock.cassette import load
from ssemock.cli import main
from ssemock.hygiene import check_paths, recorded_at
from ssemock.recorder import Recorder

from .docs_examples import page_blocks
from .processes import run_measured
from .sessions import INI
from .upstream import Upstream

pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent
BUNDLED = ROOT / "cassettes"
KEY = "sk-proj-CHECKSECRET0123456789abcdefghij"  # an OpenAI project key's shape
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    status = main(["check", *args])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_the_bundled_cassettes_are_clean(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = _run(capsys, str(BUNDLED))
    assert (status, lines) == (0, [])
    assert err == "ssemock check: 14 cassette file(s), 0 finding(s), 0 warning(s)\n"


def _leaky(tmp_path: Path) -> Path:
    """The bundled OpenAI cassette with what a hand edit or an old recorder could leave in it."""
    doc = yaml.safe_load((BUNDLED / "openai-chat-tool-calls-usage.yaml").read_text())
    request = doc["interactions"][1]["request"]
    request["headers"]["authorization"] = f"Bearer {KEY}"
    request["query"] = [["key", "AIzaSyCHECKQUERY0123456789abcdefghijk"], ["note", JWT]]
    doc["interactions"][1]["response"]["chunks"][0]["text"] = f"data: {{\"echo\": \"{KEY}\"}}\n\n"
    doc["interactions"][0]["response"]["headers"]["set-cookie"] = "session=abc"
    target = tmp_path / "leaky.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return target


def test_secrets_are_findings_naming_file_interaction_place_and_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leaky = _leaky(tmp_path)
    status, lines, err = _run(capsys, str(tmp_path))
    assert status == 1
    assert lines == [
        f"{leaky}: interaction 0: response header 'set-cookie': a secret name (the recorder drops it)",
        f"{leaky}: interaction 1: query parameter 'key': a secret name (the recorder drops it)",
        f"{leaky}: interaction 1: query parameter 'note': 1 secret (jwt)",
        f"{leaky}: interaction 1: request header 'authorization': a secret name (the recorder drops it)",
        f"{leaky}: interaction 1: response body: 1 secret (ssemock-openai-anthropic-key)",
    ]
    assert KEY not in "".join(lines) + err and JWT not in "".join(lines)
    assert "1 cassette file(s), 5 finding(s)" in err


def test_format_and_size_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("ssemock_cassette: 1\ninteractions:\n- request: {method: GET, path: /}\n"
                      "  response: {status: 999}\n")
    good = tmp_path / "sub" / "good.yml"
    good.parent.mkdir()
    good.write_bytes((BUNDLED / "openai-chat-finish-length-usage.yaml").read_bytes())
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "ignored.yaml").write_text("not: a cassette\n")
    status, lines, err = _run(capsys, str(tmp_path), "--max-size", "2000")
    assert status == 1
    assert lines == [f"{broken}: not a loadable cassette: interactions[0].response.status: "
                     "expected an HTTP status code 200-599 (a 1xx answer is interim, RFC 9110 section 15.2), got 999",
                     f"{good}: {good.stat().st_size} bytes, over the --max-size of 2000 bytes (not read further)"]
    assert "2 cassette file(s), 2 finding(s)" in err


@pytest.mark.parametrize("args", [["/no/such/dir"], []])
def test_bad_usage_is_exit_2_with_one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        status = main(["check", *args])
    except SystemExit as exc:  # argparse: PATH is required
        status = int(str(exc.code))
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_max_age_warns_about_stale_and_undated_recordings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load((BUNDLED / "openai-chat-finish-length-usage.yaml").read_text())
    for name, when in (("old", "2025-01-02T03:04:05Z"), ("new", datetime.now(UTC).isoformat()), ("undated", None),
                       ("bad", "last spring")):
        doc["provenance"].pop("recorded_at", None)
        if when is not None:
            doc["provenance"]["recorded_at"] = when
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    status, lines, _ = _run(capsys, str(tmp_path), "--max-age", "90")
    assert status == 1  # the date that is not a date; warnings alone do not fail
    assert lines[0] == (f"{tmp_path / 'bad.yaml'}: provenance.recorded_at: expected an ISO 8601 date and time, "
                        "got 'last spring'")
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 'old.yaml'))}: warning: recorded 2025-01-02, \d+ days ago: "
                        r"older than --max-age 90 days; record it again", lines[1])
    assert lines[2] == (f"{tmp_path / 'undated.yaml'}: warning: no provenance.recorded_at: its age is unknown "
                        "(--max-age 90 days)")
    assert len(lines) == 3  # "new" is fresh
    (tmp_path / "bad.yaml").unlink()
    assert _run(capsys, str(tmp_path), "--max-age", "90")[0] == 0
    assert _run(capsys, str(tmp_path))[1] == []  # no --max-age: no age check
    # Unquoted in YAML, a timestamp loads as a datetime: read the same.
    stamp = tmp_path / "new.yaml"
    stamp.write_text(re.sub(r"recorded_at: '(.*)'", r"recorded_at: \1", stamp.read_text()))
    assert isinstance(yaml.safe_load(stamp.read_text())["provenance"]["recorded_at"], datetime)
    assert recorded_at(load(stamp)) is not None
    soon = datetime.now(UTC) + timedelta(days=100)
    assert [f.warning for f in check_paths([stamp], max_age=90 * 86_400, now=soon)] == [True]


def test_the_recorder_writes_recorded_at_and_its_cassettes_check_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="chat") as rec:
        response = httpx.post(f"{rec.url}/stream/chat", json={"stream": True},
                              headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
        assert response.status_code == 200
    cassette = load(tmp_path / "chat.yaml")
    when = recorded_at(cassette)
    assert when is not None and before <= when <= datetime.now(UTC)
    assert _run(capsys, str(tmp_path), "--max-age", "1")[:2] == (0, [])
    time.sleep(1.1)  # into the next second: a new recorded_at would differ
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="chat", mode="all") as rec:
        assert httpx.post(f"{rec.url}/stream/chat", json={"n": 2}, timeout=30).status_code == 200
    again = load(tmp_path / "chat.yaml")
    assert len(again.interactions) == 2 and recorded_at(again) == when  # it dates the oldest recording


def test_a_recording_through_a_target_with_a_password_checks_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recorder writes REDACTED where a secret was: the placeholder is not a secret (a real session's
    14 cassettes all failed the check for ``https://bob:REDACTED@h/x`` alone)."""
    with Upstream() as up:
        target = up.url.replace("http://", "http://bob:secret@")  # http://bob:secret@127.0.0.1:PORT
        with Recorder(target, tmp_path, cassette="chat") as rec:
            for say in (f"data: fetch {target}/v1/x\n\n", "data: see https://bob:hunter2@h/x\n\n"):
                assert httpx.post(f"{rec.url}/echo", json={"say": say}, timeout=30).status_code == 200
    text = (tmp_path / "chat.yaml").read_text()
    assert "bob:REDACTED@h/x" in text and "secret@" not in text and "hunter2" not in text
    assert _run(capsys, str(tmp_path)) == (0, [], "ssemock check: 1 cassette file(s), 0 finding(s), 0 warning(s)\n")


def test_a_real_secret_beside_the_placeholder_is_still_a_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = yaml.safe_load((BUNDLED / "openai-chat-finish-length-usage.yaml").read_text())
    chunk = doc["interactions"][0]["response"]["chunks"][0]
    for name, text in (("placeholder", "https://bob:REDACTED@h/x"), ("password", "https://bob:hunter2@h/x"),
                       ("longer", "https://bob:REDACTEDx@h/x"), ("key", f"REDACTED {KEY}")):
        chunk["text"] = f"data: {text}\n\n"
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    status, lines, _ = _run(capsys, str(tmp_path))
    assert status == 1
    assert lines == [f"{tmp_path / 'key.yaml'}: interaction 0: response body: 1 secret (ssemock-openai-anthropic-key)",
                     f"{tmp_path / 'longer.yaml'}: interaction 0: response body: 1 secret (ssemock-url-password)",
                     f"{tmp_path / 'password.yaml'}: interaction 0: response body: 1 secret (ssemock-url-password)"]


def test_max_size_takes_a_unit_and_a_bad_one_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_bytes((BUNDLED / "openai-chat-finish-length-usage.yaml").read_bytes())
    size = cassette.stat().st_size  # 2,004 bytes
    for text, status in (("120MB", 0), ("1GiB", 0), ("2kB", 1), ("1KiB", 1), (str(size), 0), (str(size - 1), 1)):
        assert _run(capsys, str(cassette), "--max-size", text)[0] == status, text
    assert _run(capsys, str(cassette), "--max-size", "2kB")[1] == [
        f"{cassette}: {size} bytes, over the --max-size of 2000 bytes (not read further)"]
    with pytest.raises(SystemExit) as usage:
        main(["check", str(cassette), "--max-size", "12XB"])
    assert usage.value.code == 2
    assert capsys.readouterr().err == ("ssemock check: error: argument --max-size: expected a size in bytes >= 1 "
                                       "(65536, 64KiB, 120MB or 1GiB), got '12XB'\n")


def test_a_file_of_empty_lists_is_refused_early_in_bounded_memory(tmp_path: Path) -> None:
    """``[[], [], ...]`` of 120 MB took 2 min 32 s and 2.5 GB before its error (a list at the top, so no
    item bound applied, and 30 million nodes, within the bound of 32 million)."""
    path = tmp_path / "lists.yaml"
    with path.open("w") as out:
        out.write("[")
        for _ in range(100):
            out.write("[], " * 100_000)  # 40 MB, 10,000,000 empty lists
        out.write("[]]\n")
    size = path.stat().st_size
    done, peak = run_measured([sys.executable, "-m", "ssemock", "check", str(path), "--max-size", "120MB"],
                              tmp_path / "peak")
    assert done.returncode == 1, done.stderr
    assert done.stdout == (f"{path}: not a loadable cassette: line 1: expected YAML of at most one node (scalar, "
                           "sequence or mapping) per 8 characters past its first 1,000,000 nodes\n")
    assert peak < 10 * size, f"{peak:,} bytes at the peak for a file of {size:,}"  # was 21 times its size


def test_the_pre_commit_hook_runs_the_check_on_the_staged_cassettes(tmp_path: Path) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "ssemock-check" and hook["language"] == "python"
    files = re.compile(hook["files"])
    assert files.search("tests/cassettes/test_chat/test_hello.yaml") and files.search("cassettes/x.yml")
    assert not files.search("scenarios/stall.yaml.bak") and not files.search("pyproject.toml")
    leaky = _leaky(tmp_path)
    clean = BUNDLED / "anthropic-messages-thinking.yaml"
    entry = shlex.split(hook["entry"])
    assert entry[0] == "ssemock"  # the console script this package installs; run here through -m
    for staged, expected in (([clean], 0), ([clean, leaky], 1)):
        done = subprocess.run([sys.executable, "-m", "ssemock", *entry[1:], *map(str, staged)],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == expected, done.stderr
        assert all(line.startswith(f"{leaky}: ") for line in done.stdout.splitlines())


INNER = """
import httpx
import pytest
from pathlib import Path
from ssemock.cassette import load

OWN = Path(__file__).parent / "cassettes" / "test_chat" / "test_tools.yaml"
EXTRA = Path(__file__).parent / "more" / "extra.yaml"


@pytest.mark.ssemock(cassette="test_tools")
@pytest.mark.parametrize("n", range(4))
def test_tools(sse_mock, n):
    request = load(OWN).interactions[0].request  # only the first of its two interactions
    response = httpx.post(sse_mock.url + request.path, content=request.body,
                          headers={"content-type": "application/json"})
    assert response.status_code == 200


@pytest.mark.ssemock(cassette="extra")
def test_through_the_alias(ssemock):
    request = load(EXTRA).interactions[0].request
    response = httpx.post(ssemock.url + request.path, content=request.body,
                          headers={"content-type": "application/json"})
    assert response.status_code == 200


def test_without_the_fixture():
    pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_report_unused_lists_what_no_test_played(pytester: pytest.Pytester, workers: list[str]) -> None:
    pytester.makeini(INI)
    own = pytester.mkdir("cassettes") / "test_chat"
    own.mkdir()
    (own / "test_tools.yaml").write_bytes((BUNDLED / "openai-chat-tool-calls-usage.yaml").read_bytes())
    (own / "test_orphan.yaml").write_bytes((BUNDLED / "anthropic-messages-thinking.yaml").read_bytes())
    more = pytester.mkdir("more")
    (more / "extra.yaml").write_bytes((BUNDLED / "openai-responses-function-call.yaml").read_bytes())
    (own / "junk.yaml").write_bytes(b"\xf6\x00 not text")  # files that are not cassettes are named, not skipped
    os.mkfifo(own / "fifo.yaml")
    (own / "gone.yaml").symlink_to(own / "nowhere.yaml")
    pytester.makepyfile(test_chat=INNER)
    result = pytester.runpytest_subprocess("-p", "no:randomly", "--ssemock-report-unused",
                                           "--ssemock-cassettes", str(more), *workers)
    result.assert_outcomes(passed=6)
    section = result.stdout.str().split("ssemock: cassettes and interactions no test played", 1)[1]
    lines = [ln for ln in section.splitlines()[1:] if ln.strip() and not ln.startswith("=")]
    assert lines == [  # counts from the bundled recordings copied above
        "cassettes/test_chat/test_orphan.yaml: never played (1 interaction(s))",
        "cassettes/test_chat/test_tools.yaml: interaction 1 (POST /v1/chat/completions) never played",
        "more/extra.yaml: interaction 1 (POST /v1/responses) never played",
        "cassettes/test_chat/fifo.yaml: not read, so not checked: expected a regular file, got 'a FIFO (named pipe)'",
        "cassettes/test_chat/junk.yaml: not read, so not checked: expected a readable UTF-8 YAML file, got "
        "\"'utf-8' codec can't decode byte 0xf6 in position 0: invalid start byte\"",
        "cassettes/test_chat/gone.yaml: not read, so not checked: a symbolic link to a missing file",
    ]


def test_without_the_option_there_is_no_report(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    assert "no test played" not in result.stdout.str()


def test_the_ci_page_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/how-to/ci.md: its ``ssemock check`` command and its pre-commit config, run on a cassette."""
    page = "docs/how-to/ci.md"
    section = (ROOT / page).read_text(encoding="utf-8")
    (command,) = (block.strip() for block in page_blocks(page, "sh"))
    (config,) = page_blocks(page, "yaml")
    (tmp_path / "cassettes").mkdir(parents=True)
    (tmp_path / "cassettes" / "chat.yaml").write_bytes((BUNDLED / "openai-chat-finish-length-usage.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[:2] == ["ssemock", "check"] and main(argv[1:]) == 0
    assert "1 cassette file(s), 0 finding(s), 1 warning(s)" in capsys.readouterr().err  # bundled: no recorded_at
    (hook,) = yaml.safe_load(config)["repos"][0]["hooks"]
    (shipped,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == shipped["id"]
    assert main([*shlex.split(shipped["entry"])[1:], *hook["args"], "cassettes/chat.yaml"]) == 0
    assert "--ssemock-report-unused" in section


def test_team_keys_passcodes_and_one_time_passwords_are_secret_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = yaml.safe_load((BUNDLED / "openai-chat-tool-calls-usage.yaml").read_text())
    request = doc["interactions"][0]["request"]
    request["headers"].update({"x-honeycomb-team": "hcaik-check-team-0123", "x-passcode": "check-482913",
                               "x-otp": "check-771204"})
    request["query"] = [["team", "platform"]]  # data, not a credential
    target = tmp_path / "kinds.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    status, lines, _ = _run(capsys, str(target))
    assert status == 1
    assert lines == [f"{target}: interaction 0: request header '{name}': a secret name (the recorder drops it)"
                     for name in ("x-honeycomb-team", "x-passcode", "x-otp")]
