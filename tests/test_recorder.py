"""The recorder on the wire: live pass-through, record -> replay exactness, record modes, naming.

Timing: a chunk is never seen (live, recorded or replayed) before the time it was written
or recorded, within 5 ms of timer granularity. How *late* it may be depends on the load of
the machine: that is measured in ``benchmarks`` (timing_fidelity, recorder_overhead), not here.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import itertools
import json
import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ssemock import Cassette, MockServer
from ssemock.bundled import bundled_cassettes
from ssemock.cassette import Chunk, End, Interaction, Request, Response, load
from ssemock.cassette.append import BEGIN_MARK, END_MARK, appendable
from ssemock.errors import RecorderConfigError
from ssemock.recorder import Recorder, RecordMode, record_mode
from ssemock.recorder.store import Entry, Spool
from ssemock.recorder.tee import EventCounter
from ssemock.recorder.writer import append_entries, write_cassette
from ssemock.sse import Event, decode

from .rawclient import raw_json, raw_request
from .upstream import SCRIPTS, Upstream, script_times

EARLY = 0.005  # seconds: timer granularity
ENDINGS = {"clean": "complete", "cut": "cut", "reset": "reset"}  # cassette end.how -> what a raw client sees


def only_cassette(directory: Path) -> Cassette:
    files = sorted(directory.glob("*.yaml"))
    assert len(files) == 1, files
    return load(files[0])


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_stream_is_passed_on_live_recorded_exactly_and_replayed_exactly(name: str, tmp_path: Path) -> None:
    script, ending = SCRIPTS[name]
    writes = [data for _, data in script]
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        live = raw_json(rec.url, "POST", f"/stream/{name}", {"model": "gpt-4o", "stream": True})
    # The client saw each upstream write as it happened, and the same ending.
    assert live.chunks == writes
    assert live.ending == ENDINGS[ending]
    for got, want in zip(live.times, script_times(script)):
        assert got >= want - EARLY
    inter = only_cassette(tmp_path).interactions[0]
    assert [c.data for c in inter.response.chunks] == writes
    assert inter.response.end.how == ending
    for chunk, want in zip(inter.response.chunks, script_times(script)):
        assert chunk.t >= want - EARLY
    assert inter.response.header("content-type") == "text/event-stream"
    assert inter.request.json() == {"model": "gpt-4o", "stream": True}

    with MockServer([tmp_path], scenarios=[]) as server:
        replay = raw_json(server.url, "POST", f"/stream/{name}", {"model": "gpt-4o", "stream": True})
    assert replay.chunks == writes
    assert replay.ending == ENDINGS[ending]
    for got, chunk in zip(replay.times, inter.response.chunks):
        assert got >= chunk.t - EARLY


def test_non_stream_answers_are_recorded_and_replayed(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="answers") as rec:
        ok = raw_json(rec.url, "POST", "/json", {"stream": False})
        limited = raw_json(rec.url, "POST", "/ratelimited", {"stream": False})
    assert ok.status == 200 and json.loads(ok.body)["choices"][0]["message"]["content"] == "Hi"
    assert limited.status == 429 and limited.header("retry-after") == "7"
    cassette = load(tmp_path / "answers.yaml")
    assert [i.response.status for i in cassette.interactions] == [200, 429]
    assert cassette.interactions[1].response.header("Retry-After") == "7"
    with MockServer([cassette], scenarios=[], timing_scale=0) as server:
        again = raw_json(server.url, "POST", "/ratelimited", {"stream": False})
    assert again.status == 429 and again.body == limited.body and again.header("retry-after") == "7"


def test_credentials_go_upstream_untouched_and_the_cassette_header_is_not_forwarded(tmp_path: Path) -> None:
    headers = {"Authorization": "Bearer sk-proj-abcdefghijklmnopqrstuvwx", "X-SSEMock-Cassette": "team/chat"}
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        raw_json(rec.url, "POST", "/json", {"q": 1}, headers=headers)
    sent = up.received[0]["headers"]
    assert sent["Authorization"] == headers["Authorization"]
    assert "X-SSEMock-Cassette" not in sent
    assert sent["Accept-Encoding"] == "identity"
    recorded = load(tmp_path / "team" / "chat.yaml").interactions[0].request
    assert "authorization" not in {k.lower() for k, _ in recorded.headers}


def test_query_credentials_go_upstream_and_never_reach_the_cassette(tmp_path: Path) -> None:
    # Azure Functions take their function key as ?code=…, Gemini its API key as ?key=…; OAuth
    # redirects carry ?code=… (RFC 6749 section 4.1.2). Upstream gets them; the cassette does not.
    query = [("alt", "sse"), ("code", "azure-function-key-0123456789"), ("key", "AIzaSyA-not-a-real-key-0123456789"),
             ("access_token", "opaque-access-0123456789")]
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="q") as rec:
        httpx.post(rec.url + "/json", params=query, json={"q": 1})
    assert up.received[0]["query"] == dict(query)
    recorded = load(tmp_path / "q.yaml").interactions[0].request
    assert recorded.query == [("alt", "sse")]
    text = (tmp_path / "q.yaml").read_text()
    assert not any(value in text for _, value in query[1:])


def test_cassette_named_by_fingerprint_ignores_json_key_order(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, mode="all") as rec:
        raw_json(rec.url, "POST", "/json", {"a": 1, "b": [1, 2]})
        raw_json(rec.url, "POST", "/json", {"b": [1, 2], "a": 1})
        raw_json(rec.url, "POST", "/json", {"a": 2})
    names = sorted(p.stem for p in tmp_path.glob("*.yaml"))
    assert len(names) == 2 and all(n.startswith("post-json-") for n in names)
    assert sorted(len(load(tmp_path / f"{n}.yaml").interactions) for n in names) == [1, 2]


def test_bad_cassette_name_is_a_400_and_nothing_is_written(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path) as rec:
        bad = raw_json(rec.url, "POST", "/json", {}, headers={"X-SSEMock-Cassette": "../escape"})
    assert bad.status == 400 and json.loads(bad.body)["error"]["type"] == "ssemock_bad_cassette"
    assert up.received == [] and list(tmp_path.iterdir()) == []
    with pytest.raises(RecorderConfigError):
        Recorder("http://127.0.0.1:1", tmp_path, cassette="/abs")


def test_record_modes_have_their_vcr_meanings(tmp_path: Path) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with Upstream() as up:
        with Recorder(up.url, tmp_path, mode=RecordMode.NONE, cassette="c") as rec:
            refused = raw_json(rec.url, "POST", "/json", body)
        assert refused.status == 404 and json.loads(refused.body)["error"]["type"] == "ssemock_no_match"
        assert len(up.received) == 0

        with Recorder(up.url, tmp_path, mode="once", cassette="c") as rec:  # new cassette: records
            first = raw_json(rec.url, "POST", "/json", body)
            raw_json(rec.url, "POST", "/json", body)  # same session, new cassette: recorded again (VCR)
        assert len(up.received) == 2 and first.status == 200

        with Recorder(up.url, tmp_path, mode="once", cassette="c") as rec:  # existing cassette: replay only
            replayed = raw_json(rec.url, "POST", "/json", body)
            other = raw_json(rec.url, "POST", "/json", {"other": True})
            assert [i["action"] for i in rec.interactions] == ["replayed", "refused"]
        assert len(up.received) == 2 and replayed.body == first.body and other.status == 404

        with Recorder(up.url, tmp_path, mode="new_episodes", cassette="c") as rec:
            for _ in range(3):  # two recorded interactions are played once each, the third is new
                raw_json(rec.url, "POST", "/json", body)
            raw_json(rec.url, "POST", "/json", {"other": True})
            assert [i["action"] for i in rec.interactions] == ["replayed", "replayed", "recorded", "recorded"]
        assert len(up.received) == 4

        with Recorder(up.url, tmp_path, mode="all", cassette="c") as rec:
            raw_json(rec.url, "POST", "/json", body)
        assert len(up.received) == 5
    assert len(load(tmp_path / "c.yaml").interactions) == 5


def test_record_mode_validator_lists_the_valid_values() -> None:
    assert record_mode("NEW-EPISODES") is RecordMode.NEW_EPISODES
    assert RecordMode.ONCE == "once"
    with pytest.raises(ValueError, match="none, once, new_episodes, all"):
        record_mode("rewrite")


def test_a_5_mb_request_body_is_forwarded_whole_stored_by_digest_and_still_matches(tmp_path: Path) -> None:
    prompt = ("You are a careful assistant. " * 200_000)[:5 * 1024 * 1024]
    payload = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    raw = json.dumps(payload).encode()
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="big-prompt") as rec:
        live = raw_json(rec.url, "POST", "/v1/chat/completions", payload)
    assert up.received[0]["body_sha256"] == hashlib.sha256(raw).hexdigest()
    assert up.received[0]["body_size"] == len(raw) > 5 * 1024 * 1024
    assert up.received[0]["headers"]["Content-Length"] == str(len(raw))
    text = (tmp_path / "big-prompt.yaml").read_text()
    assert len(text) < 20_000 and "careful assistant" not in text
    request = load(tmp_path / "big-prompt.yaml").interactions[0].request
    assert (request.body_sha256, request.body_size) == (hashlib.sha256(raw).hexdigest(), len(raw))
    with MockServer([tmp_path], scenarios=[], timing_scale=0) as server:
        assert raw_json(server.url, "POST", "/v1/chat/completions", payload).body == live.body
        changed = dict(payload, model="gpt-4o-mini")
        assert raw_json(server.url, "POST", "/v1/chat/completions", changed).status == 404


def test_recording_the_replay_server_reproduces_every_bundled_cassette(
    bundled: dict[str, Cassette], tmp_path: Path
) -> None:
    for name, source in bundled.items():
        with MockServer([source], scenarios=[], timing_scale=0) as server, \
                Recorder(server.url, tmp_path / name, cassette="copy") as rec:
            for inter in source.interactions:
                req = inter.request
                target = req.path + ("?" + urlencode(req.query) if req.query else "")
                kind = {"Content-Type": "application/json"} if req.body else {}
                raw_request(rec.url, req.method, target, req.body or b"", kind)
        copy = load(tmp_path / name / "copy.yaml")
        assert len(copy.interactions) == len(source.interactions), name
        for got, want in zip(copy.interactions, source.interactions):
            assert got.response.status == want.response.status, name
            assert got.response.body == want.response.body, name
            assert got.response.end.how == ("clean" if want.response.end.how == "clean" else got.response.end.how)
            for header in ("content-type", "content-encoding"):
                assert got.response.header(header) == want.response.header(header), (name, header)


def test_recording_a_timed_replay_keeps_its_chunks_and_timing(tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path / "first") as rec:
        raw_json(rec.url, "POST", "/stream/chat", {"stream": True})
    source = only_cassette(tmp_path / "first")
    with MockServer([source], scenarios=[]) as server, Recorder(server.url, tmp_path / "second") as rec:
        raw_json(rec.url, "POST", "/stream/chat", {"stream": True})
    copy = only_cassette(tmp_path / "second").interactions[0].response
    want = source.interactions[0].response
    assert copy.body == want.body
    # Each recorded read ends where a replayed write ended (a busy machine may join two
    # writes in one read, never split one), and not before that write was due.
    ends = dict(zip(itertools.accumulate(len(c.data) for c in want.chunks), (c.t for c in want.chunks)))
    for end, got in zip(itertools.accumulate(len(c.data) for c in copy.chunks), copy.chunks):
        assert end in ends and got.t >= ends[end] - EARLY


async def test_async_with_records_in_the_current_loop(tmp_path: Path) -> None:
    with Upstream() as up:
        async with Recorder(up.url, tmp_path, cassette="a") as rec, aiohttp.ClientSession() as session:
            async with session.post(f"{rec.url}/stream/chat", json={"stream": True}) as resp:
                pieces = [p async for p in resp.content.iter_any()]
            await rec.flush()
            assert load(tmp_path / "a.yaml").interactions[0].response.body == b"".join(pieces)
    assert b"".join(pieces) == b"".join(d for _, d in SCRIPTS["chat"][0])


def test_unreachable_upstream_is_a_502_and_nothing_is_recorded(tmp_path: Path) -> None:
    with Upstream() as up:
        dead = up.url
    with Recorder(dead, tmp_path) as rec:
        answer = raw_json(rec.url, "POST", "/json", {})
    assert answer.status == 502 and json.loads(answer.body)["error"]["type"] == "ssemock_upstream_error"
    assert list(tmp_path.glob("*.yaml")) == []


_bytes = st.binary(max_size=40) | st.text(max_size=40).map(lambda s: s.encode("utf-8"))


@settings(max_examples=60, deadline=None)
@given(
    # As recorded: every read after the headers (0.5 s) and before the end (2 s), in order.
    chunks=st.lists(st.tuples(st.floats(0.5, 2.0, allow_nan=False), _bytes), max_size=6).map(sorted),
    body=st.none() | _bytes, how=st.sampled_from(["clean", "cut", "reset", "timeout", "client_gone"]),
)
def test_streamed_cassette_writes_load_back_exactly(
    chunks: list[tuple[float, bytes]], body: bytes | None, how: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    spool = Spool()
    for t, data in chunks:
        spool.add(t, data)
    request = Request("POST", "/v1/x", [("a", "b")], [("Content-Type", "text/plain")], body)
    response = Response(200, None, [("content-type", "text/event-stream")], [], 0.5, End(2.0, how))
    path = tmp_path_factory.mktemp("w") / "c.yaml"
    try:
        write_cassette(path, "c", {"target": "http://x"}, [Entry(request, response, spool)] * 2)
    finally:
        spool.close()
    loaded = load(path)
    want = Interaction(request, Response(200, None, response.headers, [Chunk(t, d) for t, d in chunks], 0.5,
                                         End(2.0, how)))
    assert loaded.interactions == [want, want]
    assert loaded.provenance == {"target": "http://x"}


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(0, 100_000), max_size=10), which=st.integers(0, 100))
def test_progress_event_count_agrees_with_the_whatwg_decoder(
    bundled: dict[str, Cassette], cuts: list[int], which: int
) -> None:
    responses = [i.response for c in bundled.values() for i in c.interactions]
    bodies = [r.body for r in responses
              if "event-stream" in (r.header("content-type") or "") and not r.header("content-encoding")]
    body = bodies[which % len(bodies)]
    points = sorted([*(c % (len(body) + 1) for c in cuts), 0, len(body)])  # a repeat is an empty read
    counter = EventCounter()
    for a, b in itertools.pairwise(points):
        counter.feed(body[a:b])
    assert counter.events == sum(isinstance(item, Event) for item in decode(body))


def test_progress_event_count_of_a_crlf_split_by_an_empty_read() -> None:
    # "data: a" CRLF is one line (§9.2.5) whatever reads it comes in: no blank line, no event yet.
    counter = EventCounter()
    assert [counter.feed(data) for data in (b"data: a\r", b"", b"\n", b"\r", b"", b"\n")] == [0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("route", ["/stream/chat", "/json", "/ratelimited", "/stream/cut", "/stream/reset"])
def test_a_client_with_its_whole_answer_finds_it_listed_and_on_disk(route: str, tmp_path: Path) -> None:
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c", mode="all") as rec:
        for n in range(1, 9):
            answer = raw_json(rec.url, "POST", route, {"n": n})
            assert answer.status in (200, 429)
            listed = rec.interactions  # read at once: no waiting, no flush
            assert len(listed) == n and listed[-1]["action"] == "recorded"
            on_disk = load(tmp_path / "c.yaml").interactions
            assert len(on_disk) == n and on_disk[-1].request.json() == {"n": n}
            assert on_disk[-1].response.body == answer.body


def _entry(chunks: list[tuple[float, bytes]], body: bytes | None, how: str) -> Entry:
    spool = Spool()
    for t, data in chunks:
        spool.add(t, data)
    request = Request("POST", "/v1/x", [("a", "b")], [("Content-Type", "text/plain")], body)
    return Entry(request, Response(200, None, [("content-type", "text/event-stream")], [], 0.5, End(2.0, how)), spool)


@settings(max_examples=60, deadline=None)
@given(
    # As recorded: every read after the headers (0.5 s) and before the end (2 s), in order.
    items=st.lists(st.tuples(st.lists(st.tuples(st.floats(0.5, 2.0, allow_nan=False), _bytes), max_size=4)
                             .map(sorted), st.none() | _bytes), min_size=1, max_size=4),
    cut=st.floats(0, 1),
)
# A body whose base64 text is "...Pwd0...gA==": the text scan took "Pwd0AAAAgA=" for a password pair and
# wrote "gA=REDACTED", which does not load.
@example(items=[([], b"\x00\x00\x00\x00\x00\x00?\x07t\x00\x00\x00\x80")], cut=0.0)
def test_a_file_cut_anywhere_loads_only_complete_interactions(
    items: list[tuple[list[tuple[float, bytes]], bytes | None]], cut: float, tmp_path_factory: pytest.TempPathFactory
) -> None:
    entries = [_entry(chunks, body, "clean") for chunks, body in items]
    want = [e.interaction(with_chunks=True) for e in entries]
    path = tmp_path_factory.mktemp("cut") / "c.yaml"
    write_cassette(path, "c", {"target": "http://x"}, entries[:1], exclusive=True)
    append_entries(path, entries[1:])
    assert load(path).interactions == want
    data = path.read_bytes()
    head = len(data.split(BEGIN_MARK.encode())[0])  # a crash before the first item: no file (atomic creation)
    path.write_bytes(data[: head + int(cut * (len(data) - head))])
    loaded = load(path).interactions  # loads, whatever the cut
    assert loaded == want[: len(loaded)]  # complete interactions only, in order


def test_a_torn_last_interaction_is_cut_off_and_recording_goes_on(tmp_path: Path) -> None:
    with Upstream() as up:
        with Recorder(up.url, tmp_path, cassette="t", mode="all") as rec:
            for n in range(2):
                raw_json(rec.url, "POST", "/stream/chat", {"n": n})
        path = tmp_path / "t.yaml"
        complete = path.read_bytes()
        last = complete[complete.rindex(BEGIN_MARK.encode()):]
        torn = complete + last[: len(last) // 2]  # as a recorder killed while appending leaves it
        path.write_bytes(torn)
        assert [i.request.json() for i in load(path).interactions] == [{"n": 0}, {"n": 1}]
        with MockServer([tmp_path], scenarios=[], timing_scale=0) as server:
            assert raw_json(server.url, "POST", "/stream/chat", {"n": 1}).ending == "complete"
        progress = io.StringIO()
        with Recorder(up.url, tmp_path, cassette="t", mode="all", progress=progress) as rec:
            raw_json(rec.url, "POST", "/stream/chat", {"n": 2})
    assert f"cut off an incomplete last interaction ({len(torn) - len(complete)} bytes)" in progress.getvalue()
    assert path.read_bytes().startswith(complete)  # appended after what was there, never rewritten
    assert [i.request.json() for i in load(path).interactions] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert path.read_text().count(BEGIN_MARK) == path.read_text().count(END_MARK) == 3


def test_recording_into_a_saved_cassette_appends_without_touching_its_bytes(tmp_path: Path) -> None:
    source = bundled_cassettes() / "openai-chat-tool-calls-usage.yaml"
    path = shutil.copy(source, tmp_path / "c.yaml")
    before = Path(path).read_bytes()
    assert before.endswith(b"\n...\n")  # PyYAML's document end marker after a "|+" block
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="c", mode="all") as rec:
        raw_json(rec.url, "POST", "/json", {"n": 1})
    assert Path(path).read_bytes().startswith(before.removesuffix(b"...\n"))  # only the marker goes
    old = load(source).interactions
    assert load(path).interactions[: len(old)] == old
    assert len(load(path).interactions) == len(old) + 1


def test_a_cassette_that_cannot_be_appended_to_is_rewritten_once(tmp_path: Path) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("ssemock_cassette: 1\ninteractions: []\nname: h  # written by hand\n")
    with Upstream() as up, Recorder(up.url, tmp_path, cassette="h", mode="all") as rec:
        raw_json(rec.url, "POST", "/json", {"n": 1})
        converted = path.read_bytes()
        raw_json(rec.url, "POST", "/json", {"n": 2})
    assert path.read_bytes().startswith(converted)
    assert [i.request.json() for i in load(path).interactions] == [{"n": 1}, {"n": 2}]


def test_temporary_files_of_a_killed_writer_are_removed_at_start(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    stale = [tmp_path / ".a.yaml.k1x2.tmp", tmp_path / "sub" / ".b.yaml.q9z8.tmp"]
    for path in stale:
        path.write_text("ssemock_cassette: 1\n")
        os.utime(path, (time.time() - 60, time.time() - 60))
    busy = tmp_path / ".c.yaml.w0r1.tmp"  # another process is writing it: it holds the lock
    busy.write_text("ssemock_cassette: 1\n")
    os.utime(busy, (time.time() - 60, time.time() - 60))
    progress = io.StringIO()
    with open(busy, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        with Recorder("http://127.0.0.1:9", tmp_path, progress=progress):
            pass
    assert not any(p.exists() for p in stale) and busy.exists()
    assert "removed 2 temporary file(s) left by a writer that was killed" in progress.getvalue()


def test_every_bundled_cassette_can_be_appended_to_and_keeps_its_interactions(tmp_path: Path) -> None:
    extra = _entry([(0.6, b"data: appended\n\n")], b'{"n":1}', "clean")
    want_extra = extra.interaction(with_chunks=True)
    for source in sorted(bundled_cassettes().glob("*.yaml")):
        text = source.read_text(encoding="utf-8")
        assert appendable(text), source.name
        path = Path(shutil.copy(source, tmp_path / source.name))
        append_entries(path, [extra])
        old = load(source).interactions
        assert load(path).interactions == [*old, want_extra], source.name


_lines_text = st.text(alphabet=st.sampled_from(["\n", " ", "a", "#", "-", ":", "|", "é", "€", "😀", "\t", "\r", "\x85",
                                                "\u2028", "\ufeff", "\x7f", "'", '"']), max_size=30)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(_lines_text, min_size=1, max_size=5), t=st.floats(0.5, 2.0), timed=st.booleans())
def test_chunks_with_line_breaks_written_as_literal_blocks_load_back_exactly(
    texts: list[str], t: float, timed: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    entry = _entry([(t if timed else 0.0, text.encode()) for text in texts], None, "clean")
    entry.response.timed = timed
    path = tmp_path_factory.mktemp("lit") / "c.yaml"
    write_cassette(path, "c", {}, [entry])
    chunks = load(path).interactions[0].response.chunks
    assert [(c.t, c.data) for c in chunks] == [(t if timed else 0.0, x.encode()) for x in texts]
