"""JSON Schemas (draft 2020-12) of ssemock's three file formats: cassettes, scenarios and stubs.

The schemas are generated from the definitions the loaders check (the cassette field tables of
:mod:`ssemock.cassette.fields`, the step registry's field specs, the stub key tables and bounds),
so an editor completes and checks a file by the rules ssemock loads it with. They ship in the
package as ``ssemock/schemas/KIND.schema.json`` and are written again by::

    python -m ssemock.schemas            # writes ssemock/schemas/*.schema.json
    python -m ssemock.schemas --check    # exit 1 when a shipped file differs from the generator
    python -m ssemock.schemas --path cassette      # the installed file, for an editor without network
    python -m ssemock.schemas --modeline cassette  # the comment line naming the schema

A file names its schema for editors (the YAML language server: VS Code's YAML extension, Neovim,
Helix, JetBrains) with a first comment line, :func:`modeline`::

    # yaml-language-server: $schema=https://ssemock.readthedocs.io/en/latest/schemas/cassette.schema.json

Cassettes ssemock writes (``save``, ``dumps``, the recorder, ``ssemock import``) start with it.

A schema accepts every file the loader accepts; the loader also checks what a schema cannot say
(times in order, names unique in a file, the rules a step checks across its fields...: each
generator module lists them). :func:`validate` checks a parsed document against a schema (it needs
the ``jsonschema`` package: ``pip install 'ssemock[schemas]'``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from ..cassette.model import SCHEMAS_URL
from ..errors import CassetteError, Described, ScenarioError, StubError, short_repr

__all__ = ["DIRECTORY", "KINDS", "SCHEMAS_URL", "Kind", "generate", "modeline", "path", "schema", "text", "validate"]

Kind = Literal["cassette", "scenario", "stubs"]
KINDS: tuple[Kind, ...] = ("cassette", "scenario", "stubs")
"""The file formats, by the name their schema file carries: ``KIND.schema.json``."""
DIRECTORY = Path(__file__).resolve().parent
"""Where the schema files ship: ``ssemock/schemas/`` in the installed package."""
DRAFT = "https://json-schema.org/draft/2020-12/schema"
_ERRORS: dict[str, type[CassetteError | ScenarioError | StubError]] = {
    "cassette": CassetteError,
    "scenario": ScenarioError,
    "stubs": StubError,
}


def _builder(kind: str) -> Callable[[], dict[str, Any]]:
    if kind == "cassette":
        from .cassette import cassette_schema

        return cassette_schema
    if kind == "scenario":
        from .scenario import scenario_schema

        return scenario_schema
    if kind == "stubs":
        from .stubs import stubs_schema

        return stubs_schema
    raise ValueError(f"a schema kind: one of {', '.join(KINDS)}, not {kind!r}")


def generate(kind: Kind) -> dict[str, Any]:
    """The schema of ``kind`` as JSON data, built now from the loaders' definitions.

    Raises:
        ValueError: ``kind`` is not one of :data:`KINDS`.
    """
    body = _builder(kind)()
    return {"$schema": DRAFT, "$id": f"{SCHEMAS_URL}{kind}.schema.json", **body}


def text(kind: Kind) -> str:
    """The schema file's text as :func:`generate` writes it (indented JSON, keys in definition order, a final LF)."""
    return json.dumps(generate(kind), indent=2, ensure_ascii=False) + "\n"


def path(kind: Kind) -> Path:
    """The shipped schema file of ``kind``: ``ssemock/schemas/KIND.schema.json`` in the installed package."""
    if kind not in KINDS:
        raise ValueError(f"a schema kind: one of {', '.join(KINDS)}, not {kind!r}")
    return DIRECTORY / f"{kind}.schema.json"


def modeline(kind: Kind, target: str | None = None) -> str:
    """The comment line naming the schema for the YAML language server, without a line end:
    ``# yaml-language-server: $schema=URL`` (``target``: another URL or file path; default: the site's)."""
    return f"# yaml-language-server: $schema={target or f'{SCHEMAS_URL}{path(kind).name}'}"


@cache
def schema(kind: Kind) -> dict[str, Any]:
    """The shipped schema of ``kind`` (read once from :func:`path`). Raises ValueError for an unknown kind."""
    loaded: dict[str, Any] = json.loads(path(kind).read_text(encoding="utf-8"))
    return loaded


def _field(parts: Any) -> str:
    """A jsonschema error path as the loaders name fields: ``interactions[0].response.status``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validate(document: Any, kind: Kind, *, source: str = "<document>") -> None:
    """Check a parsed YAML (or JSON) ``document`` against the shipped schema of ``kind``.

    Args:
        document: the file's data, as ``yaml.safe_load`` gives it.
        kind: ``cassette``, ``scenario`` or ``stubs``.
        source: names the document in errors (a file path, ``docs/reference/formats.md``...).

    Raises:
        CassetteError, ScenarioError, StubError (by ``kind``): the first problem the schema finds, naming
            ``source``, the field (``steps[0].fragment.mode``) and what the schema expects there.
        ValueError: ``kind`` is not one of :data:`KINDS`.
        ImportError: the ``jsonschema`` package is not installed.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(schema(kind)).iter_errors(document))
    if error is not None:
        rule = f"{error.validator}: {short_repr(error.validator_value, 60)}"  # the keyword failed, not the value
        described = error.schema.get("description") if isinstance(error.schema, dict) else None
        expected = f"{described} ({rule})" if described else rule
        got = error.instance if isinstance(error.instance, (str, int, float, bool)) else Described(error.instance)
        raise _ERRORS[kind](source, _field(error.absolute_path) or "(top level)", expected, got)
