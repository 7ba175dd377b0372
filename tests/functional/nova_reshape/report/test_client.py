"""SchedulerReportClient against this project's Placement.

Every test runs over real HTTP and through PlacementDirect (see conftest),
on every enabled engine.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from tests.functional.nova_reshape.report.helpers import (
    CHILD,
    CN,
    MEM,
    VCPU,
    seed_vcpu_on_root,
    tree_with_children,
)


def test_sync_without_allocations_creates_and_sets_everything(report, placement, seed):
    tree = tree_with_children(report)
    grandchild = tree.get_provider_uuids()[2]
    placement.reset()

    report.update_from_provider_tree(None, tree)

    writes = placement.writes()
    assert ("POST", "/reshaper") not in writes
    creates = [json for method, url, _, json in placement.calls
               if (method, url) == ("POST", "/resource_providers")]
    # Top-down: the child before the grandchild, each under its parent.
    assert [(c["uuid"], c.get("parent_provider_uuid")) for c in creates] == [
        (CHILD, CN), (grandchild, CHILD)]
    assert seed.inventories(CN)["inventories"]["VCPU"] == VCPU
    assert seed.inventories(CHILD)["inventories"]["CUSTOM_GPU"]["total"] == 2
    assert seed.inventories(grandchild)["inventories"]["VGPU"]["total"] == 4
    traits = seed.ok(seed.placement.get(f"/resource_providers/{CN}/traits",
                                        microversion="1.6"))
    assert set(traits["traits"]) == {"COMPUTE_NODE", "CUSTOM_GOLD"}
    # The cache now mirrors Placement, generations included.
    cached = report.cache.tree
    for rp in (CN, CHILD, grandchild):
        assert cached.data(rp).generation == seed.generation(rp)
    inventory_puts = [(u, v) for m, u, v, _ in placement.calls
                      if m == "PUT" and u.endswith("/inventories")]
    assert inventory_puts and all(v == "1.26" for _, v in inventory_puts)

    # A second pass with nothing changed writes nothing.
    placement.reset()
    fresh = report.get_provider_tree_and_ensure_root(None, CN)
    report.update_from_provider_tree(None, fresh)
    assert placement.writes() == []


def test_sync_deletes_vanished_providers_bottom_up(report, placement, seed):
    tree = tree_with_children(report)
    report.update_from_provider_tree(None, tree)
    grandchild = tree.get_provider_uuids()[2]
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    tree.remove(CHILD)
    placement.reset()

    report.update_from_provider_tree(None, tree)

    deletes = [u for m, u, v, _ in placement.calls if m == "DELETE"]
    assert deletes == [f"/resource_providers/{grandchild}", f"/resource_providers/{CHILD}"]
    assert all(v is None for m, _, v, _ in placement.calls if m == "DELETE")
    assert seed.placement.get(f"/resource_providers/{CHILD}").status_code == 404
    assert report.cache.tree.get_provider_uuids() == [CN]


def test_allocations_for_provider_tree_shape(report, placement, seed):
    seed.provider("cmp-07", uuid_=CN)
    seed.provider("cmp-07_gpu", parent=CN, uuid_=CHILD)
    seed.inventory(CN, {"VCPU": VCPU})
    seed.inventory(CHILD, {"VGPU": {"total": 4}})
    elsewhere = seed.provider("other-host")
    seed.inventory(elsewhere, {"VCPU": VCPU})
    i1, i2, i3 = (str(uuid.uuid4()) for _ in range(3))
    seed.allocate(i1, {CN: {"VCPU": 2}, CHILD: {"VGPU": 1}})
    seed.allocate(i2, {CHILD: {"VGPU": 1}, elsewhere: {"VCPU": 1}}, project="p2", user="u2")
    seed.allocate(i3, {elsewhere: {"VCPU": 1}})

    with pytest.raises(ValueError):
        report.get_allocations_for_provider_tree(None, "cmp-07")
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    placement.reset()

    allocations = report.get_allocations_for_provider_tree(None, "cmp-07")

    assert set(allocations) == {i1, i2}
    assert allocations[i1] == {
        "allocations": {
            CN: {"generation": seed.generation(CN), "resources": {"VCPU": 2}},
            CHILD: {"generation": seed.generation(CHILD), "resources": {"VGPU": 1}}},
        "project_id": "p1", "user_id": "u1", "consumer_generation": 1}
    # Allocations on other hosts' providers come along.
    assert allocations[i2]["allocations"][elsewhere]["resources"] == {"VCPU": 1}
    assert allocations[i2]["project_id"] == "p2"
    requests = [(m, u, v) for m, u, v, _ in placement.calls]
    assert requests[:2] == [("GET", f"/resource_providers/{CN}/allocations", None),
                            ("GET", f"/resource_providers/{CHILD}/allocations", None)]
    assert sorted(requests[2:]) == sorted([("GET", f"/allocations/{i1}", "1.28"),
                                           ("GET", f"/allocations/{i2}", "1.28")])


def _move_vcpu_to_child(tree: ProviderTree, allocations: dict) -> None:
    tree.new_child("cmp-07_cpus", CN, uuid=CHILD)
    tree.update_inventory(CHILD, {"VCPU": VCPU})
    tree.update_inventory(CN, {"MEMORY_MB": MEM})
    for body in allocations.values():
        resources = body["allocations"][CN]["resources"]
        body["allocations"][CHILD] = {"resources": {"VCPU": resources.pop("VCPU")}}
        if not resources:
            del body["allocations"][CN]


def test_reshape_moves_inventory_and_allocations_in_one_post(report, placement, seed):
    i1, i2 = seed_vcpu_on_root(seed)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    allocations = report.get_allocations_for_provider_tree(None, "cmp-07")
    _move_vcpu_to_child(tree, allocations)
    root_generation = seed.generation(CN)
    placement.reset()

    report.update_from_provider_tree(None, tree, allocations=allocations)

    reshapes = [(v, json) for m, u, v, json in placement.calls if (m, u) == ("POST", "/reshaper")]
    assert len(reshapes) == 1
    version, payload = reshapes[0]
    assert version == "1.30"
    assert payload["allocations"] == allocations
    assert payload["inventories"] == {
        CN: {"resource_provider_generation": root_generation,
             "inventories": {"MEMORY_MB": MEM}},
        CHILD: {"resource_provider_generation": 0, "inventories": {"VCPU": VCPU}}}
    # The reshape did it all: no inventory PUT follows.
    assert [w for w in placement.writes() if w[0] == "PUT"] == []
    assert seed.consumer(i1)["allocations"] == {
        CN: {"generation": seed.generation(CN), "resources": {"MEMORY_MB": 512}},
        CHILD: {"generation": seed.generation(CHILD), "resources": {"VCPU": 2}}}
    assert seed.consumer(i2)["allocations"][CHILD]["resources"] == {"VCPU": 1}
    assert list(seed.inventories(CN)["inventories"]) == ["MEMORY_MB"]
    # The cache picked up the generations the reshape bumped.
    assert report.cache.tree.data(CN).generation == seed.generation(CN)
    assert report.cache.tree.data(CHILD).generation == seed.generation(CHILD)


def test_reshape_with_empty_allocations_still_posts(report, placement, seed):
    seed.provider("cmp-07", uuid_=CN)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.update_inventory(CN, {"VCPU": VCPU})
    placement.reset()
    report.update_from_provider_tree(None, tree, allocations={})
    assert ("POST", "/reshaper") in placement.writes()
    assert seed.inventories(CN)["inventories"]["VCPU"] == VCPU


def test_reshape_empties_providers_it_then_deletes(report, placement, seed):
    seed.provider("cmp-07", uuid_=CN)
    seed.provider("old-child", parent=CN, uuid_=CHILD)
    seed.inventory(CHILD, {"VCPU": VCPU})
    consumer = str(uuid.uuid4())
    seed.allocate(consumer, {CHILD: {"VCPU": 3}})
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    allocations = report.get_allocations_for_provider_tree(None, "cmp-07")
    tree.remove(CHILD)
    tree.update_inventory(CN, {"VCPU": VCPU})
    allocations[consumer]["allocations"] = {CN: {"resources": {"VCPU": 3}}}
    placement.reset()

    report.update_from_provider_tree(None, tree, allocations=allocations)

    payload = next(json for m, u, _, json in placement.calls if u == "/reshaper")
    assert payload["inventories"][CHILD] == {"inventories": {},
                                             "resource_provider_generation": 2}
    assert placement.writes()[-1] == ("DELETE", f"/resource_providers/{CHILD}")
    assert seed.placement.get(f"/resource_providers/{CHILD}").status_code == 404
    assert seed.consumer(consumer)["allocations"][CN]["resources"] == {"VCPU": 3}


def test_reshape_conflict_clears_the_whole_cache(report, placement, seed):
    seed_vcpu_on_root(seed)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    allocations = report.get_allocations_for_provider_tree(None, "cmp-07")
    _move_vcpu_to_child(tree, allocations)
    seed.traits(CN, ["CUSTOM_SECOND_WRITER"])  # bumps the root generation

    with pytest.raises(exception.PlacementReshapeConflict):
        report.update_from_provider_tree(None, tree, allocations=allocations)

    assert report.cache.tree.get_provider_uuids() == []
    assert report.cache.refresh_times == {}
    assert "VCPU" in seed.inventories(CN)["inventories"]  # nothing was written


def test_reshape_rejected_is_reshape_failed(report, seed):
    i1, _ = seed_vcpu_on_root(seed)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    allocations = report.get_allocations_for_provider_tree(None, "cmp-07")
    # More VCPU than the provider has: not a generation conflict.
    allocations[i1]["allocations"][CN]["resources"]["VCPU"] = 1000
    with pytest.raises(exception.ReshapeFailed):
        report.update_from_provider_tree(None, tree, allocations=allocations)


def test_reshape_connection_failure_is_reshape_failed(report, placement, seed):
    import requests

    seed.provider("cmp-07", uuid_=CN)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")

    def refuse(method, url):
        if url == "/reshaper":
            raise requests.exceptions.ConnectionError("refused")

    placement.before = refuse
    with pytest.raises(exception.ReshapeFailed, match="refused"):
        report.update_from_provider_tree(None, tree, allocations={})


def test_deleting_provider_with_allocations_is_sync_failed(report, seed):
    seed.provider("cmp-07", uuid_=CN)
    seed.provider("busy", parent=CN, uuid_=CHILD)
    seed.inventory(CHILD, {"VCPU": VCPU})
    seed.allocate(str(uuid.uuid4()), {CHILD: {"VCPU": 1}})
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.remove(CHILD)
    with pytest.raises(exception.ResourceProviderSyncFailed) as caught:
        report.update_from_provider_tree(None, tree)
    assert isinstance(caught.value.__cause__, exception.ResourceProviderInUse)
    assert not report.cache.tree.exists(CN)
