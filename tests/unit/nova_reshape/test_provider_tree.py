"""ProviderTree: structure, lookups, snapshots, generations, locking."""

from __future__ import annotations

import copy
import pickle
import threading
import uuid

import pytest

from nova_reshape import provider_tree as provider_tree_module
from nova_reshape.provider_tree import ProviderTree

R = "11111111-1111-1111-1111-111111111111"
G1 = "22222222-2222-2222-2222-222222222222"
G2 = "33333333-3333-3333-3333-333333333333"
S = "44444444-4444-4444-4444-444444444444"
VGPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1,
        "allocation_ratio": 1.0}


@pytest.fixture
def tree() -> ProviderTree:
    """The worked example: cmp-07 with two GPU children."""
    tree = ProviderTree()
    tree.new_root("cmp-07", R, generation=41)
    tree.new_child("cmp-07_pci_0000_3b_00_0", "cmp-07", uuid=G1)
    tree.new_child("cmp-07_pci_0000_af_00_0", R, uuid=G2)
    return tree


class TestStructure:
    def test_uuids_are_top_down_preorder(self, tree):
        assert tree.get_provider_uuids() == [R, G1, G2]
        assert tree.get_provider_uuids("cmp-07_pci_0000_af_00_0") == [G2]

    def test_lookup_finds_the_first_match_top_down(self, tree):
        # A name is found where the top-down walk meets it first; a child's uuid
        # before a deeper provider of an elder sibling named like it.
        first = tree.new_child("twin", G1, uuid=str(uuid.uuid4()))
        tree.new_child("twin", G2, uuid=str(uuid.uuid4()))
        assert tree.data("twin").uuid == first
        tree.new_child(G2, G1, uuid=str(uuid.uuid4()))
        assert tree.data(G2).parent_uuid == R
        assert tree.exists("twin") and not tree.exists("nowhere")

    def test_identity_is_what_data_says_of_the_provider(self, tree):
        for key in ("cmp-07", R, "cmp-07_pci_0000_af_00_0", G1):
            data = tree.data(key)
            assert tree.identity(key) == (data.uuid, data.name, data.parent_uuid)
        with pytest.raises(ValueError):
            tree.identity("nowhere")

    def test_preorder_descends_before_siblings(self, tree):
        grandchild = tree.new_child("deep", G1)
        assert tree.get_provider_uuids() == [R, G1, grandchild, G2]

    def test_uuids_in_tree_climb_to_the_root(self, tree):
        assert tree.get_provider_uuids_in_tree(G2) == [R, G1, G2]
        tree.new_root("other", S)
        assert tree.get_provider_uuids_in_tree("other") == [S]
        assert tree.get_provider_uuids() == [R, G1, G2, S]

    def test_roots_property_lists_every_root(self, tree):
        tree.new_root("sharing", S)
        assert [root.uuid for root in tree.roots] == [R, S]

    def test_remove_takes_the_subtree(self, tree):
        tree.remove("cmp-07")
        assert tree.get_provider_uuids() == []
        assert not tree.exists(G1)
        assert not tree.exists("cmp-07")

    def test_remove_child_keeps_parent_and_sibling(self, tree):
        tree.remove(G1)
        assert tree.get_provider_uuids() == [R, G2]

    def test_remove_missing_is_value_error(self, tree):
        with pytest.raises(ValueError):
            tree.remove("nope")

    def test_new_root_rejects_existing_uuid_not_name(self, tree):
        with pytest.raises(ValueError, match="already exists"):
            tree.new_root("another-name", R)
        # Names are not checked for roots.
        other = str(uuid.uuid4())
        assert tree.new_root("cmp-07", other) == other

    def test_new_child_checks_uuid_when_given(self, tree):
        with pytest.raises(ValueError, match="already exists"):
            tree.new_child("fresh-name", R, uuid=G1)
        # With a uuid, the name is not checked.
        fresh = str(uuid.uuid4())
        assert tree.new_child("cmp-07_pci_0000_3b_00_0", R, uuid=fresh) == fresh

    def test_new_child_checks_name_without_uuid(self, tree):
        with pytest.raises(ValueError, match="already exists"):
            tree.new_child("cmp-07_pci_0000_3b_00_0", R)

    def test_new_child_generates_uuid(self, tree):
        made = tree.new_child("vf", G1)
        assert uuid.UUID(made)
        assert tree.data(made).parent_uuid == G1

    def test_new_child_needs_parent(self, tree):
        with pytest.raises(ValueError):
            tree.new_child("orphan", "no-such-parent")

    def test_lookup_by_name_or_uuid_and_missing(self, tree):
        assert tree.data("cmp-07_pci_0000_af_00_0").uuid == G2
        assert tree.data(G2).name == "cmp-07_pci_0000_af_00_0"
        assert tree.exists(G1) and tree.exists("cmp-07")
        assert not tree.exists("missing")
        with pytest.raises(ValueError):
            tree.data("missing")


