"""Where a key of the gitleaks catalogue begins and ends, as a recording reads it.

The catalogue ends most keys only at whitespace, a quote, a backtick, ``;``, an escaped
``\\n``/``\\r`` or the end, as suits source code. A recording holds prompts, paths, query
strings, forms and Markdown, where a key is followed by any punctuation (``npm_….``,
``/v1/files/npm_…/content``, ``(dop_v1_…)``, ``**SG.…**``, ``?k=…&``) or a non-ASCII character;
so each such end, and the Azure AD secret's own two bounds, is read as "any character that is not
a letter or a digit, or the end" (:data:`KEY_END`). A letter or a digit right after the key still
means a longer string, not this key. Regular expressions here are RE2 syntax, as text.
"""

from __future__ import annotations

import re

__all__ = ["KEY_END", "bounded", "repeated_group"]

# The catalogue's key ends (written for source code) and what they are read as (see the module docstring).
KEY_END = r"(?:[^A-Za-z0-9]|$)"
_BOUNDS = (
    (r"""(?:[\x60'"\s;]|\\[nr]|$|\b)""", KEY_END),
    (r"""(?:[\x60'"\s;]|\\[nr]|$)""", KEY_END),
    (r"""(?:$|[\\'"\x60\s<),])""", KEY_END),  # azure-ad-client-secret: its end...
    (r"""(?:^|[\\'"\x60\s>=:(,)])""", r"(?:^|[^A-Za-z0-9_~.-])"),  # ... and its start
)


# An end that a rule without a group matches as part of the key (Sentry's org token): the key is put in a group.
_END_IN_MATCH = re.compile(r"\(\?:\[\^[^\]]*\]\|\\z\)$")


def bounded(regex: str) -> str:
    """A catalogue regex with its key ends (and starts) read as any character a key cannot hold (:data:`KEY_END`);
    a key whose end is matched with it (``…(?:[^a-zA-Z0-9+/]|\\z)``, no group) becomes group 1, without its end."""
    for written, read in _BOUNDS:
        regex = regex.replace(written, read)
    end = _END_IN_MATCH.search(regex)
    if end and "(" not in regex[: end.start()].replace("(?:", "").replace("\\(", ""):
        regex = f"({regex[: end.start()]}){end.group()}"
    return regex


def repeated_group(regex: str) -> bool:
    """Whether the first capture group of ``regex`` (RE2 syntax) is repeated (``(…){3}``, ``(…)+``, ``(…)*``)."""
    depth, start, in_class, i = 0, -1, False, 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class, i = True, i + (regex[i + 1 : i + 2] == "]")  # "[]…]": the first "]" is a member
        elif char == "(":
            depth += 1
            if start < 0 and not regex.startswith("(?", i):
                start = depth
        elif char == ")":
            if depth == start:
                return regex[i + 1 : i + 2] in ("{", "+", "*")
            depth -= 1
        i += 1
    return False
