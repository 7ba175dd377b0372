"""TreeGeometry: depths, lowest common ancestors and the same_subtree prefix check."""

from __future__ import annotations

from placement_wsgi.candidates.subtree import TreeGeometry

#      1            10
#    /   \           |
#   2     3         11
#  / \     \
# 4   5     6
PARENT_OF = {1: None, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 10: None, 11: 10}
ROOT_OF = {provider: (10 if provider >= 10 else 1) for provider in PARENT_OF}


def geometry() -> TreeGeometry:
    return TreeGeometry(PARENT_OF, ROOT_OF)


def test_depth_counts_the_edges_to_the_root() -> None:
    tree = geometry()
    assert [tree.depth_of(provider) for provider in (1, 2, 4, 6, 10, 11)] == [0, 1, 2, 2, 0, 1]


def test_lowest_common_ancestor_of_one_tree() -> None:
    tree = geometry()
    assert tree.lowest_common_ancestor([4, 5]) == 2
    assert tree.lowest_common_ancestor([4, 6]) == 1
    assert tree.lowest_common_ancestor([5, 2]) == 2
    assert tree.lowest_common_ancestor([6]) == 6
    assert tree.lowest_common_ancestor([4, 5, 6]) == 1


def test_providers_of_two_trees_have_none() -> None:
    assert geometry().lowest_common_ancestor([4, 11]) is None


def test_still_possible_with_fewer_than_two_chosen() -> None:
    assert geometry().still_possible([0, 1], [4, None], [True, False], [[4], [99]])


def test_still_possible_when_the_ancestor_is_chosen() -> None:
    assert geometry().still_possible([0, 1], [2, 4], [True, True], [[2], [4]])


def test_an_open_slot_must_be_able_to_supply_an_ancestor() -> None:
    tree = geometry()
    chosen, assigned = [4, 5, None], [True, True, False]
    # the lowest common ancestor of 4 and 5 is 2: slot 2 may still supply 2 or 1
    assert tree.still_possible([0, 1, 2], chosen, assigned, [[4], [5], [3, 1]])
    assert not tree.still_possible([0, 1, 2], chosen, assigned, [[4], [5], [3, 6]])


def test_chosen_providers_of_different_trees_are_never_possible() -> None:
    assert not geometry().still_possible([0, 1], [4, 11], [True, True], [[4], [11]])
