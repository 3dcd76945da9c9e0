"""The sending layer (``ssemock.send``) shared by the replay server and the recorder: the wire
and the journal's counts on its untimed burst path and its timed path, and who imports it."""

from __future__ import annotations

import ast
import json
import socket
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssemock import Cassette, MockServer, Scenario
from ssemock.cassette import Chunk, End, Interaction, Request, Response
from ssemock.plan import comment_points
from ssemock.sse import Event, decode
from ssemock.stubs import reply

from .rawclient import raw_request

ROOT = Path(__file__).parent.parent / "ssemock"
CHUNKS = [b"data: {\"n\": %d, \"text\": \"%s\"}\n\n" % (i, b"x" * (i % 200)) for i in range(20_000)]


def bulk(timed: bool = False) -> Cassette:
    """20,000 chunks (about 2.5 MB) of one SSE event each."""
    chunks = [Chunk(i * 1e-5 if timed else 0.0, data) for i, data in enumerate(CHUNKS)]
    response = Response(status=200, headers=[("Content-Type", "text/event-stream")], chunks=chunks,
                        start=0.0, end=End(chunks[-1].t, "clean"), timed=timed)
    return Cassette("bulk", [Interaction(Request(method="POST", path="/bulk"), response)])


@pytest.mark.parametrize("scale", [0, 1], ids=["burst", "timed"])
def test_every_recorded_chunk_is_one_http_chunk_and_the_journal_counts_them(scale: float) -> None:
    with MockServer([bulk(timed=bool(scale))], scenarios=[], timing_scale=scale) as server:
        r = raw_request(server.url, "POST", "/bulk", b"{}")
        entry = server.requests[-1]
    assert r.ending == "complete"
    assert r.chunks == CHUNKS
    assert (entry["chunks_sent"], entry["bytes_sent"]) == (len(CHUNKS), sum(map(len, CHUNKS)))
    assert entry["outcome"] == "complete"


@pytest.mark.parametrize("scale", [0, 1])
@pytest.mark.parametrize("framing", ["chunked", "content-length"])
def test_a_stub_answer_without_timing_is_one_http_chunk_per_event_at_every_scale(scale: float, framing: str) -> None:
    """A stub's events all come at once (no timing): sent as a burst, each event its own write, as the
    bundled recordings of OpenAI's chat stream show it (one ``chat.completion.chunk`` per token, then
    ``[DONE]``); under the ``content-length`` preset the same bytes in one body of that length."""
    text = " ".join(["word"] * 300)
    request = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
    length = Scenario.from_dict({"steps": [{"framing": {"mode": "length"}}]}, name="content-length")
    headers = {} if framing == "chunked" else {"X-SSEMock-Scenario": framing}
    with MockServer(cassettes=[], stubs=[reply(text, times=None)], scenarios=[length], timing_scale=scale) as server:
        r = raw_request(server.url, "POST", "/v1/chat/completions", request, headers)
        entry = server.requests[-1]
    events = [e for e in decode(r.body) if isinstance(e, Event)]
    pieces = [json.loads(e.data)["choices"][0]["delta"].get("content") for e in events[:-1]]
    assert "".join(p for p in pieces if p) == text and events[-1].data == "[DONE]"
    assert len(pieces) == 300 + 2  # the role chunk, one per token, the finish chunk
    assert r.ending == "complete" and entry["outcome"] == "complete"
    if framing == "chunked":
        assert [e for c in r.chunks for e in decode(c) if isinstance(e, Event)] == events
        assert len(r.chunks) == len(events)  # each chunk one whole event
    else:
        assert r.header("content-length") == str(len(r.body))
    assert (entry["chunks_sent"], entry["bytes_sent"]) == (len(events), len(r.body))


def test_a_client_leaving_a_burst_gets_a_journal_entry_counting_what_was_written() -> None:
    with MockServer([bulk()], scenarios=[], timing_scale=0) as server:
        with socket.create_connection((server.host, server.port)) as sock:
            sock.sendall(b"POST /bulk HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            assert sock.recv(1 << 16)  # the headers and some chunks; the rest waits on the socket
        for _ in range(200):
            entry = server.requests[-1]
            if entry["outcome"] is not None:
                break
            time.sleep(0.05)
    assert entry["outcome"] == "client_gone"
    sent = entry["chunks_sent"]
    assert 0 < sent < len(CHUNKS)
    assert entry["bytes_sent"] == sum(map(len, CHUNKS[:sent]))


def test_the_recorder_uses_the_sending_layer_not_the_server() -> None:
    for path in (ROOT / "recorder").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "server" or node.level == 0, f"{path.name} imports from the server"
    imports = [n for n in ast.walk(ast.parse((ROOT / "recorder" / "proxy.py").read_text(encoding="utf-8")))
               if isinstance(n, ast.ImportFrom) and n.module == "send"]
    assert [a.name for n in imports for a in n.names] == ["send_plan"]


PING = b": ping\n\n"
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=12)


@st.composite
def split_streams(draw: st.DrawFn) -> tuple[bytes, list[Chunk]]:
    """An SSE body (events with types, comments, line ends LF/CRLF/CR), split at random points."""
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    blocks = []
    for kind, data in draw(st.lists(st.tuples(st.one_of(st.none(), texts), st.lists(texts, min_size=1, max_size=3)),
                                    max_size=6)):
        lines = ([f": {kind}"] if kind == "c" else []) + ([f"event: {kind}"] if kind else [])
        blocks.append(eol.join(lines + [f"data: {d}" for d in data]) + eol + eol)
    body = "".join(blocks).encode()
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=12))))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)]) if body[a:b]]
    return body, [Chunk(0.0, p) for p in pieces]


@given(split_streams())
def test_comments_at_the_comment_points_never_change_the_events(stream: tuple[bytes, list[Chunk]]) -> None:
    body, chunks = stream
    points = comment_points(chunks)
    sent = b"".join((PING if i in points else b"") + c.data for i, c in enumerate(chunks))
    sent += PING if len(chunks) in points else b""
    assert 0 in points
    assert sent.replace(PING, b"") == body
    assert [(e.type, e.data) for e in decode(sent) if isinstance(e, Event)] == \
        [(e.type, e.data) for e in decode(body) if isinstance(e, Event)]
