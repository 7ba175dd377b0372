"""Typed records of what a nova cell database says about its compute hosts.

These are the public result of :func:`nova_reshape.novadb.reader.read_cell`
and meant to be shared: ``describe_hosts`` turns them into host description
files, and a scheduler can build its host states from the same records.
All are frozen dataclasses; serialized nova objects are already parsed
(:mod:`nova_reshape.novadb.objects`). Only live rows are read (nova's
``deleted = 0``).

:class:`CellSnapshot` holds everything read in one read-only transaction
and answers the per-node questions (``service_of``, ``instances_on``,
``pci_devices_of``, ``migrations_on``) from indexes built once.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.numa import HostNumaTopology
from nova_reshape.nova.pci import PciDevice, PciDevicePool

IRONIC = "ironic"
COMPUTE_BINARY = "nova-compute"


@dataclass(frozen=True)
class ComputeNodeRecord:
    """A ``compute_nodes`` row: one hypervisor node (root provider) of a host.

    The ``*_allocation_ratio`` are None where nova stored NULL or 0.0 (nova
    then takes them from its configuration).
    """

    id: int
    #: NULL only in rows of very old releases that were never updated.
    uuid: str | None
    host: str
    hypervisor_hostname: str
    hypervisor_type: str
    vcpus: int
    memory_mb: int
    local_gb: int
    hypervisor_version: int | None = None
    vcpus_used: int = 0
    memory_mb_used: int = 0
    local_gb_used: int = 0
    free_ram_mb: int | None = None
    free_disk_gb: int | None = None
    disk_available_least: int | None = None
    running_vms: int | None = None
    cpu_allocation_ratio: float | None = None
    ram_allocation_ratio: float | None = None
    disk_allocation_ratio: float | None = None
    numa_topology: HostNumaTopology | None = None
    #: What nova's scheduler copies into its HostState as is: the resource
    #: tracker's ``stats`` (num_instances, io_workload, failed_builds, ...),
    #: the free PCI pools, ``[arch, hv_type, vm_mode]`` triples, monitor metrics.
    host_ip: str | None = None
    cpu_info: str | None = None
    supported_instances: tuple[tuple[str, str, str], ...] = ()
    metrics: tuple[Mapping[str, Any], ...] = ()
    pci_pools: tuple[PciDevicePool, ...] = ()
    stats: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_ironic(self) -> bool:
        return (self.hypervisor_type or "").lower() == IRONIC

    @property
    def key(self) -> tuple[str, str]:
        """(host, nodename): how instances and migrations name their node."""
        return (self.host, self.hypervisor_hostname)


@dataclass(frozen=True)
class ServiceRecord:
    """A ``services`` row of binary ``nova-compute``."""

    id: int
    host: str
    disabled: bool
    disabled_reason: str | None = None
    forced_down: bool = False
    version: int | None = None
    #: Naive UTC, as nova stores them; the heartbeat is ``last_seen_up or created_at``.
    last_seen_up: datetime.datetime | None = None
    created_at: datetime.datetime | None = None

    @property
    def last_heartbeat(self) -> datetime.datetime | None:
        return self.last_seen_up or self.created_at


@dataclass(frozen=True)
class MigrationRecord:
    """A ``migrations`` row still in progress (not confirmed, reverted, failed, ...)."""

    id: int
    uuid: str | None
    instance_uuid: str
    source_compute: str | None
    source_node: str | None
    dest_compute: str | None
    dest_node: str | None
    status: str
    migration_type: str | None = None

    @property
    def holds_source_allocations(self) -> bool:
        """Since Queens a move's migration record holds the source node's allocations;
        an evacuation's instance keeps holding both."""
        return self.uuid is not None and self.migration_type != "evacuation"

    @property
    def source_key(self) -> tuple[str | None, str | None]:
        return (self.source_compute, self.source_node)

    @property
    def dest_key(self) -> tuple[str | None, str | None]:
        return (self.dest_compute, self.dest_node)


