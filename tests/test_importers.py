"""Importers on the real recordings: VCR.py variants, raw bodies, chunks files, bundled cassettes."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ssemock import Cassette, ImportFormatError
from ssemock.cassette import dumps, load, save
from ssemock.cli import main
from ssemock.errors import ConfigError
from ssemock.importers.chunks import import_chunks
from ssemock.importers.raw import import_raw
from ssemock.importers.registry import IMPORTERS, importer
from ssemock.importers.vcr import import_vcr
from ssemock.redact import SECRET_QUERY_PARAMS, SECRET_REQUEST_HEADERS, SECRET_RESPONSE_HEADERS
from ssemock.sse import Comment, Event, decode, split_blocks

from .conftest import REALWORLD
from .processes import run_measured
from .tool_scripts import load_tool

ROOT = Path(__file__).parent.parent


def _tool():  # type: ignore[no-untyped-def]
    return load_tool("import_realworld")


def test_bundled_cassettes_are_the_real_recordings_imported(bundled: dict[str, Cassette]) -> None:
    fresh = {c.name: c for c in _tool().import_all(REALWORLD)}
    assert sorted(fresh) == sorted(bundled)
    assert len(bundled) == 14  # every real stream listed in SOURCES.md
    for name, cassette in fresh.items():
        assert dumps(bundled[name]) == dumps(cassette), name


def test_every_bundled_cassette_carries_its_provenance(bundled: dict[str, Cassette]) -> None:
    for cassette in bundled.values():
        p = cassette.provenance
        assert p["source_repository"].count("/") == 1, cassette.name
        assert p["source_path"] and p["licence"] in {"MIT", "Apache-2.0"}, cassette.name
        assert (REALWORLD / p["imported_from"]).is_file()


def test_no_secret_header_or_query_parameter_in_bundled_cassettes(bundled: dict[str, Cassette]) -> None:
    for cassette in bundled.values():
        for inter in cassette.interactions:
            assert not {k.lower() for k, _ in inter.request.headers} & SECRET_REQUEST_HEADERS
            assert not {k.lower() for k, _ in inter.response.headers} & SECRET_RESPONSE_HEADERS
            assert not {k for k, _ in inter.request.query} & SECRET_QUERY_PARAMS
        assert "REDACTED-" not in dumps(cassette)


def test_vcr_parsed_body_becomes_the_json_request_body() -> None:
    cassette = import_vcr(REALWORLD / "openai-chat-tool-calls-usage.vcr.yaml")
    body = cassette.interactions[0].request.json()
    assert body["model"] == "gpt-4o-mini" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert cassette.interactions[0].request.path == "/v1/chat/completions"


def test_vcr_gzip_binary_body_is_kept_encoded() -> None:
    inter = import_vcr(REALWORLD / "anthropic-messages-tool-use-gzip.vcr.yaml").interactions[0]
    assert inter.response.header("Content-Encoding") == "gzip"
    assert len(inter.response.chunks) == 1  # encoded bytes are not split at event boundaries
    plain = gzip.decompress(inter.response.body)
    assert len(plain) == 1284  # SOURCES.md: "1,284 bytes once gunzipped"
    types = [e.type for e in decode(plain)]  # type: ignore[union-attr]
    assert types == ["message_start", "content_block_start", "ping", "content_block_delta",
                     "content_block_stop", "message_delta", "message_stop"]


def test_vcr_crlf_double_quoted_body_keeps_crlf() -> None:
    inter = import_vcr(REALWORLD / "gemini-streamgeneratecontent-crlf.vcr.yaml").interactions[0]
    assert inter.request.query == [("alt", "sse")]
    assert [c.data[-4:] for c in inter.response.chunks] == [b"\r\n\r\n"] * 3
    last = json.loads(decode(inter.response.body)[-1].data)  # type: ignore[union-attr]
    assert last["candidates"][0]["finishReason"] == "STOP"


def test_vcr_import_marks_missing_timing_and_splits_after_blank_lines() -> None:
    cassette = import_vcr(REALWORLD / "openrouter-chat-keepalive-midstream-error.vcr.yaml")
    resp = cassette.interactions[0].response
    assert resp.timed is False and all(c.t == 0.0 for c in resp.chunks)
    assert [c.data for c in resp.chunks[:17]] == [b": OPENROUTER PROCESSING\n\n"] * 17
    assert resp.chunks[-1].data == b"data: [DONE]\n\n"


def test_raw_bin_body_is_served_byte_for_byte() -> None:
    source = REALWORLD / "openai-chat-finish-length-usage.sse.bin"
    inter = import_raw(source, request_path="/v1/chat/completions").interactions[0]
    assert inter.response.body == source.read_bytes() and len(inter.response.body) == 1124
    assert inter.request.body is None  # matches any request body
    assert len(decode(inter.response.body)) == 5


def test_raw_txt_without_final_newline_keeps_it_so() -> None:
    source = REALWORLD / "anthropic-messages-max-tokens-partial-json.sse.txt"
    body = import_raw(source, request_path="/v1/messages").interactions[0].response.body
    assert body == source.read_bytes() and body.endswith(b'"message_stop" }')
    # The last event has no closing blank line: a conforming client never sees message_stop.
    assert [e.type for e in decode(body)][-1] == "message_delta"  # type: ignore[union-attr]


def test_chunks_file_wraps_each_payload_and_adds_done() -> None:
    source = REALWORLD / "alibaba-qwen-chat-emoji-split.chunks.txt"
    lines = source.read_text(encoding="utf-8").split("\n")
    events = decode(import_chunks(source, request_path="/x", done=True).interactions[0].response.body)
    assert [e.data for e in events] == [*lines, "[DONE]"]  # type: ignore[union-attr]
    assert len(lines) == 275  # the last line has no newline after it
    left = json.loads(lines[242])["choices"][0]["delta"]["content"]
    right = json.loads(lines[243])["choices"][0]["delta"]["content"]
    assert left.endswith("\u26a0") and right.startswith("\ufe0f")  # one emoji split across two events


def test_chunks_event_from_type_rebuilds_responses_event_names() -> None:
    source = REALWORLD / "openai-responses-error-insufficient-quota.chunks.txt"
    events = decode(import_chunks(source, request_path="/v1/responses", event_from_type=True)
                    .interactions[0].response.body)
    assert [e.type for e in events] == ["response.created", "response.in_progress", "error",  # type: ignore
                                        "response.failed"]


def test_split_blocks_cuts_after_every_blank_line_and_joins_back() -> None:
    body = b": c\r\n\r\ndata: a\n\ndata: b\r\rdata: tail"
    assert split_blocks(body) == [b": c\r\n\r\n", b"data: a\n\n", b"data: b\r\r", b"data: tail"]
    # A CRLF is one line end (WHATWG 9.2.5): "event: message\r\n" is a line, not a line and a blank line.
    assert split_blocks(b"event: message\r\ndata: x\r\n\r\n") == [b"event: message\r\ndata: x\r\n\r\n"]
    assert split_blocks(b"data: a\r\r\ndata: b\n\r\n") == [b"data: a\r\r\n", b"data: b\n\r\n"]
    assert split_blocks(b"\xef\xbb\xbf\r\ndata: a\n\n") == [b"\xef\xbb\xbf\r\n", b"data: a\n\n"]


_SSE_BYTES = st.lists(st.sampled_from([b"data: x", b"event: e", b": c", b"\r", b"\n", b"\r\n", b"\xef\xbb\xbf"]))


@given(_SSE_BYTES.map(b"".join))
def test_split_blocks_cuts_exactly_after_the_empty_lines_of_bytes_splitlines(body: bytes) -> None:
    """Python's ``bytes.splitlines`` ends lines at CRLF, CR and LF, like the spec: an independent splitter."""
    lines = body.splitlines(keepends=True)
    ends, pos = [], 0
    for index, line in enumerate(lines):
        pos += len(line)
        content = line.rstrip(b"\r\n")
        if content != line and content in (b"", b"\xef\xbb\xbf" if index == 0 else b""):
            ends.append(pos)
    pieces = split_blocks(body)
    assert b"".join(pieces) == body and all(pieces)
    offsets = [sum(map(len, pieces[: i + 1])) for i in range(len(pieces))]
    assert [o for o in offsets if o in ends] == ends and set(offsets) - set(ends) <= {len(body)}
    assert decode(pieces, comments=True) == decode(body, comments=True)


