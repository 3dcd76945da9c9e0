"""ssemock's modules stay small and readable: no file in ``ssemock/`` over 450 lines, no function over 60
lines (from its ``def`` line to its last line, decorators not counted)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "ssemock"
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60


def too_long(path: Path) -> list[str]:
    """What in the Python file ``path`` is over the bounds, one line each."""
    text = path.read_text(encoding="utf-8")
    out = []
    lines = text.count("\n") + (not text.endswith("\n") and bool(text))
    if lines > MAX_FILE_LINES:
        out.append(f"{path.name}: {lines} lines")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                out.append(f"{path.name}:{node.lineno} {node.name}: {length} lines")
    return out


def test_the_check_finds_a_long_file_and_a_long_function(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    sample.write_text("def long():\n" + body + "\n\n\nasync def short():\n    return 1\n" + "\n" * MAX_FILE_LINES)
    # 1 + 60 lines of the long function, 2 blank, 2 of the short one, 450 blank: 515 lines
    assert too_long(sample) == [f"sample.py: {MAX_FILE_LINES + 65} lines",
                                f"sample.py:1 long: {MAX_FUNCTION_LINES + 1} lines"]


def test_no_module_or_function_of_ssemock_is_over_its_bound() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    assert [problem for path in files for problem in too_long(path)] == []
