"""``ssemock check-client --tls [--http2]``: the cases served over https by ssemock's local authority, which the
client trusts through ``SSL_CERT_FILE`` alone (the reference reader over aiohttp; httpx-sse over httpx), the
presets of the TLS layer among them; without ``--tls`` such a preset is refused as bad usage.

Expected grades: the reference reader (the WHATWG decoder) keeps every event under ``tls-split-crlf`` (CRLF
line ends, a record ending between each CR and LF) and reports the stream cut inside an event without
``close_notify`` (``tls-cut-without-close-notify``: no chunked terminator, RFC 9112 section 7.1).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .checkclients import EXAMPLES, READER, check_client, verdicts

CASSETTE = "openai-chat-finish-length-usage"
TLS_PRESETS = "tls-split-crlf,tls-cut-without-close-notify,crlf"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the local authority, made for this test
    return tmp_path / "cache" / "ssemock" / "tls"


def test_over_tls_the_reference_reader_passes_the_tls_presets(tmp_path: Path, cache: Path) -> None:
    done, report = check_client(tmp_path, "--tls", "--cassette", CASSETTE, "--scenario", TLS_PRESETS,
                                command=[*READER, "--timeout", "5"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert verdicts(report) == {"clean": "pass", "crlf": "pass", "tls-split-crlf": "pass",
                                "tls-cut-without-close-notify": "pass"}
    cut = next(c for c in report["cases"] if c["scenario"] == "tls-cut-without-close-notify")
    assert cut["exit_status"] != 0 and cut["category"] == "resilience"
    line = next(c for c in report["cases"] if c["scenario"] == "tls-split-crlf")["reproduce"]
    assert "ssemock serve --port 8765 --timing-scale 0 --tls " in line
    assert f"SSL_CERT_FILE={cache / 'ca.pem'}" in line and "SSEMOCK_URL=https://127.0.0.1:8765/" in line
    # the server of the line answers with the certificate that authority signed, whatever XDG_CACHE_HOME is then
    assert f"--tls-cert {cache / 'server.pem'} --tls-key {cache / 'server-key.pem'}" in line


def test_a_tls_or_http2_preset_without_tls_or_http2_is_bad_usage(tmp_path: Path, cache: Path) -> None:
    command = [sys.executable, str(EXAMPLES / "httpx_sse_reader.py")]
    done, _ = check_client(tmp_path, "--cassette", CASSETTE, "--scenario", "tls-split-crlf", command=command)
    assert done.returncode == 2
    assert "--scenario tls-split-crlf: its steps act on TLS records: add --tls" in done.stderr
    done, _ = check_client(tmp_path, "--cassette", CASSETTE, "--scenario", "h2-split-crlf", command=command)
    assert done.returncode == 2 and "add --http2" in done.stderr
    done, report = check_client(tmp_path, "--tls", "--http2", "--cassette", CASSETTE, "--shrink-budget", "0",
                                "--scenario", "tls-split-crlf,h2-split-crlf", command=command)
    # httpx-sse reads with httpx over HTTP/1.1 (no http2=True): the HTTP/2 preset's steps are refused (400)
    assert verdicts(report)["tls-split-crlf"] == "pass"
    assert verdicts(report)["h2-split-crlf"] == "fail"


def test_an_http2_fault_a_client_never_saw_is_no_pass(tmp_path: Path) -> None:
    """``--http2`` without ``--tls`` serves h2c; the reference reader speaks HTTP/1.1 (aiohttp), so the HTTP/2
    presets' requests are refused (400 ``ssemock_needs_http2``) and no GOAWAY or RST_STREAM is ever sent:
    its exit status 1 reports the refusal, not the fault (docs: a client that does not speak HTTP/2 fails
    them)."""
    done, report = check_client(tmp_path, "--http2", "--cassette", CASSETTE, "--shrink-budget", "0",
                                "--scenario", "h2-goaway-mid-stream,h2-reset-mid-event",
                                command=[*READER, "--timeout", "5"])
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdicts(report) == {"clean": "pass", "h2-goaway-mid-stream": "fail", "h2-reset-mid-event": "fail"}
    for case in (c for c in report["cases"] if c["scenario"]):
        assert "did not speak HTTP/2" in case["reason"] and "ssemock_needs_http2" in case["reason"]
