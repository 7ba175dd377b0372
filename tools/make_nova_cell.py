#!/usr/bin/env python3
"""A small nova cell database, on SQLite, PostgreSQL and MariaDB: tests' and the demo's.

The tables are written here from nova's table and column names (the
project does not import nova), with more columns than the reader uses,
NOT NULL where nova has it, and nova's soft-delete ``deleted`` column, so
the reader is tested against a schema shaped like the real one.

Content (:func:`populate`), chosen to cover what describe_hosts must get
right; the uuids and addresses are the module's constants:

* ``cmp-1`` (QEMU, enabled): two NUMA cells with shared and dedicated CPUs
  and 2 MiB pages; a pinned guest holding a GPU passed through
  (``PINNED``), an unpinned guest holding an SR-IOV VF through a neutron
  port (``UNPINNED_VF``), an unpinned guest spread over both cells
  (``SPREAD``), a guest pinned in the pre-Victoria format (``OLD_PINNED``),
  a resized guest waiting for confirmation (``RESIZED``, destination
  side), a free GPU and a free VF;
* ``cmp-2`` (QEMU, disabled): a cell from before pcpuset existed, an
  unpinned guest (``PLAIN``) and the source side of the resize
  (``RESIZE_MIGRATION``);
* ``ironic-1``: an ironic node;
* rows that must be ignored: a deleted instance holding a deleted PCI
  device, a deleted compute node (``cmp-old``), a deleted disabled service
  row of cmp-1, a confirmed migration.

The tests wrap it in throwaway databases (tests/fixtures/nova_db.py);
``./run_demo.sh --from-nova-db`` builds it in a SQLite file::

    python tools/make_nova_cell.py --database sqlite:////tmp/nova.sqlite
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any

import sqlalchemy as sa

metadata = sa.MetaData()


def timestamps(soft_delete: bool = True) -> list[sa.Column]:
    """The created/updated columns every OpenStack table has, plus nova's soft-delete pair."""
    columns = [sa.Column("created_at", sa.DateTime), sa.Column("updated_at", sa.DateTime)]
    if soft_delete:
        columns += [sa.Column("deleted_at", sa.DateTime),
                    sa.Column("deleted", sa.Integer, default=0)]
    return columns


services = sa.Table(
    "services", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("host", sa.String(255)),
    sa.Column("binary", sa.String(255)),
    sa.Column("topic", sa.String(255)),
    sa.Column("report_count", sa.Integer, nullable=False, default=0),
    sa.Column("disabled", sa.Boolean, default=False),
    sa.Column("disabled_reason", sa.String(255)),
    sa.Column("last_seen_up", sa.DateTime),
    sa.Column("forced_down", sa.Boolean, default=False),
    sa.Column("version", sa.Integer, default=0),
)

compute_nodes = sa.Table(
    "compute_nodes", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("service_id", sa.Integer),
    sa.Column("host", sa.String(255)),
    sa.Column("uuid", sa.String(36)),
    sa.Column("vcpus", sa.Integer, nullable=False),
    sa.Column("memory_mb", sa.Integer, nullable=False),
    sa.Column("local_gb", sa.Integer, nullable=False),
    sa.Column("vcpus_used", sa.Integer, nullable=False),
    sa.Column("memory_mb_used", sa.Integer, nullable=False),
    sa.Column("local_gb_used", sa.Integer, nullable=False),
    sa.Column("hypervisor_type", sa.Text, nullable=False),
    sa.Column("hypervisor_version", sa.Integer, nullable=False),
    sa.Column("hypervisor_hostname", sa.String(255)),
    sa.Column("free_ram_mb", sa.Integer),
    sa.Column("free_disk_gb", sa.Integer),
    sa.Column("current_workload", sa.Integer),
    sa.Column("running_vms", sa.Integer),
    sa.Column("cpu_info", sa.Text, nullable=False),
    sa.Column("disk_available_least", sa.Integer),
    sa.Column("host_ip", sa.String(39)),
    sa.Column("supported_instances", sa.Text),
    sa.Column("metrics", sa.Text),
    sa.Column("pci_stats", sa.Text),
    sa.Column("extra_resources", sa.Text),
    sa.Column("stats", sa.Text),
    sa.Column("numa_topology", sa.Text),
    sa.Column("ram_allocation_ratio", sa.Float),
    sa.Column("cpu_allocation_ratio", sa.Float),
    sa.Column("disk_allocation_ratio", sa.Float),
    sa.Column("mapped", sa.Integer, default=0),
)

