#!/usr/bin/env python3
"""A small nova cell database, on SQLite, PostgreSQL and MariaDB: tests' and the demo's.

The tables are nova_reshape/novadb/tables.py's, the repo's one declaration
of nova's cell schema (from nova's table and column names; the project
does not import nova): every column declared there is created, those the
reader never selects too, NOT NULL where nova has it, and nova's
soft-delete ``deleted`` column, so the reader is tested against a schema
shaped like the real one.

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

from nova_reshape.novadb.tables import (  # noqa: F401 (re-exported for the tests)
    compute_nodes,
    instance_extra,
    instances,
    metadata,
    migrations,
    pci_devices,
    services,
    timestamps,
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
    return {services: service_rows(), compute_nodes: compute_node_rows(),
            instances: instance_rows(), instance_extra: instance_extra_rows(),
            pci_devices: pci_device_rows(), migrations: migration_rows()}


def service_rows() -> list[dict[str, Any]]:
    """Two nova-compute services up, one disabled, one deleted, and a scheduler."""
    return [
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
    ]


def compute_node_rows() -> list[dict[str, Any]]:
    """Two libvirt nodes (NUMA topologies), an ironic node and a deleted node."""
    cmp1_numa = json.dumps(envelope("NUMATopology", "1.2", {"cells": [
        host_cell(0, [0, 1, 2, 3], [4, 5, 6, 7], 65536, huge_2m=1024),
        host_cell(1, [8, 9, 10, 11], [12, 13, 14, 15], 65536)]}))
    cmp2_numa = json.dumps(envelope("NUMATopology", "1.2", {"cells": [
        host_cell(0, [0, 1, 2, 3, 4, 5, 6, 7], None, 32768)]}))
    return [
        compute_row(1, CMP1, CMP1_NODE, CMP1_UUID, "QEMU", cmp1_numa),
        compute_row(2, CMP2, CMP2_NODE, CMP2_UUID, "QEMU", cmp2_numa, vcpus=8,
                 memory_mb=32768, cpu_allocation_ratio=0.0, ram_allocation_ratio=None),
        compute_row(3, IRONIC_HOST, IRONIC_NODE, IRONIC_UUID, "ironic", None, vcpus=0),
        compute_row(4, OLD_HOST, "cmp-old.example.org", OLD_UUID, "QEMU", None, deleted=4),
    ]


def instance_rows() -> list[dict[str, Any]]:
    """The instances on the two libvirt nodes, one of them deleted."""
    return [
        instance_row(1, PINNED, CMP1, CMP1_NODE, 4, 4096),
        instance_row(2, UNPINNED_VF, CMP1, CMP1_NODE, 2, 2048),
        instance_row(3, SPREAD, CMP1, CMP1_NODE, 4, 2048),
        instance_row(4, OLD_PINNED, CMP1, CMP1_NODE, 2, 2048),
        instance_row(5, RESIZED, CMP1, CMP1_NODE, 4, 4096),
        instance_row(6, PLAIN, CMP2, CMP2_NODE, 2, 2048),
        instance_row(7, DELETED_INSTANCE, CMP1, CMP1_NODE, 2, 2048, deleted=7),
    ]


def instance_extra_rows() -> list[dict[str, Any]]:
    """Each instance's flavor, NUMA topology and PCI requests."""
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
    return [
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
    ]


def pci_device_rows() -> list[dict[str, Any]]:
    """A held and a free GPU, a held and a free VF, and a deleted device."""
    return [
        device_row(1, 1, GPU_HELD, "10de", "20b5", "type-PCI", "allocated", PINNED),
        device_row(2, 1, GPU_FREE, "10de", "20b5", "type-PCI"),
        device_row(3, 1, VF_HELD, "8086", "154c", "type-VF", "allocated", UNPINNED_VF,
                parent=VF_PARENT, request_id=VF_PORT_REQUEST),
        device_row(4, 1, VF_FREE, "8086", "154c", "type-VF", parent=VF_PARENT),
        device_row(5, 1, DELETED_DEVICE, "8086", "0b2a", "type-PCI", "deleted",
                DELETED_INSTANCE, deleted=5),
    ]


def migration_rows() -> list[dict[str, Any]]:
    """An unconfirmed resize onto CMP1 and a confirmed cold migration."""
    return [
        {"id": 1, "uuid": RESIZE_MIGRATION, "instance_uuid": RESIZED,
         "source_compute": CMP2, "source_node": CMP2_NODE, "dest_compute": CMP1,
         "dest_node": CMP1_NODE, "status": "finished", "migration_type": "resize",
         "deleted": 0, "created_at": NOW},
        {"id": 2, "uuid": CONFIRMED_MIGRATION, "instance_uuid": PLAIN,
         "source_compute": CMP1, "source_node": CMP1_NODE, "dest_compute": CMP2,
         "dest_node": CMP2_NODE, "status": "confirmed", "migration_type": "migration",
         "deleted": 0, "created_at": NOW},
    ]


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
