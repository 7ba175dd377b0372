"""The resource tracker's update and reshape flow.

A fake driver moves VCPU (inventory and allocations) from the compute
node's root provider to a child. Runs over real HTTP and through
PlacementDirect, on every enabled engine.
"""

from __future__ import annotations

import logging
import uuid

import pytest

from nova_reshape import exception
from nova_reshape.compute import resource_tracker as rt_module
from nova_reshape.compute.resource_tracker import ComputeNode, ResourceTracker
from nova_reshape.virt.driver import ComputeDriver

CN = "c0c0c0c0-0000-4000-8000-00000000000a"
NODE = "cmp-07"
CPUS = f"{NODE}_cpus"
VCPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1,
        "allocation_ratio": 1.0}
MEM = {"total": 4096, "reserved": 0, "min_unit": 1, "max_unit": 4096, "step_size": 1,
       "allocation_ratio": 1.0}


class CpuChildDriver(ComputeDriver):
    """Reports VCPU on a child ``<node>_cpus`` and MEMORY_MB on the root.

    A root still holding VCPU inventory means an older release put it
    there: that needs a reshape.
    """

    def __init__(self) -> None:
        self.calls: list[bool] = []  # whether allocations were given, per call

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        self.calls.append(allocations is not None)
        if not provider_tree.exists(CPUS):
            provider_tree.new_child(CPUS, nodename)
        child = provider_tree.data(CPUS).uuid
        root = provider_tree.data(nodename)
        if "VCPU" in root.inventory:
            if allocations is None:
                raise exception.ReshapeNeeded()
            for body in allocations.values():
                held = body["allocations"].get(root.uuid)
                if held is None or "VCPU" not in held["resources"]:
                    continue  # not on our root: leave alone
                amount = held["resources"].pop("VCPU")
                if not held["resources"]:
                    del body["allocations"][root.uuid]
                body["allocations"][child] = {"resources": {"VCPU": amount}}
        provider_tree.update_inventory(CPUS, {"VCPU": VCPU})
        provider_tree.update_inventory(nodename, {"MEMORY_MB": MEM})

    def capabilities_as_traits(self):
        return {"COMPUTE_VOLUME_MULTI_ATTACH": True, "COMPUTE_TRUSTED_CERTS": False}


@pytest.fixture
def old_layout(seed):
    """VCPU and MEMORY_MB on the root; consumers using them, one also elsewhere."""
    seed.provider(NODE, uuid_=CN)
    seed.inventory(CN, {"VCPU": VCPU, "MEMORY_MB": MEM})
    seed.traits(CN, ["COMPUTE_TRUSTED_CERTS", "CUSTOM_OPERATOR_TAG"])
    shared = seed.provider("shared-disk")
    seed.inventory(shared, {"DISK_GB": {"total": 100}})
    i1, i2 = str(uuid.uuid4()), str(uuid.uuid4())
    seed.allocate(i1, {CN: {"VCPU": 2, "MEMORY_MB": 1024}, shared: {"DISK_GB": 10}})
    seed.allocate(i2, {CN: {"VCPU": 4}})
    return {"i1": i1, "i2": i2, "shared": shared}


def _tracker(report, driver, **kwargs) -> ResourceTracker:
    return ResourceTracker("host1", driver, report,
                           compute_nodes=[ComputeNode(CN, NODE)], **kwargs)


def _child_uuid(seed) -> str:
    tree = seed.ok(seed.placement.get(f"/resource_providers?in_tree={CN}",
                                      microversion="1.14"))["resource_providers"]
    return next(rp["uuid"] for rp in tree if rp["name"] == CPUS)


@pytest.mark.parametrize("every_update", [True, False], ids=["zed", "stein"])
def test_startup_reshape_moves_vcpu_with_allocations(report, placement, seed, old_layout,
                                                     every_update):
    driver = CpuChildDriver()
    tracker = _tracker(report, driver, allocations_every_update=every_update)

    tracker._update_available_resource_for_node(None, NODE, startup=True)

    assert driver.calls == [False, True]
    assert [w for w in placement.writes() if w == ("POST", "/reshaper")] == [
        ("POST", "/reshaper")]
    child = _child_uuid(seed)
    assert seed.inventories(CN)["inventories"] == {"MEMORY_MB": MEM}
    assert seed.inventories(child)["inventories"] == {"VCPU": VCPU}
    i1 = seed.consumer(old_layout["i1"])
    assert {rp: a["resources"] for rp, a in i1["allocations"].items()} == {
        CN: {"MEMORY_MB": 1024}, child: {"VCPU": 2}, old_layout["shared"]: {"DISK_GB": 10}}
    assert i1["consumer_generation"] == 2
    i2 = seed.consumer(old_layout["i2"])
    assert {rp: a["resources"] for rp, a in i2["allocations"].items()} == {child: {"VCPU": 4}}
    traits = seed.ok(seed.placement.get(f"/resource_providers/{CN}/traits",
                                        microversion="1.6"))["traits"]
    assert set(traits) == {"COMPUTE_NODE", "OWNER_NOVA", "COMPUTE_VOLUME_MULTI_ATTACH",
                           "CUSTOM_OPERATOR_TAG"}

    # Once reshaped, the next update needs no reshape and writes nothing.
    placement.reset()
    driver.calls.clear()
    tracker._update_available_resource_for_node(None, NODE, startup=False)
    assert driver.calls == [False]
    assert placement.writes() == []


def test_reshape_needed_after_startup_is_raised(report, placement, seed, old_layout, caplog):
    tracker = _tracker(report, CpuChildDriver())
    with pytest.raises(exception.ReshapeNeeded):
        tracker._update_available_resource_for_node(None, NODE, startup=False)
    assert ("POST", "/reshaper") not in placement.writes()
    assert "VCPU" in seed.inventories(CN)["inventories"]
    assert any(r.levelno == logging.ERROR for r in caplog.records)


