"""Cassette hygiene: the lint behind ``ssemock check`` (format, size, secrets, age).

Every cassette file is checked for:

* **format**: it loads with the rules ``serve`` and ``inspect`` apply (:func:`ssemock.cassette.load`);
* **size**: the file is at most ``max_size`` bytes (default :data:`~ssemock.limits.MAX_CHECK_SIZE`, 10 MiB:
  a recording a repository should hold; the loader's own bound is 512 MiB); a larger file is that one
  finding, and not read. The load counts YAML nodes and items as it goes (:mod:`ssemock.cassette.fastyaml`),
  so a hostile file within the size stops early, its memory a few times its size;
* **secrets**: no header, query parameter or cookie the recorder drops by name, and nothing
  the recorder's scanner (:meth:`ssemock.redact.Filter.scan`: key shapes, values under
  credential names, ``Bearer`` tokens) finds in the path, query, header values and bodies
  (compressed answers are read decoded by :mod:`ssemock.coding`, and as stored; one that does
  not decode is a finding) — the rule that matched is named, never the value;
* **bodies not recorded**: an interaction the recorder kept without its body (``body_not_recorded``:
  it did not decode) is a finding, since its replay is refused;
* **age** (only with ``max_age``): ``provenance.recorded_at`` (ISO 8601, written by the
  recorder and the HAR importer) older than ``max_age`` is a *warning*, as is a cassette
  without it; a ``recorded_at`` that is not a date is a finding.

A finding is one line: ``FILE: interaction N: what`` (or ``FILE: what`` for the whole file).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .cassette import Cassette, Interaction, load
from .coding import decode_lenient
from .errors import CassetteError, ConfigError, redacted, short_repr
from .limits import MAX_CASSETTE_FILE, MAX_CHECK_SIZE
from .redact import Filter

__all__ = ["Finding", "cassette_files", "check_cassette", "check_file", "check_paths", "recorded_at"]

_FILTER = Filter()
_DAY = 86_400.0


@dataclass(frozen=True)
class Finding:
    """One problem in one cassette file.

    Attributes:
        file: the cassette file.
        what: what is wrong, without any secret value.
        interaction: the interaction's index (from 0), or None for the whole file.
        warning: a warning (a stale recording), not a finding that fails the check.
    """

    file: str
    what: str
    interaction: int | None = None
    warning: bool = False

    def line(self) -> str:
        """``FILE: interaction N: what``, ``FILE: what`` or ``FILE: warning: what``."""
        where = f"{self.file}: interaction {self.interaction}" if self.interaction is not None else self.file
        return f"{where}: {'warning: ' if self.warning else ''}{self.what}"


def cassette_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The cassette files named: a file as given, a directory's ``*.yaml`` / ``*.yml`` (recursively,
    dot files left out), in order, each once.

    Raises:
        ConfigError: a path does not exist.
    """
    out: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for pattern in ("*.yaml", "*.yml") for p in path.rglob(pattern)
                     if not any(part.startswith(".") for part in p.relative_to(path).parts)]
            out.update(dict.fromkeys(sorted(found)))
        elif path.exists():
            out[path] = None
        else:
            raise ConfigError(f"{path}: no such file or directory")
    return list(out)


def check_paths(
    paths: Iterable[str | os.PathLike[str]], *, max_size: int = MAX_CHECK_SIZE, max_age: float | None = None,
    now: datetime | None = None,
) -> list[Finding]:
    """Check every cassette file under ``paths`` (see :func:`cassette_files`).

    Args:
        paths: files and directories.
        max_size: largest file, in bytes.
        max_age: oldest ``recorded_at`` accepted without a warning, in seconds; None: no age check.
        now: the time ages are counted to (default: now, UTC).

    Returns:
        The findings and warnings, file by file.

    Raises:
        ConfigError: a path does not exist.
    """
    out: list[Finding] = []
    for file in cassette_files(paths):
        out.extend(check_file(file, max_size=max_size, max_age=max_age, now=now))
    return out


