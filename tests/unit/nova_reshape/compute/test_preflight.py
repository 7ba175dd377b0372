"""Pre-flight: each failure class is found, names consumer and provider, and says the fix."""

from __future__ import annotations

import pytest

from nova_reshape.compute import preflight
from nova_reshape.compute.findings import FAILURE_CLASSES
from nova_reshape.compute.preflight import Listing, check_node, resolve_root
from nova_reshape.virt.described import DescribedDriver
from tests.unit.nova_reshape.virt.helpers import (
    I1,
    I2,
    MIG,
    NODE,
    ROOT,
    SHARED,
    body,
    node,
    record,
    tree_with_root,
)

GPUS = [{"address": "0000:84:00.0", "capacity": 2}, {"address": "0000:85:00.0", "capacity": 2}]
OTHER_ROOT = "eeeeeeee-0000-4000-8000-0000000000ee"


def _listing(*extra):
    return Listing([{"uuid": ROOT, "name": NODE, "parent_provider_uuid": None,
                     "root_provider_uuid": ROOT}, *extra])


def _check(desc, tree=None, allocations=None, listing=None):
    tree = tree or tree_with_root({"VCPU": record(8), "VGPU": record(4)})
    allocations = allocations if allocations is not None else {}
    return check_node(desc, DescribedDriver({NODE: desc}), tree, allocations,
                      listing or _listing())


def _codes(findings):
    return sorted(finding.code for finding in findings)


