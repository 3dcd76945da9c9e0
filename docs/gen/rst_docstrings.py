"""A griffe extension for the API reference: ssemock's docstrings write code as reStructuredText
(````literal````, ``:class:`~ssemock.Name```, ``::`` blocks); mkdocstrings renders Markdown, so each
docstring is turned into Markdown before it is parsed (roles as code, ``::`` blocks as fenced code)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ref_text import markdown


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring with :func:`ref_text.markdown` once the object is made."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value).rstrip("\n")
