"""The set helpers of the combination step."""

from __future__ import annotations

from placement_wsgi.candidates.sets import has_matching, meeting_every_group, union


def test_union_is_a_new_set() -> None:
    first = {1, 2}
    result = union([first, {2, 3}, set()])
    assert result == {1, 2, 3}
    assert result is not first
    assert union([]) == set()


def test_meeting_every_group_intersects_the_any_of_unions() -> None:
    index = {"A": {1, 2}, "B": {3}, "C": {2, 3}}
    assert meeting_every_group(index, [["A", "B"], ["C"]]) == {2, 3}
    assert meeting_every_group(index, [["A"], ["B"]]) == set()


def test_a_key_missing_from_the_index_has_no_members() -> None:
    assert meeting_every_group({"A": {1}}, [["A", "X"], ["X"]]) == set()


def test_no_groups_means_no_condition() -> None:
    assert meeting_every_group({"A": {1}}, []) is None


def test_matching_gives_every_slot_its_own_provider() -> None:
    assert has_matching([[1, 2], [1]])           # slot 1 takes 1, slot 0 moves to 2
    assert has_matching([[1, 2, 3], [1, 2], [2]])
    assert not has_matching([[1], [1]])
    assert not has_matching([[1, 2], [1, 2], [2, 1]])
    assert has_matching([])