def test_driver_reshape_failure_is_raised(report, old_layout):
    class Broken(CpuChildDriver):
        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            if allocations is not None:
                raise exception.ReshapeFailed(error="cannot reconcile")
            super().update_provider_tree(provider_tree, nodename, allocations)

    with pytest.raises(exception.ReshapeFailed, match="cannot reconcile"):
        _tracker(report, Broken())._update_available_resource_for_node(None, NODE, True)


def test_other_errors_are_logged_and_swallowed(report, caplog):
    class Crashing(ComputeDriver):
        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            raise RuntimeError("driver bug")

    tracker = _tracker(report, Crashing())
    tracker._update_available_resource_for_node(None, NODE, startup=True)
    assert "driver bug" in caplog.text
    # An unknown node is a warning, not an error.
    tracker._update_available_resource_for_node(None, "not-mine", startup=True)
    assert "not-mine" in caplog.text


def test_inventory_in_use_becomes_pci_exception(report, seed, old_layout):
    class DropsVcpu(ComputeDriver):
        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            provider_tree.update_inventory(nodename, {"MEMORY_MB": MEM})

    tracker = _tracker(report, DropsVcpu())
    with pytest.raises(exception.PlacementPciException):
        tracker._update_available_resource_for_node(None, NODE, startup=True)
    # On a periodic the same failure is only logged.
    tracker._update_available_resource_for_node(None, NODE, startup=False)


def test_pci_updater_can_trigger_a_reshape(report, placement, seed, old_layout):
    seen = {}

    def pci_updater(tree, nodename, allocations):
        seen["allocations"] = allocations
        return True

    class Plain(ComputeDriver):
        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            pass

    _tracker(report, Plain(), pci_updater=pci_updater)._update_available_resource_for_node(
        None, NODE, startup=False)
    assert set(seen["allocations"]) == {old_layout["i1"], old_layout["i2"]}
    assert ("POST", "/reshaper") in placement.writes()


def test_reshape_conflict_is_retried_from_a_fresh_tree(report, placement, seed, old_layout):
    """A second writer bumps the root generation between the read and the reshape."""
    raced = []

    def second_writer(method, url):
        if url == "/reshaper" and not raced:
            raced.append(True)
            seed.traits(CN, ["CUSTOM_SECOND_WRITER"])

    placement.before = second_writer
    driver = CpuChildDriver()
    _tracker(report, driver)._update_available_resource_for_node(None, NODE, startup=True)

    reshapes = [w for w in placement.writes() if w == ("POST", "/reshaper")]
    assert len(reshapes) == 2
    # Each attempt read the tree afresh: two in_tree GETs of the root.
    assert [u for m, u, _, _ in placement.calls
            if u == f"/resource_providers?in_tree={CN}"] == [
        f"/resource_providers?in_tree={CN}"] * 2
    assert driver.calls == [False, True, False, True]
    child = _child_uuid(seed)
    assert seed.consumer(old_layout["i2"])["allocations"][child]["resources"] == {"VCPU": 4}
    assert seed.inventories(CN)["inventories"] == {"MEMORY_MB": MEM}
    traits = seed.ok(seed.placement.get(f"/resource_providers/{CN}/traits",
                                        microversion="1.6"))["traits"]
    assert "CUSTOM_SECOND_WRITER" in traits  # the other writer's change survived
    assert report.cache.tree.data(CN).generation == seed.generation(CN)


def test_update_conflict_is_retried_and_cache_refreshed(report, placement, seed):
    seed.provider(NODE, uuid_=CN)
    raced = []

    def second_writer(method, url):
        if method == "PUT" and url.endswith(f"{CN}/inventories") and not raced:
            raced.append(True)
            seed.aggregates(CN, [str(uuid.uuid4())])

    class Plain(ComputeDriver):
        def update_provider_tree(self, provider_tree, nodename, allocations=None):
            provider_tree.update_inventory(nodename, {"VCPU": VCPU})

    placement.before = second_writer
    _tracker(report, Plain())._update_available_resource_for_node(None, NODE, startup=False)

    puts = [w for w in placement.writes() if w == ("PUT", f"/resource_providers/{CN}/inventories")]
    assert len(puts) == 2
    assert seed.inventories(CN)["inventories"]["VCPU"] == VCPU
    cached = report.cache.tree.data(CN)
    assert cached.generation == seed.generation(CN)
    assert len(cached.aggregates) == 1  # re-read after the conflict


def test_conflicts_give_up_after_four_attempts(report, placement, seed, old_layout, caplog):
    def always_race(method, url):
        if url == "/reshaper":
            seed.traits(CN, [f"CUSTOM_RACE_{uuid.uuid4().hex[:8].upper()}"])

    placement.before = always_race
    tracker = _tracker(report, CpuChildDriver())
    with pytest.raises(exception.PlacementReshapeConflict):
        tracker._update_to_placement(None, ComputeNode(CN, NODE), True)
    assert len([w for w in placement.writes() if w == ("POST", "/reshaper")]) == (
        rt_module.CONFLICT_ATTEMPTS)
    # Through the per-node entry point the exhausted conflict is only logged.
    placement.reset()
    tracker._update_available_resource_for_node(None, NODE, startup=True)
    assert any(record.exc_info and record.exc_info[0] is exception.PlacementReshapeConflict
               for record in caplog.records)
    assert len([w for w in placement.writes() if w == ("POST", "/reshaper")]) == 4
    assert "VCPU" in seed.inventories(CN)["inventories"]
