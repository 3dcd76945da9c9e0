"""The import graph of ``ssemock/`` has no cycle, and no package uses another package's private names.

Every import counts, wherever it is written: at the top of a module, inside a function (a deferred
import), under ``if TYPE_CHECKING:``. A cycle made of a deferred import still means a name stands
in the wrong module: the module that imports late depends on one that depends on it.

An edge goes from the importing module to the module it names: ``from .model import Cassette`` to
``model``; ``from . import read`` to ``read`` (a submodule) or to the package's ``__init__`` (a name
defined there); ``import ssemock.cassette`` to ``cassette/__init__.py``. Importing a module also runs
the ``__init__`` of each package above it that the importer is not inside, so those count too
(``ssemock.server`` importing ``ssemock.cassette.read`` depends on ``cassette/__init__.py``).

Imports by string count where the string is a constant: ``importlib.import_module("...")`` and
``"ssemock.x.y:function"`` targets. A module
that imports by a computed name (``import_module(f".{name}")``) must be listed in :data:`COMPUTED` with
the modules it may import that way, which then count as edges.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = "ssemock"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
TARGET = re.compile(rf"{PACKAGE}(\.\w+)+:\w+")
COMPUTED: dict[str, tuple[str, ...]] = {
    "ssemock.importers.registry": (),  # Importer.function(): its "module:function" target, a constant
}
"""Modules importing by a computed name: the modules they may import so."""


@dataclass(frozen=True)
class Edge:
    """One import: ``source`` names ``target`` at ``line`` of ``source``'s file (0: a :data:`COMPUTED` one)."""

    source: str
    target: str
    line: int


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = module_names()


@cache
def tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module].read_text(encoding="utf-8"), str(MODULES[module]))


def package_of(module: str) -> str:
    """The package a module is in (a package's ``__init__`` is in the package itself)."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def absolute(module: str, level: int, name: str | None) -> str:
    """``from <level dots><name> import ...`` written in ``module``, as an absolute module name."""
    if level == 0:
        return name or ""
    base = package_of(module).split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def relative_text(module: str, text: str) -> str:
    """A module name as ``import_module`` takes it (``".x"`` from ``module``'s package)."""
    dots = len(text) - len(text.lstrip("."))
    return absolute(module, dots, text[dots:] or None)


def with_packages(importer: str, target: str) -> Iterator[str]:
    """``target`` and each package above it whose ``__init__`` importing ``target`` runs, outermost first:
    the packages that ``importer`` is not itself inside (those are running already)."""
    inside = package_of(importer).split(".")
    parts = target.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in MODULES and (depth == len(parts) or parts[:depth] != inside[:depth]):
            yield name


def is_computed_import(node: ast.AST) -> bool:
    """An ``import_module(...)`` call whose first argument is not a constant string."""
    return (isinstance(node, ast.Call) and called(node) == "import_module" and bool(node.args)
            and not (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)))


