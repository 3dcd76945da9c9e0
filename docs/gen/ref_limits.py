"""reference/limits.md: every bound with its default, where it is set (option, field) and what happens
past it: the option records' fields (:class:`ssemock.config.Limits`, :class:`ssemock.edge.NetworkOptions`)
and the module constants of :mod:`ssemock.limits` and the scenario steps, with their docstrings."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
from typing import Any

from ref_text import cell, docstring, inline

import ssemock.limits
from ssemock.config import Knob, Limits, knobs
from ssemock.edge.arguments import shown_default
from ssemock.edge.options import NetworkOptions
from ssemock.limits import show_size

MODULES = ("ssemock.limits", "ssemock.scenario.base", "ssemock.scenario.chunk_steps", "ssemock.diff", "ssemock.workers")
"""The modules whose documented upper-case constants are bounds."""


def constants(module_name: str) -> list[tuple[str, Any, str]]:
    """The module's upper-case constants that have a docstring: (name, value, docstring), in source order."""
    module = importlib.import_module(module_name)
    body = ast.parse(inspect.getsource(module)).body
    found = []
    for node, after in itertools.pairwise(body):
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            else (node.target if isinstance(node, ast.AnnAssign) else None)
        )
        if (
            isinstance(target, ast.Name)
            and target.id.isupper()
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            value = getattr(module, target.id)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found.append((target.id, value, inspect.cleandoc(after.value.value)))
    return found


def _knob_rows(record: type[Any]) -> list[str]:
    rows = []
    for spec in knobs(record):
        flags = [f"`{spec.flag}`"] if spec.flag else []
        if spec.kind != "names":  # --limit takes the number fields
            flags.append(f"`--limit {spec.name}=VALUE`")
        default = "`[]`" if spec.kind == "names" else f"`{shown_default(spec)}`"
        rows.append(
            f"| `{spec.name}` | {default} | {cell(_accepts(spec))} | {', '.join(flags)} "
            f"| {', '.join(sorted(spec.commands))} | {cell(spec.help)} |"
        )
    return rows


def _accepts(spec: Knob) -> str:
    return "host names" if spec.kind == "names" else spec.expected


def page() -> str:
    """The whole page, as Markdown."""
    lines = [
        "# Limits",
        "",
        "Every input has a bound. Generated from the option records and from the constants of "
        "`ssemock.limits` and the scenario steps.",
        "",
        "## Options",
        "",
        "The bounds a server is started with: `ssemock serve` / `ssemock record` flags, "
        "`MockServer(limits=Limits(...), network=NetworkOptions(...))`, `Recorder(...)`, and the "
        "`ssemock_limits` / `ssemock_network` fixtures of the pytest plugin. Sizes take units on the "
        "command line (`64MiB`, `512kB`), times `s` or `ms`. A value out of bounds is a `ConfigError` "
        "naming the field (exit status 2 on the command line).",
        "",
    ]
    for record in (Limits, NetworkOptions):
        lines += [
            f"### `{record.__name__}`",
            "",
            inline(docstring(record).split("\n\n")[0]),
            "",
            "| field | default | accepts | options | commands | past it |",
            "| --- | --- | --- | --- | --- | --- |",
            *_knob_rows(record),
            "",
        ]
    lines += [
        "## Fixed bounds",
        "",
        "Bounds on files, requests and scenario steps: past one, the error names the file and the field "
        "(a `CassetteError` or `ScenarioError`) or the request is refused with the status and code given.",
        "",
        "```text",
        _summary_table(),
        "```",
        "",
    ]
    for module_name in MODULES:
        found = constants(module_name)
        if not found:
            continue
        lines += [f"### `{module_name}`", "", "| constant | value | what it bounds |", "| --- | --- | --- |"]
        lines += [
            f"| `{name}` | {cell(show_size(value) if isinstance(value, int) else f'{value:g}')} "
            f"| {cell(inline(text))} |"
            for name, value, text in found
        ]
        lines.append("")
    return "\n".join(lines) + "\n"


def _summary_table() -> str:
    """The table of :mod:`ssemock.limits`' docstring: each bound, its default and where it is checked."""
    doc = docstring(ssemock.limits)
    start = doc.index("=====")
    end = doc.index("\n\n", start)
    return doc[start:end].replace(":data:", "").replace("``", "")