def test_clean_node_has_no_findings_and_a_simulation():
    desc = node(gpus=GPUS, consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    findings, simulation = _check(desc, allocations={I1: body({ROOT: {"VGPU": 1}})})
    assert findings == []
    assert simulation.reshape and [m.consumer for m in simulation.moves] == [I1]


def test_device_missing_consumer_uses_a_gpu_that_is_gone():
    desc = node(gpus=GPUS[:1], consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:85:00.0"}]}])
    tree = tree_with_root({"VGPU": record(2)})
    findings, simulation = _check(desc, tree, {I1: body({ROOT: {"VGPU": 1}})})
    assert simulation is None
    first = findings[0]
    assert first.code == "device_missing" and first.consumer == I1
    assert "GPU 0000:85:00.0" in first.message
    assert "device_missing" in str(first) and first.fix in str(first)


def test_device_missing_allocation_on_a_provider_that_would_be_deleted():
    desc = node(gpus=GPUS, consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    tree = tree_with_root({"VCPU": record(8)})
    gone = tree.new_child(f"{NODE}_pci_0000_99_00_0", ROOT)
    tree.update_inventory(gone, {"VGPU": record(2)})
    tree.update_traits(gone, ["OWNER_NOVA"])
    findings, _ = _check(desc, tree, {I1: body({gone: {"VGPU": 1}})})
    assert [(f.code, f.consumer, gone in f.provider) for f in findings] == [
        ("device_missing", I1, True)]


def test_migration_in_progress_described():
    desc = node(gpus=GPUS, consumers=[{"uuid": MIG, "kind": "migration",
                                       "mdevs": [{"gpu": "0000:84:00.0"}]}])
    findings, _ = _check(desc, allocations={MIG: body({ROOT: {"VGPU": 1}})})
    assert [(f.code, f.consumer) for f in findings] == [("migration_in_progress", MIG)]
    assert "marks it as a migration" in findings[0].message


def test_migration_in_progress_seen_from_allocations_on_another_host():
    desc = node(gpus=GPUS, consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    listing = _listing({"uuid": OTHER_ROOT, "name": "cmp-08", "parent_provider_uuid": None,
                        "root_provider_uuid": OTHER_ROOT})
    findings, _ = _check(desc, allocations={I1: body({ROOT: {"VGPU": 1},
                                                      OTHER_ROOT: {"VCPU": 2}})},
                         listing=listing)
    assert [f.code for f in findings] == ["migration_in_progress"]
    assert "cmp-08" in findings[0].message


def test_unplaceable_allocation_consumer_not_described():
    desc = node(gpus=GPUS)
    findings, _ = _check(desc, allocations={I1: body({ROOT: {"VGPU": 1}})})
    assert [(f.code, f.consumer) for f in findings] == [("unplaceable_allocation", I1)]
    assert f"{NODE} ({ROOT})" == findings[0].provider


def test_amount_mismatch():
    desc = node(gpus=GPUS, consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    findings, _ = _check(desc, allocations={I1: body({ROOT: {"VGPU": 2}})})
    assert [(f.code, f.consumer) for f in findings] == [("amount_mismatch", I1)]


def test_unknown_consumer():
    desc = node(gpus=GPUS, consumers=[{"uuid": I2, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    findings, _ = _check(desc, allocations={})
    assert [(f.code, f.consumer) for f in findings] == [("unknown_consumer", I2)]


def test_sharing_provider_in_the_tree_and_associated_sharing_moving_class():
    desc = node(gpus=GPUS)
    tree = tree_with_root({"VGPU": record(4)})
    child = tree.new_child("odd-sharing-child", ROOT)
    tree.update_traits(child, ["MISC_SHARES_VIA_AGGREGATE"])
    tree.new_root("vgpu-pool", SHARED)
    tree.update_inventory("vgpu-pool", {"VGPU": record(8)})
    tree.update_traits("vgpu-pool", ["MISC_SHARES_VIA_AGGREGATE"])
    findings, _ = _check(desc, tree)
    assert [(f.code, f.provider.split()[0]) for f in findings] == [
        ("sharing_provider", "odd-sharing-child"), ("sharing_provider", "vgpu-pool")]


def test_foreign_provider_with_another_owner_trait():
    desc = node(gpus=GPUS)
    tree = tree_with_root({"VGPU": record(4)})
    taken = tree.new_child(f"{NODE}_pci_0000_84_00_0", ROOT)
    tree.update_traits(taken, ["OWNER_CYBORG"])
    findings, _ = _check(desc, tree)
    assert [f.code for f in findings] == ["foreign_provider"]
    assert "OWNER_CYBORG" in findings[0].message and taken in findings[0].provider


def test_name_taken_by_a_provider_outside_the_tree():
    desc = node(gpus=GPUS)
    listing = _listing({"uuid": OTHER_ROOT, "name": f"{NODE}_pci_0000_85_00_0",
                        "parent_provider_uuid": None, "root_provider_uuid": OTHER_ROOT})
    findings, _ = _check(desc, listing=listing)
    assert [(f.code, OTHER_ROOT in f.provider) for f in findings] == [("name_taken", True)]


def test_capacity_exceeded_after_the_move():
    desc = node(gpus=[{"address": "0000:84:00.0", "capacity": 1},
                      {"address": "0000:85:00.0", "capacity": 3}],
                consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]},
                           {"uuid": I2, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    findings, simulation = _check(desc, allocations={I1: body({ROOT: {"VGPU": 1}}),
                                                     I2: body({ROOT: {"VGPU": 1}})})
    assert [f.code for f in findings] == ["capacity_exceeded"]
    assert "pci_0000_84_00_0" in findings[0].provider and "would hold 2 VGPU" in findings[0].message
    assert simulation is not None


def test_description_mismatch_with_placement_inventory():
    desc = node(gpus=[{"address": "0000:84:00.0", "capacity": 3}])
    findings, _ = _check(desc)
    assert [f.code for f in findings] == ["description_mismatch"]
    assert "has 4 VGPU in Placement" in findings[0].message
    assert "add up to 3" in findings[0].message


def test_ambiguous_class_between_pci_and_accelerators():
    desc = node(pci_devices=[{"address": "0000:d8:00.0", "vendor_id": "10de",
                              "product_id": "20b5", "resource_class": "PGPU"}],
                accelerators=[{"type": "GPU", "capacity": 1}])
    tree = tree_with_root({"PGPU": record(2)})
    findings, _ = _check(desc, tree)
    assert "ambiguous_class" in _codes(findings)


def test_pci_config_pf_and_vfs():
    desc = node(pci_devices=[
        {"address": "0000:3b:00.0", "vendor_id": "8086", "product_id": "1572",
         "type": "type-PF"},
        {"address": "0000:3b:00.2", "vendor_id": "8086", "product_id": "154c",
         "type": "type-VF", "parent": "0000:3b:00.0"}])
    findings, _ = _check(desc, tree_with_root({}))
    assert [f.code for f in findings] == ["pci_config"]


@pytest.mark.parametrize("desc_fields, listing_extra, code", [
    ({"nodename": "cmp-99", "uuid": "99999999-0000-4000-8000-000000000099"}, (),
     "node_not_found"),
    ({"nodename": "renamed"}, (), "node_mismatch"),
    ({"uuid": "99999999-0000-4000-8000-000000000099"}, (), "node_mismatch"),
])
def test_node_identity(desc_fields, listing_extra, code):
    desc = node(**desc_fields)
    root, findings = resolve_root(desc, _listing(*listing_extra))
    assert root is None and [f.code for f in findings] == [code]


def test_node_found_by_name_when_the_file_has_no_uuid():
    desc = preflight.Node(nodename=NODE)
    assert resolve_root(desc, _listing()) == (ROOT, [])


def test_child_provider_is_not_a_node():
    listing = Listing([{"uuid": ROOT, "name": NODE, "parent_provider_uuid": OTHER_ROOT}])
    root, findings = resolve_root(node(), listing)
    assert root is None and "not a root provider" in findings[0].message


def test_new_shape_passes():
    desc = node(gpus=GPUS, consumers=[{"uuid": I1, "mdevs": [{"gpu": "0000:84:00.0"}]}])
    tree = tree_with_root({"VCPU": record(8), "VGPU": record(4)})
    allocations = {I1: body({ROOT: {"VGPU": 1}})}
    DescribedDriver({NODE: desc}).update_provider_tree(tree, NODE, allocations=allocations)
    findings, simulation = _check(desc, tree, allocations)
    assert findings == [] and not simulation.reshape


def test_every_failure_class_has_text_and_at_least_eight_exist():
    assert len(FAILURE_CLASSES) >= 8
    assert all(what and fix for what, fix in FAILURE_CLASSES.values())
