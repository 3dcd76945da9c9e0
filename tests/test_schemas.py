"""The JSON Schemas of the file formats (ssemock/schemas/*.schema.json) against the loaders.

Checked with ``jsonschema`` (a maintained draft 2020-12 validator): the shipped files are what the
generator writes; every bundled cassette and scenario, and every cassette ssemock writes, is valid; on
a corpus of wrong files, what the schema refuses the loader refuses (naming the same field), and
what the loader refuses the schema refuses, except the rules a schema cannot say, listed in
docs/reference/formats.md and checked here to be refused by the loader only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ssemock import schemas
from ssemock.cassette import MODELINE, Cassette, Chunk, Interaction, Request, Response, dumps, loads
from ssemock.cassette.read import parse_cassette
from ssemock.errors import CassetteError, ScenarioError, StubError
from ssemock.importers.har import import_har
from ssemock.importers.vcr import import_vcr
from ssemock.scenario import STEPS, Scenario
from ssemock.schemas.__main__ import main, parser
from ssemock.stubs import parse_stubs
from tests.docs_examples import page_blocks

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
VALIDATORS = {kind: Draft202012Validator(schemas.schema(kind)) for kind in schemas.KINDS}
ERRORS = {"cassette": CassetteError, "scenario": ScenarioError, "stubs": StubError}


def load(kind: str, doc: Any) -> None:
    """The loader of ``kind`` on a parsed document (raises its error)."""
    if kind == "cassette":
        parse_cassette(doc, name="corpus", source="<corpus>")
    elif kind == "scenario":
        Scenario.from_dict(doc, name="corpus", source="<corpus>")
    else:
        parse_stubs(doc, "corpus.yaml")


def test_the_shipped_schemas_are_what_the_generator_writes(tmp_path: Path) -> None:
    for kind in schemas.KINDS:
        assert schemas.path(kind).read_text(encoding="utf-8") == schemas.text(kind), kind
        Draft202012Validator.check_schema(schemas.schema(kind))
        assert schemas.schema(kind)["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert main(["--check"]) == 0
    assert main(["-o", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{k}.schema.json" for k in schemas.KINDS]
    (tmp_path / "stubs.schema.json").write_text("{}\n", encoding="utf-8")
    assert main(["--check", "-o", str(tmp_path)]) == 1


def schemas_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ssemock.schemas", *args],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_a_bad_output_directory_is_one_line_and_exit_2_and_leaves_no_file(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    taken = tmp_path / "taken"
    (taken / "cassette.schema.json").mkdir(parents=True)  # a directory where the schema file goes
    for output, named, reason in [
        (a_file, a_file, "not a directory"),
        (a_file / "sub", a_file / "sub" / "cassette.schema.json", "Not a directory"),
        (taken, taken / "cassette.schema.json", "Is a directory"),
    ]:
        proc = schemas_command("-o", str(output))
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        assert proc.stderr == (
            f"python -m ssemock.schemas: error: {named}: cannot write cassette.schema.json ({reason})\n"
        )
    assert sorted(p.name for p in taken.iterdir()) == ["cassette.schema.json"]  # no temporary file left
    assert a_file.read_text(encoding="utf-8") == "x"


def test_check_reads_a_stale_file_that_is_not_utf8_as_stale(tmp_path: Path) -> None:
    assert main(["-o", str(tmp_path)]) == 0
    (tmp_path / "scenario.schema.json").write_bytes(b"\xff\xfe{}")
    proc = schemas_command("--check", "-o", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr == (
        f"{tmp_path / 'scenario.schema.json'}: differs from the generator (run: python -m ssemock.schemas)\n"
    )


def test_the_schema_ids_and_the_modeline_name_the_site_address(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in schemas.KINDS:
        url = schemas.schema(kind)["$id"]
        assert url == f"{schemas.SCHEMAS_URL}{kind}.schema.json"
        assert schemas.modeline(kind) == f"# yaml-language-server: $schema={url}"
    assert schemas.modeline("cassette") == MODELINE
    assert main(["--path", "scenario"]) == 0
    assert Path(capsys.readouterr().out.strip()) == schemas.DIRECTORY / "scenario.schema.json"


def bundled() -> list[tuple[str, Path]]:
    return (
        [("cassette", p) for p in sorted((ROOT / "cassettes").glob("*.yaml"))]
        + [("scenario", p) for p in sorted((ROOT / "scenarios").glob("*.yaml"))]
        + [("scenario", ROOT / "docs" / "timeline-scenario.yaml")]
    )


@pytest.mark.parametrize(("kind", "path"), bundled(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_bundled_file_is_valid(kind: str, path: Path) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    load(kind, doc)
    schemas.validate(doc, kind, source=str(path))  # type: ignore[arg-type]


def written_cassettes() -> list[str]:
    """Cassettes as ssemock writes them: imported from the real recordings of tests/data, and built in code."""
    texts = [dumps(import_vcr(p)) for p in sorted((DATA / "realworld").glob("*.vcr.yaml"))]
    texts.append(dumps(import_har(DATA / "har" / "mitmproxy.har")))
    chunks = [Chunk(0.1, b"data: caf\xc3"), Chunk(0.2, b"\xa9\n\n")]
    texts.append(
        dumps(
            Cassette(
                "built",
                [Interaction(Request("POST", "/v1/x", body=b"\x00\xff"), Response(reason="Fine", chunks=chunks))],
            )
        )
    )
    return texts


def test_cassettes_ssemock_writes_name_their_schema_and_are_valid() -> None:
    for text in written_cassettes():
        first, second = text.split("\n", 2)[:2]
        assert first == "# yaml-language-server: $schema=" + schemas.SCHEMAS_URL + "cassette.schema.json"
        assert second == "ssemock_cassette: 1"  # the format version is still the first key
        assert dumps(loads(text)) == text  # the comment changes nothing loaded, and is written again
        schemas.validate(yaml.safe_load(text), "cassette")


@pytest.mark.parametrize("path", sorted((ROOT / "cassettes").glob("*.yaml")), ids=lambda p: p.name)
def test_each_bundled_cassette_is_what_ssemock_writes_modeline_included(path: Path) -> None:
    from ssemock.cassette import load as load_cassette

    assert path.read_text(encoding="utf-8") == dumps(load_cassette(path))


def test_a_stub_file_opening_with_the_modeline_is_found_and_valid(tmp_path: Path) -> None:
    from ssemock.stubs import load_stubs
    from ssemock.stubs.files import holds_stub_files, is_stub_file

    text = (
        schemas.modeline("stubs") + "\n# weather answers\nssemock_stubs: 1\nstubs:\n"
        "- match: {contains: weather}\n  steps:\n  - tool_calls: [{name: get_weather, arguments: {city: Paris}}]\n"
        "  - text: Sunny\n  timing: {first_token: 0.3, tokens_per_second: 40}\n"
    )
    path = tmp_path / "weather.yaml"
    path.write_text(text, encoding="utf-8")
    assert is_stub_file(path) and holds_stub_files(tmp_path)
    assert [s.name for s in load_stubs(path)] == ["weather#0 step 1", "weather#0 step 2"]
    schemas.validate(yaml.safe_load(text), "stubs")
    (tmp_path / "notes.yaml").write_text("# ssemock_stubs: 1\nname: x\n", encoding="utf-8")
    assert not is_stub_file(tmp_path / "notes.yaml")


CASSETTE = "ssemock_cassette: 1\ninteractions:\n- request: {method: POST, path: /v1/x}\n  response: "
SCENARIO = "ssemock_scenario: 1\nname: s\nsteps:\n- "
STUBS = "ssemock_stubs: 1\nstubs:\n- "

WRONG: list[tuple[str, str, str]] = [
    # (kind, document, the field the loader names)
    ("cassette", "name: x\ninteractions: []", "ssemock_cassette"),
    ("cassette", "ssemock_cassette: 2", "ssemock_cassette"),
    ("cassette", "ssemock_cassette: true", "ssemock_cassette"),
    ("cassette", "ssemock_cassette: 1\ninteraction: []", "interaction"),
    ("cassette", "ssemock_cassette: 1\ninteractions: {}", "interactions"),
    ("cassette", "ssemock_cassette: 1\ninteractions: [{request: {}}]", "interactions[0].response"),
    ("cassette", "ssemock_cassette: 1\nname: ../../etc/evil", "name"),
    ("cassette", "ssemock_cassette: 1\nname: a b", "name"),
    ("cassette", "ssemock_cassette: 1\nprovenance: [a]", "provenance"),
    ("cassette", CASSETTE + "{status: 700}", "interactions[0].response.status"),
    ("cassette", CASSETTE + "{status: 101}", "interactions[0].response.status"),
    ("cassette", CASSETTE + "{status: '200'}", "interactions[0].response.status"),
    ("cassette", CASSETTE + "{stauts: 200}", "interactions[0].response.stauts"),
    ("cassette", CASSETTE + "{timing: fast}", "interactions[0].response.timing"),
    ("cassette", CASSETTE + "{start: -1}", "interactions[0].response.start"),
    ("cassette", CASSETTE + '{reason: "a\\x01"}', "interactions[0].response.reason"),
    ("cassette", CASSETTE + "{headers: {bad name: x}}", "interactions[0].response.headers.bad name"),
    ("cassette", CASSETTE + '{headers: {x-a: "a\\r\\nInjected: yes"}}', "interactions[0].response.headers.x-a"),
    ("cassette", CASSETTE + "{headers: [[x-a]]}", "interactions[0].response.headers[0]"),
    ("cassette", CASSETTE + "{chunks: [{t: -1, text: x}]}", "interactions[0].response.chunks[0].t"),
    ("cassette", CASSETTE + "{chunks: [{t: 86401, text: x}]}", "interactions[0].response.chunks[0].t"),
    ("cassette", CASSETTE + "{chunks: [{t: 1}]}", "interactions[0].response.chunks[0]"),
    ("cassette", CASSETTE + "{chunks: [{text: a, base64: YQ==}]}", "interactions[0].response.chunks[0]"),
    ("cassette", CASSETTE + "{chunks: [{base64: '!!'}]}", "interactions[0].response.chunks[0].base64"),
    ("cassette", CASSETTE + "{chunks: [], events: []}", "interactions[0].response"),
    ("cassette", CASSETTE + '{events: [{data: a, id: "a\\nb"}]}', "interactions[0].response.events[0]"),
    ("cassette", CASSETTE + '{events: [{data: a, id: "a\\0b"}]}', "interactions[0].response.events[0]"),
    ("cassette", CASSETTE + "{events: [{data: a, retry: -1}]}", "interactions[0].response.events[0]"),
    ("cassette", CASSETTE + "{events: [{data: a, retry: soon}]}", "interactions[0].response.events[0].retry"),
    ("cassette", CASSETTE + "{events: [{data: a, name: b}]}", "interactions[0].response.events[0].name"),
    ("cassette", CASSETTE + "{eol: nl, events: []}", "interactions[0].response.eol"),
    ("cassette", CASSETTE + "{end: {how: crashed}}", "interactions[0].response.end.how"),
    ("cassette", CASSETTE + "{end: {at: 1}}", "interactions[0].response.end.at"),
    ("cassette", CASSETTE + "{body_not_recorded: ''}", "interactions[0].response.body_not_recorded"),
    ("cassette", CASSETTE + '{body_not_recorded: "a\\nb"}', "interactions[0].response.body_not_recorded"),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {path: v1}, response: {}}]",
        "interactions[0].request.path",
    ),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {method: GE T}, response: {}}]",
        "interactions[0].request.method",
    ),
    (
        "cassette",
        'ssemock_cassette: 1\ninteractions: [{request: {headers: {"bad name": x}}, response: {}}]',
        "interactions[0].request.headers.bad name",
    ),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {query: [[a, true]]}, response: {}}]",
        "interactions[0].request.query[0][1]",
    ),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {body: {json: 1, text: x}}, response: {}}]",
        "interactions[0].request.body",
    ),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {body: {sha256: ABC, size: 1}}, response: {}}]",
        "interactions[0].request.body.sha256",
    ),
    (
        "cassette",
        "ssemock_cassette: 1\ninteractions: [{request: {body: {text: 5}}, response: {}}]",
        "interactions[0].request.body.text",
    ),
    ("scenario", "ssemock_scenario: 2", "ssemock_scenario"),
    ("scenario", "ssemock_scenario: true", "ssemock_scenario"),
    ("scenario", "ssemock_scenario: 1\nstep: []", "step"),
    ("scenario", "ssemock_scenario: 1\nname: a b", "name"),
    ("scenario", "ssemock_scenario: 1\nname: -a", "name"),
    ("scenario", "ssemock_scenario: 1\ndescription: 5", "description"),
    ("scenario", "ssemock_scenario: 1\npreserves: all", "preserves"),
    ("scenario", "ssemock_scenario: 1\nsteps: {}", "steps"),
    ("scenario", "ssemock_scenario: 1\nsteps: [" + ", ".join(["bom: {}"] * 101) + "]", "steps"),
    ("scenario", SCENARIO + "explode: {}", "steps[0]"),
    ("scenario", SCENARIO + "{bom: {}, crlf: {}}", "steps[0]"),
    ("scenario", SCENARIO + "bom", "steps[0]"),
    ("scenario", SCENARIO + "fragment: [bytes]", "steps[0].fragment"),
    ("scenario", SCENARIO + "fragment: {mode: foo}", "steps[0].fragment.mode"),
    ("scenario", SCENARIO + "fragment: {sizes: 3}", "steps[0].fragment.sizes"),
    ("scenario", SCENARIO + "timing: {mode: scale, factor: 101}", "steps[0].timing.factor"),
    ("scenario", SCENARIO + "timing: {interval: -0.1}", "steps[0].timing.interval"),
    ("scenario", SCENARIO + "http-error: {status: 199}", "steps[0].http-error.status"),
    ("scenario", SCENARIO + "http-error: {headers: {retry after: 1}}", "steps[0].http-error.headers"),
    ("scenario", SCENARIO + "line-endings: {eol: [lf, nl]}", "steps[0].line-endings.eol"),
    ("scenario", SCENARIO + "extra-fields: {unknown: [data]}", "steps[0].extra-fields.unknown"),
    ("scenario", SCENARIO + "json-separators: {item: ';'}", "steps[0].json-separators.item"),
    ("scenario", SCENARIO + "insert: {at: 2000000}", "steps[0].insert.at"),
    ("scenario", SCENARIO + 'keepalive: {text: "a\\nb"}', "steps[0].keepalive.text"),
    ("stubs", "stubs: []", "ssemock_stubs"),
    ("stubs", "ssemock_stubs: true\nstubs: []", "ssemock_stubs"),
    ("stubs", "ssemock_stubs: 1\nstub: []", "stub"),
    ("stubs", "ssemock_stubs: 1\nstubs: false", "stubs"),
    ("stubs", "ssemock_stubs: 1\nstubs: {}", "stubs"),
    ("stubs", STUBS + "{name: ''}", "stubs[0].name"),
    ("stubs", STUBS + "{match: {}}", "stubs[0]"),
    ("stubs", STUBS + "{reply: {text: a}, steps: [{text: b}]}", "stubs[0]"),
    ("stubs", STUBS + "{steps: []}", "stubs[0].steps"),
    ("stubs", STUBS + "{reply: {text: a}, times: 0}", "stubs[0].times"),
    ("stubs", STUBS + "{reply: {text: a}, match: {provider: openai}}", "stubs[0].match.provider"),
    ("stubs", STUBS + "{reply: {text: a}, match: {turn: 0}}", "stubs[0].match.turn"),
    ("stubs", STUBS + "{reply: {text: a}, match: {has: a}}", "stubs[0].match.has"),
    ("stubs", STUBS + "{reply: {text: a}, match: false}", "stubs[0].match"),
    ("stubs", STUBS + "{reply: {text: a}, timing: {jitter: 2}}", "stubs[0].timing.jitter"),
    ("stubs", STUBS + "{reply: {text: a}, timing: {first_token: null}}", "stubs[0].timing.first_token"),
    ("stubs", STUBS + "{reply: {text: 5}}", "stubs[0].reply.text"),
    ("stubs", STUBS + "{reply: {txt: a}}", "stubs[0].reply.txt"),
    ("stubs", STUBS + "{reply: {error: {status: 200}}}", "stubs[0].reply.error.status"),
    ("stubs", STUBS + "{reply: {error: {body: {}}}}", "stubs[0].reply.error.status"),
    ("stubs", STUBS + "{reply: {tool_calls: [{name: ''}]}}", "stubs[0].reply.tool_calls[0].name"),
    ("stubs", STUBS + "{reply: {tool_calls: [{name: f, arguments: [1]}]}}", "stubs[0].reply.tool_calls[0].arguments"),
    ("stubs", STUBS + "{reply: {tool_calls: {name: f}}}", "stubs[0].reply.tool_calls"),
    ("stubs", STUBS + "{reply: {usage: {input_tokens: -1}}}", "stubs[0].reply.usage.input_tokens"),
    ("stubs", STUBS + "{reply: {usage: false}}", "stubs[0].reply.usage"),
    ("stubs", STUBS + "{reply: {finish_reason: done}}", "stubs[0].reply.finish_reason"),
    ("stubs", STUBS + "{reply: {reasoning_field: thoughts}}", "stubs[0].reply.reasoning_field"),
]


@pytest.mark.parametrize(("kind", "text", "field"), WRONG, ids=[f"{k}:{f}" for k, _, f in WRONG])
def test_a_wrong_file_is_refused_by_the_loader_and_by_the_schema(kind: str, text: str, field: str) -> None:
    doc = yaml.safe_load(text)
    with pytest.raises(ERRORS[kind]) as loaded:
        load(kind, doc)
    assert loaded.value.field == field  # type: ignore[attr-defined]
    assert not VALIDATORS[kind].is_valid(doc)
    with pytest.raises(ERRORS[kind]) as checked:
        schemas.validate(doc, kind, source="corpus.yaml")  # type: ignore[arg-type]
    assert str(checked.value).startswith("corpus.yaml: ")
    named = checked.value.field  # type: ignore[attr-defined]
    assert named == field or named.startswith(field) or field.startswith(named) or named == "(top level)"


BEYOND: list[tuple[str, str, str]] = [
    # Refused by the loader only: rules a schema cannot say (docs/reference/formats.md lists them).
    ("cassette", CASSETTE + "{chunks: [{t: 2, text: a}, {t: 1, text: b}]}", "interactions[0].response.chunks[1].t"),
    ("cassette", CASSETTE + "{chunks: [{t: 2, text: a}], end: {t: 1}}", "interactions[0].response.end.t"),
    ("cassette", CASSETTE + "{start: 3, chunks: [{t: 2, text: a}]}", "interactions[0].response.chunks[0].t"),
    ("cassette", CASSETTE + "{status: 204, chunks: [{text: a}]}", "interactions[0].response.chunks"),
    (
        "cassette",
        CASSETTE + "{chunks: [{text: a}], body_not_recorded: too large}",
        "interactions[0].response.body_not_recorded",
    ),
    ("cassette", CASSETTE + "{status: 200.0}", "interactions[0].response.status"),
    ("cassette", CASSETTE + "{chunks: [{base64: YQ}]}", "interactions[0].response.chunks[0].base64"),
    ("scenario", SCENARIO + "fragment: {mode: random, min: 9, max: 3}", "steps[0].fragment.max"),
    ("scenario", SCENARIO + "fragment: {mode: offsets}", "steps[0].fragment.offsets"),
    ("scenario", SCENARIO + "fragment: {mode: bytes, size: 1.0}", "steps[0].fragment.size"),
    ("scenario", SCENARIO + "tls-records: {mode: crlf, size: 7}", "steps[0].tls-records.size"),
    ("scenario", SCENARIO + "drop: {where: {path: '[['}}", "steps[0].drop.where.path"),
    ("stubs", STUBS + "{name: a, reply: {text: x}}\n- {name: a, reply: {text: y}}", "stubs[1].name"),
    ("stubs", STUBS + "{reply: {text: a}, match: {regex: '(a)\\1'}}", "stubs[0].match.regex"),
]


@pytest.mark.parametrize(("kind", "text", "field"), BEYOND, ids=[f"{k}:{f}" for k, _, f in BEYOND])
def test_what_no_schema_can_say_is_refused_by_the_loader(kind: str, text: str, field: str) -> None:
    doc = yaml.safe_load(text)
    assert VALIDATORS[kind].is_valid(doc)
    with pytest.raises(ERRORS[kind]) as loaded:
        load(kind, doc)
    assert loaded.value.field == field  # type: ignore[attr-defined]


def test_validate_names_the_document_the_field_and_the_rule() -> None:
    with pytest.raises(ScenarioError) as raised:
        schemas.validate(yaml.safe_load(SCENARIO + "fragment: {mode: foo}"), "scenario", source="docs/x.md")
    message = str(raised.value)
    assert message.startswith("docs/x.md: steps[0].fragment.mode: expected one of bytes | ")
    assert message.endswith(", got 'foo'")
    with pytest.raises(ValueError, match="one of cassette, scenario, stubs"):
        schemas.validate({}, "cassettes")  # type: ignore[arg-type]


# Fields whose schema is stricter than the field's own check alone (the step's validate() checks the rest,
# so the loader refuses the same), or looser (a bound in UTF-8 bytes, a JSON path's syntax, plain JSON).
STRICTER = {
    ("insert", "before"),
    ("insert", "after"),
    ("edit", "where"),
    ("drop", "where"),
    ("replace", "where"),
    ("copy", "where"),
}
LOOSER_TYPES = {"insert": {"data", "text"}, "replace": {"data"}, "error-mid-stream": {"extra"}, "http-error": {"extra"}}

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3_000_000, 70_000_000),
    st.sampled_from([-1, 0, 1, 2**53, -(2**53)]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e8, max_value=1e8),
    st.text(st.sampled_from("ab :\r\n\t\x00\ufeff,;"), max_size=6),
)


def special_values(schema: Any) -> list[Any]:
    """The bounds, enum values and lengths a schema names, and their neighbours."""
    found: list[Any] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("minimum", "maximum") and isinstance(value, (int, float)):
                found += [value, value - 1, value + 1] if isinstance(value, int) else [value, value - 0.5, value + 0.5]
            elif key == "enum":
                found += list(value) + [[v] for v in value if isinstance(v, str)]
            elif key in ("maxLength", "minLength", "maxItems", "minItems") and value <= 1000:
                found += ["a" * value, "a" * (value + 1), [1] * value, [1] * (value + 1)]
            else:
                found += special_values(value)
    elif isinstance(schema, list):
        for item in schema:
            found += special_values(item)
    return found


def values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    specials = special_values(schema)
    leaf = st.one_of(SCALARS, st.sampled_from(specials)) if specials else SCALARS
    return st.one_of(
        leaf, st.lists(leaf, max_size=3), st.dictionaries(st.sampled_from(["a", "b c", "x-y"]), leaf, max_size=2)
    )


def integral_float(value: Any) -> bool:
    """A float such as 3.0, which JSON Schema counts as an integer and YAML's loader as a float."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, list):
        return any(integral_float(v) for v in value)
    if isinstance(value, dict):
        return any(integral_float(v) for v in value.values())
    return False


