"""The recorder against hostile or careless input: credentials in the target URL, keys in
paths and cassette names, encoded request bodies, bad names and options, its own admin
path, JSON-escaped keys. Real servers on 127.0.0.1, real clients, no mocks."""

from __future__ import annotations

import base64
import signal
from pathlib import Path

from ssemock import Cassette
from ssemock.recorder import Recorder

from .rawclient import raw_json
from .test_recorder_scale import RecorderProcess
from .upstream import Upstream

PASSWORD = "hunter2pass"


def test_credentials_in_the_target_go_upstream_as_basic_auth_and_nowhere_else(tmp_path: Path) -> None:
    with Upstream() as up:
        host = up.url.removeprefix("http://")
        target = f"http://alice:{PASSWORD}@{host}"
        proc = RecorderProcess(target, tmp_path, "--cassette", "c", shown=f"http://***@{host}")
        answer = raw_json(proc.url, "POST", "/json", {"q": 1})
        status, err = proc.finish(signal.SIGTERM)
    assert answer.status == 200 and status == 0
    sent = up.received[0]["headers"]
    assert sent["Host"] == host
    assert sent["Authorization"] == "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    written = (tmp_path / "c.yaml").read_text()
    for text in (proc.first_line, err, written):
        assert PASSWORD not in text and "alice" not in text
    cassette = Cassette.load(tmp_path / "c.yaml")
    assert cassette.provenance["target"] == f"http://***@{host}"
    assert dict((k.lower(), v) for k, v in cassette.interactions[0].request.headers)["host"] == host


def test_the_clients_own_authorization_wins_over_the_targets_user_info(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url.replace("http://", "http://bob:pw@"), tmp_path) as rec:
        assert rec.target == up.url.replace("http://", "http://***@")
        raw_json(rec.url, "POST", "/json", {}, headers={"Authorization": "Bearer mine"})
    assert up.received[0]["headers"]["Authorization"] == "Bearer mine"
