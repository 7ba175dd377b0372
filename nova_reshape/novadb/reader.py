"""Read a nova cell database's compute hosts in a few set-based queries.

:func:`read_cell` opens the database read-only
(:func:`nova_reshape.novadb.readonly.read_only`), runs one query per table
for all hosts (or the hosts asked for), parses the serialized objects and
returns a :class:`~nova_reshape.novadb.records.CellSnapshot`. Nothing is
ever written. A column holding an object that cannot be parsed is a
:class:`CellDataError` naming the table, the row and the problem: a wrong
description is worse than none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa

from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.pci import PciDevice
from nova_reshape.novadb import objects, tables
from nova_reshape.novadb.readonly import DatabaseReadError, read_only
from nova_reshape.novadb.records import (
    COMPUTE_BINARY,
    CellSnapshot,
    ComputeNodeRecord,
    MigrationRecord,
    ServiceRecord,
)

WHAT = "nova database"
T = TypeVar("T")


class CellDataError(DatabaseReadError):
    """A row holds data that cannot be understood (e.g. a malformed object)."""


def _parsed(parse: Callable[[Any], T], value: Any, where: str) -> T:
    try:
        return parse(value)
    except objects.ObjectFormatError as error:
        raise CellDataError(f"{WHAT}: {where}: {error}") from error


def _ratio(value: float | None) -> float | None:
    return value if value else None


def read_cell(url: str, hosts: Sequence[str] = (), root_disks: bool = False) -> CellSnapshot:
    """Everything describe_hosts needs about ``hosts`` (all when empty); with
    ``root_disks`` what heal_allocations needs too."""
    with read_only(url, WHAT) as connection:
        return read_cell_on(connection, hosts, root_disks)


def read_cell_on(connection: sa.Connection, hosts: Sequence[str] = (),
                 root_disks: bool = False) -> CellSnapshot:
    """As :func:`read_cell`, on a connection the caller opened (read-only); with
    ``root_disks``, also each instance's root disk (:func:`root_disks_on`)."""
    host_list = sorted(set(hosts))
    nodes = _compute_nodes(connection, host_list)
    node_ids = sa.select(tables.compute_nodes.c.id).where(
        tables.compute_nodes.c.deleted == 0)
    if host_list:
        node_ids = node_ids.where(tables.compute_nodes.c.host.in_(host_list))
    return CellSnapshot(
        compute_nodes=nodes,
        services=_services(connection, host_list),
        instances=_instances(connection, host_list),
        pci_devices=_pci_devices(connection, node_ids),
        migrations=_migrations(connection, host_list),
        root_disks=root_disks_on(connection) if root_disks else {})


def _compute_nodes(connection: sa.Connection, hosts: list[str]) -> tuple[ComputeNodeRecord, ...]:
    table = tables.compute_nodes
    query = (sa.select(*tables.read_columns(table)).where(table.c.deleted == 0)
             .order_by(table.c.id))
    if hosts:
        query = query.where(table.c.host.in_(hosts))
    records = []
    for row in connection.execute(query).mappings():
        where = f"compute_nodes id {row['id']} ({row['hypervisor_hostname']})"
        records.append(ComputeNodeRecord(
            id=row["id"], uuid=row["uuid"], host=row["host"],
            hypervisor_hostname=row["hypervisor_hostname"],
            hypervisor_type=row["hypervisor_type"], hypervisor_version=row["hypervisor_version"],
            vcpus=row["vcpus"], memory_mb=row["memory_mb"], local_gb=row["local_gb"],
            vcpus_used=row["vcpus_used"] or 0, memory_mb_used=row["memory_mb_used"] or 0,
            local_gb_used=row["local_gb_used"] or 0, free_ram_mb=row["free_ram_mb"],
            free_disk_gb=row["free_disk_gb"], disk_available_least=row["disk_available_least"],
            running_vms=row["running_vms"],
            cpu_allocation_ratio=_ratio(row["cpu_allocation_ratio"]),
            ram_allocation_ratio=_ratio(row["ram_allocation_ratio"]),
            disk_allocation_ratio=_ratio(row["disk_allocation_ratio"]),
            numa_topology=_parsed(objects.parse_host_numa_topology, row["numa_topology"],
                                  f"{where} numa_topology"),
            host_ip=row["host_ip"], cpu_info=row["cpu_info"],
            supported_instances=_parsed(_triples, row["supported_instances"],
                                        f"{where} supported_instances"),
            metrics=_parsed(_metrics, row["metrics"], f"{where} metrics"),
            pci_pools=_parsed(objects.parse_pci_pools, row["pci_stats"], f"{where} pci_stats"),
            stats=_parsed(_stats, row["stats"], f"{where} stats")))
    return tuple(records)


def _stats(text: str | None) -> dict[str, str]:
    document = objects.load_json(text, "stats") or {}
    if not isinstance(document, dict):
        raise objects.ObjectFormatError("stats is not a mapping")
    return {str(key): str(value) for key, value in document.items() if value is not None}


def _metrics(text: str | None) -> tuple[dict[str, Any], ...]:
    document = objects.load_json(text, "metrics") or []
    if not isinstance(document, list) or not all(isinstance(item, dict) for item in document):
        raise objects.ObjectFormatError("metrics is not a list of metric mappings")
    return tuple(document)


