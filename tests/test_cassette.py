"""Cassette format v1: lossless round trip, readable text, hand-written events, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette, CassetteError, CassetteNotFoundError, Chunk, End, Interaction, Request, Response
from ssemock.cassette import END_HOWS, MODELINE, dumps, load, load_cassettes, loads, save
from ssemock.limits import MAX_CASSETTE_SECONDS
from ssemock.sse import decode

seconds = st.floats(min_value=0, max_value=MAX_CASSETTE_SECONDS, allow_nan=False, allow_infinity=False)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=20)
header_name = st.text("!#$%&'*+.^_`|~-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      min_size=1, max_size=20)
chunk_bytes = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"data: caf\xc3", b"\xa9\n\n", b"data: a\r\n\r\n", b"\xef\xbb\xbfdata: x\n\n",
                     b"data: \xe2\x80\xa8\n\n", b"data: a  \n\n", b"  leading\n", b"\x85\n", b"\t\n"]),
)


@st.composite
def cassettes(draw: st.DrawFn) -> Cassette:
    interactions = []
    for _ in range(draw(st.integers(1, 3))):
        timed = draw(st.booleans())
        count = draw(st.integers(0, 6))
        # A cassette's times are ordered: start <= each chunk's t <= end.t.
        times = [0.0] * (count + 2)
        if timed:
            times = sorted(draw(st.lists(seconds, min_size=count + 2, max_size=count + 2)))
        chunks = [Chunk(t, draw(chunk_bytes)) for t in times[1:-1]]
        status = draw(st.integers(200, 599))  # a final status (1xx are interim)
        if status in (204, 304):  # no content (RFC 9110 section 15)
            chunks = [Chunk(c.t, b"") for c in chunks]
        response = Response(
            status=status,
            headers=draw(st.lists(st.tuples(header_name, header_text), max_size=4)),
            chunks=chunks,
            start=times[0],
            end=End(times[-1], draw(st.sampled_from(END_HOWS))),
            timed=timed,
        )
        body = draw(st.none() | st.binary(max_size=30) | st.just(b'{"model":"x","stream":true}'))
        request = Request(draw(st.sampled_from(["GET", "POST"])), "/v1/" + draw(st.text("abc/", max_size=8)),
                          body=body)
        interactions.append(Interaction(request, response))
    return Cassette("c", interactions, {"source": draw(st.text(max_size=20))})


@settings(max_examples=200)
@given(cassettes())
def test_any_bytes_chunking_and_timing_round_trip_exactly(cassette: Cassette) -> None:
    again = loads(dumps(cassette), name="c")
    for a, b in zip(cassette.interactions, again.interactions, strict=True):
        assert b.response == a.response  # bytes, chunk boundaries, floats: all exact
        assert (b.request.method, b.request.path, b.request.json() or b.request.body) == (
            a.request.method, a.request.path, a.request.json() or a.request.body)
    assert again.provenance == cassette.provenance


def test_utf8_stream_reads_as_text_lines_in_the_file() -> None:
    body = b'data: {"text": "caf\xc3\xa9"}\n\n'
    cassette = Cassette("r", [Interaction(Request("POST", "/v1/x"), Response(chunks=[Chunk(0.25, body)]))])
    text = dumps(cassette)
    assert '      text: |+\n        data: {"text": "café"}\n\n' in text
    assert text.startswith(f"{MODELINE}\nssemock_cassette: 1\n")  # the schema comment, then the version key


def test_split_character_stays_lossless_as_base64() -> None:
    chunks = [Chunk(0.1, b"data: caf\xc3"), Chunk(0.2, b"\xa9\n\n")]
    cassette = Cassette("r", [Interaction(Request(), Response(chunks=chunks))])
    doc = yaml.safe_load(dumps(cassette))
    assert doc["interactions"][0]["response"]["chunks"][0] == {"t": 0.1, "base64": "ZGF0YTogY2Fmww=="}
    assert loads(dumps(cassette)).interactions[0].response.chunks == chunks


def test_hand_written_events() -> None:
    text = """
ssemock_cassette: 1
interactions:
- request: {method: POST, path: /v1/chat/completions}
  response:
    headers: {content-type: text/event-stream}
    interval: 0.1
    events:
    - comment: OPENROUTER PROCESSING
    - data: {choices: [{delta: {content: Hi}}]}
    - {event: done, id: "7", data: "[DONE]"}
