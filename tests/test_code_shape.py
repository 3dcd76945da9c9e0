"""The modules of ``ssemock/`` stay small enough to read: no file over 450 lines, no function over 60.

A function's length runs from its ``def`` line (its decorators not counted) to its last line, so a
docstring counts; a nested function counts inside the one that holds it and on its own. The bounds
are the project's code standards; a change that needs more splits the module or the
function instead of raising them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "ssemock"
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _long_functions(path: Path, base: Path = ROOT.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{path.relative_to(base)}:{node.lineno} {node.name}: {length} lines")
    return found


def test_the_package_has_modules() -> None:
    # The checks below pass vacuously on an empty tree: make sure they read the package.
    assert len(_modules()) > 50


def test_no_file_is_over_450_lines() -> None:
    long_files = []
    for path in _modules():
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > MAX_FILE_LINES:
            long_files.append(f"{path.relative_to(ROOT.parent)}: {count} lines")
    assert long_files == []


def test_no_function_is_over_60_lines() -> None:
    long_functions = [item for path in _modules() for item in _long_functions(path)]
    assert long_functions == []


def test_the_function_check_counts_what_it_says(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    sample = tmp_path / "sample.py"
    sample.write_text(f"def short():\n    pass\n\n\nasync def long():\n{body}\n", encoding="utf-8")
    assert _long_functions(sample, tmp_path) == [f"sample.py:5 long: {MAX_FUNCTION_LINES + 1} lines"]
