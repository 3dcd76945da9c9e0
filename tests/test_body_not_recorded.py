"""A replay never pretends: an interaction recorded without its body (it did not decode, e.g. ``br``) is
marked so in the cassette, as data, and refused on replay with the reason; ``inspect`` and ``check`` show
it. An encoded body stored decoded because of a secret outside its decoded bytes says so.

It replayed as an empty 200 whose journal said ``complete`` with nothing injected, and ``inspect`` and
``check`` were silent. The real recorder (upstream, recorder, client over 127.0.0.1), the real replay
server read by httpx, the real ``ssemock`` process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ssemock import Cassette, CassetteError, Chunk, Interaction, MockServer, Request, Response
from ssemock.cassette import load, save
from ssemock.recorder import Recorder

from .test_content_coding import CLEAN, KEY, SECRET, TRAILING, CodedUpstream, gzip_named, record

BROTLI = ("br", SECRET)  # labelled br, and not brotli: ssemock decodes no br, so never stores it unscanned


def _ssemock(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ssemock", *argv], capture_output=True, text=True, timeout=120)


def test_a_body_that_did_not_decode_is_marked_in_the_cassette_and_refused_on_replay(tmp_path: Path) -> None:
    got, _ = record(tmp_path, {"brotli": BROTLI, "trailing": ("gzip", TRAILING)})
    assert got == {"brotli": SECRET, "trailing": TRAILING}  # the client got every byte as it came
    for name in ("brotli", "trailing"):
        text = (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
        assert "\n    body_not_recorded: " in text and KEY not in text  # data, not a comment
        [interaction] = load(tmp_path / f"{name}.yaml").interactions
        reason = interaction.response.body_not_recorded
        assert reason is not None and "does not decode" in reason and interaction.response.chunks == []
    reason = load(tmp_path / "brotli.yaml").interactions[0].response.body_not_recorded
    assert reason == ("Content-Encoding 'br' does not decode: unknown content coding 'br' (decoded: gzip, x-gzip, "
                      "deflate, identity)")

    with MockServer(cassettes=tmp_path, timing_scale=0) as server:
        answer = httpx.get(server.url + "/coded/brotli", headers={"X-SSEMock-Cassette": "brotli"}, timeout=10)
        [entry] = server.requests
    assert answer.status_code == 500
    assert answer.headers["X-SSEMock-Body-Not-Recorded"] == reason
    error = answer.json()["error"]
    assert (error["type"], error["cassette"], error["interaction"], error["reason"]) == (
        "ssemock_body_not_recorded", "brotli", 0, reason)
    assert error["message"].startswith(f"brotli #0 matches, but its body was not recorded ({reason}): record it again")
    assert (entry["outcome"], entry["status"], entry["error"]["type"]) == ("refused", 500, "ssemock_body_not_recorded")


def test_inspect_and_check_show_a_body_not_recorded(tmp_path: Path) -> None:
    record(tmp_path, {"brotli": BROTLI})
    file = tmp_path / "brotli.yaml"
    inspected = _ssemock("inspect", str(file))
    assert inspected.returncode == 0
    assert ("  body not recorded: Content-Encoding 'br' does not decode: unknown content coding 'br' (decoded: gzip, "
            "x-gzip, deflate, identity) (a replay answers 500 ssemock_body_not_recorded)"
            ) in inspected.stdout.splitlines()
    checked = _ssemock("check", str(file))
    assert checked.returncode == 1
    assert (f"{file}: interaction 0: response body not recorded (Content-Encoding 'br' does not decode: unknown "
            "content coding 'br' (decoded: gzip, x-gzip, deflate, identity)): a replay answers 500 "
            "ssemock_body_not_recorded; record it again"
            ) in checked.stdout.splitlines()


def test_the_recorder_in_replay_mode_refuses_it_too(tmp_path: Path) -> None:
    record(tmp_path, {"brotli": BROTLI})
    with CodedUpstream({"brotli": BROTLI}) as up, Recorder(up.url, tmp_path, mode="once") as rec:
        answer = httpx.get(rec.url + "/coded/brotli", headers={"X-SSEMock-Cassette": "brotli"}, timeout=10)
    assert answer.status_code == 500 and answer.json()["error"]["type"] == "ssemock_body_not_recorded"
    assert "X-SSEMock-Body-Not-Recorded" in answer.headers


def test_a_secret_only_in_a_gzip_file_name_says_the_body_was_stored_decoded(tmp_path: Path) -> None:
    """The progress line said nothing was filtered, while the body was stored decoded."""
    _, progress = record(tmp_path, {"named": ("gzip", gzip_named(CLEAN, KEY))})
    [row] = progress
    [line] = [line for line in row["filtered"] if "stored decoded" in line]  # type: ignore[attr-defined]
    assert line.startswith("response body stored decoded, without its Content-Encoding: its encoded bytes held a "
                           "secret (")
    assert "outside the decoded body (e.g. a gzip header's file name), which is not kept" in line
    [interaction] = load(tmp_path / "named.yaml").interactions
    assert interaction.response.body == CLEAN and interaction.response.header("content-encoding") is None


@pytest.mark.parametrize(("reason", "chunks", "expected"), [
    ("x" * 501, [], "why the body was not recorded, one line of at most 500 characters"),
    ("two\nlines", [], "why the body was not recorded, one line of at most 500 characters"),
    ("br did not decode", [Chunk(0.0, b"data: x\n\n")], "no chunks: a body not recorded has none"),
])
def test_a_bad_body_not_recorded_field_names_the_field(
    tmp_path: Path, reason: str, chunks: list[Chunk], expected: str
) -> None:
    cassette = Cassette("bad", [Interaction(Request("GET", "/x"), Response(chunks=chunks, body_not_recorded=reason))])
    with pytest.raises(CassetteError, match=r"interactions\[0\]\.response\.body_not_recorded: expected " + expected):
        MockServer(cassettes=[cassette])
    if not chunks:
        save(Cassette("good", [Interaction(Request("GET", "/x"), Response(body_not_recorded="br"))]),
             tmp_path / "good.yaml")
        text = (tmp_path / "good.yaml").read_text(encoding="utf-8").replace(
            "body_not_recorded: br", "body_not_recorded: " + ('"two\\nlines"' if "\n" in reason else reason))
        (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
        with pytest.raises(CassetteError, match=r"bad\.yaml: interactions\[0\]\.response\.body_not_recorded: "):
            load(tmp_path / "bad.yaml")