def called(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def named(node: ast.AST, module: str) -> Iterator[str]:
    """The modules one AST node of ``module`` imports (before adding the packages above them)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = absolute(module, node.level, node.module)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            yield sub if sub in MODULES else base
    elif isinstance(node, ast.Call) and called(node) == "import_module" and not is_computed_import(node):
        first = node.args[0]
        assert isinstance(first, ast.Constant)
        yield relative_text(module, first.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and TARGET.fullmatch(node.value):
        yield node.value.partition(":")[0]


def edges() -> list[Edge]:
    """Every import edge between modules of the package (self-imports left out)."""
    found: list[Edge] = []
    for module in MODULES:
        for node in ast.walk(tree(module)):
            for target in named(node, module):
                found += [Edge(module, name, getattr(node, "lineno", 0)) for name in with_packages(module, target)
                          if name != module]
        found += [Edge(module, target, 0) for target in COMPUTED.get(module, ())]
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for child in sorted(graph.get(node, ())):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in on_stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def shortest_path(graph: dict[str, set[str]], start: str, goal: str, within: set[str]) -> list[str]:
    """The shortest path from ``start`` to ``goal`` through ``within`` (breadth first), or [] if none."""
    previous: dict[str, str] = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [goal]
            while path[-1] != start:
                path.append(previous[path[-1]])
            return path[::-1]
        for child in sorted(graph.get(node, set()) & within):
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return []


def cycles_in(component: list[str], graph: dict[str, set[str]]) -> list[list[str]]:
    """For each edge inside ``component``, the shortest cycle through it; each cycle once."""
    members = set(component)
    found: dict[tuple[str, ...], list[str]] = {}
    for source in component:
        for target in sorted(graph[source] & members):
            cycle = [source, *shortest_path(graph, target, source, members)[:-1]]
            first = cycle.index(min(cycle))
            key = tuple(cycle[first:] + cycle[:first])
            found.setdefault(key, list(key))
    return sorted(found.values(), key=lambda c: (len(c), c))


def describe(component: list[str], graph: dict[str, set[str]], found: list[Edge]) -> str:
    """The modules of one cycle, then each shortest cycle with the lines of its imports."""
    lines_of: dict[tuple[str, str], set[int]] = {}
    for edge in found:
        lines_of.setdefault((edge.source, edge.target), set()).add(edge.line)
    out = [f"{len(component)} modules in one cycle: {', '.join(component)}"]
    for cycle in cycles_in(component, graph):
        steps = []
        for source, target in zip(cycle, [*cycle[1:], cycle[0]]):
            where = MODULES[source].relative_to(ROOT.parent)
            steps.append(f"{source} ({where}:{','.join(map(str, sorted(lines_of[source, target])))})")
        out.append("    " + " -> ".join(steps) + f" -> {cycle[0]}")
    return "\n".join(out)


def test_the_checker_sees_every_kind_of_import() -> None:
    """The edges the checker must find are found: deferred, TYPE_CHECKING, package, "module:function"."""
    graph = {(e.source, e.target) for e in edges()}
    assert ("ssemock.cli", "ssemock.edge.arguments") in graph  # deferred, inside a function
    assert ("ssemock.cli", "ssemock.cassette") in graph  # under TYPE_CHECKING
    assert ("ssemock.server", "ssemock.edge") in graph  # `from .edge import ...`: the package's __init__
    assert ("ssemock.recorder.proxy", "ssemock.cassette") in graph  # the package above a module it names
    assert ("ssemock", "ssemock.mockserver") in graph  # a package's __init__ importing its public names
    assert ("ssemock.importers.registry", "ssemock.importers.har") in graph  # a "module:function" target
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
    assert cycles_in(["a", "b", "c"], {"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"], ["a", "c"]]


def test_no_import_cycle() -> None:
    found = edges()
    graph: dict[str, set[str]] = {}
    for edge in found:
        graph.setdefault(edge.source, set()).add(edge.target)
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles in ssemock/ (deferred and TYPE_CHECKING imports count):\n" + "\n".join(
        describe(c, graph, found) for c in cycles
    )


def test_every_import_by_a_computed_name_is_declared() -> None:
    computing = sorted({m for m in MODULES for node in ast.walk(tree(m)) if is_computed_import(node)})
    assert computing == sorted(COMPUTED), "declare in COMPUTED the modules each may import by a computed name"
    assert all(target in MODULES for targets in COMPUTED.values() for target in targets)


def private_uses(module: str) -> Iterator[str]:
    """``from x import _name`` and ``x._name`` (``x`` a module imported by name) in ``module``, where ``x``
    is in another package than ``module``."""
    modules: dict[str, str] = {}  # local name -> module of the package
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.ImportFrom):
            base = absolute(module, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:
                    modules[alias.asname or alias.name] = sub
                elif alias.name.startswith("_") and not alias.name.startswith("__") and base in MODULES \
                        and package_of(base) != package_of(module):
                    yield f"{node.lineno}: from {base} import {alias.name}"
        elif isinstance(node, ast.Import):
            modules.update({a.asname: a.name for a in node.names if a.asname and a.name in MODULES})
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            owner = modules[node.value.id]
            if node.attr.startswith("_") and not node.attr.startswith("__") and package_of(owner) != package_of(module):
                yield f"{node.lineno}: {node.value.id}.{node.attr} ({owner})"


def test_no_package_uses_another_package_private_names() -> None:
    found = [f"{MODULES[m].relative_to(ROOT.parent)}:{use}" for m in MODULES for use in private_uses(m)]
    assert not found, "private names used across packages:\n" + "\n".join(found)


def test_moved_names_are_still_where_they_are_documented() -> None:
    import ssemock.plan
    from ssemock import redact, scenario
    from ssemock.errors import redacted
    from ssemock.scanner import shapes

    assert scenario.Plan is ssemock.plan.Plan and "Plan" in scenario.__all__
    assert redact.GITLEAKS_COMMIT == shapes.GITLEAKS_COMMIT
    key = "sk-proj-" + "a1B2c3D4" * 6
    # The default rules, as the recorder's default filter applies them: a key shape, a value under a credential name.
    for text, scrubbed in ((f"key {key}", "key REDACTED"), ("api_key=hunter2hunter2", "api_key=REDACTED")):
        assert redact.scrub_text(text) == redact.Filter().text(text) == (scrubbed, 1)
        assert redacted(text) == scrubbed
