"""ssemock's own key forms, beside the gitleaks catalogue, and the default scanner of both.

:data:`OWN_RULES` catch provider keys that the catalogue misses or only matches at exact lengths (the
providers' key shapes of :mod:`ssemock.providers`, ``Bearer …``, ``xai-``, ``hf_``, ``AKIA``, ``ghp_``,
``pplx-``, ``r8_``, ``bedrock-api-key-``, JWTs, Telegram bot tokens, URL passwords), also with JSON
escapes in them (see :mod:`ssemock.scanner.shapes`); :func:`default_scanner` runs them with the catalogue.
"""

from __future__ import annotations

import threading

from ..providers import KeyShape, key_shapes
from .shapes import Rule, Scanner, char_class, compile_bytes, escape_aware, key_run, load_gitleaks

__all__ = ["OWN_RULES", "default_scanner"]

# What may come before a prefixed key: not a letter or digit ("task-management-…" holds no key); in the
# view a JSON escape before it ("\nsk-…", "\u2028sk-…") is blanks, a backslash starts an escaped key character,
# and blanks then one of b f n r t may be an escape escaped twice ("\\nsk-…").
_BOUND = rb"(?:^|[^A-Za-z0-9\\]|  [bfnrt])"
_KEY = b"A-Za-z0-9_-"
_ALNUM = b"A-Za-z0-9"


def _own(rule_id: str, pattern: bytes, keywords: tuple[bytes, ...]) -> Rule:
    return Rule(rule_id, "ssemock", compile_bytes(pattern), (*keywords, b"\\u"), group=1)


def _prefixed(rule_id: str, prefixes: tuple[bytes, ...], body: bytes, least: int) -> Rule:
    alternatives = b"|".join(escape_aware(p) for p in prefixes)
    pattern = _BOUND + b"((?:" + alternatives + b")" + key_run(body, least) + b")"
    return _own(rule_id, pattern, tuple(p.lower() for p in prefixes))


def _jwt() -> Rule:
    segment = key_run(_KEY, 8)
    dot = escape_aware(b".")
    head = escape_aware(b"eyJ")
    pattern = _BOUND + b"(" + head + segment + dot + head + segment + dot + segment + b")"
    return _own("ssemock-jwt", pattern, (b"eyj",))


def _telegram() -> Rule:
    """A Telegram bot token, ``<bot id>:<34-35 characters from A>``, also right after ``/bot`` in a URL
    path (``/bot123456789:AAH…/sendMessage``), where the catalogue's rule (which wants ``telegram``
    and an assignment before it) does not look; the bot id goes with it."""
    pattern = (b"(?:^|[^0-9])(" + char_class(b"0-9") + b"{5,16}:" + escape_aware(b"A") + char_class(_KEY) + b"{33,34})"
               + b"(?:$|[^A-Za-z0-9_\\\\-])")
    return _own("ssemock-telegram-bot-token", pattern, tuple(b"%d:a" % d for d in range(10)))


# A URL's user info (RFC 3986 3.2.1): what may stand in it unencoded (the password may hold ":", and "@"
# when a later "@" ends it, as URL parsers read it). Plain, or in a JSON string ("\/" reads "//" in the view).
_USER = b"[A-Za-z0-9._~%!$&'()*+,;=-]*"
_PASSWORD = b"[^\\s/?#\"'<>\\\\`]+"
_HOST_START = b"[A-Za-z0-9\\[]"
# Percent-encoded once more (a URL inside a form body or a query string): %3A ends the user, %40 the
# password; a password's pieces are never %40, %2F, %3F or %23, and "+" is a space there.
_PCT_USER = b"(?:[A-Za-z0-9._~!$&'()*,;=-]|%(?:[0-24-9A-Fa-f][0-9A-Fa-f]|3[0-9B-Fb-f]))*"
_PCT_PASSWORD = (b"(?:[A-Za-z0-9._~!$&'()*,;=-]|%(?:[0-15-9A-Fa-f][0-9A-Fa-f]|2[0-24-9A-Ea-e]|3[0-9A-Ea-e]"
                 b"|4[1-9A-Fa-f]))+")
# Passwords that are placeholders in documentation and examples, left as they are.
_PLACEHOLDER = compile_bytes(rb"(?i)^(?:password|passwd|pass|pwd|secret|changeme|x+|\*+|\$\{[^}]*\}|"
                             rb"\{\{[^}]*\}\}|\$[a-z_][a-z0-9_]*|%\([a-z_]+\)s|\.\.\.)$")


def _url_passwords() -> tuple[Rule, ...]:
    """The password of a URL's user info, ``scheme://user:password@host`` (the user and the rest stay):
    plain, in a JSON string, and percent-encoded (``https%3A%2F%2Fuser%3Apassword%40host``)."""
    # From "://" on (a scheme adds nothing, and a literal start is found fast); "\/\/" reads "////".
    plain = b"://(?:/{0,2})" + _USER + b":(" + _PASSWORD + b")@" + _HOST_START
    encoded = b"(?i:%3A%2F%2F)" + _PCT_USER + b"(?i:%3A)(" + _PCT_PASSWORD + b")(?i:%40)[A-Za-z0-9]"
    allow = ((_PLACEHOLDER, "secret"),)
    return (
        Rule("ssemock-url-password", "ssemock", compile_bytes(plain), (b"://",), group=1, allow=allow),
        Rule("ssemock-url-password-encoded", "ssemock", compile_bytes(encoded), (b"%3a%2f%2f",), group=1,
             allow=allow),
    )


def _shape(shape: KeyShape) -> Rule:
    return _prefixed(shape.rule, tuple(p.encode("ascii") for p in shape.prefixes), shape.alphabet.encode("ascii"),
                     shape.least)


OWN_RULES: tuple[Rule, ...] = (
    # the providers' own key shapes (sk-, sk-proj-, sk-ant-, AIza, ya29., gsk_…): ssemock.providers
    *(_shape(shape) for shape in key_shapes()),
    _own("ssemock-bearer-token", escape_aware(b"bearer", any_case=True) + rb"\s+("
         + key_run(b"A-Za-z0-9._~+/=-", 12) + b")", (b"bearer",)),
    _prefixed("ssemock-xai-key", (b"xai-",), _ALNUM, 20),
    _prefixed("ssemock-huggingface-token", (b"hf_",), _ALNUM, 20),
    _prefixed("ssemock-aws-access-key-id", (b"AKIA", b"ASIA", b"ABIA", b"ACCA"), b"A-Z0-9", 16),
    _prefixed("ssemock-github-token", (b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"), b"A-Za-z0-9_", 20),
    _prefixed("ssemock-perplexity-key", (b"pplx-",), _ALNUM, 20),
    _prefixed("ssemock-replicate-token", (b"r8_",), _ALNUM, 20),
    # An Amazon Bedrock short-lived API key: the prefix, then base64 of a presigned URL (the catalogue's rule
    # finds the prefix alone, the signature would stay).
    _prefixed("ssemock-bedrock-api-key", (b"bedrock-api-key-",), b"A-Za-z0-9+/=", 40),
    _jwt(),
    _telegram(),
    *_url_passwords(),
)


_DEFAULT: Scanner | None = None
_BUILDING = threading.Lock()


def default_scanner() -> Scanner:
    """The scanner of the shipped catalogue and our own forms (built once, on first use, about 80 ms; a
    caller that comes while another thread builds it waits for that one)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _BUILDING:
            if _DEFAULT is None:
                _DEFAULT = Scanner((*load_gitleaks(), *OWN_RULES))
    return _DEFAULT
