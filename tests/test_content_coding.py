"""Content codings (ssemock.coding) through the recorder, ``ssemock check`` and replay.

The upstream is a real aiohttp server on 127.0.0.1 that answers ``text/event-stream`` with a
``Content-Encoding`` it chose (as a provider may, whatever ``Accept-Encoding`` said), in
several writes; the recorder is the real one; replay is a real MockServer read by httpx (which
decodes gzip and deflate) or by a raw HTTP/1.1 client whose bytes are decoded with the stdlib.
Expected bodies are built here from the plain events, never read back from ssemock.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import io
import random
import zlib
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from ssemock import Cassette, MockServer, SSEMockError, limits
from ssemock.cassette import Chunk, End, Interaction, Request, Response, load, save
from ssemock.cli import main
from ssemock.coding import MAX_CODINGS, PIECE, ContentCodingError, Decoder, decode
from ssemock.recorder import Recorder

from .rawclient import raw_request
from .upstream import Upstream

KEY = "sk-proj-" + "Q" * 20 + "w" * 20 + "Z9"
FIRST = b'data: {"a": 1}\n\n'
SECRET = b'data: {"content": "' + KEY.encode() + b'"}\n\n'
CLEAN = b'data: {"content": "no secret here"}\n\n'


def gz(data: bytes, compresslevel: int = 9) -> bytes:
    return gzip.compress(data, compresslevel, mtime=0)  # the same bytes in every test process


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-15)
    return packer.compress(data) + packer.flush()


def gzip_named(data: bytes, name: str) -> bytes:
    """A gzip member whose header holds a file name (FNAME, RFC 1952 §2.3.1)."""
    out = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=out, mtime=0) as packer:
        packer.write(data)
    return out.getvalue()


def cases(second: bytes) -> dict[str, tuple[str, bytes, bytes]]:
    """name -> (Content-Encoding, wire bytes, the decoded body an RFC-following decoder gives)."""
    return {
        "multi": ("gzip", gz(FIRST) + gz(second), FIRST + second),  # (a) two members
        "raw-deflate": ("deflate", raw_deflate(FIRST + second), FIRST + second),  # (b)
        "stacked": ("gzip, gzip", gz(gz(FIRST + second)), FIRST + second),  # (c)
        "zlib-deflate": ("deflate", zlib.compress(FIRST + second), FIRST + second),
        "x-gzip": ("X-Gzip", gz(FIRST + second), FIRST + second),
    }


TRAILING = gz(FIRST) + SECRET  # (d) gzip, then plain bytes: not a body any decoder reads


class CodedUpstream(Upstream):
    """The test upstream plus ``GET /coded/{name}``: the body of ``bodies[name]``, in writes of about a third."""

    def __init__(self, bodies: dict[str, tuple[str, bytes]]) -> None:
        super().__init__()
        self.bodies = bodies

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_get("/coded/{name}", self.coded)
        return app

    async def coded(self, request: web.Request) -> web.StreamResponse:
        coding, body = self.bodies[request.match_info["name"]]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Content-Encoding": coding})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        third = max(len(body) // 3, 1)
        for start in range(0, len(body), third):  # separate reads: a member boundary may fall inside one
            await resp.write(body[start:start + third])
            await asyncio.sleep(0.02)
        await resp.write_eof()
        return resp


def record(tmp_path: Path, bodies: dict[str, tuple[str, bytes]]) -> tuple[dict[str, bytes], list[dict[str, object]]]:
    """Record ``GET /coded/NAME`` of each body into cassette NAME; the bytes each client got, the progress records."""
    got = {}
    with CodedUpstream(bodies) as up, Recorder(up.url, tmp_path, mode="all") as rec:
        for name in bodies:
            got[name] = raw_request(rec.url, "GET", f"/coded/{name}", headers={"X-SSEMock-Cassette": name}).body
    return got, rec.interactions  # complete once stopped (a body over 1 MiB is scanned after its last byte)


def stored_body(response: Response) -> bytes:
    """The recorded body decoded with the stdlib, as an auditor would (every member, zlib or raw)."""
    body = response.body
    for coding in reversed([c.strip().lower() for c in (response.header("content-encoding") or "").split(",")]):
        if coding in ("gzip", "x-gzip"):
            body = gzip.decompress(body)
        elif coding == "deflate":
            body = zlib.decompress(body, 15 if body[:1] == b"\x78" else -15)
    return body


# ---- the decoder ---------------------------------------------------------------------------------

def test_every_gzip_member_zlib_and_raw_deflate_and_stacked_codings_decode() -> None:
    for coding, wire, plain in cases(SECRET).values():
        assert decode(wire, coding) == plain, coding
    assert decode(gz(FIRST) + b"\0\0\0", "gzip") == FIRST  # NUL padding, as gzip.decompress allows
    assert decode(b"", "gzip") == decode(b"", "deflate") == b""
    assert decode(FIRST, "identity") == decode(FIRST, None) == FIRST
    assert decode(zlib.compress(gz(FIRST)), "gzip, identity, deflate") == FIRST
    # Raw deflate whose first bytes look like a zlib header (a stored block of length 0x0001, 78 01).
    looks_zlib = b"\x78\x01\x00\xfe\xffA\x03\x00"
    assert zlib.decompress(looks_zlib, -15) == decode(looks_zlib, "deflate") == b"A"


@pytest.mark.parametrize(("coding", "body", "reason"), ids=str, argvalues=[
    ("gzip", TRAILING, "not a gzip member"),
    ("gzip", b"plain text", "not gzip data"),
    ("deflate", zlib.compress(FIRST) + b"more", "after the end of the deflate stream"),
    ("deflate", b"\xff\xff\xff\xff", "corrupt deflate data"),
    ("gzip", gz(FIRST)[:-4], "ends inside a gzip member"),
    ("br", b"\x0b\x02\x80", "unknown content coding 'br'"),
    ("zstd", b"(\xb5/\xfd", "unknown content coding 'zstd'"),
    (", ".join(["gzip"] * (MAX_CODINGS + 1)), b"", f"at most {MAX_CODINGS}"),
])
def test_what_does_not_decode_raises_an_ssemock_error(coding: str, body: bytes, reason: str) -> None:
    with pytest.raises(ContentCodingError, match=reason) as caught:
        decode(body, coding)
    assert isinstance(caught.value, SSEMockError) and isinstance(caught.value, ValueError)


def test_a_body_cut_short_decodes_as_far_as_it_goes() -> None:
    plain = b"".join(b"data: %d\n\n" % (i * 7919 % 10007) for i in range(2000))
    wire = gz(plain)
    assert plain[:2000] in decode(wire[: len(wire) // 2], "gzip", complete=False)


def test_output_comes_in_bounded_pieces_and_a_limit_stops_a_bomb() -> None:
    bomb = gz(gz(bytes(64 * PIECE)))  # 64 MiB of zeros in about 8 KiB
    decoder = Decoder("gzip, gzip")
    sizes = [len(p) for p in decoder.feed(bomb)] + [len(p) for p in decoder.close()]
    assert max(sizes) <= PIECE and sum(sizes) == 64 * PIECE
    with pytest.raises(ContentCodingError, match="more than 1048576 bytes"):
        decode(bomb, "gzip, gzip", limit=PIECE)


@st.composite
def coded_bodies(draw: st.DrawFn) -> tuple[str, bytes, bytes, list[int]]:
    members = draw(st.lists(st.binary(max_size=300), min_size=1, max_size=4))
    plain = b"".join(members)
    kind = draw(st.sampled_from(["gzip", "zlib", "raw", "gzip-deflate"]))
    if kind == "gzip":
        coding, wire = "gzip", b"".join(gz(m, compresslevel=draw(st.integers(0, 9))) for m in members)
    elif kind == "zlib":
        coding, wire = "deflate", zlib.compress(plain)
    elif kind == "raw":
        coding, wire = "deflate", raw_deflate(plain)
    else:
        coding, wire = "deflate, gzip", b"".join(gz(zlib.compress(m)) for m in members[:1])
        plain = members[0]
    cuts = sorted(draw(st.lists(st.integers(0, len(wire)), max_size=8)))
    return coding, wire, plain, cuts


@settings(max_examples=300, deadline=None)
@given(coded_bodies(), st.integers(1, 64))
def test_the_incremental_decoder_gives_the_one_shot_bytes(body: tuple[str, bytes, bytes, list[int]],
                                                          piece: int) -> None:
    coding, wire, plain, cuts = body
    reads = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)])]
    decoder = Decoder(coding, piece=piece)
    pieces = [p for read in reads for p in decoder.feed(read)] + list(decoder.close())
    assert all(0 < len(p) <= piece for p in pieces)
    assert b"".join(pieces) == decode(wire, coding) == plain
    if coding == "gzip":
        assert plain == gzip.decompress(wire)


# ---- the recorder --------------------------------------------------------------------------------

def test_no_key_reaches_a_cassette_whatever_the_coding(tmp_path: Path) -> None:
    bodies = {name: (coding, wire) for name, (coding, wire, _) in cases(SECRET).items()}
    bodies["named"] = ("gzip", gzip_named(CLEAN, KEY))  # the key only in the gzip header's file name
    bodies["trailing"] = ("gzip", TRAILING)
    bodies["brotli"] = ("br", SECRET)  # not brotli at all: never decoded, so never stored
    got, progress = record(tmp_path, bodies)
    assert got == {name: wire for name, (_, wire) in bodies.items()}  # the client's answer is untouched
    expected = {name: plain.replace(KEY.encode(), b"REDACTED") for name, (_, _, plain) in cases(SECRET).items()}
    expected["named"] = CLEAN
    for name in bodies:
        text = (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
        assert KEY not in text, name
        [interaction] = load(tmp_path / f"{name}.yaml").interactions
        body = stored_body(interaction.response)
        assert KEY.encode() not in body, name
        if name in expected:  # stored decoded and scrubbed
            assert interaction.response.header("content-encoding") is None
            assert body == expected[name], name
    lines = {p["cassette"]: p["filtered"] for p in progress}
    for name in ("trailing", "brotli"):  # fail closed, and said
        [interaction] = load(tmp_path / f"{name}.yaml").interactions
        assert interaction.response.body == b"" and interaction.response.header("content-encoding") is None
        assert any("response body dropped" in line and "does not decode" in line for line in lines[name])  # type: ignore[attr-defined]
        assert "response body dropped" in (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
    assert any("secret(s) replaced" in line for line in lines["multi"])  # type: ignore[attr-defined]


def test_a_clean_coded_body_is_kept_as_it_came(tmp_path: Path) -> None:
    bodies = {name: (coding, wire) for name, (coding, wire, _) in cases(CLEAN).items()}
    record(tmp_path, bodies)
    for name, (coding, wire) in bodies.items():
        [interaction] = load(tmp_path / f"{name}.yaml").interactions
        assert interaction.response.header("content-encoding") == coding
        assert interaction.response.body == wire, name


def test_keep_encoding_asks_only_for_codings_the_scan_reads(tmp_path: Path) -> None:
    with CodedUpstream({}) as up, Recorder(up.url, tmp_path, mode="all", keep_encoding=True) as rec:
        raw_request(rec.url, "POST", "/json", b"{}", {"Accept-Encoding": "br;q=1.0, gzip;q=0.8, zstd, deflate"})
        raw_request(rec.url, "POST", "/json", b"{}", {"Accept-Encoding": "br"})
    sent = [r["headers"]["Accept-Encoding"] for r in up.received]
    assert sent == ["gzip;q=0.8, deflate", "identity"]


# ---- ssemock check -------------------------------------------------------------------------------

def _cassette_with(path: Path, coding: str, wire: bytes) -> Path:
    response = Response(200, "OK", [("Content-Type", "text/event-stream"), ("Content-Encoding", coding)],
                        [Chunk(0.0, wire)], 0.0, End(0.01, "clean"))
    save(Cassette(name=path.stem, interactions=[Interaction(Request("GET", "/coded"), response)]), path)
    return path


@pytest.mark.parametrize("name", ["multi", "raw-deflate", "stacked", "trailing", "named"])
def test_check_finds_the_key_in_every_coded_body(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    bodies = {n: (c, w) for n, (c, w, _) in cases(SECRET).items()}
    bodies["trailing"], bodies["named"] = ("gzip", TRAILING), ("gzip", gzip_named(CLEAN, KEY))
    path = _cassette_with(tmp_path / f"{name}.yaml", *bodies[name])
    assert main(["check", str(path)]) != 0
    out = capsys.readouterr()
    assert "openai" in (out.out + out.err) and KEY not in out.out + out.err


def test_check_passes_a_clean_coded_body_and_flags_one_that_does_not_decode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    for name, (coding, wire, _) in cases(CLEAN).items():
        assert main(["check", str(_cassette_with(tmp_path / f"{name}.yaml", coding, wire))]) == 0, name
    assert main(["check", str(_cassette_with(tmp_path / "br.yaml", "br", b"\x0b\x02\x80xyz"))]) != 0
    assert "unknown content coding 'br'" in capsys.readouterr().out


# ---- replay --------------------------------------------------------------------------------------

def _events(body: bytes) -> list[bytes]:
    return [block for block in body.replace(b"\r\n", b"\n").lstrip(b"\xef\xbb\xbf").split(b"\n\n") if block]


@pytest.mark.parametrize("scenario", [None, "crlf", "bom"])
def test_replay_of_coded_cassettes_gives_every_event(tmp_path: Path, scenario: str | None) -> None:
    clean = cases(CLEAN)
    bodies = {name: (coding, wire) for name, (coding, wire, _) in clean.items()}
    bodies |= {f"secret-{name}": (coding, wire) for name, (coding, wire, _) in cases(SECRET).items()}
    record(tmp_path, bodies)
    expected = {name: plain for name, (_, _, plain) in clean.items()}
    expected |= {f"secret-{n}": p.replace(KEY.encode(), b"REDACTED") for n, (_, _, p) in cases(SECRET).items()}
    headers = {"X-SSEMock-Scenario": scenario} if scenario else {}
    with MockServer(cassettes=tmp_path, timing_scale=0) as server:
        for name in bodies:
            url = f"{server.url}/coded/{name}"
            if scenario is None and name in ("multi", "x-gzip"):  # sent as recorded; httpx reads one
                answer = raw_request(server.url, "GET", f"/coded/{name}")  # member, and no x-gzip: the stdlib
                assert answer.body == bodies[name][1]
                assert _events(gzip.decompress(answer.body)) == _events(expected[name])
                continue
            with httpx.Client(timeout=30) as client:
                plain = client.get(url, headers={**headers, "X-SSEMock-Cassette": name}).content
            assert _events(plain) == _events(expected[name]), (name, scenario)
            if scenario == "crlf":
                assert plain.count(b"\r\n\r\n") == len(_events(expected[name]))
            if scenario == "bom":
                assert plain.startswith(b"\xef\xbb\xbf")
        journal = server.requests
    assert all(entry["outcome"] == "complete" for entry in journal)
    assert not any("not applied" in line for entry in journal for line in entry["injected"])


@pytest.mark.parametrize("coding, wire", [("gzip", TRAILING), ("br", b"\x0b\x02\x80xyz")])
def test_a_body_that_does_not_decode_is_sent_as_recorded_and_the_steps_say_so(
    tmp_path: Path, coding: str, wire: bytes,
) -> None:
    _cassette_with(tmp_path / "bad.yaml", coding, wire)
    with MockServer(cassettes=tmp_path, timing_scale=0) as server:
        answer = raw_request(server.url, "GET", "/coded", headers={"X-SSEMock-Scenario": "crlf"})
        [entry] = server.requests
    assert answer.body == wire  # no step ran over the encoded bytes
    assert any(line.startswith("line-endings: not applied, Content-Encoding") for line in entry["injected"])


def test_a_large_coded_body_is_scanned_to_its_last_member(tmp_path: Path) -> None:
    """Over 1 MiB: scanned in batches in the scan thread, written after the client's last byte."""
    noise = base64.b64encode(random.Random(7).randbytes(3 << 20))  # compresses to about 3/4
    events = b"".join(b"data: %s\n\n" % noise[i:i + 1000] for i in range(0, len(noise), 1000))
    wire = gz(events) + gz(SECRET)
    bodies = {"large": ("gzip", wire), "large-trailing": ("gzip", gz(events) + SECRET)}
    got, progress = record(tmp_path, bodies)
    assert got == {name: body for name, (_, body) in bodies.items()} and len(wire) > 3 << 20
    for name in bodies:
        assert KEY not in (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
    [interaction] = load(tmp_path / "large.yaml").interactions
    assert interaction.response.body == events + SECRET.replace(KEY.encode(), b"REDACTED")
    [dropped] = load(tmp_path / "large-trailing.yaml").interactions
    assert dropped.response.body == b""
    [line] = [p["filtered"] for p in progress if p["cassette"] == "large-trailing"]
    assert any("response body dropped" in entry for entry in line)  # type: ignore[attr-defined]


def test_an_answer_decoding_past_the_bound_is_not_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decompression bomb (a few KB of gzip, gigabytes decoded) is not decoded past
    ``limits.MAX_DECODED_BODY`` (256 MiB; 1 MiB here): it is not recorded, as one that does not
    decode, and the client still gets every byte as it came."""
    monkeypatch.setattr(limits, "MAX_DECODED_BODY", 1 << 20)
    bomb = gz(b"data: " + b"0" * (4 << 20) + b"\n\n" + SECRET)
    small = gz(b"data: " + b"0" * (512 << 10) + b"\n\n" + SECRET)  # under the bound: decoded, scrubbed
    got, progress = record(tmp_path, {"bomb": ("gzip", bomb), "small": ("gzip", small)})
    assert got == {"bomb": bomb, "small": small} and len(bomb) < 16 << 10
    [dropped] = load(tmp_path / "bomb.yaml").interactions
    assert dropped.response.body == b"" and dropped.response.header("content-encoding") is None
    [line] = [p["filtered"] for p in progress if p["cassette"] == "bomb"]
    assert any("response body dropped" in entry and f"more than {1 << 20} bytes" in entry
               for entry in line)  # type: ignore[attr-defined]
    [kept] = load(tmp_path / "small.yaml").interactions
    assert kept.response.body.endswith(SECRET.replace(KEY.encode(), b"REDACTED"))
    for name in ("bomb", "small"):
        assert KEY not in (tmp_path / f"{name}.yaml").read_text(encoding="utf-8")
