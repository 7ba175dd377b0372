"""read_cell over the nova cell fixture, on every enabled engine."""

from __future__ import annotations

import pytest

from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.novadb import reader
from nova_reshape.novadb.readonly import DatabaseReadError
from tests.fixtures import nova_db as fx


@pytest.fixture(scope="module")
def snapshot(nova_db_url):
    return reader.read_cell(nova_db_url)


def test_live_compute_nodes_only(snapshot):
    assert [node.uuid for node in snapshot.compute_nodes] == [
        fx.CMP1_UUID, fx.CMP2_UUID, fx.IRONIC_UUID]
    assert snapshot.hosts() == [fx.CMP1, fx.CMP2, fx.IRONIC_HOST]


def test_compute_node_fields(snapshot):
    cmp1, cmp2, ironic = snapshot.compute_nodes
    assert (cmp1.host, cmp1.hypervisor_hostname, cmp1.hypervisor_type) == (
        fx.CMP1, fx.CMP1_NODE, "QEMU")
    assert (cmp1.vcpus, cmp1.memory_mb, cmp1.local_gb) == (16, 131072, 1000)
    assert (cmp1.cpu_allocation_ratio, cmp1.ram_allocation_ratio,
            cmp1.disk_allocation_ratio) == (4.0, 1.5, 1.0)
    # 0.0 and NULL both mean "nova takes the ratio from its configuration".
    assert cmp2.cpu_allocation_ratio is None and cmp2.ram_allocation_ratio is None
    assert [cell.dedicated for cell in cmp1.numa_topology.cells] == [
        {4, 5, 6, 7}, {12, 13, 14, 15}]
    assert not cmp2.numa_topology.cells[0].has_pcpuset
    assert ironic.is_ironic and ironic.numa_topology is None and not cmp1.is_ironic


def test_services_of_nova_compute_live_rows(snapshot):
    cmp1, cmp2, ironic = snapshot.compute_nodes
    assert snapshot.service_of(cmp1).disabled is False
    assert snapshot.service_of(cmp2).disabled is True
    assert snapshot.service_of(cmp2).disabled_reason == "maintenance"
    assert snapshot.service_of(ironic).disabled is False


def test_instances_per_node(snapshot):
    cmp1, cmp2, _ = snapshot.compute_nodes
    assert [i.uuid for i in snapshot.instances_on(cmp1)] == [
        fx.PINNED, fx.UNPINNED_VF, fx.SPREAD, fx.OLD_PINNED, fx.RESIZED]
    assert [i.uuid for i in snapshot.instances_on(cmp2)] == [fx.PLAIN]
    assert snapshot.instance(fx.DELETED_INSTANCE) is None


def test_instance_objects(snapshot):
    pinned = snapshot.instance(fx.PINNED)
    assert pinned.cpu_policy is CpuPolicy.DEDICATED
    assert pinned.numa_topology.cells[0].pcpuset == {0, 1, 2, 3}
    assert pinned.pci_requests[0].alias_name == "a100"
    assert pinned.extra_specs["hw:cpu_policy"] == "dedicated"
    old = snapshot.instance(fx.OLD_PINNED)
    assert old.cpu_policy is CpuPolicy.DEDICATED and old.numa_topology.cells[0].id == 1
    assert snapshot.instance(fx.SPREAD).cpu_policy is None
    resized = snapshot.instance(fx.RESIZED)
    assert resized.flavor.old.flavorid == "m1.small" and resized.flavor.new.vcpus == 4


def test_pci_devices_of_live_rows(snapshot):
    cmp1, cmp2, _ = snapshot.compute_nodes
    devices = {device.address: device for device in snapshot.pci_devices_of(cmp1)}
    assert sorted(devices) == sorted([fx.GPU_HELD, fx.GPU_FREE, fx.VF_HELD, fx.VF_FREE])
    assert devices[fx.GPU_HELD].instance_uuid == fx.PINNED and devices[fx.GPU_HELD].held
    assert devices[fx.VF_HELD].parent_addr == fx.VF_PARENT
    assert devices[fx.VF_HELD].request_id == fx.VF_PORT_REQUEST
    assert not devices[fx.GPU_FREE].held
    assert snapshot.pci_devices_of(cmp2) == ()


def test_migrations_in_progress(snapshot):
    cmp1, cmp2, _ = snapshot.compute_nodes
    (migration,) = snapshot.migrations
    assert migration.uuid == fx.RESIZE_MIGRATION and migration.holds_source_allocations
    assert snapshot.migrations_on(cmp1) == (migration,) == snapshot.migrations_on(cmp2)


def test_host_filter_reads_only_those_hosts(nova_db_url):
    snapshot = reader.read_cell(nova_db_url, hosts=[fx.CMP2])
    assert [node.host for node in snapshot.compute_nodes] == [fx.CMP2]
    assert [i.uuid for i in snapshot.instances] == [fx.PLAIN]
    assert snapshot.pci_devices == ()
    assert [m.uuid for m in snapshot.migrations] == [fx.RESIZE_MIGRATION]


def test_reading_changes_nothing(nova_db_url):
    before = fx.checksums(nova_db_url)
    reader.read_cell(nova_db_url)
    assert fx.checksums(nova_db_url) == before


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", "is not a database URL"),
    ("sqlite:////nonexistent/nova.sqlite", "/nonexistent/nova.sqlite: no such file"),
    ("oracle://u@h/db", "unsupported database 'oracle'"),
    ("postgresql+psycopg://nobody@127.0.0.1:1/nova", "cannot connect to"),
])
def test_unusable_databases_are_one_line(url, message):
    with pytest.raises(DatabaseReadError, match=message) as info:
        reader.read_cell(url)
    assert "\n" not in str(info.value)


def test_missing_table_is_named(tmp_path):
    url = f"sqlite:///{tmp_path}/cell.sqlite"
    fx.populate(url, skip=("pci_devices",))
    with pytest.raises(DatabaseReadError, match="no such table: pci_devices"):
        reader.read_cell(url)


def test_malformed_object_names_its_row(tmp_path):
    url = f"sqlite:///{tmp_path}/cell.sqlite"
    content = fx.rows()
    content[fx.instance_extra][0]["numa_topology"] = '{"nova_object.name": "Flavor"}'
    fx.populate(url, content=content)
    with pytest.raises(reader.CellDataError,
                       match=f"instance_extra of instance {fx.PINNED} numa_topology: "
                             "expected a InstanceNUMATopology object, found Flavor"):
        reader.read_cell(url)
