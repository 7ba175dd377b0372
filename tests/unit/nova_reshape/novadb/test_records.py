"""The cell database's records and the per-node index of a snapshot (novadb/records.py)."""

from __future__ import annotations

import datetime

from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.pci import PciDevice
from nova_reshape.novadb.records import (
    CellSnapshot,
    ComputeNodeRecord,
    MigrationRecord,
    ServiceRecord,
)

NOON = datetime.datetime(2026, 1, 1, 12, 0)


def node(node_id: int, host: str, nodename: str, hypervisor_type: str = "QEMU"):
    return ComputeNodeRecord(id=node_id, uuid=f"u{node_id}", host=host,
                             hypervisor_hostname=nodename, hypervisor_type=hypervisor_type,
                             vcpus=8, memory_mb=4096, local_gb=10)


def migration(uuid: str | None, source: str, dest: str, kind: str = "resize"):
    return MigrationRecord(id=1, uuid=uuid, instance_uuid="i1", source_compute=source,
                           source_node=source, dest_compute=dest, dest_node=dest,
                           status="finished", migration_type=kind)


def test_node_keys_and_ironic():
    assert node(1, "cmp-1", "n1").key == ("cmp-1", "n1")
    assert node(2, "ir", "bm", hypervisor_type="IRONIC").is_ironic
    assert not node(1, "cmp-1", "n1").is_ironic


def test_heartbeat_falls_back_to_creation():
    later = NOON + datetime.timedelta(minutes=5)
    assert ServiceRecord(1, "cmp-1", False, created_at=NOON).last_heartbeat == NOON
    assert ServiceRecord(1, "cmp-1", False, last_seen_up=later,
                         created_at=NOON).last_heartbeat == later


def test_which_migrations_hold_the_source_allocations():
    assert migration("m1", "a", "b").holds_source_allocations
    assert not migration("m1", "a", "b", kind="evacuation").holds_source_allocations
    assert not migration(None, "a", "b").holds_source_allocations  # before Queens
    assert (migration("m1", "a", "b").source_key, migration("m1", "a", "b").dest_key) == (
        ("a", "a"), ("b", "b"))


def test_snapshot_indexes_everything_per_node():
    one, two, other = node(1, "cmp-1", "n1"), node(2, "cmp-1", "n0"), node(3, "cmp-2", "cmp-2")
    guest = InstanceRecord("i1", "cmp-1", "n1")
    device = PciDevice(compute_node_id=1, address="0000:3b:00.2", vendor_id="8086",
                       product_id="154c", dev_type="type-VF", status="available")
    local = MigrationRecord(id=2, uuid="m2", instance_uuid="i1", source_compute="cmp-1",
                            source_node="n1", dest_compute="cmp-1", dest_node="n1",
                            status="finished")
    snapshot = CellSnapshot(
        compute_nodes=(one, two, other),
        services={"cmp-1": ServiceRecord(1, "cmp-1", disabled=True)},
        instances=(guest,), pci_devices=(device,),
        migrations=(migration("m1", "cmp-2", "cmp-1"), local))
    assert snapshot.hosts() == ["cmp-1", "cmp-2"]
    assert snapshot.nodes_of("cmp-1") == [two, one]  # by node name
    assert snapshot.service_of(one).disabled and snapshot.service_of(other) is None
    assert snapshot.instances_on(one) == (guest,) and snapshot.instances_on(two) == ()
    assert snapshot.instance("i1") is guest and snapshot.instance("nope") is None
    assert snapshot.pci_devices_of(one) == (device,) and snapshot.pci_devices_of(other) == ()
    assert snapshot.migrations_on(other) == (migration("m1", "cmp-2", "cmp-1"),)
    # a same-node migration is listed once for its node, not twice
    assert [m.uuid for m in snapshot.migrations_on(one)] == ["m2"]
    assert snapshot.migrations_on(node(9, "cmp-9", "n9")) == ()
