"""The error tree: what errors.py draws is what the classes are, every HTTP error code is in one
table, and the docs' page of error codes (reference/errors.md, generated) is written from it."""

from __future__ import annotations

import builtins
import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

import ssemock.errors
import ssemock.refusals
from ssemock import Cassette, ConfigError, MockServer, Recorder, RecorderConfigError, SSEMockError
from ssemock.cassette import Interaction, Request, Response
from ssemock.matching import find_interaction
from ssemock.refusals import HTTP_ERRORS, error_codes

ROOT = Path(__file__).parent.parent
TREE_LINE = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)(?: \((?P<builtins>[\w, ]+)\))?")
BUILTINS = {name for name, value in vars(builtins).items() if isinstance(value, type)}


def error_classes() -> dict[str, type[SSEMockError]]:
    """Every error class of ssemock.errors and ssemock.refusals, by name (private ones too)."""
    found: dict[str, type[SSEMockError]] = {}
    for module in (ssemock.errors, ssemock.refusals):
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, SSEMockError) and value.__module__ == module.__name__:
                found[name] = value
    return found


def drawn_tree() -> dict[str, tuple[str, set[str]]]:
    """The tree of errors.py's docstring: each class's drawn parent and the builtins written beside it."""
    doc = ssemock.errors.__doc__ or ""
    drawn: dict[str, tuple[str, set[str]]] = {}
    parents = ["SSEMockError"]
    for line in doc.splitlines():
        m = TREE_LINE.match(line.removeprefix("    "))
        if m is None:
            continue
        depth = len(m["indent"]) // 4
        del parents[depth + 1:]
        drawn[m["name"]] = (parents[depth], {b.strip() for b in (m["builtins"] or "").split(",") if b.strip()})
        parents.append(m["name"])
    return drawn


def test_the_docstring_draws_every_public_error_under_its_parent_with_its_builtins() -> None:
    classes = {n: c for n, c in error_classes().items() if not n.startswith("_") and n != "SSEMockError"}
    drawn = drawn_tree()
    assert drawn.keys() == classes.keys()
    for name, error in classes.items():
        parent, builtins = drawn[name]
        chain = [error]  # the class, and the private classes between it and its drawn parent
        while (base := next(b for b in chain[-1].__bases__ if issubclass(b, SSEMockError))).__name__.startswith("_"):
            chain.append(base)
        assert base.__name__ == parent, name
        assert builtins == {b.__name__ for c in chain for b in c.__bases__ if b.__name__ in BUILTINS}, name


def test_every_class_that_declares_a_code_is_in_the_table_and_one_code_has_one_status() -> None:
    declaring = {c for c in error_classes().values() if {"code", "detail_names"} & vars(c).keys()}
    assert declaring - {SSEMockError} == set(HTTP_ERRORS)
    assert len(HTTP_ERRORS) == len(set(HTTP_ERRORS))
    for error in HTTP_ERRORS:
        assert error_codes()[error.code] == error.status
        assert error.code.startswith("ssemock_") and 400 <= error.status < 600
    assert list(HTTP_ERRORS) == sorted(HTTP_ERRORS, key=lambda e: e.status)


def test_every_error_answered_over_http_is_also_the_builtin_it_resembles() -> None:
    for error in HTTP_ERRORS:
        assert any(b in BUILTINS and b != "Exception" for b in (c.__name__ for c in error.__mro__)), error


def test_the_docs_page_of_error_codes_is_written_from_the_table() -> None:
    """reference/errors.md, as docs/gen writes it for ``mkdocs build``: one row per error answered over HTTP,
    by status, with its ``type``, class, fields and the first words of its docstring."""
    sys.path.insert(0, str(ROOT / "docs" / "gen"))
    try:
        ref_errors = importlib.import_module("ref_errors")
    finally:
        sys.path.remove(str(ROOT / "docs" / "gen"))
    page = ref_errors.page()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "| `ssemock_" in line]
    assert len(rows) == len(HTTP_ERRORS)
    for row, error in zip(rows, HTTP_ERRORS):
        status, code, name, fields, when = (cell.strip() for cell in row.strip("|").split(" | "))
        assert (int(status), code, name) == (error.status, f"`{error.code}`", f"`{error.__name__}`")
        assert fields == (", ".join(f"`{n}`" for n in error.detail_names) or "—")
        assert when.startswith(" ".join((error.__doc__ or "").split()[:3]).replace("``", "`")), error
    assert "404 ssemock_no_match" in page  # the exception tree, drawn with the statuses