def test_mcp_cassette_chunks_end_where_its_events_and_comments_end(bundled: dict[str, Cassette]) -> None:
    """The real MCP recording (CRLF lines): one chunk per event or comment block, bytes as recorded."""
    cassette = bundled["mcp-deepwiki-ping-comments-crlf"]
    source = yaml.safe_load((REALWORLD / "mcp-deepwiki-ping-comments-crlf.vcr.yaml").read_text(encoding="utf-8"))
    streams = [i for i in cassette.interactions if i.response.header("content-type") == "text/event-stream"]
    recorded = [i["response"]["body"]["string"].encode() for i in source["interactions"]
                if i["response"]["headers"].get("content-type") == ["text/event-stream"]]
    assert [s.response.body for s in streams] == recorded and len(streams) == 5
    for stream in streams:
        for chunk in stream.response.chunks:
            assert chunk.data.endswith(b"\r\n\r\n") and chunk.data.count(b"\r\n\r\n") == 1
            (item,) = decode(chunk.data, comments=True)  # exactly one event or one comment per chunk
            assert isinstance(item, (Event, Comment))
    items = [decode(s.response.body, comments=True) for s in streams]
    assert [len(i) for i in items] == [len(s.response.chunks) for s in streams]
    assert sum(isinstance(x, Comment) for i in items for x in i) == 1  # the ": ping - <time>" comment
    assert all(x.type == "message" for i in items for x in i if isinstance(x, Event))


