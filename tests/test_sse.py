"""The WHATWG event-stream codec: spec examples, edge cases, any-split property, httpx-sse parity."""

from __future__ import annotations

import re
import tracemalloc

import httpx_sse._decoders as httpx_sse_decoders
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock.cassette import Cassette
from ssemock.sse import Comment, Decoder, Event, LineSplitter, decode, encode, split_blocks


def events(stream: bytes) -> list[tuple[str, str, str]]:
    return [(e.type, e.data, e.last_event_id) for e in decode(stream)]  # type: ignore[union-attr]


# ---- WHATWG HTML §9.2.6 examples ------------------------------------------------------
def test_spec_example_three_messages() -> None:
    stream = (
        b"data: This is the first message.\n\n"
        b"data: This is the second message, it\ndata: has two lines.\n\n"
        b"data: This is the third message.\n\n"
    )
    assert [e[1] for e in events(stream)] == [
        "This is the first message.",
        "This is the second message, it\nhas two lines.",
        "This is the third message.",
    ]


def test_spec_example_event_types() -> None:
    stream = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
    assert [(t, d) for t, d, _ in events(stream)] == [("add", "73857293"), ("remove", "2153"), ("add", "113411")]


def test_spec_example_stock_ticker_lines_joined_with_lf() -> None:
    assert events(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [("message", "YHOO\n+2\n10", "")]


def test_spec_example_ids_and_leading_space() -> None:
    stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    assert events(stream) == [
        ("message", "first event", "1"),
        ("message", "second event", ""),  # "id" with no value resets the last event ID
        ("message", " third event", ""),  # only one leading space is removed
    ]


def test_spec_example_empty_data_and_unterminated_last_block() -> None:
    # "The first block fires events with the data set to the empty string ... The middle block
    # fires an event with the data set to a single newline character. The last block is
    # discarded because it is not followed by a blank line."
    assert [e[1] for e in events(b"data\n\ndata\ndata\n\ndata:")] == ["", "\n"]


def test_spec_example_space_after_colon_is_optional() -> None:
    assert [e[1] for e in events(b"data:test\n\ndata: test\n\n")] == ["test", "test"]


# ---- §9.2.5 / §9.2.6 rules one by one ------------------------------------------------------
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    stream = b"event: e" + eol + b"data: a" + eol + b"data: b" + eol + eol
    assert events(stream) == [("e", "a\nb", "")]


def test_one_leading_bom_is_ignored_and_a_second_is_not() -> None:
    assert events(b"\xef\xbb\xbfdata: x\n\n") == [("message", "x", "")]
    # A second BOM is part of the first line's field name, so the line is an unknown field.
    assert events(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [("message", "y", "")]


def test_blank_line_without_data_dispatches_nothing_but_resets_event_type() -> None:
    assert events(b"event: a\n\ndata: x\n\n") == [("message", "x", "")]


def test_id_with_null_is_ignored_and_id_persists() -> None:
    assert events(b"id: 5\ndata: a\n\nid: x\x00y\ndata: b\n\ndata: c\n\n") == [
        ("message", "a", "5"), ("message", "b", "5"), ("message", "c", "5"),
    ]


def test_id_only_block_sets_last_event_id_for_later_events() -> None:
    assert events(b"id: 7\n\ndata: a\n\n") == [("message", "a", "7")]


def test_retry_only_ascii_digits() -> None:
    d = Decoder()
    out = d.feed(b"retry: 3000\ndata: a\n\nretry: 12x\ndata: b\n\nretry: \xd9\xa3\n\n")
    assert [(e.data, e.retry) for e in out if isinstance(e, Event)] == [("a", 3000), ("b", None)]
    assert d.reconnection_time == 3000  # Arabic-Indic digit three is not an ASCII digit


def test_unknown_fields_and_no_colon_lines() -> None:
    assert events(b"foo: bar\ndata: a\nevent\n\n") == [("message", "a", "")]


def test_comments_are_observable_with_one_leading_space_removed() -> None:
    out = decode(b": OPENROUTER PROCESSING\n\n:\n\n:  two\ndata: x\n\n", comments=True)
    assert out == [Comment("OPENROUTER PROCESSING"), Comment(""), Comment(" two"), Event("x")]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert events(b"data: \xff\n\n") == [("message", "\ufffd", "")]


def test_line_separators_inside_data_are_not_line_endings() -> None:
    data = "a\u2028b\u2029c\x85d"
    assert events(f"data: {data}\n\n".encode()) == [("message", data, "")]


def test_crlf_split_across_feeds_is_one_line_ending() -> None:
    d = Decoder()
    got = d.feed(b"data: a\r") + d.feed(b"\n") + d.feed(b"\r") + d.feed(b"\n")
    assert got == [Event("a")]


def test_a_cr_at_the_end_of_a_read_dispatches_at_once() -> None:
    # §9.2.5: a CR alone is a line end, so "data: a" CR CR ends with a blank line: a user agent
    # dispatches without waiting to see whether a LF follows; the LF that then comes completes
    # the second CRLF and is no third line.
    d = Decoder()
    assert d.feed(b"data: a\r\r") == [Event("a")]
    assert d.feed(b"\ndata: b\r\n\r\n") == [Event("b")]


def test_close_discards_unfinished_event() -> None:
    d = Decoder()
    assert d.feed(b"data: a\n") == []
    assert d.close() == []
    with pytest.raises(ValueError, match="after close"):
        d.feed(b"\n")


# ---- encoder -----------------------------------------------------------------------------
def test_encode_all_fields() -> None:
    assert encode("a\nb", event="e", id="1", retry=10, comment="hi") == (
        b": hi\nevent: e\nid: 1\nretry: 10\ndata: a\ndata: b\n\n"
    )
    assert encode("x", eol="\r\n", space=False) == b"data:x\r\n\r\n"
    assert encode(None, retry=3000) == b"retry: 3000\n\n"


@pytest.mark.parametrize(
    "kwargs",
    [{"event": "a\nb"}, {"id": "a\rb"}, {"id": "a\x00b"}, {"retry": -1}, {"eol": "\n\n"}],
)
def test_encode_rejects_unencodable_fields(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        encode("x", **kwargs)  # type: ignore[arg-type]


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
no_eol = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=20)


@given(
    st.lists(st.tuples(texts, st.none() | no_eol, st.none() | no_eol), min_size=1, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_encode_then_decode_gives_the_events_back(
    items: list[tuple[str, str | None, str | None]], eol: str, space: bool
) -> None:
    stream = b"".join(encode(data, event=event, id=id_, eol=eol, space=space) for data, event, id_ in items)
    got = decode(stream)
    last_id = ""
    want = []
    for data, event, id_ in items:
        last_id = id_ if id_ is not None else last_id
        # With space=False a value starting with a space loses it on decoding (spec rule).
        norm = [ln[1:] if not space and ln.startswith(" ") else ln for ln in data.replace("\r\n", "\n")
                .replace("\r", "\n").split("\n")]
        ev_type = event if event is not None else "message"
        if not space and ev_type.startswith(" "):
            ev_type = ev_type[1:]
        if not space and id_ is not None and id_.startswith(" "):
            last_id = id_[1:]
        want.append(Event("\n".join(norm), ev_type or "message", last_id))
    assert got == want


# ---- any split gives the one-shot parse -----------------------------------------------------
sse_bytes = st.lists(
    st.sampled_from([
        b"data: caf\xc3\xa9 \xe2\x9a\xa0\xef\xb8\x8f", b"data:x", b"data", b"event: e", b"id: 1", b"id",
        b"retry: 10", b": c", b"", b"\xef\xbb\xbf", b"\r\n", b"\r", b"\n", b"\n", b"\r\n", b"foo: bar",
        b"data: {\"a\": \"\xf0\x9f\x98\x80\"}", b"\xff",
    ]),
    max_size=30,
).map(b"".join)


@settings(max_examples=300)
@given(sse_bytes, st.data())
def test_any_split_gives_the_events_of_the_one_shot_parse(stream: bytes, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    assert decode(pieces, comments=True) == decode(stream, comments=True)


def test_every_byte_split_of_real_recordings(bundled: dict[str, Cassette]) -> None:
    for cassette in bundled.values():
        for inter in cassette.interactions:
            body = inter.response.body
            if inter.response.header("content-encoding"):
                continue
            one_shot = decode(body, comments=True)
            assert decode([body[i : i + 1] for i in range(len(body))], comments=True) == one_shot


# ---- the line splitter: any split gives the lines of the whole input ------------------------
line_bytes = st.lists(
    st.sampled_from([b"data: x", b"id", b"\xc3\xa9", b"\xef\xbb\xbf", b"\xff", b"\r", b"\n", b"\r\n", b"\r\r",
                     b"\n\r"]),
    max_size=30,
).map(b"".join) | st.binary(max_size=40)


def reference_lines(data: bytes) -> list[tuple[int, bytes, bytes]]:
    """(offset of the line end, line, end) over the whole input by the §9.2.5 rule as a regex;
    an unfinished last line ends in b"" at the end of the input."""
    out, start = [], 0
    for m in re.finditer(rb"\r\n|\r|\n", data):
        out.append((m.start(), data[start : m.start()], m.group()))
        start = m.end()
    return [*out, (len(data), data[start:], b"")] if start < len(data) else out


def cut(data: bytes, draw: st.DataObject) -> tuple[list[bytes], set[int]]:
    """``data`` in pieces at drawn offsets (repeats give empty pieces), and the offsets."""
    cuts = sorted(draw.draw(st.lists(st.integers(0, len(data)), max_size=12)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])], set(cuts)


def split(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    return [(line.rstrip(b"\r\n"), line[len(line.rstrip(b"\r\n")) :]) for line in lines]


@settings(max_examples=400)
@given(line_bytes, st.data())
def test_line_splitter_any_split_gives_the_lines_of_the_whole_input(data: bytes, draw: st.DataObject) -> None:
    pieces, cuts = cut(data, draw)
    splitter = LineSplitter()
    got = [line for piece in pieces for line in splitter.feed(piece)] + splitter.close()
    # A CR that ends a read ends its line then; the LF after it completes that CRLF and is dropped.
    want = [(text, b"\r" if end == b"\r\n" and at + 1 in cuts else end) for at, text, end in reference_lines(data)]
    assert split(got) == want
    one = LineSplitter()
    assert b"".join(one.feed(data) + one.close()) == data  # one feed: the lines join back to the input


def test_line_splitter_crlf_split_lone_cr_and_close() -> None:
    lines = LineSplitter()
    assert lines.feed(b"a\r") == [b"a\r"]  # a CR ends its line at once
    assert lines.feed(b"") == []  # an empty read changes nothing: the LF still completes the CRLF
    assert lines.feed(b"\nb\rc\r\r") == [b"b\r", b"c\r", b"\r"]
    assert lines.close() == []  # the trailing CR was a line end already
    assert lines.feed(b"\nd") == [b"\n"]  # after close, a new input: a LF is a line of its own
    assert lines.close() == [b"d"]  # the unfinished last line, without an end


@settings(max_examples=300)
@given(line_bytes, st.integers(1, 6), st.data())
def test_line_splitter_keep_gives_each_line_start_and_end(data: bytes, keep: int, draw: st.DataObject) -> None:
    pieces, _ = cut(data, draw)
    full, kept = LineSplitter(), LineSplitter(keep=keep)
    want = split([line for piece in pieces for line in full.feed(piece)] + full.close())
    got = split([line for piece in pieces for line in kept.feed(piece)] + kept.close())
    assert [(text[:keep], end) for text, end in got] == [(text[:keep], end) for text, end in want]


def test_line_splitter_keep_holds_no_more_of_an_endless_line() -> None:
    read = b"x" * 65536
    lines = LineSplitter(keep=5)
    tracemalloc.start()
    try:
        for _ in range(256):  # 16 MiB without a line end
            assert lines.feed(read) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
    assert lines.feed(b"\r\n") == [b"xxxxx\r\n"]
    with pytest.raises(ValueError, match="keep"):
        LineSplitter(keep=0)


@settings(max_examples=300)
@given(line_bytes)
def test_split_blocks_cuts_after_each_blank_line(data: bytes) -> None:
    lines = reference_lines(data)
    bom = data.startswith(b"\xef\xbb\xbf")  # one leading BOM is not part of the first line
    blank_ends = [at + len(end) for i, (at, text, end) in enumerate(lines)
                  if end and text == (b"\xef\xbb\xbf" if bom and i == 0 else b"")]
    ends = blank_ends if data[blank_ends[-1] if blank_ends else 0 :] == b"" else [*blank_ends, len(data)]
    blocks = split_blocks(data)
    assert b"".join(blocks) == data
    assert [len(b"".join(blocks[: i + 1])) for i in range(len(blocks))] == ends


# ---- parity with an independent decoder on every real recording ---------------------------
def httpx_sse_events(body: bytes) -> list[tuple[str, str, str, int | None]]:
    """httpx-sse's own line and event decoders, fed the recording split into its chunks."""
    lines = httpx_sse_decoders.SSELineDecoder()
    decoder = httpx_sse_decoders.SSEDecoder()
    out = []
    text = body.decode("utf-8")
    for line in [*lines.decode(text), *lines.flush()]:
        sse = decoder.decode(line)
        if sse is not None:
            out.append((sse.event, sse.data, sse.id, sse.retry))
    return out


def test_same_events_as_httpx_sse_on_every_real_recording(bundled: dict[str, Cassette]) -> None:
    compared = 0
    for cassette in bundled.values():
        for inter in cassette.interactions:
            if "event-stream" not in (inter.response.header("content-type") or ""):
                continue
            body = inter.response.body
            if inter.response.header("content-encoding") == "gzip":
                import gzip

                body = gzip.decompress(body)
            ours = [(e.type, e.data, e.last_event_id, e.retry) for e in decode(body)]  # type: ignore[union-attr]
            assert ours == httpx_sse_events(body), cassette.name
            compared += 1
    assert compared == 22  # every event-stream interaction of the bundled real recordings