def check_file(file: Path, *, max_size: int = MAX_CHECK_SIZE, max_age: float | None = None,
               now: datetime | None = None) -> list[Finding]:
    """The findings of one cassette file (see :func:`check_paths`)."""
    name = str(file)
    try:
        size = file.stat().st_size
    except OSError as exc:
        return [Finding(name, f"cannot be read: {exc.strerror}")]
    if size > max_size:  # not read: its size alone fails the check
        return [Finding(name, f"{size} bytes, over the --max-size of {max_size} bytes (not read further)")]
    try:
        cassette = load(file, limit=min(max_size, MAX_CASSETTE_FILE))
    except CassetteError as exc:
        what = str(exc).removeprefix(f"{name}: ")
        return [Finding(name, f"not a loadable cassette: {what}")]
    return check_cassette(cassette, name, max_age=max_age, now=now)


def check_cassette(cassette: Cassette, file: str, *, max_age: float | None = None,
                   now: datetime | None = None) -> list[Finding]:
    """Secrets and age of a loaded cassette (``file`` names it in the findings)."""
    out = [Finding(file, what, index) for index, inter in enumerate(cassette.interactions)
           for what in _secrets(inter)]
    out += [Finding(file, f"response body not recorded ({redacted(inter.response.body_not_recorded)}): a replay "
                          "answers 500 ssemock_body_not_recorded; record it again", index)
            for index, inter in enumerate(cassette.interactions) if inter.response.body_not_recorded is not None]
    try:
        when = recorded_at(cassette)
    except ValueError as exc:
        return [*out, Finding(file, str(exc))]
    if max_age is not None:
        days = max_age / _DAY
        if when is None:
            out.append(Finding(file, f"no provenance.recorded_at: its age is unknown (--max-age {days:g} days)",
                               warning=True))
        else:
            age = ((now or datetime.now(UTC)) - when).total_seconds()
            if age > max_age:
                out.append(Finding(file, f"recorded {when.date().isoformat()}, {age / _DAY:.0f} days ago: "
                                         f"older than --max-age {days:g} days; record it again", warning=True))
    return out


def recorded_at(cassette: Cassette) -> datetime | None:
    """``provenance.recorded_at`` as an aware UTC datetime (a time without zone is taken as UTC), or None.

    Raises:
        ValueError: it is there but not an ISO 8601 date and time.
    """
    value: Any = cassette.provenance.get("recorded_at")
    if value is None:
        return None
    try:
        when = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"provenance.recorded_at: expected an ISO 8601 date and time, got {short_repr(value)}") \
            from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def _secrets(inter: Interaction) -> Iterator[str]:
    """What the recorder would have removed from one interaction, one line per place."""
    req, resp = inter.request, inter.response
    for kind, pairs, listed in (("query parameter", req.query, _FILTER.secret_query_params),
                                ("request header", req.headers, _FILTER.secret_request_headers),
                                ("response header", resp.headers, _FILTER.secret_response_headers)):
        for key, value in pairs:
            if _FILTER.is_secret_name(key, listed, header=kind != "query parameter"):
                yield f"{kind} {short_repr(key)}: a secret name (the recorder drops it)"
            elif rules := _rules(value.encode("utf-8", "surrogatepass")):
                yield f"{kind} {short_repr(key)}: {rules}"
    places = [("request path", req.path.encode("utf-8", "surrogatepass")), ("request body", req.body or b"")]
    body = resp.body
    encoding = resp.header("content-encoding")
    if encoding and encoding.strip().lower() not in ("identity", ""):
        plain, error = decode_lenient(body, encoding, complete=resp.end.how == "clean")
        if error is not None:
            yield f"response body: {error} (checked as far as it decodes, and as stored)"
        places.append(("response body (stored encoded)", body))
        body = plain
    places.append(("response body", body))
    if resp.body_not_recorded is not None:
        places.append(("body_not_recorded", resp.body_not_recorded.encode("utf-8", "surrogatepass")))
    for place, data in places:
        if rules := _rules(data):
            yield f"{place}: {rules}"


def _rules(data: bytes) -> str:
    """``"2 secrets (jwt, openai-api-key)"`` for what the scanner finds in ``data``; ``""`` for none."""
    if not data:
        return ""
    found = Counter(hit.rule for hit in _FILTER.scan(data))
    total = sum(found.values())
    if not total:
        return ""
    return f"{total} secret{'s' if total > 1 else ''} ({', '.join(sorted(found))})"