def test_every_importer_is_registered_with_its_options() -> None:
    assert list(IMPORTERS) == ["vcr", "har", "raw", "chunks"]
    assert [o.flag for o in importer("chunks").options] == ["--path", "--method", "--done", "--event-from-type"]
    with pytest.raises(ConfigError, match="no importer named 'pcap'; known: vcr, har, raw, chunks"):
        importer("pcap")
    with pytest.raises(ConfigError, match="has no option 'done'"):
        importer("raw").convert(REALWORLD / "openai-chat-finish-length-usage.sse.bin", request_path="/x", done=True)


def test_import_errors_name_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "notvcr.yaml"
    bad.write_text("hello: world\n")
    with pytest.raises(ImportFormatError) as info:
        import_vcr(bad)
    assert info.value.file == str(bad) and info.value.field == "interactions"
    lines = tmp_path / "x.chunks.txt"
    lines.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(ImportFormatError, match="line 2"):
        import_chunks(lines, request_path="/x")


@pytest.mark.parametrize(("kind", "name", "expected"), [
    ("har", "zeros.har", "a HAR file (JSON), whose first character is '{', got b'" + "\\x00" * 16 + "'..."),
    ("vcr", "zeros.yaml", "a readable UTF-8 YAML file, got '\\x00' at character 0, not a character of YAML text"),
])
def test_a_file_of_nul_bytes_is_refused_at_its_first_bytes(tmp_path: Path, kind: str, name: str, expected: str) -> None:
    """600 MB of NUL bytes took 798 MB of memory before the HAR import failed at the first byte."""
    path = tmp_path / name
    with path.open("wb") as out:
        out.truncate(400_000_000)  # 400 MB of NUL bytes, sparse: no disk taken
    done, peak = run_measured([sys.executable, "-m", "ssemock", "import", kind, str(path), "-o", str(tmp_path / "out")],
                              tmp_path / "peak")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"ssemock: error: {path}: expected {expected}\n"
    assert peak < 100 << 20, f"{peak:,} bytes at the peak"  # the file is not read: Python and ssemock's imports
    assert not (tmp_path / "out").exists()


