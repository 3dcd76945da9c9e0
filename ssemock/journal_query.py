"""Journal queries: ``GET /_ssemock/requests?path=…&cassette=…&outcome=…&since=SEQ&limit=N`` and
``MockServer.requests.filter(...)``, one set of filters (:class:`JournalQuery`) for both.

Each filter narrows the journal (entries of :meth:`ssemock.journal.JournalEntry.to_json`); all given
must hold:

* ``path``: the journal's ``path`` (the provider path, ``/_ssemock/c/`` and ``/_ssemock/s/`` prefixes
  removed, percent-decoded) equals it; a value ending in ``*`` keeps the paths that begin with the rest
  (``/v1/*``); at most :data:`MAX_TEXT` characters;
* ``cassette``: the cassette that answered has exactly this name;
* ``outcome``: one of :data:`OUTCOMES` (the journal's ``outcome``; ``in_progress`` for an answer not
  ended yet), or several, comma-separated (``cut,reset``);
* ``since``: the entries with ``seq`` greater than it (exclusive: pass the last ``seq`` read to get what
  came after); a whole number from 0; under ``--workers`` each worker counts ``seq`` on its own, so it
  is compared with each worker's ``seq``;
* ``limit``: the first N entries that pass the other filters, oldest first, 1 ≤ N ≤ :data:`MAX_LIMIT`;
  default: all of them (the journal keeps ``journal_capacity`` entries, 1,000 by default, per process).

Over HTTP a missing or malformed value, a parameter that is none of these, or one given twice
(``outcome=cut&outcome=reset``: write ``outcome=cut,reset``), is answered ``400 ssemock_bad_query`` naming
the parameter (:class:`~ssemock.refusals.BadQueryError`); so is ``DELETE /_ssemock/requests`` with any
parameter (it clears the whole journal: :func:`check_clear`). In Python the same mistakes raise
``ValueError`` (a :class:`~ssemock.refusals.BadQueryError`) or ``TypeError`` (a wrong type).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from multidict import MultiMapping

from .limits import MAX_ITEMS
from .refusals import BadQueryError

__all__ = ["MAX_LIMIT", "MAX_TEXT", "OUTCOMES", "PARAMETERS", "Journal", "JournalQuery", "check_clear"]

OUTCOMES = ("complete", "cut", "reset", "client_gone", "refused", "stopped", "error", "in_progress")
"""The journal's outcomes (:mod:`ssemock.journal`), and ``in_progress`` for an answer still being sent."""
PARAMETERS = ("path", "cassette", "outcome", "since", "limit")
MAX_LIMIT = MAX_ITEMS
"""The largest ``limit`` (1,000,000)."""
MAX_TEXT = 2048
"""Characters a ``path`` or ``cassette`` filter may hold."""
_MAX_DIGITS = 18  # since / limit: a whole number of at most this many digits
_BOUNDS = {"since": (0, 10**_MAX_DIGITS - 1), "limit": (1, MAX_LIMIT)}