class TestSnapshots:
    def test_data_fields(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU}, generation=3)
        tree.update_traits(G1, ["CUSTOM_A"])
        tree.update_aggregates(G1, ["agg"])
        data = tree.data(G1)
        assert data._fields == ("uuid", "name", "generation", "parent_uuid", "inventory",
                                "traits", "aggregates", "resources")
        assert (data.uuid, data.generation, data.parent_uuid) == (G1, 3, R)
        assert data.inventory == {"VGPU": VGPU}
        assert data.traits == {"CUSTOM_A"} and data.aggregates == {"agg"}

    def test_mutating_snapshot_leaves_tree_alone(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU})
        tree.update_traits(G1, ["CUSTOM_A"])
        tree.update_aggregates(G1, ["agg"])
        tree.update_resources(G1, {"VGPU": {"r1"}})
        data = tree.data(G1)
        data.inventory["VGPU"]["total"] = 99
        data.inventory["VCPU"] = {"total": 1}
        data.traits.add("CUSTOM_B")
        data.aggregates.clear()
        data.resources["VGPU"].add("r2")
        again = tree.data(G1)
        assert again.inventory == {"VGPU": VGPU}
        assert again.traits == {"CUSTOM_A"}
        assert again.aggregates == {"agg"}
        assert again.resources == {"VGPU": {"r1"}}

    def test_update_inventory_copies_its_argument(self, tree):
        inventory = {"VGPU": dict(VGPU)}
        tree.update_inventory(G1, inventory)
        inventory["VGPU"]["total"] = 1
        assert tree.data(G1).inventory["VGPU"]["total"] == 8

    def test_update_inventory_copies_nested_values_and_keeps_record_types(self, tree):
        class Record(dict):
            pass

        nested = {"total": 8, "extra": [1, 2]}
        tree.update_inventory(G1, {"VGPU": nested, "PGPU": Record(total=2)})
        nested["extra"].append(3)
        stored = tree._find(G1).inventory
        assert stored["VGPU"]["extra"] == [1, 2]
        assert type(stored["PGPU"]) is Record and stored["PGPU"] == {"total": 2}


class TestInventory:
    def test_has_inventory(self, tree):
        assert not tree.has_inventory(G1)
        tree.update_inventory(G1, {"VGPU": VGPU})
        assert tree.has_inventory(G1)

    def test_missing_fields_in_new_record_are_not_a_change(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU})
        assert not tree.has_inventory_changed(G1, {"VGPU": {"total": 8}})

    def test_changed_value_field_or_class(self, tree):
        tree.update_inventory(G1, {"VGPU": {"total": 8}})
        assert tree.has_inventory_changed(G1, {"VGPU": {"total": 4}})
        assert tree.has_inventory_changed(G1, {"VGPU": {"total": 8, "reserved": 0}})
        assert tree.has_inventory_changed(G1, {"VGPU": {"total": 8}, "VCPU": {"total": 1}})
        assert tree.has_inventory_changed(G1, {})

    def test_generation_set_even_when_unchanged(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU}, generation=1)
        assert tree.update_inventory(G1, {"VGPU": {"total": 8}}, generation=7) is False
        assert tree.data(G1).generation == 7
        # The partial record did not replace the full one.
        assert tree.data(G1).inventory == {"VGPU": VGPU}

    def test_generation_none_keeps_generation(self, tree):
        assert tree.update_inventory(R, {"VCPU": {"total": 4}}) is True
        assert tree.data(R).generation == 41

    def test_has_sharing_provider_needs_inventory_and_trait(self, tree):
        tree.new_root("shared-disk", S)
        tree.update_inventory(S, {"DISK_GB": {"total": 100}})
        assert not tree.has_sharing_provider("DISK_GB")
        tree.add_traits(S, "MISC_SHARES_VIA_AGGREGATE")
        assert tree.has_sharing_provider("DISK_GB")
        assert not tree.has_sharing_provider("VGPU")