def test_cli_import_vcr_writes_loadable_cassettes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(REALWORLD / "gemini-streamgeneratecontent-crlf.vcr.yaml"),
             str(REALWORLD / "mcp-deepwiki-ping-comments-crlf.vcr.yaml")]
    assert main(["import", "vcr", *files, "-o", str(tmp_path), "--licence", "MIT"]) == 0
    mcp = load(tmp_path / "mcp-deepwiki-ping-comments-crlf.yaml")
    assert len(mcp.interactions) == 9 and mcp.provenance["licence"] == "MIT"
    assert [i.response.status for i in mcp.interactions].count(202) == 2
    assert "timing: none" in capsys.readouterr().out


def test_cli_import_bad_file_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "vcr", str(tmp_path / "missing.yaml"), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.yaml" in err


def test_vcr_import_scrubs_key_shaped_strings_from_paths_bodies_and_streams(tmp_path: Path) -> None:
    req_key, resp_key, path_key = ("sk-proj-VCRBODYSECRET0123456789abcdef", "sk-proj-VCRRESPSECRET0123456789abcdef",
                                   "sk-proj-VCRPATHSECRET0123456789abcdef")
    gz_key = "AIzaSyVCRGZIPSECRET0123456789abcdefghij"
    doc = {"interactions": [
        {"request": {"method": "POST", "uri": f"https://api.example.com/v1/keys/{path_key}?key=AIzaQUERY",
                     "headers": {"Authorization": ["Bearer sk-secret-header-0123456789"], "X-Note": [req_key]},
                     "body": json.dumps({"api": req_key})},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["text/event-stream"]},
                      "body": {"string": f"data: {resp_key}\n\ndata: ok\n\n"}}},
        {"request": {"method": "POST", "uri": "https://api.example.com/v1/gz", "body": None},
         "response": {"status": {"code": 200, "message": "OK"},
                      "headers": {"Content-Type": ["text/event-stream"], "Content-Encoding": ["gzip"]},
                      "body": {"string": gzip.compress(f"data: {gz_key}\n\n".encode())}}},
    ]}
    source = tmp_path / "secrets.yaml"
    source.write_text(yaml.safe_dump(doc))
    cassette = import_vcr(source)
    saved = save(cassette, tmp_path / "out" / "secrets.yaml").read_text()
    for secret in (req_key, resp_key, path_key, gz_key, "AIzaQUERY", "sk-secret-header"):
        assert secret not in saved
    first, second = cassette.interactions
    assert [e.data for e in decode(first.response.body)] == ["REDACTED", "ok"]  # type: ignore[union-attr]
    assert second.response.header("content-encoding") is None  # stored decoded once scrubbed
    assert second.response.body == b"data: REDACTED\n\n"


IMPORTS = {  # importer -> (real recording, extra options)
    "vcr": ("mcp-deepwiki-ping-comments-crlf.vcr.yaml", []),
    "raw": ("anthropic-messages-max-tokens-partial-json.sse.txt", ["--path", "/v1/messages"]),
    "chunks": ("alibaba-qwen-chat-emoji-split.chunks.txt", ["--path", "/v1/chat/completions", "--done"]),
}