instances = sa.Table(
    "instances", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
    sa.Column("hostname", sa.String(255)),
    sa.Column("vm_state", sa.String(255)),
    sa.Column("task_state", sa.String(255)),
    sa.Column("power_state", sa.Integer),
    sa.Column("memory_mb", sa.Integer),
    sa.Column("vcpus", sa.Integer),
    sa.Column("root_gb", sa.Integer),
    sa.Column("ephemeral_gb", sa.Integer),
    sa.Column("host", sa.String(255)),
    sa.Column("node", sa.String(255)),
    sa.Column("compute_id", sa.BigInteger),
    sa.Column("instance_type_id", sa.Integer),
    sa.Column("launched_on", sa.Text),
    sa.Column("display_name", sa.String(255)),
    sa.Column("cleaned", sa.Integer, default=0),
    sa.Column("hidden", sa.Boolean, default=False),
)

instance_extra = sa.Table(
    "instance_extra", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("instance_uuid", sa.String(36), sa.ForeignKey("instances.uuid"),
              nullable=False),
    sa.Column("device_metadata", sa.Text),
    sa.Column("numa_topology", sa.Text),
    sa.Column("pci_requests", sa.Text),
    sa.Column("flavor", sa.Text),
    sa.Column("vcpu_model", sa.Text),
    sa.Column("migration_context", sa.Text),
    sa.Column("keypairs", sa.Text),
    sa.Column("trusted_certs", sa.Text),
    sa.Column("resources", sa.Text),
)

pci_devices = sa.Table(
    "pci_devices", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36)),
    sa.Column("compute_node_id", sa.Integer, sa.ForeignKey("compute_nodes.id"),
              nullable=False),
    sa.Column("address", sa.String(12), nullable=False),
    sa.Column("vendor_id", sa.String(4), nullable=False),
    sa.Column("product_id", sa.String(4), nullable=False),
    sa.Column("dev_type", sa.String(8), nullable=False),
    sa.Column("dev_id", sa.String(255)),
    sa.Column("label", sa.String(255), nullable=False),
    sa.Column("status", sa.String(36), nullable=False),
    sa.Column("request_id", sa.String(36)),
    sa.Column("extra_info", sa.Text),
    sa.Column("instance_uuid", sa.String(36)),
    sa.Column("numa_node", sa.Integer),
    sa.Column("parent_addr", sa.String(12)),
)

migrations = sa.Table(
    "migrations", metadata, *timestamps(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("source_compute", sa.String(255)),
    sa.Column("dest_compute", sa.String(255)),
    sa.Column("source_node", sa.String(255)),
    sa.Column("dest_node", sa.String(255)),
    sa.Column("dest_compute_id", sa.BigInteger),
    sa.Column("dest_host", sa.String(255)),
    sa.Column("old_instance_type_id", sa.Integer),
    sa.Column("new_instance_type_id", sa.Integer),
    sa.Column("instance_uuid", sa.String(36), sa.ForeignKey("instances.uuid")),
    sa.Column("uuid", sa.String(36)),
    sa.Column("status", sa.String(255)),
    sa.Column("migration_type", sa.Enum("migration", "resize", "live-migration",
                                        "evacuation", name="migration_type")),
    sa.Column("hidden", sa.Boolean, default=False),
    sa.Column("cross_cell_move", sa.Boolean, default=False),
    sa.Column("user_id", sa.String(255)),
    sa.Column("project_id", sa.String(255)),
)

# -- the content -------------------------------------------------------------------

CMP1, CMP2, IRONIC_HOST, OLD_HOST = "cmp-1", "cmp-2", "ironic-1", "cmp-old"
CMP1_NODE, CMP2_NODE, IRONIC_NODE = "cmp-1.example.org", "cmp-2.example.org", "bm-0001"
CMP1_UUID = "c0000000-0000-4000-8000-000000000001"
CMP2_UUID = "c0000000-0000-4000-8000-000000000002"
IRONIC_UUID = "c0000000-0000-4000-8000-000000000003"
OLD_UUID = "c0000000-0000-4000-8000-000000000004"

PINNED = "10000000-0000-4000-8000-000000000001"
UNPINNED_VF = "10000000-0000-4000-8000-000000000002"
SPREAD = "10000000-0000-4000-8000-000000000003"
OLD_PINNED = "10000000-0000-4000-8000-000000000004"
RESIZED = "10000000-0000-4000-8000-000000000005"
PLAIN = "10000000-0000-4000-8000-000000000006"
DELETED_INSTANCE = "10000000-0000-4000-8000-000000000007"
RESIZE_MIGRATION = "20000000-0000-4000-8000-000000000001"
CONFIRMED_MIGRATION = "20000000-0000-4000-8000-000000000002"
VF_PORT_REQUEST = "30000000-0000-4000-8000-000000000001"

GPU_HELD, GPU_FREE = "0000:d8:00.0", "0000:d9:00.0"
VF_HELD, VF_FREE, VF_PARENT = "0000:3b:00.2", "0000:3b:00.3", "0000:3b:00.0"
DELETED_DEVICE = "0000:5e:00.0"

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0)


