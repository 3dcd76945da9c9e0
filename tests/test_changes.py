"""The change record and its registry (:mod:`ssemock.changes`), and the order of stubs added at run time
(:meth:`ssemock.stubs.StubBook.add_at_run_time`): properties over any records and any sequence of changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ssemock.changes import APPLIERS, Change, Commit, apply_change, prepare_change
from ssemock.errors import ScenarioError
from ssemock.state import ServerState
from ssemock.stubs import StubBook, reply

JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
# a request body's text: any bytes, decoded as the admin routes decode them (surrogateescape)
BODY_TEXT = st.binary(max_size=200).map(lambda data: data.decode("utf-8", "surrogateescape"))


@given(
    kind=st.text(min_size=1),
    text=st.none() | BODY_TEXT,
    syntax=st.sampled_from(["yaml", "json"]),
    data=JSON_DATA,
    source=st.text(),
)
def test_a_change_crosses_processes_as_json_unchanged(
    kind: str, text: str | None, syntax: Any, data: Any, source: str
) -> None:
    change = Change(kind, text, syntax, data, source)
    sent = json.dumps(change.to_json())  # what one worker sends another (aiohttp's json=)
    assert Change.from_json(json.loads(sent)) == change


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        {"kind": 1},
        {"kind": "stubs.add", "text": 5},
        {"kind": "stubs.add", "syntax": "toml"},
        {"kind": "stubs.add", "source": None},
    ],
)
def test_anything_else_is_no_change_record(value: Any) -> None:
    with pytest.raises(ValueError, match="not a change record"):
        Change.from_json(value)


def test_a_new_kind_is_one_entry_of_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    def set_seed(state: ServerState, change: Change) -> Commit:
        seed = int(change.document(ScenarioError, 100))  # read and checked first, made by the commit

        def commit() -> dict[str, Any]:
            state.seed = seed
            return {"seed": seed}

        return commit

    state = ServerState()
    with pytest.raises(KeyError):
        apply_change(state, Change("seed.set", data=7))
    monkeypatch.setitem(APPLIERS, "seed.set", set_seed)
    assert apply_change(state, Change("seed.set", data=7)) == {"seed": 7} and state.seed == 7
    assert apply_change(state, Change("seed.set", text="8")) == {"seed": 8}  # a body, read as YAML
    commit = prepare_change(state, Change("seed.set", data=9))
    assert state.seed == 8 and commit() == {"seed": 9} and state.seed == 9


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("added"), st.integers(1, 3)),
        st.tuples(st.just("file"), st.integers(1, 3)),
        st.tuples(st.just("clear"), st.just(0)),
    ),
    max_size=12,
)


@given(operations=OPERATIONS, base=st.integers(0, 3))
def test_stubs_added_at_run_time_are_tried_first_the_latest_addition_first(
    operations: list[tuple[str, int]], base: int
) -> None:
    """The model: a list of additions (each in its own order), newest first, then the book's own stubs."""
    made = iter(range(1000))
    own = [reply(f"own {next(made)}") for _ in range(base)]
    book = StubBook(own)
    additions: list[list[Any]] = []
    for operation, count in operations:
        batch = [reply(f"stub {next(made)}") for _ in range(count)]
        if operation == "added":
            book.add_at_run_time(batch)
            additions.insert(0, batch)
        elif operation == "file":  # an inline stub of a test (StubBook.add): after the book's own
            book.add(*batch)
            own += batch
        else:
            assert book.clear_added() == sum(map(len, additions))
            additions = []
    expected = [stub for batch in additions for stub in batch] + own
    assert [id(s) for s in book.stubs] == [id(s) for s in expected]
    assert [id(s) for s in book.added] == [id(s) for s in expected[: len(expected) - len(own)]]
    assert len(book) == len(expected)