@dataclass(frozen=True)
class JournalQuery:
    """Filters over journal entries (see the module docstring); None: that filter is not applied.

    Raises:
        BadQueryError: (a ``ValueError``) a value out of its bounds, naming the parameter.
        TypeError: a value of the wrong type.
    """

    path: str | None = None
    cassette: str | None = None
    outcome: tuple[str, ...] | None = None
    since: int | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        for name in ("path", "cassette"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"journal filter {name}: expected a string, got {type(value).__name__}")
            if value is not None and not 0 < len(value) <= MAX_TEXT:
                raise BadQueryError(name, f"expected 1 to {MAX_TEXT} characters, got {len(value)}")
        if self.outcome is not None:
            wrong = next((o for o in self.outcome if not isinstance(o, str)), None)
            if wrong is not None:
                raise TypeError(f"journal filter outcome: expected names (strings), got {type(wrong).__name__}")
            unknown = [o for o in self.outcome if o not in OUTCOMES]
            if unknown or not self.outcome:
                raise BadQueryError(
                    "outcome",
                    f"{(unknown or [''])[0][:40]!r} is not an outcome; expected "
                    f"one or more of {', '.join(OUTCOMES)}, comma-separated",
                )
        for name, (low, high) in _BOUNDS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"journal filter {name}: expected an int, got {type(value).__name__}")
            if not low <= value <= high:
                raise BadQueryError(name, f"expected a whole number from {low} to {high:,}, got {value}")

    @classmethod
    def of(
        cls,
        *,
        path: str | None = None,
        cassette: str | None = None,
        outcome: str | Iterable[str] | None = None,
        since: int | None = None,
        limit: int | None = None,
    ) -> JournalQuery:
        """The query of Python's keyword arguments; ``outcome`` one name, ``"a,b"`` or an iterable of names."""
        if isinstance(outcome, str):
            outcome = outcome.split(",")
        return cls(path, cassette, None if outcome is None else tuple(outcome), since, limit)

    @classmethod
    def parse(cls, query: Mapping[str, str], *, ignore: Iterable[str] = ()) -> JournalQuery:
        """The query of a URL's parameters (``request.query``, whose keys repeat as often as they are given).

        Raises:
            BadQueryError: a parameter that is none of :data:`PARAMETERS` (nor in ``ignore``), one given more
                than once, or a bad value.
        """
        ignored = set(ignore)
        for name in query:
            if name not in PARAMETERS and name not in ignored:
                raise BadQueryError(name[:40], f"no such parameter; the journal is filtered by {', '.join(PARAMETERS)}")
            if isinstance(query, MultiMapping) and len(query.getall(name)) > 1:
                raise BadQueryError(
                    name,
                    "given more than once; give each parameter once (several outcomes "
                    "go in one, comma-separated: outcome=cut,reset)",
                )
        return cls.of(
            path=query.get("path"),
            cassette=query.get("cassette"),
            outcome=query.get("outcome"),
            since=_whole(query, "since"),
            limit=_whole(query, "limit"),
        )

    def params(self) -> dict[str, str]:
        """The query as URL parameters (the inverse of :meth:`parse`)."""
        values = {
            "path": self.path,
            "cassette": self.cassette,
            "since": self.since,
            "limit": self.limit,
            "outcome": None if self.outcome is None else ",".join(self.outcome),
        }
        return {name: str(value) for name, value in values.items() if value is not None}

    def keeps(self, entry: Mapping[str, Any]) -> bool:
        """Whether ``entry`` passes every filter but ``limit``."""
        if self.path is not None:
            path = entry.get("path")
            if not isinstance(path, str):
                return False
            if self.path.endswith("*"):
                if not path.startswith(self.path[:-1]):
                    return False
            elif path != self.path:
                return False
        if self.cassette is not None and entry.get("cassette") != self.cassette:
            return False
        if self.outcome is not None and (entry.get("outcome") or "in_progress") not in self.outcome:
            return False
        return self.since is None or (entry.get("seq") or 0) > self.since

    def apply(self, entries: Iterable[Mapping[str, Any]]) -> list[Any]:
        """The entries that pass, in their order, at most ``limit`` of them."""
        kept: list[Any] = []
        for entry in entries:
            if self.limit is not None and len(kept) >= self.limit:
                break
            if self.keeps(entry):
                kept.append(entry)
        return kept


def _whole(query: Mapping[str, str], name: str) -> int | None:
    text = query.get(name)
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()):
        raise BadQueryError(name, f"expected a whole number, got {text[:40]!r}")
    if len(text) > _MAX_DIGITS:
        low, high = _BOUNDS[name]
        raise BadQueryError(name, f"expected a whole number from {low} to {high:,}, got {len(text)} digits")
    return int(text)


def check_clear(query: Mapping[str, str]) -> None:
    """Refuse any parameter of ``DELETE /_ssemock/requests``: it clears the whole journal, and a filter
    there (``?outcome=cut``) would read as clearing only what it names.

    Raises:
        BadQueryError: naming the first parameter.
    """
    for name in query:
        raise BadQueryError(
            name[:40],
            "DELETE /_ssemock/requests clears the whole journal and takes no parameters (filters apply to GET)",
        )


class Journal(list[dict[str, Any]]):
    """A copy of a journal (a list of entries, oldest first) that :meth:`filter` narrows."""

    def filter(
        self,
        *,
        path: str | None = None,
        cassette: str | None = None,
        outcome: str | Iterable[str] | None = None,
        since: int | None = None,
        limit: int | None = None,
    ) -> Journal:
        """The entries that pass the filters of the module docstring, in order (a new :class:`Journal`).

        Args:
            path: the provider path; ending in ``*``: a path prefix.
            cassette: the name of the cassette that answered.
            outcome: one of :data:`OUTCOMES`, ``"a,b"`` or an iterable of them.
            since: keep the entries with ``seq`` greater than this.
            limit: at most this many (the first ones), 1 to :data:`MAX_LIMIT`.

        Raises:
            BadQueryError: (a ``ValueError``) a value out of bounds; TypeError: a wrong type.
        """
        query = JournalQuery.of(path=path, cassette=cassette, outcome=outcome, since=since, limit=limit)
        return Journal(query.apply(self))
