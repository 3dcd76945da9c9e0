"""The README's pytest plugin examples, run as they are written in a real pytest session."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ssemock.pytest_plugin import conformance_presets

from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def plugin_examples() -> list[str]:
    start = README.index("\n## pytest plugin\n")
    end = README.index("\n## ", start + 1)
    return re.findall(r"```python\n(.*?)```", README[start:end], re.S)


def test_the_readme_plugin_examples_pass(pytester: pytest.Pytester) -> None:
    examples = plugin_examples()
    assert len(examples) == 5
    pytester.makeini(INI)
    tests = 0
    for number, code in enumerate(examples, 1):
        pytester.makepyfile(**{f"test_readme_{number}": code})
        functions = [n for n in ast.parse(code).body
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test_")]
        # a matrix test runs once per conformance preset
        tests += sum(len(conformance_presets()) if "matrix=True" in ast.unparse(f) else 1 for f in functions)
    result = pytester.runpytest("-v")
    # The openai SDK's two deviations from the WHATWG parsing rules, as the README says.
    result.assert_outcomes(passed=tests - 2, xfailed=2)
    result.stdout.fnmatch_lines(["test_readme_3.py::test_matrix[[]bom[]] XFAIL*"], consecutive=False)
    result.stdout.fnmatch_lines(["test_readme_3.py::test_matrix[[]meta-blocks[]] XFAIL*"])
    result.stdout.fnmatch_lines(["test_readme_3.py::test_matrix[[]split-utf8[]] PASSED*"])
