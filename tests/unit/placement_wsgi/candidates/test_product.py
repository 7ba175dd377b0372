"""Small anchors as a filtered cartesian product: order, checks, size cut-off."""

from __future__ import annotations

from placement_wsgi.candidates.product import (
    SMALL_PRODUCT,
    product_candidates,
    product_size,
    search_order,
)


def _always(*_args: object) -> bool:
    return True


def _no_ancestor(_providers: list[int]) -> int | None:
    return None


def test_search_order_puts_unsuffixed_first_then_fewest_options() -> None:
    options = [[1, 2, 3], [4], [5, 6], [7], [8, 9, 10]]
    assert search_order(options, 2) == [1, 0, 3, 2, 4]


def test_product_size_stops_past_the_small_product() -> None:
    assert product_size([[1, 2], [3, 4, 5]]) == 6
    assert product_size([[1]] * 3) == 1
    assert product_size([list(range(SMALL_PRODUCT + 1)), [1, 2]]) == SMALL_PRODUCT + 1


def test_every_combination_in_slot_order() -> None:
    found = product_candidates([[1, 2], [3, 4]], 0, _always, [], _no_ancestor, _always)
    assert found == [(1, 3), (1, 4), (2, 3), (2, 4)]


def test_combinations_follow_the_search_order() -> None:
    # slot 1 has fewer options, so it varies slowest; tuples stay in slot order
    found = product_candidates([[1, 2], [3]], 0, _always, [], _no_ancestor, _always)
    assert found == [(1, 3), (2, 3)]


def test_any_of_is_judged_once_per_unsuffixed_part() -> None:
    judged: list[tuple[int, ...]] = []

    def any_of_ok(providers: tuple[int, ...]) -> bool:
        judged.append(tuple(providers))
        return 1 in providers

    found = product_candidates([[1, 2], [5, 6]], 1, any_of_ok, [], _no_ancestor, _always)
    assert found == [(1, 5), (1, 6)]
    assert sorted(judged) == [(1,), (2,)]


def test_same_subtree_needs_the_ancestor_among_the_chosen() -> None:
    def lowest(providers: list[int]) -> int | None:
        return min(providers)  # the smaller id plays the ancestor

    found = product_candidates([[1, 2], [2, 3]], 0, _always, [[0, 1]], lowest, _always)
    assert found == [(1, 2), (1, 3), (2, 2), (2, 3)]
    found = product_candidates([[1, 2], [2, 3]], 0, _always, [[0, 1]],
                               lambda providers: 0, _always)
    assert found == []


def test_unique_drops_repeats() -> None:
    seen: set[tuple[int, ...]] = set()

    def unique(candidate: tuple[int, ...]) -> bool:
        first = candidate not in seen
        seen.add(candidate)
        return first

    assert product_candidates([[1, 1], [2]], 0, _always, [], _no_ancestor, unique) == [(1, 2)]
