"""reference/steps.md and reference/presets.md: the scenario step registry (each step's fields, what they
accept, their defaults and the YAML examples of its docstring) and the bundled presets (scenarios/*.yaml)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml
from ref_text import cell, docstring, first_paragraph, indented_block, markdown

import ssemock.scenario
from ssemock.bundled import bundled_scenarios
from ssemock.scenario import STAGES, STEPS, Scenario, Step, conformance_matrix

STAGE_TEXT = {
    "event": "edit the decoded events, then encode them again (`text/event-stream` bodies only)",
    "byte": "edit the body's lines: line ends, BOM, comments, fields (`text/event-stream` bodies only)",
    "chunk": "timing and re-fragmentation of the recorded chunks",
    "transport": "status, headers, framing, stalls, disconnects",
}


def steps_page() -> str:
    """reference/steps.md, as Markdown."""
    lines = [
        "# Scenario steps",
        "",
        "Generated from the step registry (`ssemock.scenario.STEPS`): every step a scenario file may list, "
        "with the fields it takes, what each accepts (the check a scenario file is loaded with) and its "
        "default. Each example is a complete scenario file.",
        "",
        markdown(_module_intro(), code="yaml"),
        "",
        "| stage | steps |",
        "| --- | --- |",
    ]
    for stage in STAGES:
        names = ", ".join(f"[`{n}`](#{n})" for n, c in sorted(STEPS.items()) if c.stage == stage)
        lines.append(f"| {stage}: {STAGE_TEXT[stage]} | {names} |")
    lines.append("")
    for stage in STAGES:
        lines += [f"## {stage.capitalize()} stage", ""]
        for name, cls in sorted(STEPS.items()):
            if cls.stage == stage:
                lines += _step(name, cls)
    return "\n".join(lines) + "\n"


def _module_intro() -> str:
    """The package docstring up to its list of steps by stage (the page lists them itself)."""
    text = docstring(ssemock.scenario)
    return text.split("\n* event:")[0]


def _step(name: str, cls: type[Step]) -> list[str]:
    prose, examples = split_examples(docstring(cls))
    lines = [
        f"### {name} {{#{name}}}",
        "",
        f"Stage `{cls.stage}`"
        + ("" if cls.edits_body else "; changes timing or headers only (the recorded body is sent byte for byte)")
        + ".",
        "",
    ]
    lines += [markdown(prose), ""]
    if cls.fields:
        defaults = {f.name: _default(f) for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        lines += ["| field | accepts | default |", "| --- | --- | --- |"]
        for field, spec in cls.fields.items():
            shown = defaults.get(field, "—")
            lines.append(f"| `{field}` | {cell(spec.expected)} | {cell(shown)} |")
        lines.append("")
    else:
        lines += ["No fields.", ""]
    if examples:
        lines += ["```yaml", *example_file(name, examples), "```", ""]
    return lines


def _default(field: dataclasses.Field[object]) -> str:
    """A step field's default as YAML, or how it is chosen when it is no YAML value (the provider's own)."""
    if field.default_factory is not dataclasses.MISSING:
        return f"`{yaml_value(field.default_factory())}`"
    if field.default is dataclasses.MISSING:
        return "—"
    if isinstance(field.default, (str, int, float, list, dict, type(None))):
        return f"`{yaml_value(field.default)}`"
    return "the provider's own"


def yaml_value(value: object) -> str:
    """``value`` as YAML writes it in flow style (``null``, ``true``, ``[lf, crlf]``)."""
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("...").strip()


def split_examples(text: str) -> tuple[str, list[str]]:
    """A step's docstring without its ``YAML::`` block, and that block's lines (dedented)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "YAML::":
            indent = len(line) - len(line.lstrip())
            block, end = indented_block(lines, i + 1, indent)
            return "\n".join(lines[:i] + lines[end:]), block
    return text, []


def example_file(name: str, steps: list[str]) -> list[str]:
    """A complete scenario file whose steps are a step's examples."""
    return ["ssemock_scenario: 1", f"name: {name}-example", "steps:", *steps]


def presets_page() -> str:
    """reference/presets.md, as Markdown."""
    matrix = set(conformance_matrix())
    files = sorted(bundled_scenarios().glob("*.yaml"))
    scenarios = [(Scenario.load(f), f) for f in files]
    lines = [
        "# Bundled presets",
        "",
        "Generated from the bundled scenario files (`scenarios/*.yaml`): each preset's name, what it "
        "does, what a client must still see the same (`preserves`: `events`, `payloads` or `nothing`, "
        "a fault) and its file. The presets marked *matrix* make the conformance matrix "
        "(`ssemock.conformance_matrix()`, `@pytest.mark.ssemock(matrix=True)`): a correct client gets "
        "through each of them unchanged.",
        "",
        "| preset | preserves | matrix | description |",
        "| --- | --- | --- | --- |",
    ]
    for scenario, _ in scenarios:
        lines.append(
            f"| [`{scenario.name}`](#{scenario.name}) | {scenario.preserves} | "
            f"{'yes' if scenario.name in matrix else ''} | {cell(scenario.description)} |"
        )
    lines.append("")
    for scenario, file in scenarios:
        steps = ", ".join(f"[`{s.name}`](steps.md#{s.name})" for s in scenario.steps)
        lines += [
            f"## {scenario.name} {{#{scenario.name}}}",
            "",
            first_paragraph(scenario.description),
            "",
            f"Preserves `{scenario.preserves}`; steps: {steps}.",
            "",
            "```yaml",
            Path(file).read_text(encoding="utf-8").rstrip("\n"),
            "```",
            "",
        ]
    return "\n".join(lines) + "\n"
