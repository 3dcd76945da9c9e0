"""reference/errors.md: the error tree (``ssemock.errors``) and every error answered over HTTP, from
:data:`ssemock.refusals.HTTP_ERRORS` (status, ``type``, class, fields, when)."""

from __future__ import annotations

import re

from ref_text import docstring, inline

import ssemock.errors
from ssemock.refusals import HTTP_ERRORS


def _plain(text: str) -> str:
    """A docstring's first paragraph on one line, Sphinx roles written as code."""
    first = " ".join(text.split("\n\n")[0].split())
    return re.sub(r":\w+:`~?(?:[\w.]*\.)?(\w+)`", r"`\1`", first).replace("``", "`")


def error_table() -> str:
    """The table of error codes: one row per class of ``HTTP_ERRORS``, by status."""
    rows = ["| status | `type` | error class | fields besides `type`, `message` | when |", "|---|---|---|---|---|"]
    for error in HTTP_ERRORS:
        fields = ", ".join(f"`{name}`" for name in error.detail_names) or "—"
        when = _plain(error.__doc__ or "").replace("|", "\\|")
        rows.append(f"| {error.status} | `{error.code}` | `{error.__name__}` | {fields} | {when} |")
    return "\n".join(rows) + "\n"


def page() -> str:
    """The whole page, as Markdown."""
    doc = docstring(ssemock.errors)
    intro, rest = doc.split("::\n", 1)
    tree = rest.split("\n\n", 1)[0]
    return (
        "\n".join(
            [
                "# Error codes",
                "",
                "Generated from `ssemock.errors` and `ssemock.refusals.HTTP_ERRORS`.",
                "",
                "## Errors answered over HTTP",
                "",
                'Every refusal is a JSON body `{"error": {"type": "ssemock_…", "message": …}}` with the status '
                "below, and the fields its class names:",
                "",
                error_table(),
                "## The exception tree",
                "",
                inline(" ".join(intro.split())) + ":",
                "",
                "```text",
                *(line.removeprefix("    ") for line in tree.splitlines() if line.strip()),
                "```",
                "",
            ]
        )
        + "\n"
    )
