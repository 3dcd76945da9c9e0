"""A key for every rule of the shipped gitleaks catalogue whose key starts with a literal prefix (``npm_``,
``dop_v1_``, ``sk_live_``, ``SG.``, ``hvs.``, ``glsa_``, ``pul-``, ``dapi``…), made from the rule's own regular
expression: its literals as written, each class and repeat filled with seeded random letters and digits.

A rule is *prefixed* when its match is, after zero-width assertions, a literal (or a choice of literals): the
key names itself, whatever stands before it. Rules that need a keyword and an assignment before the key
(``adafruit … = …``) or whose key starts with a class (Facebook's digits, MaxMind's ``…_mmk``) are not.
A rule of fixed text (Bedrock's short-lived key prefix) makes no key of its own. Every key made is checked
against its rule alone: it is found whole, standing between spaces.
"""

from __future__ import annotations

import random
import re
import re._constants as sre  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
import string
from dataclasses import dataclass
from functools import cache
from typing import Any

from ssemock.scanner.shapes import Rule, Scanner, load_gitleaks

_ALNUM = string.ascii_letters + string.digits
_PRINTABLE = [chr(c) for c in range(0x21, 0x7F)]
_CATEGORIES = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_WORD: r"\w",
               sre.CATEGORY_NOT_WORD: r"\W", sre.CATEGORY_SPACE: r"\s", sre.CATEGORY_NOT_SPACE: r"\S"}


@dataclass(frozen=True)
class Shape:
    """One prefixed catalogue rule and how to make its keys."""

    rule: Rule
    tree: Any  # the parsed pattern of the key (the secret's part of the regex)

    def key(self, seed: int) -> str:
        """A key of this rule (the same for the same seed; another for another seed)."""
        rng = random.Random(f"{self.rule.id}/{seed}")
        for _ in range(50):
            key = _make(self.tree, rng)
            if _found_whole(self.rule, key):
                return key
        raise AssertionError(f"no key of {self.rule.id} is found by its own rule")


def _python(regex: str) -> str:
    """An RE2 pattern of the catalogue in Python's syntax, for parsing (inline flags dropped: the letters as
    written always match)."""
    regex = regex.replace("[[:alnum:]]", "[a-zA-Z0-9]").replace("[:alnum:]", "a-zA-Z0-9").replace(r"\z", r"\Z")
    return re.sub(r"\(\?-?i:", "(?:", regex).replace("(?i)", "").replace("(?-i)", "")


def _zero_width(item: tuple[Any, Any]) -> bool:
    return item[0] is sre.AT


def _starts_literal(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op is sre.AT:
            continue
        if op is sre.LITERAL:
            return True
        if op is sre.SUBPATTERN:
            return _starts_literal(list(av[-1]))
        if op is sre.BRANCH:
            return all(_starts_literal(list(alt)) for alt in av[1])
        return False
    return False


def _secret_part(items: list[tuple[Any, Any]], rule: Rule) -> list[tuple[Any, Any]] | None:
    """The items of a prefixed key: the first capture group after zero-width assertions (what follows it, the
    key's end, is left out), or the whole pattern when the match is the key; None when the key needs more
    before it."""
    for i, (op, av) in enumerate(items):
        if op is sre.AT:
            continue
        if op is sre.SUBPATTERN and av[0] is not None:  # a capture group
            inner = list(av[-1])
            return inner if _starts_literal(inner) else None
        rest = items[i:]
        if rest and _is_end(rest[-1]):
            rest = rest[:-1]
        whole = rule.group < 0 or not rule.regex.groups  # else the key is a group after other text (curl -H …)
        return rest if whole and _starts_literal(rest) else None
    return None


def _is_end(item: tuple[Any, Any]) -> bool:
    """A key's end written into the match: ``(?:[^a-zA-Z0-9+/]|\\z)``."""
    op, av = item
    return op is sre.BRANCH and any(alt and alt[0][0] is sre.AT for alt in av[1])


def _members(av: list[tuple[Any, Any]]) -> list[str]:
    negate = any(op is sre.NEGATE for op, _ in av)
    out = []
    for char in _PRINTABLE:
        code = ord(char)
        hit = False
        for op, value in av:
            if op is sre.LITERAL:
                hit |= code == value
            elif op is sre.RANGE:
                hit |= value[0] <= code <= value[1]
            elif op is sre.CATEGORY:
                hit |= bool(re.fullmatch(_CATEGORIES.get(value, r"(?!)"), char, re.ASCII))
        if hit != negate:
            out.append(char)
    return out


def _make(items: Any, rng: random.Random) -> str:
    out = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.IN:
            members = _members(av)
            out.append(rng.choice([c for c in members if c in _ALNUM] or members))
        elif op is sre.ANY:
            out.append(".")  # "xoxe.xoxb-", "gems.contribsys.com": a dot where the rule means one
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            low, high, item = av
            count = low if low >= 16 else min(high, max(low, 16 if high > 16 else high))
            out += [_make(item, rng) for _ in range(count)]
        elif op is sre.SUBPATTERN:
            out.append(_make(av[-1], rng))
        elif op is sre.BRANCH:
            alternatives = av[1]
            out.append(_make(next((a for a in alternatives if _starts_literal(list(a))), alternatives[0]), rng))
        elif op is sre.AT:
            continue
        else:
            raise ValueError(f"cannot make a key from {op}")
    return "".join(out)


def _found_whole(rule: Rule, key: str) -> bool:
    """The rule alone finds ``key`` between spaces, whole."""
    data = f"x {key} x".encode()
    return [(h.start, h.end) for h in _alone(rule).find(data)] == [(2, 2 + len(key))]


@cache
def _alone(rule: Rule) -> Scanner:
    return Scanner((rule,))


def _shape(rule: Rule, regex: str) -> Shape | None:
    tree = list(sre_parse.parse(_python(regex)))
    if len(tree) == 1 and tree[0][0] is sre.BRANCH:  # "A|B": the first prefixed alternative
        alternatives = [_secret_part(list(alt), rule) for alt in tree[0][1][1]]
        part = next((a for a in alternatives if a is not None), None)
    else:
        part = _secret_part(tree, rule)
    if part is None:
        return None
    made = _make(part, random.Random(rule.id)).lower()
    if made == _make(part, random.Random(rule.id + "/again")).lower():
        return None  # a fixed text (Bedrock's short-lived key prefix): no key of its own
    # The keyword is in the key itself (the rule names the key, not what stands around it).
    return Shape(rule, part) if any(k.decode() in made for k in rule.keywords) else None


@cache
def prefixed_shapes() -> tuple[Shape, ...]:
    """Every prefixed rule of the catalogue (see the module docstring), in catalogue order."""
    import tomllib
    from importlib import resources

    text = resources.files("ssemock.scanner").joinpath("gitleaks.toml").read_text(encoding="utf-8")
    regexes = {raw["id"]: raw["regex"] for raw in tomllib.loads(text)["rules"] if "regex" in raw}
    shapes = (_shape(rule, regexes[rule.id]) for rule in load_gitleaks())
    return tuple(s for s in shapes if s is not None)