def _copy(source: str, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((REALWORLD / source).read_bytes())
    return target


@pytest.mark.parametrize("kind", sorted(IMPORTS))
def test_cli_import_keeps_source_folders_apart(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, options = IMPORTS[kind]
    other = "openrouter-chat-keepalive-midstream-error.vcr.yaml" if kind == "vcr" else source
    first = _copy(source, tmp_path / "in" / "a" / source)
    second = _copy(other, tmp_path / "in" / "b" / "deeper" / source)  # same file name, other folder
    if kind != "vcr":
        second.write_bytes(second.read_bytes() + (b'\n{"extra":true}\n' if kind == "chunks" else b"data: extra\n\n"))
    out = tmp_path / "out"
    assert main(["import", kind, str(first), str(second), "-o", str(out), *options]) == 0
    stem = source.split(".")[0]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml"))
    assert written == [f"a/{stem}.yaml", f"b/deeper/{stem}.yaml"]
    a, b = load(out / "a" / f"{stem}.yaml"), load(out / "b" / "deeper" / f"{stem}.yaml")
    assert a.provenance["imported_from"] == b.provenance["imported_from"] == source
    if kind == "vcr":
        assert len(a.interactions) == 9 and a.interactions[0].request.path != b.interactions[0].request.path
    else:
        assert b.interactions[0].response.body != a.interactions[0].response.body
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and f"a/{stem}.yaml" in lines[0] and f"b/deeper/{stem}.yaml" in lines[1]


def test_cli_import_refuses_two_inputs_that_would_share_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = _copy("mcp-deepwiki-ping-comments-crlf.vcr.yaml", tmp_path / "in" / "x.vcr.yaml")
    two = _copy("openrouter-chat-keepalive-midstream-error.vcr.yaml", tmp_path / "in" / "x.yaml")
    out = tmp_path / "out"
    assert main(["import", "vcr", str(one), str(two), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(one) in err and str(two) in err and "Traceback" not in err
    assert not out.exists() or list(out.rglob("*")) == []


@pytest.mark.parametrize("kind", sorted(IMPORTS))
def test_cli_import_never_overwrites_without_force(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, options = IMPORTS[kind]
    file = _copy(source, tmp_path / "in" / source)
    out = tmp_path / "out"
    assert main(["import", kind, str(file), "-o", str(out), *options]) == 0
    target = next(out.glob("*.yaml"))
    edited = target.read_text().replace("name: ", "# checked by hand\nname: ", 1)
    target.write_text(edited)
    newcomer = _copy(source, tmp_path / "in" / f"new-{source}")  # a second input, not yet imported
    capsys.readouterr()
    assert main(["import", kind, str(newcomer), str(file), "-o", str(out), *options]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "--force" in err
    assert target.read_text() == edited  # the hand edit is kept
    assert [p.name for p in out.iterdir()] == [target.name]  # nothing else was written either
    assert main(["import", kind, str(newcomer), str(file), "-o", str(out), "--force", *options]) == 0
    assert "checked by hand" not in target.read_text() and len(list(out.glob("*.yaml"))) == 2
    assert dumps(load(target)) == dumps(load(out / f"new-{target.name}")).replace(
        f"name: new-{target.stem}", f"name: {target.stem}").replace(f"new-{source}", source)


def test_the_realworld_tool_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    tool = _tool()
    assert tool.main([str(REALWORLD), "-o", str(tmp_path)]) == 0
    first = {p.name: p.read_bytes() for p in tmp_path.glob("*.yaml")}
    assert len(first) == 14
    (tmp_path / sorted(first)[0]).write_text("hand edit\n")
    assert tool.main([str(REALWORLD), "-o", str(tmp_path)]) == 2
    assert (tmp_path / sorted(first)[0]).read_text() == "hand edit\n"
    assert tool.main([str(REALWORLD), "-o", str(tmp_path), "--force"]) == 0
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.yaml")} == first


def _vcr(method: str, code: int) -> dict[str, object]:
    return {"request": {"method": method, "uri": "https://api.example.com/v1/x", "body": None},
            "response": {"status": {"code": code, "message": "X"}, "headers": {"Content-Type": ["text/event-stream"]},
                         "body": {"string": "data: x\n\n"}}}


@pytest.mark.parametrize(("method", "code", "field", "expected"), [
    ("GET X", 200, "interactions[1].request.method", "HTTP method"),
    ("GET", 999, "interactions[1].response.status", "HTTP status code 200-599"),
])
def test_cli_import_refuses_what_the_loader_would_refuse_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str, code: int, field: str, expected: str
) -> None:
    """It wrote such cassettes with exit 0; ``serve`` and ``inspect`` then refused them."""
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(yaml.safe_dump({"interactions": [_vcr("POST", 200)]}))
    bad.write_text(yaml.safe_dump({"interactions": [_vcr("POST", 200), _vcr(method, code)]}))
    out = tmp_path / "out"
    assert main(["import", "vcr", str(good), str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ssemock: error: {bad}: {field}: expected ") and expected in err and err.count("\n") == 1
    assert not out.exists()  # nothing written, not even the good one
    assert main(["import", "vcr", str(good), "-o", str(out)]) == 0
    assert main(["inspect", str(out / "good.yaml")]) == 0


# pydantic-ai's json_body_serializer (VCR.py): a JSON body becomes `parsed_body` (YAML data) on requests
# and responses alike, `body` removed, `content-length` set to len(json.dumps(parsed_body)).
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
          "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Paris – ok"}}]}
PARSED_BODY_CASSETTE = {"version": 1, "interactions": [
    {"request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions",
                 "headers": {"content-type": ["application/json"]},
                 "parsed_body": {"model": "gpt-4o-mini", "stream": True,
                                 "messages": [{"role": "user", "content": "stream it"}]}},
     "response": {"status": {"code": 200, "message": "OK"}, "headers": {"content-type": ["text/event-stream"]},
                  "body": {"string": 'data: {"choices":[{"delta":{"content":"streamed"}}]}\n\ndata: [DONE]\n\n'}}},
    {"request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions",
                 "headers": {"content-type": ["application/json"]},
                 "parsed_body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "answer it"}]}},
     "response": {"status": {"code": 200, "message": "OK"},
                  "headers": {"content-type": ["application/json"],
                              "content-length": [str(len(json.dumps(ANSWER).encode()))]},
                  "parsed_body": ANSWER}},
]}


def test_vcr_parsed_bodies_are_kept_and_served_by_body(tmp_path: Path) -> None:
    """Imported with ``ssemock import vcr``, served by ``ssemock serve``: each request body picks its
    interaction, and a JSON answer kept as ``parsed_body`` is sent (it was an empty 200)."""
    import subprocess

    import httpx

    from .processes import reap

    source = tmp_path / "openai.yaml"
    source.write_text(yaml.safe_dump(PARSED_BODY_CASSETTE, allow_unicode=True), encoding="utf-8")
    assert main(["import", "vcr", str(source), "-o", str(tmp_path / "out")]) == 0
    proc = subprocess.Popen([sys.executable, "-m", "ssemock", "serve", "--cassettes", str(tmp_path / "out"),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().removeprefix("ssemock serving on ")
        sent = [httpx.post(url + "/v1/chat/completions", json=i["request"]["parsed_body"], timeout=10)
                for i in reversed(PARSED_BODY_CASSETTE["interactions"])]
        other = httpx.post(url + "/v1/chat/completions", json={"model": "gpt-4o-mini", "messages": []}, timeout=10)
    finally:
        reap(proc)
    answered, streamed = sent
    assert answered.status_code == 200 and answered.headers["content-type"] == "application/json"
    assert answered.json() == ANSWER
    # as pydantic-ai's deserializer writes it back (json.dumps of the data as the file holds it), of the
    # length its serializer wrote into content-length
    stored = yaml.safe_load(source.read_text(encoding="utf-8"))["interactions"][1]["response"]
    assert answered.content == json.dumps(stored["parsed_body"]).encode()
    assert len(answered.content) == int(stored["headers"]["content-length"][0])
    assert streamed.text.endswith("data: [DONE]\n\n") and '"streamed"' in streamed.text
    assert other.status_code == 404 and other.json()["error"]["type"] == "ssemock_no_match"


def test_vcr_parsed_body_answers_have_their_recorded_length() -> None:
    """The real MCP session's two OpenAI chat answers were stored as ``parsed_body``."""
    raw = yaml.safe_load((REALWORLD / "mcp-deepwiki-ping-comments-crlf.vcr.yaml").read_text(encoding="utf-8"))
    cassette = import_vcr(REALWORLD / "mcp-deepwiki-ping-comments-crlf.vcr.yaml")
    lengths = [(int(r["response"]["headers"]["content-length"][0]), len(i.response.body))
               for r, i in zip(raw["interactions"], cassette.interactions) if "parsed_body" in r["response"]]
    assert lengths == [(904, 904), (1339, 1339)]
