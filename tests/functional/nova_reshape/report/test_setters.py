"""The report client's per-provider setters (report/setters.py) against this project's
Placement: inventory, traits and aggregates, their generations and conflicts. Over HTTP and
PlacementDirect on every engine, as test_client.py.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from tests.functional.nova_reshape.report.helpers import (
    CHILD,
    CN,
    MEM,
    VCPU,
    seed_vcpu_on_root,
    tree_with_children,
)


def test_clearing_inventory_is_a_put_of_nothing(report, placement, seed):
    tree = tree_with_children(report)
    report.update_from_provider_tree(None, tree)
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    tree.update_inventory(CHILD, {})
    placement.reset()
    report.update_from_provider_tree(None, tree)
    assert ("PUT", f"/resource_providers/{CHILD}/inventories") in placement.writes()
    assert ("DELETE", f"/resource_providers/{CHILD}/inventories") not in placement.writes()
    assert seed.inventories(CHILD)["inventories"] == {}


def test_inventory_generation_conflict_clears_that_tree(report, seed):
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    other = str(uuid.uuid4())
    report.get_provider_tree_and_ensure_root(None, other, name="other-node")
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    tree.update_inventory(CN, {"VCPU": VCPU})
    seed.traits(CN, ["CUSTOM_SECOND_WRITER"])

    with pytest.raises(exception.ResourceProviderUpdateConflict) as caught:
        report.update_from_provider_tree(None, tree)

    assert caught.value.kwargs["uuid"] == CN
    assert not report.cache.tree.exists(CN)
    assert report.cache.tree.exists(other)  # only the conflicting tree is dropped
    # Re-driving from a fresh read succeeds and keeps the other writer's trait.
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    assert tree.data(CN).traits == {"CUSTOM_SECOND_WRITER"}
    tree.update_inventory(CN, {"VCPU": VCPU})
    report.update_from_provider_tree(None, tree)
    assert seed.inventories(CN)["inventories"]["VCPU"] == VCPU


def test_removing_used_inventory_is_inventory_in_use(report, seed):
    seed_vcpu_on_root(seed)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.update_inventory(CN, {"MEMORY_MB": MEM})
    with pytest.raises(exception.InventoryInUse):
        report.update_from_provider_tree(None, tree)


def test_setters_create_custom_classes_and_traits(report, placement, seed):
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    report.set_inventory_for_provider(None, CN, {"CUSTOM_MAGIC": {"total": 3}})
    report.set_traits_for_provider(None, CN, ["CUSTOM_SHINY", "HW_CPU_X86_AVX2"])
    assert ("PUT", "/resource_classes/CUSTOM_MAGIC", "1.7") in [
        (m, u, v) for m, u, v, _ in placement.calls]
    assert ("PUT", "/traits/CUSTOM_SHINY") in placement.writes()
    assert ("PUT", "/traits/HW_CPU_X86_AVX2") not in placement.writes()
    assert seed.inventories(CN)["inventories"]["CUSTOM_MAGIC"]["total"] == 3
    info = report.get_provider_traits(None, CN)
    assert info.traits == {"CUSTOM_SHINY", "HW_CPU_X86_AVX2"}
    assert info.generation == report.cache.tree.data(CN).generation == 2


def test_set_aggregates(report, placement, seed):
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    agg = str(uuid.uuid4())
    report.set_aggregates_for_provider(None, CN, [agg])
    assert report.cache.tree.data(CN).aggregates == {agg}
    placement.reset()
    report.set_aggregates_for_provider(None, CN, [agg])  # unchanged: nothing sent
    assert placement.calls == []
    with pytest.raises(ValueError):
        report.set_aggregates_for_provider(None, CN, [], use_cache=False)
    # A stale generation: conflict, and the provider leaves the cache.
    with pytest.raises(exception.ResourceProviderUpdateConflict):
        report.set_aggregates_for_provider(None, CN, [], generation=0)
    assert not report.cache.tree.exists(CN)
    # use_cache=False works for a provider the cache does not hold.
    report.set_aggregates_for_provider(None, CN, [], use_cache=False,
                                       generation=seed.generation(CN))
    assert report.providers.get_provider_aggregates(None, CN).aggregates == set()