def envelope(name: str, version: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"nova_object.name": name, "nova_object.namespace": "nova",
            "nova_object.version": version, "nova_object.data": data,
            "nova_object.changes": sorted(data)}


def host_cell(cell_id: int, cpuset: list[int], pcpuset: list[int] | None, memory: int,
              huge_2m: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": cell_id, "cpuset": cpuset, "memory": memory, "cpu_usage": 0,
        "memory_usage": 0, "pinned_cpus": [], "siblings": [],
        "mempages": [envelope("NUMAPagesTopology", "1.1", {
            "size_kb": 4, "total": (memory - huge_2m * 2) * 256, "used": 0, "reserved": 0})]}
    if huge_2m:
        data["mempages"].append(envelope("NUMAPagesTopology", "1.1", {
            "size_kb": 2048, "total": huge_2m, "used": 0, "reserved": 0}))
    if pcpuset is None:
        return envelope("NUMACell", "1.3", data)
    data.update(pcpuset=pcpuset, socket=cell_id,
                network_metadata=envelope("NetworkMetadata", "1.0",
                                          {"physnets": [], "tunneled": False}))
    return envelope("NUMACell", "1.5", data)


def instance_cell(cell_id: int, cpuset: list[int], pcpuset: list[int], memory: int,
                  policy: str | None, version: str = "1.6") -> dict[str, Any]:
    pinned = pcpuset if version >= "1.5" else cpuset
    data: dict[str, Any] = {
        "id": cell_id, "cpuset": cpuset, "memory": memory, "pagesize": None,
        "cpu_topology": None, "cpuset_reserved": None, "cpu_policy": policy,
        "cpu_thread_policy": None,
        "cpu_pinning_raw": ({str(guest): 4 + guest for guest in pinned}
                            if policy == "dedicated" else None)}
    if version >= "1.5":
        data["pcpuset"] = pcpuset
    return envelope("InstanceNUMACell", version, data)


def instance_topology(uuid: str, *cells: dict[str, Any]) -> str:
    return json.dumps(envelope("InstanceNUMATopology", "1.3", {
        "cells": list(cells), "instance_uuid": uuid, "id": 1,
        "emulator_threads_policy": None}))


def flavor(flavorid: str, vcpus: int, memory_mb: int, **extra_specs: str) -> dict[str, Any]:
    return envelope("Flavor", "1.2", {
        "id": 1, "name": flavorid, "memory_mb": memory_mb, "vcpus": vcpus, "root_gb": 10,
        "ephemeral_gb": 0, "flavorid": flavorid, "swap": 0, "rxtx_factor": 1.0,
        "vcpu_weight": 0, "disabled": False, "is_public": True,
        "extra_specs": dict(extra_specs), "description": None})


def flavor_info(cur: dict[str, Any], old: dict[str, Any] | None = None,
                new: dict[str, Any] | None = None) -> str:
    return json.dumps({"cur": cur, "old": old, "new": new})


def compute_row(node_id: int, host: str, nodename: str, uuid: str, hypervisor_type: str = "QEMU",
                numa: str | None = None, deleted: int = 0, **values: Any) -> dict[str, Any]:
    """A ``compute_nodes`` row (a live QEMU node without NUMA topology unless told)."""
    row = {"id": node_id, "service_id": None, "host": host, "uuid": uuid,
           "hypervisor_hostname": nodename, "hypervisor_type": hypervisor_type,
           "hypervisor_version": 8000000, "vcpus": 16, "memory_mb": 131072,
           "local_gb": 1000, "vcpus_used": 0, "memory_mb_used": 512, "local_gb_used": 0,
           "cpu_info": "{}", "numa_topology": numa, "cpu_allocation_ratio": 4.0,
           "ram_allocation_ratio": 1.5, "disk_allocation_ratio": 1.0, "deleted": deleted,
           "created_at": NOW, "stats": "{}"}
    row.update(values)
    return row


