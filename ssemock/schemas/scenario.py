"""The JSON Schema of scenario files, built from the step registry: each step's fields carry the rule
they check as a JSON Schema fragment (:attr:`ssemock.limits.Field.schema`) beside the text errors show.

What a schema cannot say (the loader still checks it): the rules a step checks across its fields
(:meth:`~ssemock.scenario.Step.validate`, e.g. ``fragment`` ``min`` <= ``max``), a JSON path's syntax,
text bounds counted in UTF-8 bytes (the schema counts characters, which is looser), the name a
file gets from its file name when it has no ``name:``, and an integer written ``1.0``.
"""

from __future__ import annotations

from typing import Any

from ..limits import MAX_STEPS, whole
from ..scenario import STEPS, Step
from ..scenario.model import FORMAT_KEY, KEYS, NAME, NAME_RULE, PRESERVES

__all__ = ["scenario_schema", "step_schema"]


def _summary(cls: type[Step]) -> str:
    """The first paragraph of the step's docstring, on one line."""
    return " ".join((cls.__doc__ or cls.name).strip().split("\n\n")[0].split())


def step_schema(cls: type[Step]) -> dict[str, Any]:
    """The schema of one step's mapping of fields (null: every field at its default)."""
    return {
        "description": f"{_summary(cls)} ({cls.stage} stage)",
        "type": ["object", "null"],
        "additionalProperties": False,
        "properties": {key: {**spec.schema, "description": spec.expected} for key, spec in cls.fields.items()},
    }


def scenario_schema() -> dict[str, Any]:
    """The scenario file schema (draft 2020-12) as JSON data, without ``$schema`` and ``$id``."""
    names = sorted(STEPS)
    assert "step" not in names
    properties: dict[str, Any] = {
        FORMAT_KEY: {"const": 1, "default": 1, "description": "the scenario format version"},
        "name": {"type": "string", "pattern": whole(NAME), "description": NAME_RULE},
        "description": {"type": "string", "description": "one line shown by `ssemock scenarios`"},
        "preserves": {
            "enum": list(PRESERVES),
            "default": "nothing",
            "description": "what a client must still see the same: events, payloads or nothing (a fault)",
        },
        "steps": {
            "type": "array",
            "maxItems": MAX_STEPS,
            "items": {"$ref": "#/$defs/step"},
            "description": "the steps, applied stage by stage (event, byte, chunk, transport)",
        },
    }
    assert set(properties) == set(KEYS), sorted(set(properties) ^ set(KEYS))
    return {
        "title": "ssemock scenario",
        "description": "a named list of steps applied to a recorded response on replay",
        "type": "object",
        "additionalProperties": False,
        "properties": {key: properties[key] for key in KEYS},
        "$defs": {
            "step": {
                "description": "a one-key mapping naming a step: {STEP: {FIELD: VALUE}}",
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "propertyNames": {"enum": names},
                "properties": {name: {"$ref": f"#/$defs/{name}"} for name in names},
            },
            **{name: step_schema(STEPS[name]) for name in names},
        },
    }