def _triples(text: str | None) -> tuple[tuple[str, str, str], ...]:
    document = objects.load_json(text, "supported_instances") or []
    if not isinstance(document, list) or not all(
            isinstance(item, list) and len(item) == 3 for item in document):
        raise objects.ObjectFormatError("supported_instances is not a list of "
                                        "[arch, hv_type, vm_mode]")
    return tuple((str(a), str(h), str(v)) for a, h, v in document)


def _services(connection: sa.Connection, hosts: list[str]) -> dict[str, ServiceRecord]:
    table = tables.services
    query = sa.select(*tables.read_columns(table)).where(
        table.c.deleted == 0, table.c.binary == COMPUTE_BINARY)
    if hosts:
        query = query.where(table.c.host.in_(hosts))
    return {row["host"]: ServiceRecord(
        id=row["id"], host=row["host"], disabled=bool(row["disabled"]),
        disabled_reason=row["disabled_reason"], forced_down=bool(row["forced_down"]),
        version=row["version"], last_seen_up=row["last_seen_up"],
        created_at=row["created_at"]) for row in connection.execute(query).mappings()}


def _instances(connection: sa.Connection, hosts: list[str]) -> tuple[InstanceRecord, ...]:
    instances, extra = tables.instances, tables.instance_extra
    query = (sa.select(*tables.read_columns(instances), extra.c.numa_topology,
                       extra.c.pci_requests, extra.c.flavor)
             .select_from(instances.outerjoin(extra, sa.and_(
                 extra.c.instance_uuid == instances.c.uuid, extra.c.deleted == 0)))
             .where(instances.c.deleted == 0, instances.c.host.is_not(None))
             .order_by(instances.c.id))
    if hosts:
        query = query.where(instances.c.host.in_(hosts))
    records = []
    for row in connection.execute(query).mappings():
        where = f"instance_extra of instance {row['uuid']}"
        records.append(InstanceRecord(
            uuid=row["uuid"], host=row["host"], node=row["node"], vcpus=row["vcpus"],
            memory_mb=row["memory_mb"], root_gb=row["root_gb"],
            ephemeral_gb=row["ephemeral_gb"], vm_state=row["vm_state"],
            task_state=row["task_state"], project_id=row["project_id"],
            numa_topology=_parsed(objects.parse_instance_numa_topology, row["numa_topology"],
                                  f"{where} numa_topology"),
            pci_requests=_parsed(objects.parse_pci_requests, row["pci_requests"],
                                 f"{where} pci_requests"),
            flavor=_parsed(objects.parse_flavor_info, row["flavor"], f"{where} flavor"),
            user_id=row["user_id"], image_ref=row["image_ref"], created_at=row["created_at"]))
    return tuple(records)


def _pci_devices(connection: sa.Connection, node_ids: sa.Select) -> tuple[PciDevice, ...]:
    table = tables.pci_devices
    query = (sa.select(*tables.read_columns(table))
             .where(table.c.deleted == 0, table.c.compute_node_id.in_(node_ids))
             .order_by(table.c.compute_node_id, table.c.address))
    records = []
    for row in connection.execute(query).mappings():
        records.append(PciDevice(
            compute_node_id=row["compute_node_id"], address=row["address"],
            vendor_id=row["vendor_id"], product_id=row["product_id"],
            dev_type=row["dev_type"], status=row["status"],
            instance_uuid=row["instance_uuid"], parent_addr=row["parent_addr"],
            numa_node=row["numa_node"], uuid=row["uuid"], label=row["label"],
            request_id=row["request_id"],
            extra_info=_parsed(objects.parse_extra_info, row["extra_info"],
                               f"pci_devices id {row['id']} extra_info")))
    return tuple(records)


def _migrations(connection: sa.Connection, hosts: list[str]) -> tuple[MigrationRecord, ...]:
    table = tables.migrations
    query = (sa.select(*tables.read_columns(table))
             .where(table.c.deleted == 0,
                    table.c.status.not_in(tables.FINISHED_MIGRATION_STATUSES))
             .order_by(table.c.id))
    if hosts:
        query = query.where(sa.or_(table.c.source_compute.in_(hosts),
                                   table.c.dest_compute.in_(hosts)))
    return tuple(MigrationRecord(
        id=row["id"], uuid=row["uuid"], instance_uuid=row["instance_uuid"],
        source_compute=row["source_compute"], source_node=row["source_node"],
        dest_compute=row["dest_compute"], dest_node=row["dest_node"], status=row["status"],
        migration_type=row["migration_type"]) for row in connection.execute(query).mappings())


def root_disks_on(connection: sa.Connection) -> dict[str, str | None]:
    """Instance uuid -> ``destination_type`` of its root block device mapping (boot
    index 0; the first by id where there are several), for every live mapping: what
    nova asks to tell a volume-backed instance (``volume``) from one on local disk."""
    table = tables.block_device_mapping
    found: dict[str, str | None] = {}
    for uuid, destination in connection.execute(
            sa.select(table.c.instance_uuid, table.c.destination_type)
            .where(table.c.deleted == 0, table.c.boot_index == 0).order_by(table.c.id)):
        found.setdefault(uuid, destination)
    return found
