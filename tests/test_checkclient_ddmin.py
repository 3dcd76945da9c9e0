"""ddmin (Zeller and Hildebrandt 2002): the subset it finds fails, is 1-minimal, and is exactly the needed set
when failing means holding all of it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ssemock.checkclient.ddmin import ddmin

OFFSETS = st.lists(st.integers(1, 10_000), min_size=1, max_size=60, unique=True).map(sorted)


@given(st.data())
def test_failing_iff_all_of_a_set_is_held_gives_that_set(data) -> None:
    items = data.draw(OFFSETS)
    needed = set(data.draw(st.lists(st.sampled_from(items), min_size=1, unique=True)))
    asked: list[tuple[int, ...]] = []

    def fails(subset: tuple[int, ...]) -> bool:
        asked.append(subset)
        return needed <= set(subset)

    found, stopped = ddmin(items, fails)
    assert found == tuple(x for x in items if x in needed) and not stopped
    assert all(subset and set(subset) <= set(items) for subset in asked)
    assert ddmin(items, fails) == (found, False)  # the same answers, the same search


@given(st.data())
def test_the_result_fails_and_is_one_minimal_for_any_predicate(data) -> None:
    items = tuple(data.draw(OFFSETS))
    # an arbitrary (not monotone) set of failing subsets, the whole input among them
    failing = {items} | {
        frozenset(s) for s in data.draw(st.lists(st.lists(st.sampled_from(items), min_size=1), max_size=30))
    }

    def fails(subset: tuple[int, ...]) -> bool:
        return subset == items or frozenset(subset) in failing

    found, stopped = ddmin(items, fails)
    assert not stopped and (found == items or frozenset(found) in failing)
    if len(found) > 1:
        assert not any(fails(found[:i] + found[i + 1 :]) for i in range(len(found)))


def test_one_needed_offset_among_many_takes_a_few_tries_per_halving() -> None:
    items = list(range(1, 355))
    runs = 0

    def fails(subset: tuple[int, ...]) -> bool:
        nonlocal runs
        runs += 1
        return 300 in subset

    assert ddmin(items, fails) == ((300,), False)
    assert runs <= 2 * 9  # two halves tried at most per halving, ceil(log2(354)) = 9 halvings


def test_out_of_time_stops_with_the_smallest_failing_set_so_far() -> None:
    calls = 0

    def out_of_time() -> bool:
        return calls >= 3

    def fails(subset: tuple[int, ...]) -> bool:
        nonlocal calls
        calls += 1
        return 7 in subset

    found, stopped = ddmin(list(range(16)), fails, out_of_time)
    # three answers: 0..7 fails (16 -> 8), 0..3 passes, 4..7 fails (8 -> 4)
    assert (found, stopped) == ((4, 5, 6, 7), True)
    assert ddmin([5], fails) == ((5,), False)  # one item: nothing to ask
