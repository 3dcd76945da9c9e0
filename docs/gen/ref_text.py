"""Docstring text as Markdown: the few reStructuredText forms ssemock's docstrings use."""

from __future__ import annotations

import inspect
import re

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`~?([\w.]+)`")
LITERAL = re.compile(r"``(.+?)``")
DESIGN = re.compile(r" \(design §[\d, §]+\)")  # the design notes are not published


def inline(text: str) -> str:
    """Sphinx roles and ````literals```` as Markdown code: ``:class:`~ssemock.config.Limits``` → `` `Limits` ``."""
    text = DESIGN.sub("", ROLE.sub(lambda m: f"`{_shown_role(m)}`", text))
    return LITERAL.sub(lambda m: f"`{m[1]}`", text)


def _shown_role(match: re.Match[str]) -> str:
    whole = match[0]
    return match[1].rsplit(".", 1)[-1] if "`~" in whole else match[1]


def docstring(obj: object) -> str:
    """The cleaned docstring of ``obj`` ("" when it has none)."""
    return inspect.cleandoc(obj.__doc__ or "") if obj.__doc__ else ""


def first_paragraph(text: str) -> str:
    """The first paragraph of ``text`` on one line, as Markdown."""
    return inline(" ".join(text.split("\n\n")[0].split()))


def markdown(text: str, *, code: str = "text") -> str:
    """A docstring as Markdown: roles and literals as code, each ``::`` block as a fenced ``code`` block
    (at the indentation of the line that opens it, so that it stays inside a Google-style section)."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and not line.lstrip().startswith(">>>"):
            indent = len(line) - len(line.lstrip())
            head = line.strip()[:-2].rstrip()
            block, i = indented_block(lines, i + 1, indent)
            pad = " " * indent
            if head:
                head = "For example" if head in ("Example", "Examples") else head
                out.append(pad + inline(head) + ":")
            out += ["", f"{pad}```{code}", *(pad + b if b else b for b in block), f"{pad}```", ""]
            continue
        out.append(inline(line))
        i += 1
    return "\n".join(out).strip() + "\n"


def indented_block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines from ``start`` indented deeper than ``indent`` (blank lines inside kept), dedented; and the
    index of the first line after them."""
    end = start
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    block = lines[start:end]
    while block and not block[0].strip():
        block.pop(0)
    while block and not block[-1].strip():
        block.pop()
    width = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
    return [b[width:] for b in block], end


def cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, ``|`` escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")
