"""The JSON Schema of scenario files, built from the step registry: each step's fields carry the rule
they check as a JSON Schema fragment (:attr:`ssemock.limits.Field.schema`) beside the text errors show.

What a schema cannot say (the loader still checks it): the rules a step checks across its fields
(:meth:`~ssemock.scenario.Step.validate`, e.g. ``fragment`` ``min`` <= ``max``), a JSON path's syntax,
text bounds counted in UTF-8 bytes (the schema counts characters, which is looser), the name a
file gets from its file name when it has no ``name:``, and an integer written ``1.0``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import ScenarioError
from ..limits import MAX_STEPS, whole
from ..scenario import STEPS, Step
from ..scenario.model import FORMAT_KEY, KEYS, NAME, NAME_RULE, PRESERVES

__all__ = ["scenario_schema", "step_schema"]


def _summary(cls: type[Step]) -> str:
    """The first paragraph of the step's docstring, on one line."""
    return " ".join((cls.__doc__ or cls.name).strip().split("\n\n")[0].split())


def _defaults(cls: type[Step]) -> dict[str, Any]:
    """Each field's default as the dataclass declares it (what an editor offers), where JSON can hold it."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        if item.default is not dataclasses.MISSING:
            value = item.default
        elif item.default_factory is not dataclasses.MISSING:
            value = item.default_factory()
        else:
            continue
        if isinstance(value, (str, int, float, bool, list, type(None))):
            out[item.name] = value
    return out


def step_schema(cls: type[Step]) -> dict[str, Any]:
    """The schema of one step's mapping of fields (null: every field at its default)."""
    defaults = _defaults(cls)
    needed = _required(cls)
    properties = {}
    for key, spec in cls.fields.items():
        properties[key] = {**spec.schema, "description": spec.expected}
        if key in defaults and key not in needed and spec.check(defaults[key]):  # else the default is no choice
            properties[key]["default"] = defaults[key]
    out: dict[str, Any] = {
        "description": f"{_summary(cls)} ({cls.stage} stage)",
        "type": ["object", "null"] if not needed else "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if needed:
        out["required"] = needed
    return out


def _required(cls: type[Step]) -> list[str]:
    """The field the step cannot do without: the one its loader names when the step is given no field."""
    try:
        cls.build({}, "step", "<schema>")
    except ScenarioError as error:
        key = error.field.removeprefix("step.")
        if key in cls.fields:
            return [key]
    return []


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
        "probability": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "the chance (0 to 1) that a request naming this scenario gets it, drawn from the "
                           "server's seed and the request's sequence number; absent: always",
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