def test_no_module_but_the_error_classes_writes_an_error_code() -> None:
    """A refusal is an error class, never a code written where it is answered (nor parsed back)."""
    package = Path(ssemock.errors.__file__).parent
    codes = "|".join(error_codes())
    writing = [f"{f.relative_to(package)}: {m}" for f in sorted(package.rglob("*.py"))
               if f.name not in ("errors.py", "refusals.py")
               for m in re.findall(rf'"(?:{codes})"', f.read_text(encoding="utf-8"))]
    assert writing == []


def test_recorder_config_errors_are_config_errors() -> None:
    assert issubclass(RecorderConfigError, ConfigError) and issubclass(RecorderConfigError, ValueError)
    with pytest.raises(ConfigError, match="header_timeout"):
        Recorder("http://127.0.0.1:9", header_timeout=0)
    with pytest.raises(ConfigError, match="unknown matcher 'colour'"):
        Recorder("http://127.0.0.1:9", match_on=("method", "colour"))
    with pytest.raises(ConfigError, match="unknown matcher 'colour'"):
        MockServer(match_on=("method", "colour"))


def test_an_unknown_matcher_is_a_config_error_in_matching_too() -> None:
    cassette = Cassette("c", [Interaction(Request("GET", "/"), Response(200))])
    with pytest.raises(ConfigError, match=r"unknown matcher 'colour'; valid: method, "):
        find_interaction([cassette], Request("GET", "/"), ("method", "colour"))


def test_a_misspelt_scenario_or_cassette_name_is_answered_with_the_closest_name() -> None:
    """Seen by a newcomer: ``split-utf9`` listed all 40 scenarios, and a cassette typo all cassettes."""
    import httpx

    from ssemock import MockServer

    with MockServer(timing_scale=0) as server:
        scenario = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10,
                              headers={"X-SSEMock-Scenario": "split-utf9"}).json()["error"]
        cassette = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10,
                              headers={"X-SSEMock-Cassette": "openai-chat-finsh-length-usage"}).json()["error"]
        unlike = httpx.post(server.url + "/v1/chat/completions", json={}, timeout=10,
                            headers={"X-SSEMock-Scenario": "zzz"}).json()["error"]
        default = httpx.put(server.url + "/_ssemock/scenario", content="split-utf9", timeout=10).json()["error"]
    with pytest.raises(ConfigError) as option:
        MockServer(scenario="split-utf9")
    assert default["message"] == "PUT /_ssemock/scenario: no scenario named 'split-utf9'; did you mean 'split-utf8'?"
    assert str(option.value).startswith(
        "no scenario named 'split-utf9'; did you mean 'split-utf8'?; known: azure-first-chunk, bom, ")
    assert scenario["message"] == "no scenario named 'split-utf9'; did you mean 'split-utf8'?"
    assert cassette["message"].startswith(
        "no cassette named 'openai-chat-finsh-length-usage'; did you mean 'openai-chat-finish-length-usage'?")
    assert unlike["message"] == "no scenario named 'zzz'" and "split-utf8" in unlike["known"]


def test_a_port_another_process_holds_says_how_to_pick_one() -> None:
    import socket

    from ssemock import MockServer, ServerError

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ServerError) as caught, MockServer(scenarios=[], port=port):
            pass
    assert str(caught.value).startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert str(caught.value).endswith("(another process holds it: pick another with --port N / port=N, or 0 for a "
                                      "free one)")