def instance_row(row_id: int, uuid: str, host: str | None, node: str | None, vcpus: int,
                 memory_mb: int, deleted: int = 0) -> dict[str, Any]:
    return {"id": row_id, "uuid": uuid, "host": host, "node": node, "vcpus": vcpus,
            "memory_mb": memory_mb, "root_gb": 10, "ephemeral_gb": 0, "vm_state": "active",
            "project_id": "p1", "user_id": "u1", "deleted": deleted, "created_at": NOW}


def extra_row(row_id: int, uuid: str, flavor_text: str, numa: str | None = None,
           pci_requests: str | None = None, deleted: int = 0) -> dict[str, Any]:
    return {"id": row_id, "instance_uuid": uuid, "flavor": flavor_text,
            "numa_topology": numa, "pci_requests": pci_requests, "deleted": deleted,
            "created_at": NOW}


def device_row(row_id: int, node_id: int, address: str, vendor: str, product: str, dev_type: str,
            status: str = "available", instance: str | None = None, parent: str | None = None,
            request_id: str | None = None, deleted: int = 0) -> dict[str, Any]:
    return {"id": row_id, "uuid": f"40000000-0000-4000-8000-{row_id:012d}",
            "compute_node_id": node_id, "address": address, "vendor_id": vendor,
            "product_id": product, "dev_type": dev_type, "status": status,
            "instance_uuid": instance, "parent_addr": parent, "numa_node": 0,
            "request_id": request_id, "label": f"label_{vendor}_{product}",
            "dev_id": "pci_" + address.replace(":", "_").replace(".", "_"),
            "extra_info": "{}", "deleted": deleted, "created_at": NOW}


