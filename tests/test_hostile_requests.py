"""Requests the replay routes did not expect: methods outside the usual list, odd cassette
names. Real server on 127.0.0.1, real clients (httpx)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ssemock import MockServer, Recorder
from ssemock.cli import main

from .upstream import Upstream

# WebDAV's PROPFIND (RFC 4918) and the QUERY method draft: tokens (RFC 9110 §9.1), not in the
# usual list; the cassette loader accepts them, so replay must answer them.
DAV = """ssemock_cassette: 1
name: dav
interactions:
- request: {method: PROPFIND, path: /dav/notes}
  response:
    status: 207
    headers: [[content-type, text/event-stream]]
    chunks: [{t: 0, text: "data: listed\\n\\n"}]
- request: {method: QUERY, path: /v1/search}
  response:
    headers: [[content-type, text/event-stream]]
    chunks: [{t: 0, text: "data: found\\n\\n"}]
"""


@pytest.fixture(scope="module")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MockServer]:
    root: Path = tmp_path_factory.mktemp("dav")
    (root / "dav.yaml").write_text(DAV, encoding="utf-8")
    with MockServer(root, scenarios=[], timing_scale=0) as server:
        yield server


@pytest.mark.parametrize(("method", "path", "status", "body"), [
    ("PROPFIND", "/dav/notes", 207, "data: listed\n\n"),
    ("QUERY", "/v1/search", 200, "data: found\n\n"),
    ("PROPFIND", "/_ssemock/c/dav/dav/notes", 207, "data: listed\n\n"),
])
def test_a_recorded_method_outside_the_usual_list_is_replayed(
    dav: MockServer, method: str, path: str, status: int, body: str
) -> None:
    answer = httpx.request(method, dav.url + path)
    assert (answer.status_code, answer.text) == (status, body)
    assert dav.requests[-1]["method"] == method and dav.requests[-1]["outcome"] == "complete"


@pytest.mark.parametrize("method", ["MKCOL", "QUERY", "PROPPATCH"])
def test_an_unrecorded_method_gets_the_json_no_match_not_a_text_405(dav: MockServer, method: str) -> None:
    answer = httpx.request(method, dav.url + "/v1/elsewhere")
    assert answer.status_code == 404 and answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert error["type"] == "ssemock_no_match" and f"{method} /v1/elsewhere" in error["message"]


@pytest.mark.parametrize(("name", "says"), [
    ("a//b", "(part 2 of 3 between '/' is empty)"),
    ("a/", "(part 2 of 2 between '/' is empty)"),
    ("a b", "(it holds ' ')"),
    ("x.yaml", "must not end in .yaml or .yml: the file is NAME.yaml, so use 'x'"),
])
def test_a_bad_cassette_name_says_what_is_wrong_with_it(name: str, says: str, tmp_path: Path) -> None:
    """``x.yaml`` created ``x.yaml.yaml``; ``a//b`` did not say which part was empty."""
    with Upstream() as up, Recorder(up.url, tmp_path / "out") as rec:
        answer = httpx.post(rec.url + "/json", json={}, headers={"X-SSEMock-Cassette": name})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "ssemock_bad_cassette" and error["message"].endswith(says)
    assert up.received == [] and not (tmp_path / "out").exists()


def test_record_refuses_a_cassette_directory_where_nothing_can_be_created(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """``/proc`` passes a permission check as root; it started, then wrote nothing."""
    assert main(["record", "--target", "http://127.0.0.1:9", "--port", "0", "--cassettes", "/proc/ssemock"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssemock: error: cassettes directory '/proc/ssemock': cannot create files in '/proc' (")
    assert err.count("\n") == 1