class TestTraitsAndAggregates:
    def test_has_traits_is_all_of(self, tree):
        tree.update_traits(R, ["A", "B"])
        assert tree.has_traits(R, ["A"])
        assert tree.has_traits(R, ["A", "B"])
        assert not tree.has_traits(R, ["A", "C"])
        assert tree.has_traits(R, [])

    def test_update_traits_generation_and_change(self, tree):
        assert tree.update_traits(R, ["A"], generation=50) is True
        assert tree.update_traits(R, ["A"], generation=51) is False
        assert tree.data(R).generation == 51
        assert not tree.have_traits_changed(R, ["A"])
        assert tree.have_traits_changed(R, ["A", "B"])

    def test_add_remove_traits_never_touch_generation(self, tree):
        tree.add_traits(R, "A", "B")
        tree.remove_traits(R, "A", "Z")
        tree.add_traits(R)
        tree.remove_traits(R)
        assert tree.data(R).traits == {"B"}
        assert tree.data(R).generation == 41

    def test_aggregates(self, tree):
        assert tree.in_aggregates(R, [])
        assert tree.update_aggregates(R, ["a1", "a2"], generation=42) is True
        assert tree.in_aggregates(R, ["a1"])
        assert not tree.in_aggregates(R, ["a1", "a3"])
        assert not tree.have_aggregates_changed(R, ["a2", "a1"])
        assert tree.update_aggregates(R, ["a1", "a2"]) is False
        tree.add_aggregates(R, "a3")
        tree.remove_aggregates(R, "a1")
        assert tree.data(R).aggregates == {"a2", "a3"}
        assert tree.data(R).generation == 42

    def test_update_resources(self, tree):
        assert tree.update_resources(G1, {"VGPU": {"dev1"}}) is True
        assert tree.update_resources(G1, {"VGPU": {"dev1"}}) is False
        assert tree.data(G1).resources == {"VGPU": {"dev1"}}

    def test_missing_provider_raises_for_every_accessor(self, tree):
        for call in (lambda: tree.has_inventory("x"),
                     lambda: tree.update_inventory("x", {}),
                     lambda: tree.update_traits("x", []),
                     lambda: tree.add_traits("x", "A"),
                     lambda: tree.update_aggregates("x", []),
                     lambda: tree.get_provider_uuids("x"),
                     lambda: tree.get_provider_uuids_in_tree("x")):
            with pytest.raises(ValueError):
                call()


