"""The report client's provider reads and creations (report/providers.py) against this
project's Placement: trees with their associations, names, races and failures. Over HTTP and
PlacementDirect on every engine, as test_client.py.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception
from tests.functional.nova_reshape.report.helpers import CHILD, CN, VCPU


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


def test_unknown_standard_trait_is_trait_creation_failed(report):
    report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    with pytest.raises(exception.TraitCreationFailed):
        report.set_traits_for_provider(None, CN, ["NOT_A_REAL_TRAIT"])


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
