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


def directive(dotted: str, **options: object) -> list[str]:
    """The mkdocstrings ``:::`` lines documenting ``dotted``, with its options (``members=False``...)."""
    lines = [f"::: {dotted}"]
    if options:
        lines += [
            "    options:",
            *(f"      {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()),
        ]
    return [*lines, ""]


def page() -> str:
    """The whole page, as Markdown."""
    things, errors = public_names()
    marker, what = MARKER.split("): ", 1)
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
        lines += directive(f"ssemock.{name}")
    lines += ["## Errors", "", "See also [the error codes](errors.md).", ""]
    for name in errors:
        lines += directive(f"ssemock.{name}", members=False)
    lines += ["## pytest plugin", "", *directive("ssemock.pytest_plugin", members=False, show_root_heading=False)]
    lines += ["### The `ssemock` marker", "", "```text", f"@pytest.mark.{marker})", "```", ""]
    lines += [what[0].upper() + what[1:] + ".", "", "### Fixtures", ""]
    for dotted in fixtures():
        lines += directive(dotted, heading_level=4)
    lines += ["### The fixture's object", "", *directive("ssemock.testing.SSEMockFixture", heading_level=4)]
    return "\n".join(lines) + "\n"