FIELDS = sorted((name, key) for name, cls in STEPS.items() for key in cls.fields)


@pytest.mark.parametrize(("step", "key"), FIELDS, ids=[f"{s}.{k}" for s, k in FIELDS])
def test_each_step_field_schema_says_what_the_field_checks(step: str, key: str) -> None:
    spec = STEPS[step].fields[key]
    alone = Draft202012Validator(spec.schema)
    whole = VALIDATORS["scenario"]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(values(spec.schema))
    def check(value: Any) -> None:
        doc = {"ssemock_scenario": 1, "name": "p", "steps": [{step: {key: value}}]}
        try:
            Scenario.from_dict(doc, source="<p>")
        except ScenarioError:
            loaded = False
        else:
            loaded = True
        if loaded:  # what the loader takes, the schema takes
            assert whole.is_valid(doc), (value, list(whole.iter_errors(doc))[:1])
        if integral_float(value) or (step, key) in STRICTER or key in LOOSER_TYPES.get(step, ()):
            return
        assert spec.check(value) == alone.is_valid(json.loads(json.dumps(value))), value

    check()


def test_the_formats_page_yaml_examples_name_their_schema_and_are_valid() -> None:
    """The page's blocks run through Sybil (conftest.py); here its files are also checked against the schemas,
    and its commands by the schema command's own parser (not run: they would write files)."""
    kinds = {"ssemock_cassette": "cassette", "ssemock_scenario": "scenario", "ssemock_stubs": "stubs"}
    seen = set()
    for code in page_blocks("docs/reference/formats.md", "yaml"):
        doc = yaml.safe_load(code)
        kind = kinds[next(iter(doc))]
        assert code.split("\n", 1)[0] == schemas.modeline(kind)  # type: ignore[arg-type]
        load(kind, doc)
        schemas.validate(doc, kind, source="formats.md")  # type: ignore[arg-type]
        seen.add(kind)
    assert seen == set(schemas.KINDS)
    lines = [line for code in page_blocks("docs/reference/formats.md", "sh") for line in code.splitlines()]
    assert lines and all(line.startswith("python -m ssemock.schemas") for line in lines)
    for line in lines:
        parser().parse_args(line.split()[3:])


