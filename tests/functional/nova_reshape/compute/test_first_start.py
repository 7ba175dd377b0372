"""nova-compute's first start for nodes Placement has no provider of, over HTTP and in-process.

The roots are created by the resource tracker's own flow with the compute
node rows' totals; nova.conf's ratios and reservations win over the rows'
where set; ironic nodes are left alone; a second start writes nothing.
"""

from __future__ import annotations

from nova_reshape.compute import first_start
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.novadb.records import ComputeNodeRecord
from tests.functional.nova_reshape import migrate_helpers as helpers

CMP = "c0000000-0000-4000-8000-00000000000a"
OFF = "c0000000-0000-4000-8000-00000000000b"
IRONIC = "c0000000-0000-4000-8000-00000000000c"


def record(uuid, name, **values):
    fields = {"id": 1, "uuid": uuid, "host": name, "hypervisor_hostname": name,
              "hypervisor_type": "QEMU", "vcpus": 16, "memory_mb": 65536, "local_gb": 800,
              **values}
    return ComputeNodeRecord(**fields)


def test_roots_as_the_first_start_creates_them(placement):
    nodes = [
        first_start.NewNode(record(CMP, "cmp", cpu_allocation_ratio=2.0), False, None),
        first_start.NewNode(record(OFF, "off", local_gb=0, ram_allocation_ratio=1.5), True,
                            NovaConf(ram_allocation_ratio=1.25, reserved_host_memory_mb=0,
                                     reserved_host_disk_mb=2049)),
        first_start.NewNode(record(IRONIC, "bm", hypervisor_type="ironic"), False, None)]
    seen = []
    assert first_start.create_roots(placement, nodes, done=seen.append) == 2
    assert seen == [1, 2]
    cmp_tree, off_tree = helpers.tree(placement, CMP)["cmp"], helpers.tree(placement, OFF)["off"]
    assert cmp_tree["traits"] == {"COMPUTE_NODE", "OWNER_NOVA"}
    assert off_tree["traits"] == {"COMPUTE_NODE", "OWNER_NOVA", "COMPUTE_STATUS_DISABLED"}
    inventory = helpers.ok(placement.get(f"/resource_providers/{CMP}/inventories"))
    records = inventory["inventories"]
    assert {rc: (r["total"], r["max_unit"], r["reserved"], r["allocation_ratio"])
            for rc, r in records.items()} == {
        "VCPU": (16, 16, 0, 2.0), "MEMORY_MB": (65536, 65536, 512, 1.0),
        "DISK_GB": (800, 800, 0, 1.0)}
    records = helpers.ok(placement.get(f"/resource_providers/{OFF}/inventories"))["inventories"]
    # nova.conf's ratio wins over the row's; no DISK_GB of total 0.
    assert {rc: (r["reserved"], r["allocation_ratio"]) for rc, r in records.items()} == {
        "VCPU": (0, 4.0), "MEMORY_MB": (0, 1.25)}
    assert placement.get(f"/resource_providers/{IRONIC}").status_code == 404
    placement.reset()
    first_start.create_roots(placement, nodes[:2])
    assert placement.writes() == []


def test_root_inventory_defaults_are_novas():
    inventory = first_start.root_inventory(record(CMP, "cmp"), None)
    assert {rc: (r["reserved"], r["allocation_ratio"]) for rc, r in inventory.items()} == {
        "VCPU": (0, 4.0), "MEMORY_MB": (512, 1.0), "DISK_GB": (0, 1.0)}


def test_the_flat_root_in_memory_is_the_one_the_first_start_writes(placement):
    node = first_start.NewNode(record(OFF, "off", ram_allocation_ratio=1.5), True,
                               NovaConf(reserved_host_disk_mb=2049))
    first_start.create_roots(placement, [node])
    written = helpers.tree(placement, OFF)["off"]
    tree = first_start.flat_root(node)
    data = tree.data(OFF)
    assert (data.name, data.parent_uuid, data.traits) == ("off", None, written["traits"])
    records = helpers.ok(placement.get(f"/resource_providers/{OFF}/inventories"))["inventories"]
    assert {rc: {key: value for key, value in record.items()
                 if key != "resource_provider_generation"}
            for rc, record in data.inventory.items()} == {
        rc: {key: value for key, value in record.items() if key in data.inventory[rc]}
        for rc, record in records.items()}
    assert not first_start.creates_root(first_start.NewNode(
        record(IRONIC, "bm", hypervisor_type="ironic"), False, None))
