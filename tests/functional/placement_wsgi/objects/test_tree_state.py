"""Whole trees read in batches, in the API's shapes (objects/tree_state.py)."""

from __future__ import annotations

import pytest

from placement_wsgi.objects import trait as trait_obj
from placement_wsgi.objects import tree_state
from tests.fixtures import seed


def test_each_root_gives_its_tree_in_the_order_asked(database):
    first = seed.add_provider(database, "first")
    child = seed.add_provider(database, "first-gpu", parent_uuid=first)
    second = seed.add_provider(database, "second")
    seed.add_inventory(database, child, "VGPU", 4)
    trait_obj.set_provider_traits(database, child, ["HW_CPU_X86_AVX2"], 0)  # seeding: no bump

    trees = list(tree_state.read_trees(database, [second, child, first], batch_size=1))
    assert [tree.root for tree in trees] == [second, first]  # a child is not a root
    tree = trees[1]
    assert [(p["name"], p["parent_provider_uuid"], p["root_provider_uuid"])
            for p in tree.providers] == [("first", None, first), ("first-gpu", first, first)]
    assert tree.inventories[child]["VGPU"]["total"] == 4
    assert tree.traits[child] == ["HW_CPU_X86_AVX2"]
    assert tree.sharing == [] and tree.allocations == {}
    assert [tree.root for tree in tree_state.read_trees(database)] == [first, second]


def test_a_batch_holds_at_least_one_tree(database):
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        next(tree_state.read_trees(database, batch_size=0))


def test_providers_are_listed_by_uuid_or_name_with_their_roots(database, monkeypatch):
    first = seed.add_provider(database, "first")
    child = seed.add_provider(database, "first-gpu", parent_uuid=first)
    second = seed.add_provider(database, "second")
    seed.add_provider(database, "third")
    monkeypatch.setattr(tree_state, "LOOKUP_CHUNK", 1)  # several statements, one answer
    listed = tree_state.listed_providers(database, [child, "no-such-uuid"],
                                         ["second", "no-such-name"])
    assert sorted((p["name"], p["uuid"], p["parent_provider_uuid"], p["root_provider_uuid"])
                  for p in listed) == [("first", first, None, first),  # the child's root
                                       ("first-gpu", child, first, first),
                                       ("second", second, None, second)]
    assert tree_state.listed_providers(database, [], []) == []
