"""Scenario values that cannot be served are refused at load: sizes, counts and delays with
an upper bound, header values without control characters, names that can be selected; and
building a large plan leaves the server answering."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from ssemock import MockServer, Scenario, ScenarioError
from ssemock.limits import integer, number
from ssemock.scenario.chunk_steps import MAX_CHUNKS
from ssemock.sse import Event, decode

from .rawclient import RawResponse, raw_request

CHAT = "openai-chat-finish-length-usage"
MIB = 1024 * 1024


def load(tmp_path: Path, doc: dict[str, object], file: str = "x.yaml") -> Scenario:
    path = tmp_path / file
    path.write_text(yaml.safe_dump({"ssemock_scenario": 1, **doc}), encoding="utf-8")
    return Scenario.load(path)


def refused(tmp_path: Path, doc: dict[str, object], field: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load(tmp_path, doc)
    assert caught.value.file == str(tmp_path / "x.yaml") and caught.value.field == field
    assert expected in caught.value.expected, caught.value.expected


def post(server: MockServer, scenario: str) -> RawResponse:
    headers = {"X-SSEMock-Cassette": CHAT, "X-SSEMock-Scenario": scenario}
    return raw_request(server.url, "POST", "/v1/chat/completions", b"{}", headers)


# ---- 1. bounds ----------------------------------------------------------------------------
@pytest.mark.parametrize(("step", "field", "expected"), [
    ({"keepalive": {"leading": 1_000_000_000, "every_events": 0}}, "keepalive.leading", "an integer from 0 to 100000"),
    ({"keepalive": {"every_events": 100_001}}, "keepalive.every_events", "an integer from 0 to 100000"),
    ({"keepalive": {"text": "x" * 257}}, "keepalive.text", "at most 256 characters"),
    ({"long-lines": {"sizes": [10_000_000_000]}}, "long-lines.sizes", "integers from 1 to 67108864 (64 MiB)"),
    ({"long-lines": {"sizes": [40 * MIB, 40 * MIB]}}, "long-lines.sizes", "adding up to at most 67108864"),
    ({"multiline-data": {"parts": 10**9}}, "multiline-data.parts", "an integer from 2 to 1000"),
    ({"json-separators": {"item": " " * 100 + ","}}, "json-separators.item", "at most 16 characters"),
    ({"line-separators": {"chars": "\u2028" * 65}}, "line-separators.chars", "at most 64 characters"),
    ({"extra-fields": {"retry_ms": 10**12}}, "extra-fields.retry_ms", "an integer from 0 to 3600000"),
    ({"event-ids": {"retry_ms": 3_600_001}}, "event-ids.retry_ms", "an integer from 0 to 3600000 or null"),
    ({"extra-fields": {"unknown": [f"x{i}" for i in range(33)]}}, "extra-fields.unknown", "at most 32 field names"),
    ({"meta-blocks": {"every_events": 0}}, "meta-blocks.every_events", "an integer from 1 to 100000"),
    ({"meta-blocks": {"id": "7" * 257}}, "meta-blocks.id", "at most 256 characters without CR, LF, NUL"),
    ({"timing": {"mode": "fixed", "interval": 1e9}}, "timing.interval", "a number from 0 to 3600"),
    ({"timing": {"mode": "scale", "factor": 1000}}, "timing.factor", "a number from 0 to 100"),
    ({"timing": {"first_byte": 3601}}, "timing.first_byte", "a number from 0 to 3600 or null"),
    ({"fragment": {"size": 0}}, "fragment.size", "an integer from 1 to 67108864 (64 MiB)"),
    ({"fragment": {"mode": "random", "max": 10**10}}, "fragment.max", "an integer from 1 to 67108864"),
    ({"fragment": {"mode": "offsets", "offsets": [10**10]}}, "fragment.offsets", "integers from 1 to 67108864"),
    ({"fragment": {"pace": 61}}, "fragment.pace", "a number from 0 to 60"),
    ({"first-byte": {"seconds": 1e9}}, "first-byte.seconds", "a number from 0 to 3600"),
    ({"stall": {"seconds": 3600.5}}, "stall.seconds", "a number from 0 to 3600"),
])
def test_values_past_their_bound_are_refused_with_the_range(
    tmp_path: Path, step: dict[str, object], field: str, expected: str
) -> None:
    refused(tmp_path, {"steps": [{"bom": {}}, step]}, f"steps[1].{field}", expected)


def test_only_sizes_in_bytes_are_shown_in_kib_or_mib(tmp_path: Path) -> None:
    """A bound in milliseconds or a count that happens to be a multiple of 1024 is a plain number;
    sizes in bytes (``fragment``, ``disconnect.from_end``, ``long-lines.sizes``) also name MiB or KiB."""
    assert integer(0, 86_400_000, optional=True).expected == "an integer from 0 to 86400000 or null"
    assert integer(1, 2048).expected == "an integer from 1 to 2048"
    assert number(0, 1024).expected == "a number from 0 to 1024"
    assert integer(1, 65536, in_bytes=True).expected == "an integer from 1 to 65536 (64 KiB)"
    refused(tmp_path, {"steps": [{"disconnect": {"from_end": 64 * MIB + 1}}]}, "steps[0].disconnect.from_end",
            "an integer from 0 to 67108864 (64 MiB) or null")
    refused(tmp_path, {"steps": [{"fragment": {"mode": "random", "min": 0}}]}, "steps[0].fragment.min",
            "an integer from 1 to 67108864 (64 MiB)")


def test_the_bounds_themselves_load(tmp_path: Path) -> None:
    steps = [
        {"keepalive": {"leading": 100_000, "every_events": 100_000, "text": "x" * 256}},
        {"long-lines": {"sizes": [32 * MIB, 32 * MIB]}},
        {"multiline-data": {"parts": 1000}},
        {"meta-blocks": {"retry_ms": 3_600_000, "id": "7" * 256, "every_events": 100_000}},
        {"event-ids": {"retry_ms": 3_600_000}},
        {"timing": {"mode": "scale", "factor": 100, "first_byte": 3600}},
        {"fragment": {"mode": "random", "min": 64 * MIB, "max": 64 * MIB, "pace": 60}},
        {"first-byte": {"seconds": 3600}},
        {"stall": {"seconds": 3600.0}},
    ]
    assert len(load(tmp_path, {"steps": steps}).steps) == len(steps)


def test_a_scenario_has_at_most_100_steps(tmp_path: Path) -> None:
    """docs/reference/limits.md: at most 100 steps in one scenario (each is a pass over the response)."""
    def steps(n: int) -> list[dict[str, object]]:
        return [{"line-endings": {"eol": "lf"}} for _ in range(n)]  # (no shared objects: no YAML aliases)

    assert len(load(tmp_path, {"steps": steps(100)}).steps) == 100
    refused(tmp_path, {"steps": steps(101)}, "steps", "at most 100 steps")
    with pytest.raises(ScenarioError, match="101 steps"):
        Scenario.from_dict({"name": "many", "steps": steps(101)})


def test_a_directory_with_a_scenario_of_too_many_steps_is_refused_at_start_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "many.yaml").write_text(
        "ssemock_scenario: 1\nsteps:\n" + "- line-endings: {eol: lf}\n" * 30_000, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught, MockServer(scenarios=[tmp_path]):
        pass
    assert caught.value.file == str(tmp_path / "many.yaml") and caught.value.field == "steps"


def test_the_server_answers_while_a_large_plan_is_built(tmp_path: Path) -> None:
    heavy = Scenario.from_dict({"name": "heavy", "steps": [
        {"keepalive": {"leading": 100_000, "text": "x" * 256}},
        {"long-lines": {"sizes": [16 * MIB]}},
        {"disconnect": {"after_bytes": 10, "how": "clean"}},
    ]})
    with MockServer(scenarios=[heavy], timing_scale=0) as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/_ssemock/health").status_code == 200
        answer: list[RawResponse] = []
        worker = threading.Thread(target=lambda: answer.append(post(server, "heavy")))
        worker.start()
        waits = []
        while worker.is_alive():
            started = time.perf_counter()
            assert client.get("/_ssemock/health").status_code == 200
            waits.append(time.perf_counter() - started)
        worker.join()
    assert answer[0].status == 200 and answer[0].body == b": xxxxxxxx"
    # Built on the event loop, the plan would hold up every health check until it is done: none
    # could be answered while the request is in progress. In a thread, several are.
    assert len(waits) >= 3, waits


def test_fragment_makes_at_most_max_chunks_and_says_so() -> None:
    big = Scenario.from_dict({"name": "big", "steps": [
        {"keepalive": {"leading": 5000}}, {"fragment": {"mode": "bytes", "size": 1, "pace": 0}},
    ]})
    plain = Scenario.from_dict({"name": "plain", "steps": [{"keepalive": {"leading": 5000}}]})
    with MockServer(scenarios=[big, plain], timing_scale=0) as server:
        expected = post(server, "plain").body
        assert len(expected) > MAX_CHUNKS
        split = post(server, "big")
        note = server.requests[-1]["injected"]
    assert split.body == expected
    assert len(split.chunks) <= MAX_CHUNKS
    assert split.chunks[:90_000] == [bytes([b]) for b in expected[:90_000]], "split from the start"
    assert any(f"at most {MAX_CHUNKS} chunks" in line for line in note), note
    assert [e.data for e in decode(split.body) if isinstance(e, Event)][-1] == "[DONE]"


# ---- 2. header values ---------------------------------------------------------------------
@pytest.mark.parametrize(("step", "field", "expected"), [
    ({"http-error": {"headers": {"x-a": "1\r\nSet-Cookie: a=b"}}}, "http-error.headers", "values without CR, LF, NUL"),
    ({"http-error": {"headers": {"x-a": "1\nb"}}}, "http-error.headers", "values without CR, LF, NUL"),
    ({"http-error": {"headers": {"x-a": "a\0b"}}}, "http-error.headers", "values without CR, LF, NUL"),
    ({"http-error": {"headers": {"x a": "1"}}}, "http-error.headers", "header names (letters, digits"),
    ({"http-error": {"headers": {"x-a:": "1"}}}, "http-error.headers", "header names (letters, digits"),
    ({"http-error": {"content_type": "text/plain\r\nX-A: 1"}}, "http-error.content_type", "without CR, LF, NUL"),
    ({"content-type": {"value": "text/event-stream\r\nX-A: 1"}}, "content-type.value", "without CR, LF, NUL"),
    ({"content-type": {"value": "text/event-stream\0"}}, "content-type.value", "without CR, LF, NUL"),
    ({"content-type": {"value": "text/event-stream\x1b"}}, "content-type.value", "other control characters"),
])
def test_header_values_with_control_characters_are_refused(
    tmp_path: Path, step: dict[str, object], field: str, expected: str
) -> None:
    refused(tmp_path, {"steps": [step]}, f"steps[0].{field}", expected)


def test_valid_header_values_are_sent() -> None:
    error = Scenario.from_dict({"name": "e", "steps": [
        {"http-error": {"status": 429, "headers": {"Retry-After": "2", "X-Note": "a\tb c"}}},
    ]})
    kind = Scenario.from_dict({"name": "k", "steps": [{"content-type": {"value": "text/event-stream; charset=utf-8"}}]})
    with MockServer(scenarios=[error, kind], timing_scale=0) as server:
        sent = post(server, "e")
        assert (sent.status, sent.header("retry-after"), sent.header("x-note")) == (429, "2", "a\tb c")
        assert post(server, "k").header("content-type") == "text/event-stream; charset=utf-8"
        assert [entry["outcome"] for entry in server.requests] == ["complete", "complete"]


# ---- 3. names ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a,b", "a/b", "a b", " a", "..", ".hidden", "", "caf\u00e9", "x" * 101, "a%2Cb"])
def test_names_that_cannot_be_selected_are_refused(tmp_path: Path, name: str) -> None:
    refused(tmp_path, {"name": name, "steps": []}, "name", "ASCII letters, digits, '-', '_' and '.'")


def test_a_file_named_with_a_comma_and_no_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"a,b\.yaml: name: expected a scenario name of .*no comma"):
        load(tmp_path, {"steps": []}, file="a,b.yaml")


def test_allowed_names_are_selected_by_header_and_path_prefix(tmp_path: Path) -> None:
    scenario = load(tmp_path, {"name": "My_crlf-2.0", "steps": [{"line-endings": {"eol": "crlf"}}]})
    with MockServer(scenarios=[scenario], timing_scale=0) as server:
        by_header = post(server, "My_crlf-2.0")
        by_path = raw_request(server.url, "POST", f"/_ssemock/s/My_crlf-2.0/_ssemock/c/{CHAT}/v1/chat/completions",
                              b"{}")
    assert by_header.status == by_path.status == 200
    assert b"\r\n" in by_header.body and by_header.body == by_path.body
