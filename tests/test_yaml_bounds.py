"""Item and node bounds counted while YAML loads: a hostile file stops early, in bounded memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ssemock import CassetteError
from ssemock.cassette import load
from ssemock.cassette.fastyaml import ItemBound, Refused, TooMany, fast_safe_load, strict_load
from ssemock.cassette.read import cassette_items, load_yaml
from ssemock.limits import MAX_ITEMS, MAX_YAML_NODES

SMALL = ItemBound(10, cassette_items().fields)  # the cassette's lists, at most 10 items each

HEAD = "ssemock_cassette: 1\ninteractions:\n"


def cassette_text(chunks: int, *, interactions: int = 1, key: str = "chunks", first: str = "") -> str:
    """``interactions`` interactions, the last with ``chunks`` empty mappings under ``key``."""
    one = "- request: {method: GET, path: /}\n  response: {status: 200}\n"
    last = f"- request: {{method: GET, path: /}}\n  response:\n    {key}: [{first}" + "{}," * chunks + "]\n"
    return HEAD + one * (interactions - 1) + last


def test_a_list_at_an_item_position_is_refused_naming_its_field() -> None:
    with pytest.raises(TooMany) as caught:
        fast_safe_load(cassette_text(11, interactions=2), items=SMALL)
    assert caught.value.field == "interactions[1].response.chunks"
    assert caught.value.expected == "a list of at most 10 chunks"
    with pytest.raises(TooMany) as caught:
        fast_safe_load(cassette_text(11, key="events"), items=SMALL)
    assert caught.value.field == "interactions[0].response.events"
    assert caught.value.expected == "a list of at most 10 events"
    with pytest.raises(TooMany) as caught:
        fast_safe_load(cassette_text(0, interactions=11), items=SMALL)
    assert (caught.value.field, caught.value.expected) == ("interactions", "a list of at most 10 interactions")


def test_lists_at_the_bound_load_and_other_lists_are_not_counted() -> None:
    doc = fast_safe_load(cassette_text(10, interactions=10), items=SMALL)
    assert len(doc["interactions"]) == 10
    assert doc["interactions"][9]["response"]["chunks"] == [{}] * 10
    headers = HEAD + "- request: {method: GET, path: /, headers: [" + "[a, b]," * 20 + "]}\n  response: {}\n"
    assert len(fast_safe_load(headers, items=SMALL)["interactions"][0]["request"]["headers"]) == 20


def test_the_count_goes_on_after_the_fast_path_steps_aside() -> None:
    # A timestamp is outside the fast path's subset: the rest is still counted before the full loader runs.
    with pytest.raises(TooMany) as caught:
        strict_load(cassette_text(11, first="2001-12-14,"), items=SMALL)
    assert caught.value.field == "interactions[0].response.chunks"
    with pytest.raises(TooMany, match="at most 50 nodes"):
        strict_load("when: 2001-12-14\nx: [" + "{}," * 60 + "]\n", max_nodes=50)
    chunks = strict_load(cassette_text(9, first="2001-12-14,"), items=SMALL)["interactions"][0]["response"]["chunks"]
    assert chunks[1:] == [{}] * 9 and len(chunks) == 10


def test_what_the_full_loader_reads_has_a_lower_node_bound() -> None:
    text = "name: x\nwhen: 2001-12-14\nx: [" + "{}," * 60 + "]\n"  # 2 + 2 + 2 + 60 nodes and the top mapping
    with pytest.raises(TooMany) as caught:
        strict_load(text, max_full_nodes=66)
    assert caught.value.line == 2  # the timestamp
    assert caught.value.expected.startswith("YAML of at most 66 nodes when it holds what ssemock never writes (")
    assert strict_load(text, max_full_nodes=67)["x"] == [{}] * 60
    assert strict_load(text.replace("2001-12-14", "'2001-12-14'"), max_full_nodes=10)["when"] == "2001-12-14"


def test_empty_mappings_anywhere_are_bounded_by_the_node_count() -> None:
    text = HEAD + "- request: {method: GET, path: /, headers: [" + "{}," * 100 + "]}\n  response: {}\n"
    with pytest.raises(TooMany) as caught:
        fast_safe_load(text, items=SMALL, max_nodes=50)
    assert caught.value.field is None
    assert caught.value.expected == "YAML of at most 50 nodes (scalars, sequences and mappings)"
    assert caught.value.line == 3
    # top mapping, ssemock_cassette: 1, interactions + its list, the interaction, request + its mapping,
    # method: GET, path: /, headers + its list, the 100 mappings, response + its mapping
    nodes = 1 + 2 + 2 + 1 + 2 + 2 + 2 + 2 + 100 + 2
    assert fast_safe_load(text, max_nodes=nodes)["interactions"][0]["request"]["headers"] == [{}] * 100
    with pytest.raises(Refused):
        fast_safe_load(text, max_nodes=nodes - 1)


def test_the_cassette_error_names_the_file_and_the_field(tmp_path: Path) -> None:
    with pytest.raises(CassetteError) as caught:
        load_yaml(cassette_text(11, interactions=3), "big.yaml", items=SMALL)
    assert str(caught.value) == "big.yaml: interactions[2].response.chunks: expected a list of at most 10 chunks"
    assert MAX_YAML_NODES == 32 * MAX_ITEMS


def write_empty_maps(path: Path, count: int) -> None:
    """A cassette whose one response has ``count`` empty mappings as chunks, written in blocks."""
    with path.open("w") as out:
        out.write(HEAD + "- request: {method: GET, path: /}\n  response:\n    chunks: [")
        block = "{}," * 100_000
        for _ in range(count // 100_000):
            out.write(block)
        out.write("{}," * (count % 100_000) + "]\n")


def limited(megabytes: int) -> Any:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


def test_ten_million_empty_chunks_stop_at_the_real_bound_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "emptymaps.yaml"
    write_empty_maps(path, 10_000_000)  # 30 MB: before the count, 42 s and 835 MB before the same error
    run = subprocess.run(
        [sys.executable, "-m", "ssemock", "inspect", str(path)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "SSEMOCK_CACHE_DIR": str(tmp_path / "cache")}, preexec_fn=limited(700),
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.strip() == (
        f"ssemock: error: {path}: interactions[0].response.chunks: expected a list of at most 1000000 chunks"
    )


CHILD = textwrap.dedent("""
    import resource, sys
    from ssemock.cli import main

    assert main(["inspect", sys.argv[2]]) == 0  # every module the command needs is imported before the limit
    size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + (40 << 20), size + (40 << 20)))  # 40 MB more than now
    sys.exit(main(["inspect", sys.argv[1]]))
""")


def test_a_cassette_within_the_bounds_but_not_within_memory_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "within.yaml"
    write_empty_maps(path, MAX_ITEMS)  # within every bound: about 80 MB of data
    small = tmp_path / "small.yaml"
    write_empty_maps(small, 0)
    small.write_text(small.read_text().replace("[]", "[{text: a}]"))
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(small)], capture_output=True, text=True, timeout=300,
        env={**os.environ, "SSEMOCK_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    size = path.stat().st_size  # the file is parsed as it is read, as bytes
    assert run.stderr.strip() == (
        f"ssemock: error: {path}: expected YAML whose data fits in memory ({size:,} bytes did not)"
    )


def test_a_legit_cassette_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(HEAD + "- request: {method: GET, path: /}\n  response:\n    chunks:\n"
                    + "    - {t: 0.5, text: \"data: a\\n\\n\"}\n" * 3)
    cassette = load(path)
    assert [c.data for c in cassette.interactions[0].response.chunks] == [b"data: a\n\n"] * 3