class TestPopulateFromIterable:
    def test_parents_inserted_before_children_whatever_the_order(self):
        tree = ProviderTree()
        tree.populate_from_iterable([
            {"uuid": G2, "name": "g2", "generation": 1, "parent_provider_uuid": G1},
            {"uuid": G1, "name": "g1", "generation": 2, "parent_provider_uuid": R},
            {"uuid": R, "name": "r", "generation": 3, "parent_provider_uuid": None},
        ])
        assert tree.get_provider_uuids() == [R, G1, G2]
        assert tree.data(G2).generation == 1

    def test_missing_parent_changes_nothing(self, tree):
        before = tree.get_provider_uuids()
        with pytest.raises(ValueError, match="parents were not found"):
            tree.populate_from_iterable([
                {"uuid": S, "name": "s", "generation": 0, "parent_provider_uuid": None},
                {"uuid": "c", "name": "c", "generation": 0, "parent_provider_uuid": "nope"},
            ])
        assert tree.get_provider_uuids() == before
        assert not tree.exists(S)

    def test_replaced_provider_is_empty_and_loses_unlisted_children(self, tree):
        tree.update_inventory(R, {"VCPU": {"total": 4}})
        tree.update_traits(R, ["A"])
        tree.populate_from_iterable([
            {"uuid": R, "name": "cmp-07", "generation": 50, "parent_provider_uuid": None},
            {"uuid": G2, "name": "g2-new", "generation": 1, "parent_provider_uuid": R},
        ])
        assert tree.get_provider_uuids() == [R, G2]
        data = tree.data(R)
        assert (data.generation, data.inventory, data.traits) == (50, {}, set())
        assert tree.data(G2).name == "g2-new"

    def test_absent_providers_untouched_and_empty_is_noop(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU})
        tree.populate_from_iterable([])
        tree.populate_from_iterable([
            {"uuid": S, "name": "s", "generation": 0, "parent_provider_uuid": None}])
        assert tree.get_provider_uuids() == [R, G1, G2, S]
        assert tree.data(G1).inventory == {"VGPU": VGPU}

    def test_child_of_existing_parent(self, tree):
        tree.populate_from_iterable([
            {"uuid": S, "name": "vf", "generation": 0, "parent_provider_uuid": G1}])
        assert tree.get_provider_uuids() == [R, G1, S, G2]


class TestCopyAndLocking:
    def test_deepcopy_is_independent_and_shares_the_lock(self, tree):
        tree.update_inventory(G1, {"VGPU": VGPU})
        clone = copy.deepcopy(tree)
        clone.update_inventory(G1, {"VGPU": {"total": 1}})
        clone.remove(G2)
        assert tree.data(G1).inventory == {"VGPU": VGPU}
        assert tree.get_provider_uuids() == [R, G1, G2]
        assert clone.lock is tree.lock is provider_tree_module._LOCK

    def test_deepcopy_copies_every_field_and_leaves_no_shared_container(self, tree):
        tree.update_inventory(G1, {"VGPU": {**VGPU, "reserved": 1}}, generation=4)
        tree.update_traits(G1, ["CUSTOM_A"])
        tree.update_aggregates(R, ["agg-1"])
        clone = copy.deepcopy(tree)
        for rp in (R, G1, G2):
            assert clone.data(rp) == tree.data(rp)
        assert clone.get_provider_uuids() == tree.get_provider_uuids()
        assert clone.data("cmp-07").uuid == R  # found by name too
        mine, theirs = tree._find(G1), clone._find(G1)
        assert mine.inventory["VGPU"] is not theirs.inventory["VGPU"]
        assert mine.traits is not theirs.traits and mine.children is not theirs.children

    def test_pickle_round_trip(self, tree):
        restored = pickle.loads(pickle.dumps(tree))
        assert restored.get_provider_uuids() == [R, G1, G2]
        assert restored.lock is provider_tree_module._LOCK

    def test_public_methods_wait_for_the_shared_lock(self, tree):
        other = ProviderTree()
        other.new_root("x", S)
        results = []
        with tree.lock:
            # Any tree's method must block while the process-wide lock is held.
            worker = threading.Thread(target=lambda: results.append(other.exists("x")))
            worker.start()
            worker.join(0.2)
            assert worker.is_alive()
            assert results == []
        worker.join(5)
        assert results == [True]

    def test_concurrent_children(self):
        tree = ProviderTree()
        tree.new_root("root", R)

        def add(start: int) -> None:
            for index in range(start, start + 50):
                tree.new_child(f"child-{index}", R)

        workers = [threading.Thread(target=add, args=(n * 50,)) for n in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert len(tree.get_provider_uuids()) == 201