NodeKey = tuple[str | None, str | None]


@dataclass(frozen=True)
class CellSnapshot:
    """Everything read from one cell database, indexed per compute node."""

    compute_nodes: tuple[ComputeNodeRecord, ...]
    services: Mapping[str, ServiceRecord]
    instances: tuple[InstanceRecord, ...]
    pci_devices: tuple[PciDevice, ...]
    migrations: tuple[MigrationRecord, ...]
    #: Instance uuid -> destination type of its root block device mapping, when
    #: read (``root_disks``; only heal_allocations needs it).
    root_disks: Mapping[str, str | None] = field(default_factory=dict)
    _instances_by_node: Mapping[NodeKey, tuple[InstanceRecord, ...]] = field(
        init=False, repr=False, compare=False)
    _devices_by_node: Mapping[int | None, tuple[PciDevice, ...]] = field(
        init=False, repr=False, compare=False)
    _instances_by_uuid: Mapping[str, InstanceRecord] = field(
        init=False, repr=False, compare=False)
    _migrations_by_node: Mapping[NodeKey, tuple[MigrationRecord, ...]] = field(
        init=False, repr=False, compare=False)
    _nodes_by_host: Mapping[str | None, tuple[ComputeNodeRecord, ...]] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_instances_by_node",
                           _group(self.instances, lambda item: (item.host, item.node)))
        object.__setattr__(self, "_devices_by_node",
                           _group(self.pci_devices, lambda item: item.compute_node_id))
        object.__setattr__(self, "_instances_by_uuid",
                           {instance.uuid: instance for instance in self.instances})
        by_node: dict[NodeKey, list[MigrationRecord]] = defaultdict(list)
        for migration in self.migrations:
            for key in dict.fromkeys((migration.source_key, migration.dest_key)):
                by_node[key].append(migration)
        object.__setattr__(self, "_migrations_by_node",
                           {key: tuple(values) for key, values in by_node.items()})
        object.__setattr__(self, "_nodes_by_host", _group(
            sorted(self.compute_nodes, key=lambda node: node.hypervisor_hostname),
            lambda node: node.host))

    def hosts(self) -> list[str]:
        """Service hosts that have compute nodes, sorted."""
        return sorted({node.host for node in self.compute_nodes if node.host})

    def nodes_of(self, host: str) -> list[ComputeNodeRecord]:
        """The host's compute nodes by node name (indexed: a cell of 10,000 hosts
        asked once per host stays linear)."""
        return list(self._nodes_by_host.get(host, ()))

    def service_of(self, node: ComputeNodeRecord) -> ServiceRecord | None:
        return self.services.get(node.host)

    def instances_on(self, node: ComputeNodeRecord) -> tuple[InstanceRecord, ...]:
        """Instances whose host and node are this node's."""
        return self._instances_by_node.get(node.key, ())

    def instance(self, uuid: str) -> InstanceRecord | None:
        return self._instances_by_uuid.get(uuid)

    def volume_backed(self, instance: InstanceRecord) -> bool:
        """nova's rule: the root block device mapping is a volume; an instance without
        one (very old) is volume-backed when it has no image. Needs ``root_disks``."""
        if instance.uuid in self.root_disks:
            return self.root_disks[instance.uuid] == "volume"
        return not instance.image_ref

    def pci_devices_of(self, node: ComputeNodeRecord) -> tuple[PciDevice, ...]:
        return self._devices_by_node.get(node.id, ())

    def migrations_on(self, node: ComputeNodeRecord) -> tuple[MigrationRecord, ...]:
        """In-progress migrations with this node as source or destination."""
        return self._migrations_by_node.get(node.key, ())


def _group(items: Iterable, key) -> dict:  # type: ignore[no-untyped-def]
    grouped: dict = defaultdict(list)
    for item in items:
        grouped[key(item)].append(item)
    return {name: tuple(values) for name, values in grouped.items()}
