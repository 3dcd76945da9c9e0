"""The tutorial's conformance-matrix example (docs/tutorial/first-test.md), in a project of its own.

Sybil runs every pytest example of the docs as it is written (tests/docs_examples.py); this test
checks what the tutorial says of the matrix's outcomes: which presets fail, strictly or not."""

from __future__ import annotations

import pytest

from ssemock.pytest_plugin import conformance_presets

from .docs_examples import page_blocks
from .sessions import INI, preload_clients

pytest_plugins = ["pytester"]
preload_clients()


def reading_only_text(matrix_example: str) -> str:
    """The tutorial's matrix example, turned into a test that reads only the text of a chat stream."""
    head, _, _ = matrix_example.partition("    calls = [")
    assert head != matrix_example and 'cassette="openai-chat-tool-calls-usage"' in head
    head = head.replace('cassette="openai-chat-tool-calls-usage"', 'cassette="openai-chat-finish-length-usage"')
    # the recording's text: one content delta, '{"' (openai/openai-python's finish_reason "length" snapshot)
    return head + '    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == \'{"\'\n'


def test_the_matrix_example_is_green_as_copied_and_for_a_test_reading_only_text(pytester: pytest.Pytester) -> None:
    """Copied into a project of its own and run by a separate pytest: the example, and the same
    example reading only text (the openai SDK loses the first event under ``bom``, which holds no text)."""
    (matrix,) = [code for code in page_blocks("docs/tutorial/first-test.md", "python") if "matrix=True" in code]
    pytester.makeini(INI)
    pytester.makepyfile(test_tools=matrix, test_text=reading_only_text(matrix))
    result = pytester.runpytest_subprocess("-rxX", "-p", "no:xdist")
    presets = len(conformance_presets())
    result.assert_outcomes(passed=2 * presets - 4, xfailed=3, xpassed=1)
    result.stdout.fnmatch_lines(["XPASS test_text.py::test_matrix[[]bom[]]*"], consecutive=False)
    result.stdout.fnmatch_lines(["XFAIL test_text.py::test_matrix[[]meta-blocks[]]*"], consecutive=False)
    result.stdout.fnmatch_lines(["XFAIL test_tools.py::test_matrix[[]bom[]]*"], consecutive=False)
