"""The cache of parsed cassettes: same cassette as parsing the YAML, invalidated by any change,
bounded, written atomically, and never trusted when damaged."""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssemock import Cassette, CassetteError, ConfigError, MockServer
from ssemock.bundled import bundled_cassettes
from ssemock.cassette import Chunk, End, Interaction, Request, Response, load, save
from ssemock.cassette import cache as cache_module

REAL = bundled_cassettes() / "anthropic-messages-thinking.yaml"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("SSEMOCK_CACHE_DIR", str(directory))
    monkeypatch.delenv("SSEMOCK_CACHE_MAX_BYTES", raising=False)
    return directory


def big_copy(tmp_path: Path, copies: int = 8, name: str = "big.yaml") -> Path:
    """The real recording with its interaction repeated ``copies`` times: above the cache's size threshold."""
    real = load(REAL)
    big = Cassette("big", real.interactions * copies, provenance=real.provenance)
    path = save(big, tmp_path / name)
    assert path.stat().st_size >= cache_module.MIN_CACHED_SIZE
    return path


def parsed(path: Path, monkeypatch: pytest.MonkeyPatch) -> Cassette:
    """The cassette parsed from its YAML, with no cache at all."""
    with monkeypatch.context() as m:
        m.setenv("SSEMOCK_CACHE_DIR", "off")
        return load(path)


def entries(directory: Path) -> list[Path]:
    own = directory / cache_module.SUBDIR
    return sorted(p for p in own.glob("*.msgpack") if re.fullmatch(r"[0-9a-f]{64}\.msgpack", p.name))


def test_second_load_comes_from_the_cache_and_equals_the_parse(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_copy(tmp_path)
    first = load(path)
    [entry] = entries(cache_dir)
    second = load(path)
    assert second == first == parsed(path, monkeypatch)
    # the real recording's bytes, as recorded: 118 chunks per interaction
    assert [len(i.response.chunks) for i in second.interactions] == [118] * 8
    assert second.interactions[0].response.body == load(REAL).interactions[0].response.body
    assert entries(cache_dir) == [entry]


def test_any_change_to_the_file_is_seen(cache_dir: Path, tmp_path: Path) -> None:
    path = big_copy(tmp_path)
    load(path)
    text = path.read_text()
    assert "thinking" in text
    assert text.count("message_stop") == 16  # "event:" and "type" in each of the 8 interactions
    path.write_text(text.replace("message_stop", "message_stoP", 1))  # one byte
    changed = load(path)
    bodies = b"".join(i.response.body for i in changed.interactions)
    assert bodies.count(b"message_stoP") == 1
    assert len(entries(cache_dir)) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "wrong-shape"])
