"""SchedulerReportClient against this project's Placement.

Every test runs over real HTTP and through PlacementDirect (see conftest),
on every enabled engine.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree

CN = "c0c0c0c0-0000-4000-8000-000000000001"
CHILD = "c0c0c0c0-0000-4000-8000-000000000002"
VCPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1,
        "allocation_ratio": 1.0}
MEM = {"total": 4096, "reserved": 0, "min_unit": 1, "max_unit": 4096, "step_size": 1,
       "allocation_ratio": 1.0}


def test_ensure_root_creates_the_provider_once(report, placement, seed):
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    assert tree.get_provider_uuids() == [CN]
    assert tree.data(CN).name == "cmp-07"
    assert tree.data(CN).generation == 0
    assert [(m, u, v) for m, u, v, _ in placement.calls] == [
        ("GET", f"/resource_providers?in_tree={CN}", "1.14"),
        ("POST", "/resource_providers", "1.20"),
    ]
    assert placement.calls[1][3] == {"uuid": CN, "name": "cmp-07"}
    # Cached and fresh: no request at all the second time.
    placement.reset()
    again = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    assert placement.calls == []
    # The caller gets a copy: editing it leaves the cache alone.
    again.update_inventory(CN, {"VCPU": VCPU})
    assert report.cache.tree.data(CN).inventory == {}
    assert seed.generation(CN) == 0


def test_ensure_root_name_defaults_to_uuid(report, seed):
    report.get_provider_tree_and_ensure_root(None, CN)
    assert seed.ok(seed.placement.get(f"/resource_providers/{CN}"))["name"] == CN


def test_existing_tree_is_read_with_associations_and_sharing_providers(report, placement, seed):
    seed.provider("cmp-07", uuid_=CN)
    seed.provider("cmp-07_gpu", parent=CN, uuid_=CHILD)
    seed.inventory(CN, {"VCPU": VCPU})
    seed.traits(CN, ["COMPUTE_NODE", "CUSTOM_GOLD"])
    agg = str(uuid.uuid4())
    seed.aggregates(CN, [agg])
    shared = seed.provider("shared-disk")
    seed.inventory(shared, {"DISK_GB": {"total": 100}})
    seed.traits(shared, ["MISC_SHARES_VIA_AGGREGATE"])
    seed.aggregates(shared, [agg])

    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")

    assert tree.get_provider_uuids() == [CN, CHILD, shared]
    root = tree.data(CN)
    assert root.generation == seed.generation(CN)
    assert root.inventory["VCPU"] == VCPU
    assert root.traits == {"COMPUTE_NODE", "CUSTOM_GOLD"}
    assert root.aggregates == {agg}
    assert tree.data(CHILD).parent_uuid == CN
    sharing = tree.data(shared)
    assert sharing.parent_uuid is None
    assert sharing.inventory["DISK_GB"]["total"] == 100
    assert tree.has_sharing_provider("DISK_GB")
    requests = [(m, u, v) for m, u, v, _ in placement.calls]
    assert ("GET", f"/resource_providers/{CN}/inventories", None) in requests
    assert ("GET", f"/resource_providers/{CN}/aggregates", "1.19") in requests
    assert ("GET", f"/resource_providers/{CN}/traits", "1.6") in requests
    assert (
        "GET",
        f"/resource_providers?member_of=in:{agg}&required=MISC_SHARES_VIA_AGGREGATE",
        "1.18") in requests
    assert placement.writes() == []


def test_stale_associations_are_read_again(placement, seed):
    from nova_reshape.report import SchedulerReportClient

    report = SchedulerReportClient(placement, association_refresh=0)
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    seed.traits(CN, ["CUSTOM_LATER"])
    # 0 means: once loaded, never stale again.
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    assert tree.data(CN).traits == set()
    # Forgetting the refresh time makes it stale: the tree is read again.
    report.invalidate_resource_provider(CN, cacheonly=True)
    assert report.cache.tree.exists(CN)
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    assert tree.data(CN).traits == {"CUSTOM_LATER"}
    assert tree.data(CN).generation == seed.generation(CN)


def test_name_clash_is_creation_failed(report, seed):
    seed.provider("cmp-07")
    with pytest.raises(exception.ResourceProviderCreationFailed, match="cmp-07"):
        report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")


def _tree_with_children(report, seed) -> ProviderTree:
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.update_inventory(CN, {"VCPU": VCPU, "MEMORY_MB": MEM})
    tree.update_traits(CN, ["COMPUTE_NODE", "CUSTOM_GOLD"])
    agg = "a0a0a0a0-0000-4000-8000-000000000001"
    tree.update_aggregates(CN, [agg])
    tree.new_child("cmp-07_gpu0", CN, uuid=CHILD)
    tree.update_inventory(CHILD, {"CUSTOM_GPU": {"total": 2}})
    grandchild = tree.new_child("cmp-07_gpu0_vf", CHILD)
    tree.update_inventory(grandchild, {"VGPU": {"total": 4}})
    return tree


def test_sync_without_allocations_creates_and_sets_everything(report, placement, seed):
    tree = _tree_with_children(report, seed)
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
    tree = _tree_with_children(report, seed)
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


def test_clearing_inventory_is_a_put_of_nothing(report, placement, seed):
    tree = _tree_with_children(report, seed)
    report.update_from_provider_tree(None, tree)
    tree = report.get_provider_tree_and_ensure_root(None, CN)
    tree.update_inventory(CHILD, {})
    placement.reset()
    report.update_from_provider_tree(None, tree)
    assert ("PUT", f"/resource_providers/{CHILD}/inventories") in placement.writes()
    assert ("DELETE", f"/resource_providers/{CHILD}/inventories") not in placement.writes()
    assert seed.inventories(CHILD)["inventories"] == {}


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


def _seed_vcpu_on_root(seed) -> tuple[str, str]:
    """A root with VCPU+MEMORY_MB and two consumers using VCPU there."""
    seed.provider("cmp-07", uuid_=CN)
    seed.inventory(CN, {"VCPU": VCPU, "MEMORY_MB": MEM})
    i1, i2 = str(uuid.uuid4()), str(uuid.uuid4())
    seed.allocate(i1, {CN: {"VCPU": 2, "MEMORY_MB": 512}})
    seed.allocate(i2, {CN: {"VCPU": 1}})
    return i1, i2


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
    i1, i2 = _seed_vcpu_on_root(seed)
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
    _seed_vcpu_on_root(seed)
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
    i1, _ = _seed_vcpu_on_root(seed)
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
    _seed_vcpu_on_root(seed)
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.update_inventory(CN, {"MEMORY_MB": MEM})
    with pytest.raises(exception.InventoryInUse):
        report.update_from_provider_tree(None, tree)


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


def test_unknown_standard_trait_is_trait_creation_failed(report):
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    with pytest.raises(exception.TraitCreationFailed):
        report.set_traits_for_provider(None, CN, ["NOT_A_REAL_TRAIT"])


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


def test_association_reads_of_unknown_provider_fail(report):
    missing = str(uuid.uuid4())
    with pytest.raises(exception.ResourceProviderTraitRetrievalFailed):
        report.get_provider_traits(None, missing)
    with pytest.raises(exception.ResourceProviderAggregateRetrievalFailed):
        report.providers.get_provider_aggregates(None, missing)
    with pytest.raises(exception.ResourceProviderAllocationRetrievalFailed):
        report.get_allocations_for_resource_provider(None, missing)
    assert report.providers.get_resource_provider(None, missing) is None
    assert report.providers.get_inventory(None, missing) is None


def test_get_provider_by_name(report, seed):
    rp = seed.provider("name with spaces&more")
    assert report.get_provider_by_name(None, "name with spaces&more")["uuid"] == rp
    with pytest.raises(exception.ResourceProviderNotFound):
        report.get_provider_by_name(None, "nobody")


def test_create_race_on_the_uuid_uses_the_existing_provider(report, seed):
    # Someone else created this uuid (under another name) first: not a name
    # clash, so the client takes their record instead of failing.
    seed.provider("created-elsewhere", uuid_=CN)
    record = report.providers.create_resource_provider(None, CN, "cmp-07")
    assert record["uuid"] == CN
    assert record["name"] == "created-elsewhere"
