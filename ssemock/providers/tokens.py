"""Deterministic token-like splitting of text (a documented rule, no tokenizer download).

The rule is the pre-tokenization pattern of OpenAI's ``cl100k_base`` / ``o200k_base``
tokenizers, without the byte-pair merges (whose tables are downloaded from the network):

* an English contraction (``'s``, ``'t``, ``'re``, ``'ve``, ``'m``, ``'ll``, ``'d``);
* a run of letters with at most one leading non-letter, non-digit character (``" capital"``);
* one to three digits (``"1231"`` → ``"123"``, ``"1"``);
* a run of punctuation with an optional leading space (``" **"``, ``'":"'``);
* whitespace (line ends kept together with the whitespace before them).

On the bundled recordings this gives exactly the OpenAI deltas for short words, numbers
and JSON arguments (``'{"country":"UK"}'`` → ``{"``, ``country``, ``":"``, ``UK``, ``"}``);
a long word stays one piece where a real tokenizer may cut it. Joining the pieces gives
the text back, always.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import islice
from operator import methodcaller

__all__ = ["count_tokens", "group", "split_tokens"]

_LETTER = r"[^\W\d_]"
_PATTERN = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    rf"|(?:[^\r\n\w]|_)?{_LETTER}+"
    r"|\d{1,3}"
    r"| ?(?:[^\s\w]|_)+[\r\n]*"
    r"|\s*[\r\n]+"
    r"|\s+(?!\S)"
    r"|\s+"
)


_WHOLE = methodcaller("group")
CACHED_TEXT = 65536
"""Texts of at most this many characters keep their pieces in a small cache (a stub's reply is cut
once, not at every answer)."""


def split_tokens(text: str) -> list[str]:
    """``text`` cut into token-like pieces (see the module docstring); ``"".join`` gives it back."""
    if len(text) <= CACHED_TEXT:
        return list(_cached_split(text))
    out: list[str] = []
    matches = _PATTERN.finditer(text)
    while batch := list(islice(matches, 8192)):  # the event loop may run between batches
        out += map(_WHOLE, batch)
    return out


@lru_cache(maxsize=64)
def _cached_split(text: str) -> tuple[str, ...]:
    return tuple(_PATTERN.findall(text))


def count_tokens(text: str) -> int:
    """The number of pieces :func:`split_tokens` gives for ``text``."""
    return len(_PATTERN.findall(text))


def group(pieces: Sequence[str], size: int, *, first: int = 1) -> list[str]:
    """Join ``pieces`` into deltas: the first ``first`` pieces alone, then ``size`` pieces per delta.

    Providers that send several tokens per event (Anthropic, Gemini) send the first
    token alone, as their recordings show.
    """
    head = list(pieces[:first])
    rest = pieces[first:]
    return head + ["".join(rest[i : i + size]) for i in range(0, len(rest), size)]