def test_a_damaged_entry_is_not_trusted(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    path = big_copy(tmp_path)
    load(path)
    [entry] = entries(cache_dir)
    raw = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip":
        entry.write_bytes(raw[:-100] + bytes([raw[-100] ^ 0x01]) + raw[-99:])
    elif damage == "garbage":
        entry.write_bytes(b"\x00" * 1000)
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a valid checksum over a payload of the wrong shape
        payload = msgpack.packb(["big", {}, [[1, 2, 3]]])
        head = raw[: raw.index(b"\x00") + 2]
        entry.write_bytes(head + hashlib.blake2b(payload, digest_size=16).digest() + payload)
    assert load(path) == parsed(path, monkeypatch)
    assert load(path) == parsed(path, monkeypatch)  # the damaged entry was replaced


def repack(entry: Path, edit: Callable[[list[Any]], None]) -> None:
    """Rewrite ``entry``'s payload with ``edit`` and recompute its (unkeyed) checksum, as anyone could."""
    raw = entry.read_bytes()
    head = raw.index(b"\x00") + 2
    payload = msgpack.unpackb(raw[head + 16:], raw=False, strict_map_key=False)
    edit(payload)
    packed = msgpack.packb(payload, use_bin_type=True)
    entry.write_bytes(raw[:head] + hashlib.blake2b(packed, digest_size=16).digest() + packed)


TAMPERED: dict[str, Callable[[list[Any]], None]] = {
    # interaction fields: 0 method, 1 path, 3 headers, 7 status, 9 headers, 10 start, 11 end t, 12 how, 14 times
    "status 999": lambda p: p[2][0].__setitem__(7, 999),
    "status True": lambda p: p[2][0].__setitem__(7, True),
    "CRLF in a header value": lambda p: p[2][0][9].append(["X-A", "a\r\nSet-Cookie: evil=1"]),
    "header name not a token": lambda p: p[2][0][9].append(["X A:", "1"]),
    "CR in a request header": lambda p: p[2][0][3].append(["x", "\r"]),
    "start NaN": lambda p: p[2][0].__setitem__(10, math.nan),
    "chunk time inf": lambda p: p[2][0][14].__setitem__(0, math.inf),
    "chunk time NaN": lambda p: p[2][0][14].__setitem__(-1, math.nan),
    "chunks out of order": lambda p: p[2][0][14].__setitem__(1, 1e4),
    "end before the last chunk": lambda p: p[2][0].__setitem__(11, 0.0),
    "end how": lambda p: p[2][0].__setitem__(12, "exploded"),
    "method not a token": lambda p: p[2][0].__setitem__(0, "GET /x HTTP/1.1\r\n"),
    "lower-case method": lambda p: p[2][0].__setitem__(0, "post"),
    "path": lambda p: p[2][0].__setitem__(1, "http://elsewhere/"),
    "name with ..": lambda p: p.__setitem__(0, "../x"),
}


@pytest.mark.parametrize("tamper", sorted(TAMPERED))
def test_an_entry_breaking_the_cassette_rules_is_damaged_even_with_a_valid_checksum(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tamper: str
) -> None:
    path = big_copy(tmp_path)
    load(path)
    [entry] = entries(cache_dir)
    repack(entry, TAMPERED[tamper])
    assert load(path) == parsed(path, monkeypatch)  # the YAML's answer, not the entry's
    assert load(path).interactions[0].response.status == 200  # the real recording's status
    assert entry.read_bytes() != b"" and load(path) == parsed(path, monkeypatch)  # rebuilt


def test_pruning_and_reading_leave_the_users_files_alone(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache variable pointed at a folder of the user's own ``.msgpack`` files (old ones, even
    named like an entry) removes none of them, however small the bound."""
    path = big_copy(tmp_path)
    theirs = {
        cache_dir / "model-weights.msgpack": os.urandom(300_000),
        cache_dir / f"{'a' * 64}.msgpack": os.urandom(200_000),
        cache_dir / cache_module.SUBDIR / "notes.msgpack": b"mine",
        cache_dir / cache_module.SUBDIR / f"{'B' * 64}.msgpack": os.urandom(200_000),
    }
    for file, data in theirs.items():
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        file.write_bytes(data)
        os.utime(file, (1_577_836_800, 1_577_836_800))  # 2020: older than any entry
    load(path)
    [entry] = entries(cache_dir)
    monkeypatch.setenv("SSEMOCK_CACHE_MAX_BYTES", str(entry.stat().st_size))  # room for one entry
    load(big_copy(tmp_path, 9, "other.yaml"))
    assert {file: file.read_bytes() for file in theirs} == theirs
    assert len(entries(cache_dir)) == 1  # the cache pruned its own older entry only
    assert stat.S_IMODE((cache_dir / cache_module.SUBDIR).stat().st_mode) == 0o700


@pytest.mark.parametrize("kind", ["group-writable", "symlink"])
def test_a_subdirectory_others_could_write_is_not_used(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = big_copy(tmp_path)
    cache_dir.mkdir()
    elsewhere = tmp_path / "elsewhere"
    if kind == "symlink":
        elsewhere.mkdir(mode=0o700)
        (cache_dir / cache_module.SUBDIR).symlink_to(elsewhere)
    else:
        (cache_dir / cache_module.SUBDIR).mkdir()
        (cache_dir / cache_module.SUBDIR).chmod(0o777)
    assert load(path) == parsed(path, monkeypatch)
    assert load(path) == parsed(path, monkeypatch)
    assert list(tmp_path.rglob("*.msgpack")) == []


@pytest.mark.parametrize("kind", ["symlink to /dev/zero", "symlink to a valid entry", "fifo", "too large"])
def test_an_entry_that_is_not_a_small_regular_file_is_damaged_and_never_blocks(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = big_copy(tmp_path)
    load(path)
    [entry] = entries(cache_dir)
    valid = tmp_path / "valid-entry"
    entry.rename(valid)
    if kind == "symlink to /dev/zero":
        entry.symlink_to("/dev/zero")
    elif kind == "symlink to a valid entry":
        entry.symlink_to(valid)
    elif kind == "fifo":
        os.mkfifo(entry)
    else:
        monkeypatch.setenv("SSEMOCK_CACHE_MAX_BYTES", str(valid.stat().st_size - 1))
        entry.write_bytes(valid.read_bytes())
    result: list[Cassette] = []
    reader = threading.Thread(target=lambda: result.append(load(path)), daemon=True)
    reader.start()
    reader.join(30)  # a FIFO read would block forever, /dev/zero would fill the memory
    assert result == [parsed(path, monkeypatch)]
    assert valid.exists()  # what a symlink pointed to is left alone
    if kind != "too large":  # the damaged entry was replaced by a regular file
        assert entry.is_file() and not entry.is_symlink()


def test_small_files_are_not_cached(cache_dir: Path, tmp_path: Path) -> None:
    load(REAL)
    assert REAL.stat().st_size < cache_module.MIN_CACHED_SIZE
    assert entries(cache_dir) == []


@pytest.mark.parametrize("off", ["off", ""])
def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, off: str) -> None:
    monkeypatch.setenv("SSEMOCK_CACHE_DIR", off)
    path = big_copy(tmp_path)
    load(path)
    load(path)
    assert list(tmp_path.rglob("*.msgpack")) == []


def test_the_cache_is_bounded_least_recently_used_first(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [big_copy(tmp_path, copies, f"c{copies}.yaml") for copies in (4, 5, 6)]
    load(paths[0])
    one = entries(cache_dir)[0].stat().st_size
    monkeypatch.setenv("SSEMOCK_CACHE_MAX_BYTES", str(3 * one))  # entries of 1, 1.25 and 1.5 × one
    load(paths[1])
    load(paths[2])
    sizes = [p.stat().st_size for p in entries(cache_dir)]
    assert sum(sizes) <= 3 * one
    assert len(sizes) == 2
    assert min(sizes) > one  # the oldest (the smallest, c4) went first
    monkeypatch.setenv("SSEMOCK_CACHE_MAX_BYTES", "0")  # 0: no cache, nothing written
    big_copy(tmp_path, 7, "c7.yaml")
    load(tmp_path / "c7.yaml")
    assert len(entries(cache_dir)) == 2


@pytest.mark.parametrize("value", ["-1", "lots", "1.5"])
def test_an_invalid_bound_is_a_clear_error(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    path = big_copy(tmp_path)
    monkeypatch.setenv("SSEMOCK_CACHE_MAX_BYTES", value)
    with pytest.raises(ConfigError, match=r"SSEMOCK_CACHE_MAX_BYTES: expected a size in bytes .*" + value):
        load(path)


def test_an_unwritable_cache_costs_only_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SSEMOCK_CACHE_DIR", str(blocker / "cache"))
    path = big_copy(tmp_path)
    assert load(path) == parsed(path, monkeypatch)


def test_no_temporary_file_is_left(cache_dir: Path, tmp_path: Path) -> None:
    load(big_copy(tmp_path))
    assert [p.name for p in (cache_dir / cache_module.SUBDIR).iterdir() if not p.name.endswith(".msgpack")] == []


_times = st.floats(0, 86_400, allow_nan=False)
_chunk = st.builds(Chunk, _times, st.binary(max_size=40))
_pair = st.tuples(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), st.text("abc xyz/", max_size=10))
_request = st.builds(
    Request, method=st.sampled_from(["GET", "POST", "PROPFIND"]), path=st.from_regex(r"/[a-z/]{0,12}", fullmatch=True),
    query=st.lists(_pair, max_size=2), headers=st.lists(_pair, max_size=2),
    body=st.one_of(st.none(), st.binary(max_size=30)),
)
_response = st.builds(
    Response, status=st.integers(200, 599).filter(lambda s: s not in (204, 304)), headers=st.lists(_pair, max_size=3),
    chunks=st.lists(_chunk, max_size=12).map(lambda cs: sorted(cs, key=lambda c: c.t)),
    end=st.builds(End, st.just(86_400.0), st.sampled_from(["clean", "cut", "reset", "timeout", "client_gone"])),
    timed=st.just(True),  # untimed responses keep no times at all (every t is 0)
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(interactions=st.lists(st.builds(Interaction, _request, _response), min_size=1, max_size=4))
def test_any_cassette_round_trips_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interactions: list[Interaction]
) -> None:
    monkeypatch.setenv("SSEMOCK_CACHE_DIR", str(tmp_path / "hcache"))
    monkeypatch.setattr(cache_module, "MIN_CACHED_SIZE", 0)  # these cassettes are small
    for inter in interactions:
        inter.response.start = inter.response.chunks[0].t if inter.response.chunks else 0.0
    path = save(Cassette("h", interactions), tmp_path / "h.yaml")
    first = load(path)
    assert any(e.stat().st_size for e in entries(tmp_path / "hcache"))
    second = load(path)
    assert second == first == parsed(path, monkeypatch)
    for got, want in zip(second.interactions, interactions):
        assert [(c.t, c.data) for c in got.response.chunks] == [(c.t, c.data) for c in want.response.chunks]
        assert got.request.body == want.request.body


async def test_a_cached_cassette_replays_the_recorded_bytes(cache_dir: Path, tmp_path: Path) -> None:
    path = big_copy(tmp_path, 8)
    load(path)
    assert len(entries(cache_dir)) == 1
    recorded = load(REAL).interactions[0]
    async with MockServer(path, scenarios=[], timing_scale=0) as server, aiohttp.ClientSession() as session:
        body = recorded.request.body
        assert body is not None
        async with session.post(f"{server.url}{recorded.request.path}", data=body,
                                headers={"content-type": "application/json"}) as resp:
            assert resp.status == 200
            got = await resp.read()
    assert got == recorded.response.body


def test_a_file_changed_while_it_is_parsed_gives_its_new_cassette_and_no_entry_for_the_old_bytes(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file not in the cache is checked, then parsed as it is read again: when its bytes changed in
    between, the cassette is that of the new bytes, and the entry named for the old bytes is not written."""
    from ssemock.cassette import io

    path, other = big_copy(tmp_path), big_copy(tmp_path, copies=9, name="other.yaml")
    checked = io._checked

    def checked_then_replaced(*args: Any) -> Any:
        found = checked(*args)
        monkeypatch.setattr(io, "_checked", checked)  # once
        (tmp_path / "new.yaml").write_bytes(other.read_bytes())
        os.replace(tmp_path / "new.yaml", path)
        return found

    monkeypatch.setattr(io, "_checked", checked_then_replaced)
    got = load(path)
    assert len(got.interactions) == 9 and got == parsed(path, monkeypatch)
    assert entries(cache_dir) == []  # the old bytes' name never holds the new cassette
    assert load(path) == got and len(entries(cache_dir)) == 1  # the next load caches the new bytes


def test_a_file_replaced_by_a_fifo_while_it_is_parsed_is_refused_without_blocking(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read again to be parsed, the file is opened without blocking and must still be a regular file."""
    from ssemock.cassette import io

    path = big_copy(tmp_path)
    checked = io._checked

    def checked_then_fifo(*args: Any) -> Any:
        found = checked(*args)
        monkeypatch.setattr(io, "_checked", checked)
        path.unlink()
        os.mkfifo(path)
        return found

    monkeypatch.setattr(io, "_checked", checked_then_fifo)
    with pytest.raises(CassetteError, match="expected a regular file"):
        load(path)
    assert entries(cache_dir) == []