"""
    resp = loads(text).interactions[0].response
    assert [c.t for c in resp.chunks] == [0.1, 0.2, 0.3]
    assert resp.body == (b": OPENROUTER PROCESSING\n\n"
                         b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n'
                         b"event: done\nid: 7\ndata: [DONE]\n\n")
    assert [e.data for e in decode(resp.body)] == ['{"choices":[{"delta":{"content":"Hi"}}]}', "[DONE]"]


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("interactions: []", "ssemock_cassette", "format version 1"),
        ("ssemock_cassette: 2\ninteractions: []", "ssemock_cassette", "format version 1"),
        ("ssemock_cassette: 1\ninteractions: {}", "interactions", "a list of interactions"),
        ("ssemock_cassette: 1\ninteractions: [{request: {}}]", "interactions[0].response", "a response mapping"),
        ("ssemock_cassette: 1\ninteractions: [{response: {status: 700}}]", "interactions[0].response.status",
         "an HTTP status code 200-599"),
        ("ssemock_cassette: 1\ninteractions: [{response: {chunks: [{t: -1, text: x}]}}]",
         "interactions[0].response.chunks[0].t", "a number from 0 to 86400 seconds"),
        ("ssemock_cassette: 1\ninteractions: [{response: {chunks: [{t: 1}]}}]",
         "interactions[0].response.chunks[0]", "exactly one of 'text' or 'base64'"),
        ("ssemock_cassette: 1\ninteractions: [{response: {chunks: [{base64: '!!'}]}}]",
         "interactions[0].response.chunks[0].base64", "valid base64"),
        ("ssemock_cassette: 1\ninteractions: [{response: {end: {how: crashed}}}]",
         "interactions[0].response.end.how", "one of clean, cut, reset, timeout, client_gone"),
        ("ssemock_cassette: 1\ninteractions: [{request: {path: v1}, response: {}}]",
         "interactions[0].request.path", "a URL path starting with /"),
        ("ssemock_cassette: 1\ninteractions: [{response: {stauts: 200}}]", "interactions[0].response.stauts",
         "one of the keys"),
        ("ssemock_cassette: 1\ninteractions: [{response: {events: [{data: a, id: \"a\\nb\"}]}}]",
         "interactions[0].response.events[0]", "an encodable event"),
        ("ssemock_cassette: [1\n", "line 2, column 1", "valid YAML"),
        ("ssemock_cassette: 1\ninteractions: [{response: {headers: {x-bad: \"a\\r\\nInjected: yes\"}}}]",
         "interactions[0].response.headers.x-bad", "a header value without CR, LF or NUL"),
        ("ssemock_cassette: 1\ninteractions: [{request: {headers: {\"bad name\": x}}, response: {}}]",
         "interactions[0].request.headers.bad name", "a header name"),
        ("ssemock_cassette: 1\nname: ../../etc/evil\ninteractions: []", "name", "a name of letters"),
        ("ssemock_cassette: 1\nprovenance: {a: &a [x, x], b: &b [*a, *a], c: [*b, *b]}\ninteractions: []",
         "line 2", "YAML without anchors or aliases"),
    ],
)
def test_broken_cassette_names_file_field_and_expectation(
    tmp_path: Path, text: str, field: str, expected: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError) as info:
        load(path)
    assert info.value.file == str(path)
    assert info.value.field == field
    assert expected in info.value.expected
    assert str(path) in str(info.value) and expected in str(info.value)
    assert isinstance(info.value, ValueError)


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("ssemock_cassette: !!python/object/apply:os.system ['true']\ninteractions: []\n")
    with pytest.raises(CassetteError, match=r"evil\.yaml: line 1, column 19: expected plain YAML data .*, "
                                            r"got '!!python/object/apply:os.system'"):
        load(path)


def test_missing_cassette_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(CassetteNotFoundError) as info:
        load(tmp_path / "nope.yaml")
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(CassetteNotFoundError):
        load_cassettes(tmp_path / "no-dir")


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "c.yaml"
    cassette = Cassette("c", [Interaction(Request(), Response(chunks=[Chunk(0, b"data: x\n\n")]))])
    save(cassette, target)
    assert [p.name for p in target.parent.iterdir()] == ["c.yaml"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)
    assert load(target).interactions[0].response.body == b"data: x\n\n"


def test_large_body_by_digest_round_trips() -> None:
    req = Request("POST", "/v1/x", body_sha256="a" * 64, body_size=5_000_000)
    again = loads(dumps(Cassette("d", [Interaction(req, Response())]))).interactions[0].request
    assert (again.body, again.body_sha256, again.body_size) == (None, "a" * 64, 5_000_000)


# ---- times and counts are bounded: finite, 0 to 24 h, ordered --------------------------------
HEAD = "ssemock_cassette: 1\ninteractions:\n- response:\n"


@pytest.mark.parametrize(("response", "field", "expected"), [
    ("    chunks: [{t: 1e308, text: x}]", "interactions[0].response.chunks[0].t", "a number from 0 to 86400"),
    ("    chunks: [{t: .inf, text: x}]", "interactions[0].response.chunks[0].t", "a number from 0 to 86400"),
    ("    chunks: [{t: .nan, text: x}]", "interactions[0].response.chunks[0].t", "a number from 0 to 86400"),
    ("    start: 86400.5", "interactions[0].response.start", "a number from 0 to 86400"),
    ("    end: {t: 1e308}", "interactions[0].response.end.t", "a number from 0 to 86400"),
    ("    end: {t: -0.5}", "interactions[0].response.end.t", "a number from 0 to 86400"),
    ("    start: 1\n    chunks: [{t: 0.5, text: x}]", "interactions[0].response.chunks[0].t",
     "a time >= interactions[0].response.start (1 s)"),
    ("    chunks: [{t: 2, text: x}, {t: 1, text: y}]", "interactions[0].response.chunks[1].t",
     "a time >= interactions[0].response.chunks[0].t (2 s)"),
    ("    chunks: [{t: 2, text: x}]\n    end: {t: 1}", "interactions[0].response.end.t",
     "a time >= interactions[0].response.chunks[0].t (2 s)"),
    ("    interval: 86400\n    events: [{data: a}, {data: b}]", "interactions[0].response.interval",
     "an interval putting the last event at most 86400 seconds"),
    ("    events: [{data: a}]\n    interval: 2\n    end: {t: 1}", "interactions[0].response.end.t",
     "a time >= interactions[0].response.events[0] (2 s)"),
])
def test_times_are_finite_bounded_and_ordered(tmp_path: Path, response: str, field: str, expected: str) -> None:
    path = tmp_path / "times.yaml"
    path.write_text(HEAD + response + "\n", encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        load(path)
    assert (caught.value.file, caught.value.field) == (str(path), field)
    assert expected in caught.value.expected, caught.value.expected


def test_the_time_bounds_themselves_load() -> None:
    text = HEAD + "    start: 0\n    chunks: [{t: 0, text: a}, {t: 0, text: b}, {t: 86400, text: c}]\n" \
                  "    end: {t: 86400}\n"
    response = loads(text).interactions[0].response
    assert [c.t for c in response.chunks] == [0.0, 0.0, 86400.0] and response.end.t == 86400.0


@settings(max_examples=50)
@given(st.lists(seconds, min_size=2, max_size=5))
def test_any_unordered_times_are_refused_naming_the_first_out_of_order(times: list[float]) -> None:
    text = yaml.safe_dump({"ssemock_cassette": 1, "interactions": [
        {"response": {"chunks": [{"t": t, "text": "x"} for t in times]}}]})
    firsts = [i for i in range(1, len(times)) if times[i] < times[i - 1]]
    if not firsts:
        assert [c.t for c in loads(text).interactions[0].response.chunks] == times
        return
    with pytest.raises(CassetteError) as caught:
        loads(text)
    assert caught.value.field == f"interactions[0].response.chunks[{firsts[0]}].t"


def test_counts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from ssemock.cassette import fields, yamltext

    monkeypatch.setattr(fields, "MAX_ITEMS", 3)  # the check of a built list
    monkeypatch.setattr(yamltext, "MAX_ITEMS", 3)  # the count while the YAML loads
    with pytest.raises(CassetteError, match=r"chunks: expected a list of at most 3 chunks"):
        loads(HEAD + "    chunks: [{text: a}, {text: b}, {text: c}, {text: d}]\n")
    with pytest.raises(CassetteError, match=r"interactions: expected a list of at most 3 interactions"):
        loads("ssemock_cassette: 1\ninteractions: [{response: {}}, {response: {}}, {response: {}}, "
              "{response: {}}]\n")


def test_a_json_body_past_the_depth_bound_is_refused() -> None:
    deep = "[" * 129 + "]" * 129
    with pytest.raises(CassetteError) as caught:
        loads(f"ssemock_cassette: 1\ninteractions: [{{request: {{body: {{json: {deep}}}}}, response: {{}}}}]")
    assert caught.value.field == "interactions[0].request.body.json" and "at most 128 deep" in caught.value.expected


def test_a_cassette_file_over_the_size_bound_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ssemock.cassette import io

    path = tmp_path / "big.yaml"
    path.write_text(HEAD + "    chunks: [{text: " + "x" * 2000 + "}]\n", encoding="utf-8")
    monkeypatch.setattr(io, "MAX_CASSETTE_FILE", 1024)
    with pytest.raises(CassetteError, match=r"big\.yaml: expected a file of at most 1024 \(1 KiB\) bytes"):
        load(path)