def test_a_cassette_the_recorder_starts_names_its_schema(tmp_path: Path) -> None:
    from ssemock.recorder.writer import write_cassette

    path = tmp_path / "rec.yaml"
    write_cassette(path, "rec", {"recorded_by": "ssemock record"}, [])
    text = path.read_text(encoding="utf-8")
    assert text.split("\n", 1)[0] == MODELINE
    assert loads(text).name == "rec"
    schemas.validate(yaml.safe_load(text), "cassette")


def test_each_default_the_scenario_schema_offers_is_a_value_the_loader_takes() -> None:
    steps = schemas.schema("scenario")["$defs"]
    offered = [
        (name, key, spec["default"])
        for name in STEPS
        for key, spec in steps[name]["properties"].items()
        if "default" in spec
    ]
    assert ("timing", "mode", "recorded") in offered and ("fragment", "pace", 0.002) in offered
    for name, key, value in offered:  # refused, if at all, by a rule across fields (insert needs data or json)
        try:
            Scenario.from_dict({"steps": [{name: {key: value}}]}, source="<default>")
        except ScenarioError as error:
            assert error.field != f"steps[0].{name}.{key}", error


NUMBERS = st.one_of(
    st.integers(-10, 10**10),
    st.sampled_from([0, 1, 99, 100, 199, 200, 399, 400, 599, 600, 86400, 86401, 10**9, 10**9 + 1, 3600, 3601]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-10.0, max_value=1e10),
    st.floats(-0.5, 1.5),
    st.none(),
    st.booleans(),
    st.text(max_size=3),
)
PLACES = [
    ("cassette", lambda v: {"ssemock_cassette": 1, "interactions": [{"response": {"status": v}}]}),
    (
        "cassette",
        lambda v: {"ssemock_cassette": 1, "interactions": [{"response": {"chunks": [{"t": v, "text": "x"}]}}]},
    ),
    ("cassette", lambda v: {"ssemock_cassette": 1, "interactions": [{"response": {"start": v}}]}),
    ("cassette", lambda v: {"ssemock_cassette": 1, "interactions": [{"response": {"events": [{"retry": v}]}}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"text": "a"}, "times": v}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"error": {"status": v}}}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"text": "a"}, "timing": {"jitter": v}}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"text": "a"}, "timing": {"tokens_per_second": v}}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"usage": {"output_tokens": v}}}]}),
    ("stubs", lambda v: {"ssemock_stubs": 1, "stubs": [{"reply": {"text": "a"}, "match": {"turn": v}}]}),
]


@pytest.mark.parametrize(("kind", "place"), PLACES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(PLACES)])
@settings(max_examples=150, deadline=None)
@given(value=NUMBERS)
def test_the_schema_and_the_loader_agree_on_each_bound(kind: str, place: Any, value: Any) -> None:
    doc = place(value)
    try:
        load(kind, doc)
    except ERRORS[kind]:
        loaded = False
    else:
        loaded = True
    if integral_float(value):  # 200.0: an integer to JSON Schema, a float to YAML's loader
        assert VALIDATORS[kind].is_valid(doc) or not loaded
    else:
        assert VALIDATORS[kind].is_valid(doc) == loaded, value
