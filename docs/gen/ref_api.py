"""reference/api.md: the public Python API (``ssemock.__all__``) and the pytest plugin's fixtures and
marker, through mkdocstrings ``:::`` directives (the docstrings are the text)."""

from __future__ import annotations

import importlib

import ssemock
import ssemock.pytest_plugin
from ssemock.pytest_plugin import MARKER

FIXTURE_MODULES = ("ssemock.pytest_plugin", "ssemock.pytest_options")
"""The modules whose pytest fixtures are the plugin's."""


def fixtures() -> list[str]:
    """The dotted names of the plugin's fixtures, in the order their modules define them."""

    found = []
    for module_name in FIXTURE_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            fixture = type(value).__name__ == "FixtureFunctionDefinition"
            if fixture and getattr(value, "__module__", None) == module_name and not name.startswith("_"):
                found.append(f"{module_name}.{name}")
    return found


def public_names() -> tuple[list[str], list[str]]:
    """``ssemock.__all__`` but ``__version__``, split into (classes and functions, errors)."""
    names = [n for n in ssemock.__all__ if not n.startswith("_")]
    errors = [n for n in names if isinstance(getattr(ssemock, n), type) and issubclass(getattr(ssemock, n), Exception)]
    return [n for n in names if n not in errors], errors


def page() -> str:
    """The whole page, as Markdown."""
    things, errors = public_names()
    lines = [
        "# Python API",
        "",
        "Generated from the docstrings: everything `from ssemock import …` gives (`ssemock.__all__`), then "
        "the pytest plugin's fixtures and marker.",
        "",
        f"`ssemock.__version__` is `{ssemock.__version__}`.",
        "",
        "## Classes and functions",
        "",
    ]
    for name in things:
        lines += [f"::: ssemock.{name}", ""]
    lines += ["## Errors", "", "See also [the error codes](errors.md).", ""]
    for name in errors:
        lines += [f"::: ssemock.{name}", "    options:", "      members: false", ""]
    lines += [
        "## pytest plugin",
        "",
        "::: ssemock.pytest_plugin",
        "    options:",
        "      members: false",
        "      show_root_heading: false",
        "",
        "### The `ssemock` marker",
        "",
        "```python",
        "@pytest.mark." + MARKER.split("): ")[0] + ")",
        "```",
        "",
        MARKER.split("): ", 1)[1][0].upper() + MARKER.split("): ", 1)[1][1:] + ".",
        "",
        "### Fixtures",
        "",
    ]
    for dotted in fixtures():
        lines += [f"::: {dotted}", "    options:", "      heading_level: 4", ""]
    lines += [
        "### The fixture's object",
        "",
        "::: ssemock.testing.SSEMockFixture",
        "    options:",
        "      heading_level: 4",
        "",
    ]
    return "\n".join(lines) + "\n"