def rows() -> dict[sa.Table, list[dict[str, Any]]]:
    """The fixture's rows, per table (parents first)."""
    cmp1_numa = json.dumps(envelope("NUMATopology", "1.2", {"cells": [
        host_cell(0, [0, 1, 2, 3], [4, 5, 6, 7], 65536, huge_2m=1024),
        host_cell(1, [8, 9, 10, 11], [12, 13, 14, 15], 65536)]}))
    cmp2_numa = json.dumps(envelope("NUMATopology", "1.2", {"cells": [
        host_cell(0, [0, 1, 2, 3, 4, 5, 6, 7], None, 32768)]}))
    vf_request = json.dumps([{
        "count": 1, "spec": [{"physical_network": "physnet1"}], "alias_name": None,
        "is_new": False, "numa_policy": None, "request_id": VF_PORT_REQUEST,
        "requester_id": "port-1"}])
    gpu_request = json.dumps([{
        "count": 1, "spec": [{"vendor_id": "10de", "product_id": "20b5"}],
        "alias_name": "a100", "is_new": False, "numa_policy": "legacy", "request_id": None,
        "requester_id": None}])
    small, pinned4 = flavor("m1.small", 2, 2048), flavor("p4", 4, 4096,
                                                         **{"hw:cpu_policy": "dedicated"})
    return {
        services: [
            {"id": 1, "host": CMP1, "binary": "nova-compute", "topic": "compute",
             "disabled": False, "deleted": 0, "version": 66},
            {"id": 2, "host": CMP2, "binary": "nova-compute", "topic": "compute",
             "disabled": True, "disabled_reason": "maintenance", "deleted": 0, "version": 66},
            {"id": 3, "host": IRONIC_HOST, "binary": "nova-compute", "topic": "compute",
             "disabled": False, "deleted": 0, "version": 66},
            {"id": 4, "host": CMP1, "binary": "nova-compute", "topic": "compute",
             "disabled": True, "deleted": 4, "version": 40},
            {"id": 5, "host": CMP1, "binary": "nova-scheduler", "topic": "scheduler",
             "disabled": True, "deleted": 0, "version": 66},
        ],
        compute_nodes: [
            compute_row(1, CMP1, CMP1_NODE, CMP1_UUID, "QEMU", cmp1_numa),
            compute_row(2, CMP2, CMP2_NODE, CMP2_UUID, "QEMU", cmp2_numa, vcpus=8,
                     memory_mb=32768, cpu_allocation_ratio=0.0, ram_allocation_ratio=None),
            compute_row(3, IRONIC_HOST, IRONIC_NODE, IRONIC_UUID, "ironic", None, vcpus=0),
            compute_row(4, OLD_HOST, "cmp-old.example.org", OLD_UUID, "QEMU", None, deleted=4),
        ],
        instances: [
            instance_row(1, PINNED, CMP1, CMP1_NODE, 4, 4096),
            instance_row(2, UNPINNED_VF, CMP1, CMP1_NODE, 2, 2048),
            instance_row(3, SPREAD, CMP1, CMP1_NODE, 4, 2048),
            instance_row(4, OLD_PINNED, CMP1, CMP1_NODE, 2, 2048),
            instance_row(5, RESIZED, CMP1, CMP1_NODE, 4, 4096),
            instance_row(6, PLAIN, CMP2, CMP2_NODE, 2, 2048),
            instance_row(7, DELETED_INSTANCE, CMP1, CMP1_NODE, 2, 2048, deleted=7),
        ],
        instance_extra: [
            extra_row(1, PINNED, flavor_info(pinned4),
                   numa=instance_topology(PINNED, instance_cell(0, [], [0, 1, 2, 3], 4096,
                                                                "dedicated")),
                   pci_requests=gpu_request),
            extra_row(2, UNPINNED_VF, flavor_info(small), pci_requests=vf_request),
            extra_row(3, SPREAD, flavor_info(flavor("numa2", 4, 2048, **{"hw:numa_nodes": "2"})),
                   numa=instance_topology(SPREAD, instance_cell(0, [0, 1], [], 1024, None),
                                          instance_cell(1, [2, 3], [], 1024, None))),
            extra_row(4, OLD_PINNED, flavor_info(flavor("p2", 2, 2048)),
                   numa=instance_topology(OLD_PINNED, instance_cell(
                       1, [0, 1], [], 2048, "dedicated", version="1.4"))),
            extra_row(5, RESIZED, flavor_info(flavor("m1.large", 4, 4096), old=small,
                                           new=flavor("m1.large", 4, 4096))),
            extra_row(6, PLAIN, flavor_info(small)),
            extra_row(7, DELETED_INSTANCE, flavor_info(small), deleted=7),
        ],
        pci_devices: [
            device_row(1, 1, GPU_HELD, "10de", "20b5", "type-PCI", "allocated", PINNED),
            device_row(2, 1, GPU_FREE, "10de", "20b5", "type-PCI"),
            device_row(3, 1, VF_HELD, "8086", "154c", "type-VF", "allocated", UNPINNED_VF,
                    parent=VF_PARENT, request_id=VF_PORT_REQUEST),
            device_row(4, 1, VF_FREE, "8086", "154c", "type-VF", parent=VF_PARENT),
            device_row(5, 1, DELETED_DEVICE, "8086", "0b2a", "type-PCI", "deleted",
                    DELETED_INSTANCE, deleted=5),
        ],
        migrations: [
            {"id": 1, "uuid": RESIZE_MIGRATION, "instance_uuid": RESIZED,
             "source_compute": CMP2, "source_node": CMP2_NODE, "dest_compute": CMP1,
             "dest_node": CMP1_NODE, "status": "finished", "migration_type": "resize",
             "deleted": 0, "created_at": NOW},
            {"id": 2, "uuid": CONFIRMED_MIGRATION, "instance_uuid": PLAIN,
             "source_compute": CMP1, "source_node": CMP1_NODE, "dest_compute": CMP2,
             "dest_node": CMP2_NODE, "status": "confirmed", "migration_type": "migration",
             "deleted": 0, "created_at": NOW},
        ],
    }


def populate(url: str, content: dict[sa.Table, list[dict[str, Any]]] | None = None,
             skip: tuple[str, ...] = (), schema: sa.MetaData = metadata) -> None:
    """Create the tables of ``schema`` (but those named in ``skip``) and insert
    ``content`` (default: this cell's rows)."""
    engine = sa.create_engine(url)
    try:
        tables = [table for table in schema.sorted_tables if table.name not in skip]
        schema.create_all(engine, tables=tables)
        with engine.begin() as connection:
            for table, values in (content if content is not None else rows()).items():
                if table.name not in skip and values:
                    columns = sorted({key for value in values for key in value})
                    connection.execute(table.insert(), [
                        {column: value.get(column, table.c[column].default.arg
                                           if table.c[column].default is not None else None)
                         for column in columns} for value in values])
    finally:
        engine.dispose()


def checksums(url: str, tables: sa.MetaData = metadata) -> dict[str, list[tuple]]:
    """Every row of every table of ``tables``, ordered by id: equal before and after a read."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return {table.name: [tuple(row) for row in connection.execute(
                sa.select(table).order_by(table.c.id))] for table in tables.sorted_tables}
    finally:
        engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1].strip('"'))
    parser.add_argument("--database", required=True, metavar="URL",
                        help="SQLAlchemy URL of an empty database to create the cell in")
    args = parser.parse_args(argv)
    populate(args.database)
    print(f"nova cell database written to {args.database}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
