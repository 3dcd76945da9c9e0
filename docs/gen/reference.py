"""mkdocs-gen-files script: write the generated reference pages and copy the JSON Schemas into the site.

Every page is made from the code (parsers, registries, routes, tables, docstrings): nothing here is
copied by hand. ``mkdocs build`` runs it (``plugins: gen-files`` in mkdocs.yml).
"""

from __future__ import annotations

import sys
from pathlib import Path

import mkdocs_gen_files

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent.parent)]  # these modules, and ssemock from this checkout

import ref_api  # noqa: E402
import ref_cli  # noqa: E402
import ref_errors  # noqa: E402
import ref_http  # noqa: E402
import ref_limits  # noqa: E402
import ref_steps  # noqa: E402

import ssemock  # noqa: E402

PAGES = {
    "reference/cli.md": ref_cli.page,
    "reference/api.md": ref_api.page,
    "reference/steps.md": ref_steps.steps_page,
    "reference/presets.md": ref_steps.presets_page,
    "reference/http-api.md": ref_http.page,
    "reference/errors.md": ref_errors.page,
    "reference/limits.md": ref_limits.page,
}
"""Each generated page and the function writing its Markdown."""
SCHEMAS = Path(ssemock.__file__).parent / "schemas"


def main() -> None:
    for path, write in PAGES.items():
        with mkdocs_gen_files.open(path, "w") as out:
            out.write(write())
    for schema in sorted(SCHEMAS.glob("*.json")):
        with mkdocs_gen_files.open(f"schemas/{schema.name}", "w") as out:
            out.write(schema.read_text(encoding="utf-8"))


main()
