"""HAR import: a HAR written by headless Chromium (Playwright ``recordHar``) against the replay server,
imported and replayed again; and the HAR 1.2 variants other tools write (base64 bodies, cookies,
HTTP/2 pseudo-headers, aborted entries, no timings), with their errors."""

from __future__ import annotations

import base64
import copy
import gzip
import json
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette, ImportFormatError, MockServer
from ssemock.cassette import dumps, load
from ssemock.cli import main
from ssemock.importers.har import import_har
from ssemock.sse import decode, split_blocks

from .conftest import CHROMIUM, NODE_MODULES, require
from .docs_examples import page_blocks
from .processes import run_measured

SCRIPT = Path(__file__).parent / "node" / "record-har.mjs"
CASSETTE = "openai-chat-finish-length-usage"
INTERVAL = 0.1  # seconds between chunks, set by the scenario below
SECRETS = ("HARHEADERSECRET", "HARBODYSECRET", "HARQUERYSECRET")  # what record-har.mjs sends
PACED = f"""ssemock_scenario: 1
name: paced
description: "{INTERVAL} s between chunks"
preserves: events
steps:
- timing: {{mode: fixed, interval: {INTERVAL}}}
"""


@pytest.fixture(scope="module")
def browser_har(tmp_path_factory: pytest.TempPathFactory, bundled: dict[str, Cassette]) -> dict[str, Any]:
    """A HAR recorded by Chromium: a cross-origin page POSTs a chat request with keys in it, reads the stream."""
    require("Chromium (/usr/bin/chromium) and tests/node's packages", CHROMIUM.exists() and NODE_MODULES.is_dir())
    folder = tmp_path_factory.mktemp("har")
    (folder / "paced.yaml").write_text(PACED)
    har = folder / "chromium.har"
    before = datetime.now(UTC).replace(microsecond=0)
    with MockServer([bundled[CASSETTE]], scenarios=[folder / "paced.yaml"], scenario="paced") as server:
        url = f"{server.url}/v1/chat/completions?key=AIzaSyHARQUERYSECRET0123456789abcdefghi"
        done = subprocess.run(["node", str(SCRIPT), url, str(har)], capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    page = json.loads(done.stdout)
    assert page["status"] == 200
    return {"path": har, "page": page, "before": before, "after": datetime.now(UTC)}


def test_a_chromium_har_round_trips_to_the_cassette_events(
    browser_har: dict[str, Any], bundled: dict[str, Cassette], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = bundled[CASSETTE].interactions[0].response
    out = tmp_path / "out"
    assert main(["import", "har", str(browser_har["path"]), "-o", str(out), "--streams-only"]) == 0
    assert "1 interaction(s), timing: from the recording" in capsys.readouterr().out
    saved = out / "chromium.yaml"
    cassette = load(saved)
    (inter,) = cassette.interactions  # the page load is not a stream
    # The same bytes the browser read, cut where the recording's events end.
    assert inter.response.body == recorded.body == browser_har["page"]["text"].encode()
    assert [c.data for c in inter.response.chunks] == [c.data for c in recorded.chunks]
    assert inter.request.method == "POST" and inter.request.path == "/v1/chat/completions"
    assert inter.request.json()["messages"] == [{"role": "user", "content": "Say hello"}]
    # Timing from the HAR (the documented rule): first byte at send + wait, last at + receive, in
    # seconds. The scenario waits INTERVAL before each chunk, but Playwright times the entry from the
    # browser's events as it gets them: on a loaded machine "receive" comes out shorter than the
    # stream took, so the times are checked against the HAR's own, not against INTERVAL.
    response = inter.response
    (post,) = [e for e in _entries(browser_har["path"])["log"]["entries"] if e["request"]["method"] == "POST"]
    send, wait, receive = (post["timings"][k] for k in ("send", "wait", "receive"))
    assert receive > 0
    assert response.timed and response.start == response.chunks[0].t == round((send + wait) / 1000, 6)
    assert response.end.t == round(response.start + receive / 1000, 6)
    assert [c.t for c in response.chunks] == sorted(c.t for c in response.chunks)
    recorded_at = datetime.fromisoformat(cassette.provenance["recorded_at"])
    assert browser_har["before"] <= recorded_at <= browser_har["after"]
    assert cassette.provenance["har_creator"].startswith("Playwright ")
    text = saved.read_text()
    for secret in SECRETS:  # Authorization header, ?key= and the body's api_key: the recorder's rules
        assert secret in browser_har["path"].read_text() and secret not in text
    assert not {k.lower() for k, _ in inter.request.headers} & {"authorization", "cookie"}
    assert inter.request.json()["api_key"] == "REDACTED" and inter.request.query == []
    # Replayed again, an httpx client reads the events of the original recording.
    with MockServer([cassette], timing_scale=0) as server:
        body = httpx.post(f"{server.url}/v1/chat/completions", json=inter.request.json(), timeout=30).content
    assert decode(body) == decode(recorded.body) and len(decode(body)) == 5


def _entries(har: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(har.read_text())
    return doc


def test_base64_content_and_post_data_import_like_text(browser_har: dict[str, Any], tmp_path: Path) -> None:
    """mitmproxy and Charles write bodies as base64 (``encoding: base64``): same cassette."""
    doc = _entries(browser_har["path"])
    encoded = copy.deepcopy(doc)
    for entry in encoded["log"]["entries"]:
        content = entry["response"]["content"]
        content["text"] = base64.b64encode(content["text"].encode()).decode()
        content["encoding"] = "base64"
        if "postData" in entry["request"]:
            post = entry["request"]["postData"]
            post["text"], post["encoding"] = base64.b64encode(post["text"].encode()).decode(), "base64"
    plain, b64 = tmp_path / "plain.har", tmp_path / "b64.har"
    plain.write_text(json.dumps(doc))
    b64.write_text(json.dumps(encoded))
    assert dumps(import_har(b64, name="x")) == dumps(import_har(plain, name="x")).replace(
        "imported_from: plain.har", "imported_from: b64.har")
    assert len(import_har(plain).interactions) == 2  # every entry by default: the page and the stream


def _har(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"log": {"version": "1.2", "creator": {"name": "mitmproxy", "version": "11.0"}, "entries": list(entries)}}


def _entry(**response: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "startedDateTime": "2026-03-04T05:06:07.123+01:00",
        "request": {"method": "POST", "url": "https://api.example.com/v1/messages", "httpVersion": "HTTP/2.0",
                    "headers": [{"name": ":authority", "value": "api.example.com"},
                                {"name": "cookie", "value": "session=HARCOOKIEVALUE123456"},
                                {"name": "x-api-key", "value": "sk-ant-api03-HARKEY0123456789abcdefghijkl"}],
                    "cookies": [{"name": "session", "value": "HARCOOKIEVALUE123456"}],
                    "postData": {"mimeType": "application/json", "text": '{"stream": true}'}},
        "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2.0",
                     "headers": [{"name": "content-type", "value": "text/event-stream"},
                                 {"name": "content-encoding", "value": "gzip"},
                                 {"name": "set-cookie", "value": "session=HARSETCOOKIE0123456"}],
                     "cookies": [{"name": "session", "value": "HARSETCOOKIE0123456"}],
                     "content": {"size": 40, "mimeType": "text/event-stream",
                                 "text": "event: ping\r\ndata: {}\r\n\r\nevent: message_stop\r\ndata: {}\r\n\r\n"}},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": -1, "wait": -1, "receive": -1},
    }
    base["response"].update(response)
    return base


def test_tool_har_drops_cookies_and_pseudo_headers_and_skips_aborted_entries(tmp_path: Path) -> None:
    aborted = _entry(status=0)
    aborted["request"]["url"] = "https://api.example.com/aborted"
    data_url = _entry()
    data_url["request"]["url"] = "data:text/plain,hello"
    har = tmp_path / "mitm.har"
    har.write_text(json.dumps(_har(_entry(), aborted, data_url)))
    cassette = import_har(har)
    (inter,) = cassette.interactions
    assert cassette.provenance["entries_skipped"].startswith("2 ")
    assert cassette.provenance["recorded_at"] == "2026-03-04T04:06:07Z"  # startedDateTime, in UTC
    assert [k for k, _ in inter.request.headers] == []  # :authority, cookie, x-api-key
    assert [k for k, _ in inter.response.headers] == ["content-type"]  # HAR bodies are decoded; no set-cookie
    assert not inter.response.timed and inter.response.start == 0  # every timing -1: not known
    assert [c.data for c in inter.response.chunks] == [b"event: ping\r\ndata: {}\r\n\r\n",
                                                        b"event: message_stop\r\ndata: {}\r\n\r\n"]
    text = dumps(cassette)
    for secret in ("HARCOOKIEVALUE", "HARSETCOOKIE", "HARKEY"):
        assert secret not in text


@pytest.mark.parametrize(("doc", "field", "expected"), [
    ("not json", "", "a HAR file (JSON)"),
    ('{"log": {}}', "log.entries", "a HAR file with a list of entries"),
    (json.dumps(_har({"request": {"method": "GET"}})), "log.entries[0].request.url", "a string"),
    (json.dumps(_har(_entry(content={"text": "%%%", "encoding": "base64"}))), "log.entries[0].response.content.text",
     "base64 text"),
    (json.dumps(_har({**_entry(), "startedDateTime": "yesterday"})), "log.entries[0].startedDateTime", "ISO 8601"),
    # HAR 1.2 timings are milliseconds, -1 when not known; a replay lasts at most 86,400 s
    (json.dumps(_har({**_entry(), "timings": {"send": 1, "wait": 1e308, "receive": 5}})),
     "log.entries[0].timings.wait", "milliseconds from 0 to 86,400,000"),
    (json.dumps(_har({**_entry(), "timings": {"send": 1, "wait": "5", "receive": 5}})),
     "log.entries[0].timings.wait", "milliseconds from 0 to 86,400,000"),
    (json.dumps(_har({**_entry(), "timings": {"send": 0, "wait": 8e7, "receive": 8e7}})),
     "log.entries[0].timings", "send + wait + receive at most 86,400,000 ms"),
    (json.dumps(_har({**_entry(), "timings": {"send": 1, "wait": float("nan"), "receive": 5}})), "",
     "a HAR file (JSON)"),  # NaN and Infinity are not JSON (RFC 8259)
])
def test_bad_har_files_name_the_file_and_field(tmp_path: Path, doc: str, field: str, expected: str) -> None:
    bad = tmp_path / "bad.har"
    bad.write_text(doc)
    with pytest.raises(ImportFormatError) as info:
        import_har(bad)
    assert info.value.file == str(bad) and info.value.field == field and expected in info.value.expected


def test_cli_har_bounds_entries_with_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    har = tmp_path / "two.har"
    har.write_text(json.dumps(_har(_entry(), _entry())))
    out = tmp_path / "out"
    assert main(["import", "har", str(har), "-o", str(out), "--max-entries", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "log.entries: expected at most 1 entries (--max-entries), got more (the rest not read)" in err
    assert not out.exists()
    assert main(["import", "har", str(har), "-o", str(out), "--max-size", "100"]) == 2
    assert f"{har}: expected a file of at most 100 bytes, got {har.stat().st_size}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:  # argparse: an integer >= 1
        main(["import", "har", str(har), "-o", str(out), "--max-entries", "0"])
    assert usage.value.code == 2 and "--max-entries: expected an integer >= 1" in capsys.readouterr().err
    assert main(["import", "har", str(har), "-o", str(out)]) == 0
    assert len(load(out / "two.yaml").interactions) == 2


def test_har_timings_place_first_and_last_byte(tmp_path: Path) -> None:
    entry = _entry()
    entry["timings"] = {"blocked": 3.0, "dns": -1, "connect": -1, "send": 1.5, "wait": 250.5, "receive": 1000.0}
    har = tmp_path / "t.har"
    har.write_text(json.dumps(_har(entry)))
    response = import_har(har).interactions[0].response
    first, second = response.chunks
    assert response.timed and response.start == first.t == 0.252  # send + wait, seconds
    assert response.end.t == 1.252  # + receive
    assert second.t == round(0.252 + 1.0 * len(first.data) / len(response.body), 6)  # placed by byte offset
    started = time.monotonic()
    with MockServer([import_har(har)]) as server:
        body = httpx.post(f"{server.url}/v1/messages", json={"stream": True}, timeout=30).content
    assert time.monotonic() - started >= 0.252 + 0.4  # replayed with the HAR's delays (a lower bound)
    assert [e.type for e in decode(body)] == ["ping", "message_stop"]  # type: ignore[union-attr]


def test_the_docs_har_example_runs(browser_har: dict[str, Any], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/how-to/import.md: its ``ssemock import har`` line, run on a browser's HAR file."""
    (line,) = [ln for block in page_blocks("docs/how-to/import.md", "sh") for ln in block.splitlines()
               if ln.startswith("ssemock import har ")]
    (tmp_path / "session.har").write_bytes(browser_har["path"].read_bytes())
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(line.partition("#")[0])[1:]) == 0
    (inter,) = load(tmp_path / "cassettes" / "session.yaml").interactions
    assert decode(inter.response.body)[-1].data == "[DONE]"  # type: ignore[union-attr]


def test_streams_only_reads_the_mime_type_and_notes_missing_bodies(tmp_path: Path) -> None:
    """Devtools may keep no body (``content.text`` absent) and name the type only in ``content.mimeType``."""
    untyped = _entry(headers=[])  # no content-type header; content.mimeType says text/event-stream
    bodiless = _entry(content={"size": 0, "mimeType": "text/event-stream"})
    page = _entry(headers=[{"name": "content-type", "value": "text/html"}],
                  content={"size": 2, "mimeType": "text/html", "text": "hi"})
    har = tmp_path / "devtools.har"
    har.write_text(json.dumps(_har(untyped, bodiless, page)))
    cassette = import_har(har, streams_only=True)
    first, second = cassette.interactions
    assert decode(first.response.body)[-1].type == "message_stop"  # type: ignore[union-attr]
    assert second.response.body == b"" and second.response.chunks == []
    assert cassette.provenance["bodies_missing"].startswith("1 entries")
    assert cassette.provenance["entries_skipped"] == ("1 (no answer or only an interim 1xx one, not http(s), "
                                                      "or not text/event-stream)")


def test_a_mitmproxy_har_imports_the_bodies_it_relayed(bundled: dict[str, Cassette]) -> None:
    """mitmdump's hardump (tests/data/har/SOURCES.md): decoded bodies under a kept Content-Encoding header."""
    source = Path(__file__).parent / "data" / "har" / "mitmproxy.har"
    doc = json.loads(source.read_text())
    cassette = import_har(source)
    thinking, gzipped = cassette.interactions
    assert thinking.response.body == bundled["anthropic-messages-thinking"].interactions[0].response.body
    relayed = gzip.decompress(bundled["anthropic-messages-tool-use-gzip"].interactions[0].response.body)
    assert gzipped.response.body == relayed and len(relayed) == 1284
    assert gzipped.response.header("content-encoding") is None  # HAR text is decoded
    assert [e.type for e in decode(gzipped.response.body)][-1] == "message_stop"  # type: ignore[union-attr]
    assert thinking.request.query == [("beta", "true")] and thinking.request.path == "/v1/messages"
    timings = doc["log"]["entries"][0]["timings"]
    assert thinking.response.start == round((timings["send"] + timings["wait"]) / 1000, 6)
    assert thinking.response.end.t == round(thinking.response.start + timings["receive"] / 1000, 6)
    assert cassette.provenance["har_creator"] == "mitmproxy 11.0.2"
    started = doc["log"]["entries"][0]["startedDateTime"]  # "...+00:00" with microseconds
    assert cassette.provenance["recorded_at"] == started[:19] + "Z"
    text = dumps(cassette)
    assert "MITMKEY" in source.read_text() and "MITMKEY" not in text and "MITMCOOKIE" not in text


_PIECES = st.sampled_from([b"data: x", b"event: e", b": ping", b"\r", b"\n", b"\r\n", b"\xc3\xa9", b"\xff", b"{}"])


@settings(max_examples=60, deadline=None)
@given(body=st.lists(_PIECES, max_size=30).map(b"".join), as_base64=st.booleans())
def test_any_har_body_imports_byte_for_byte_in_blocks(tmp_path_factory: pytest.TempPathFactory, body: bytes,
                                                     as_base64: bool) -> None:
    """Whatever the body (not UTF-8 included, then base64 as HAR requires), the bytes come back, cut per block."""
    if not as_base64:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            as_base64 = True
    content: dict[str, Any] = {"mimeType": "text/event-stream"}
    if as_base64:
        content.update(text=base64.b64encode(body).decode(), encoding="base64")
    else:
        content["text"] = text
    har = tmp_path_factory.mktemp("prop") / "p.har"
    har.write_text(json.dumps(_har(_entry(content=content))))
    response = import_har(har).interactions[0].response
    assert response.body == body
    assert [c.data for c in response.chunks] == split_blocks(body)


@pytest.mark.parametrize("streams_only", [False, True])
def test_a_har_whose_entries_are_all_skipped_writes_nothing_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], streams_only: bool
) -> None:
    aborted = _entry(status=0)  # the browser got no answer
    not_a_url = _entry()
    not_a_url["request"]["url"] = "not a url"
    page = _entry(headers=[{"name": "content-type", "value": "text/html"}],
                  content={"size": 2, "mimeType": "text/html", "text": "hi"})
    entries = [aborted, not_a_url] + ([page] if streams_only else [])
    har = tmp_path / "skipped.har"
    har.write_text(json.dumps(_har(*entries)))
    out = tmp_path / "out"
    argv = ["import", "har", str(har), "-o", str(out)] + (["--streams-only"] if streams_only else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    wanted = "an http(s) request with an answer" + (" in text/event-stream" if streams_only else "")
    assert err == (f"ssemock: error: {har}: log.entries: expected at least one entry with {wanted}, "
                   f"got '{len(entries)} entries, all skipped'\n")
    assert not out.exists()
    empty = tmp_path / "empty.har"
    empty.write_text(json.dumps(_har()))
    with pytest.raises(ImportFormatError) as info:
        import_har(empty)
    assert info.value.field == "log.entries" and info.value.got == "no entry"


def _at(entry: dict[str, Any], path: str) -> dict[str, Any]:
    entry["request"]["url"] = "https://api.example.com" + path
    return entry


def test_an_entry_aborted_after_its_head_is_imported_as_the_cut_it_was(tmp_path: Path) -> None:
    """``net::ERR_ABORTED`` (the page stopped reading, or navigated away): Playwright keeps the head it got and
    ``response._failureText``, no content text and ``receive: -1``; Chromium's devtools ``response._error`` and
    what was received. Both were imported as a stream that ended cleanly."""
    playwright = _at(_entry(content={"size": -1, "mimeType": "text/event-stream"},
                            _failureText="net::ERR_ABORTED"), "/v1/playwright")
    playwright["timings"] = {"send": 0.5, "wait": 120, "receive": -1}
    devtools = _at(_entry(content={"size": 16, "mimeType": "text/event-stream", "text": 'data: {"a":1}\n\n'},
                          _error="net::ERR_ABORTED"), "/v1/devtools")
    unanswered = _at(_entry(status=0, _error="net::ERR_CONNECTION_REFUSED"), "/v1/unanswered")
    har = tmp_path / "aborted.har"
    har.write_text(json.dumps(_har(_at(_entry(), "/v1/complete"), playwright, devtools, unanswered)))
    assert main(["import", "har", str(har), "-o", str(tmp_path / "out")]) == 0
    cassette = load(tmp_path / "out" / "aborted.yaml")
    assert [(i.request.path, i.response.end.how) for i in cassette.interactions] == [
        ("/v1/complete", "clean"), ("/v1/playwright", "cut"), ("/v1/devtools", "cut")]
    assert cassette.interactions[1].response.end.t == 0.1205  # at the first byte: nothing was read after it
    assert cassette.provenance["entries_aborted"] == ("2 entries answered, then failed ('net::ERR_ABORTED'): "
                                                      "imported as ended 'cut', what was received and no more")
    assert cassette.provenance["entries_skipped"].startswith("1 (no answer")  # the one never answered
    with MockServer([cassette]) as server:
        complete = httpx.post(server.url + "/v1/complete", json={"stream": True})
        assert complete.status_code == 200 and complete.text.endswith("event: message_stop\r\ndata: {}\r\n\r\n")
        for path, received in (("/v1/playwright", b""), ("/v1/devtools", b'data: {"a":1}\n\n')):
            got = b""
            with pytest.raises(httpx.RemoteProtocolError), \
                    httpx.stream("POST", server.url + path, json={"stream": True}) as answer:
                assert answer.status_code == 200
                for piece in answer.iter_raw():
                    got += piece
            assert got == received, path


def test_a_har_over_the_entry_bound_is_refused_before_the_rest_is_parsed(tmp_path: Path) -> None:
    """200,000 entries were all parsed (12.5 s, 742 MB) before the bound of 10,000 refused the file."""
    one = json.dumps(_entry())
    har = tmp_path / "many.har"
    with har.open("w") as out:
        out.write('{"log": {"version": "1.2", "entries": [' + ",".join([one] * 50_000) + "]}}")
    size = har.stat().st_size  # 50 MB
    done, peak = run_measured([sys.executable, "-m", "ssemock", "import", "har", str(har), "-o", str(tmp_path / "out")],
                              tmp_path / "peak")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"ssemock: error: {har}: log.entries: expected at most 10000 entries (--max-entries), "
                           "got more (the rest not read)\n")
    assert peak < 4 * size, f"{peak:,} bytes at the peak for a file of {size:,}"  # was 7.6 times its size
