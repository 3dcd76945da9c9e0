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


def reading_only_text(matrix_example: str) -> str:
    """The README's matrix example, turned into a test that reads only the text of a chat stream."""
    head, _, _ = matrix_example.partition("    calls = [")
    assert head != matrix_example and 'cassette="openai-chat-tool-calls-usage"' in head
    head = head.replace('cassette="openai-chat-tool-calls-usage"', 'cassette="openai-chat-finish-length-usage"')
    # the recording's text: one content delta, '{"' (openai/openai-python's finish_reason "length" snapshot)
    return head + '    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == \'{"\'\n'


def test_the_matrix_example_is_green_as_copied_and_for_a_test_reading_only_text(pytester: pytest.Pytester) -> None:
    """Copied into a project of its own and run by a separate pytest: the example, and the same
    example reading only text (the openai SDK loses the first event under ``bom``, which holds no text)."""
    (matrix,) = [code for code in plugin_examples() if "matrix=True" in code]
    pytester.makeini(INI)
    pytester.makepyfile(test_tools=matrix, test_text=reading_only_text(matrix))
    result = pytester.runpytest_subprocess("-rxX", "-p", "no:xdist")
    presets = len(conformance_presets())
    result.assert_outcomes(passed=2 * presets - 4, xfailed=3, xpassed=1)
    result.stdout.fnmatch_lines(["XPASS test_text.py::test_matrix[[]bom[]]*"], consecutive=False)
    result.stdout.fnmatch_lines(["XFAIL test_text.py::test_matrix[[]meta-blocks[]]*"], consecutive=False)
    result.stdout.fnmatch_lines(["XFAIL test_tools.py::test_matrix[[]bom[]]*"], consecutive=False)
