"""HostStates from nova's cell database (``explain --nova-database URL``).

nova's scheduler takes the hosts' identities from Placement (the roots of
the allocation candidates) but every other HostState field from its cell
database: the ``compute_nodes`` row of the node (capacity, usage, free RAM
and disk, allocation ratios, NUMA topology, free PCI device pools, the
resource tracker's ``stats`` with num_instances, io_workload and
failed_builds, hypervisor, cpu_info, supported instances, metrics), the
``services`` row of its host (disabled, forced down, last heartbeat) and the
instances of its host (nova keys them by service host, not by node).
:class:`NovaDatabaseHostStates` reads all of that in one read-only
transaction (:func:`nova_reshape.novadb.reader.read_cell`) and describes
each node in the scenario host vocabulary, so the HostState is
built by the same code as a scenario's.

As in nova, a candidate root without a compute node row, or whose host has
no ``nova-compute`` service row, is not a host (nova logs and skips it);
:meth:`NovaDatabaseHostStates.skipped` names them. A compute node is found
by its uuid (the root provider's uuid), else by its hypervisor hostname
(the provider's name). Allocation ratios nova stored as NULL or 0.0 are the
ones nova's ComputeNode object falls back to: ``[DEFAULT]
*_allocation_ratio`` of nova.conf when given, else ``initial_*``.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.novadb.reader import CellDataError, read_cell
from nova_reshape.novadb.records import ComputeNodeRecord, ServiceRecord
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.sources import candidate_host_states


def _ratio(node: ComputeNodeRecord, word: str, nova_conf: NovaConf) -> float:
    stored = getattr(node, f"{word}_allocation_ratio")
    if stored:
        return float(stored)
    configured = getattr(nova_conf, f"{word}_allocation_ratio")
    return float(configured or getattr(nova_conf, f"initial_{word}_allocation_ratio"))


def _numa(node: ComputeNodeRecord) -> dict[str, Any] | None:
    topology = node.numa_topology
    if topology is None:
        return None
    cells = []
    for cell in topology.cells:
        entry: dict[str, Any] = {
            "id": cell.id, "cpuset": sorted(cell.cpuset),
            # before NUMACell 1.4 the one cpuset served pinned guests too
            "pcpuset": sorted(cell.pcpuset if cell.has_pcpuset else cell.cpuset),
            "memory": cell.memory_mb, "cpu_usage": cell.cpu_usage,
            "memory_usage": cell.memory_usage, "pinned_cpus": sorted(cell.pinned_cpus)}
        if cell.siblings:
            entry["siblings"] = [sorted(group) for group in cell.siblings]
        if cell.mempages:
            entry["mempages"] = [{"size_kb": p.size_kb, "total": p.total, "used": p.used,
                                  "reserved": p.reserved} for p in cell.mempages]
        if cell.socket is not None:
            entry["socket"] = cell.socket
        cells.append(entry)
    return {"cells": cells}


def _heartbeat_age(service: ServiceRecord, now: datetime.datetime) -> float | None:
    heartbeat = service.last_heartbeat
    if heartbeat is None:
        return None
    if heartbeat.tzinfo is not None:
        heartbeat = heartbeat.astimezone(datetime.UTC).replace(tzinfo=None)
    return (now - heartbeat).total_seconds()


def host_entry(node: ComputeNodeRecord, service: ServiceRecord, instances: Sequence[str],
               now: datetime.datetime, nova_conf: NovaConf) -> dict[str, Any]:
    """The scenario host entry nova's HostState.update_from_compute_node amounts to.

    ``instances`` are the uuids of the instances of the node's host; ``now``
    is naive UTC, like the database's timestamps.
    """
    stats = dict(node.stats)
    entry: dict[str, Any] = {
        "host": node.host, "nodename": node.hypervisor_hostname,
        "hypervisor_hostname": node.hypervisor_hostname,
        "hypervisor_type": node.hypervisor_type or "QEMU",
        "hypervisor_version": node.hypervisor_version or 0,
        "vcpus": node.vcpus, "vcpus_used": node.vcpus_used,
        "memory_mb": node.memory_mb, "memory_mb_used": node.memory_mb_used,
        "local_gb": node.local_gb, "local_gb_used": node.local_gb_used,
        "cpu_allocation_ratio": _ratio(node, "cpu", nova_conf),
        "ram_allocation_ratio": _ratio(node, "ram", nova_conf),
        "disk_allocation_ratio": _ratio(node, "disk", nova_conf),
        # nova counts these from the tracker's stats, not from the instances
        "num_instances": int(stats.get("num_instances", 0)),
        "num_io_ops": int(stats.get("io_workload", 0)),
        "failed_builds": int(stats.get("failed_builds", 0)),
        "stats": stats,
        "enabled": not service.disabled, "disabled_reason": service.disabled_reason,
        "forced_down": service.forced_down,
        "instances": list(instances),
        "supported_instances": [list(triple) for triple in node.supported_instances],
        "pci_device_pools": [{"vendor_id": pool.vendor_id, "product_id": pool.product_id,
                              "numa_node": pool.numa_node, "count": pool.count,
                              "tags": dict(pool.tags)} for pool in node.pci_pools],
    }
    if node.uuid:
        entry["uuid"] = node.uuid
    if node.free_ram_mb is not None:
        entry["free_ram_mb"] = node.free_ram_mb
    if node.free_disk_gb is not None:
        entry["free_disk_gb"] = node.free_disk_gb
    if node.disk_available_least is not None:
        entry["disk_available_least"] = node.disk_available_least
    if node.host_ip:
        entry["host_ip"] = node.host_ip
    if node.cpu_info:
        entry["cpu_info"] = node.cpu_info
    if node.metrics:
        entry["metrics"] = [{"name": m.get("name"), "value": m.get("value")}
                            for m in node.metrics]
    numa = _numa(node)
    if numa is not None:
        entry["numa_topology"] = numa
    age = _heartbeat_age(service, now)
    if age is None:
        entry["up"] = False
    else:
        entry["last_heartbeat_age_s"] = age
    return entry


class NovaDatabaseHostStates:
    """A HostStateSource reading nova's cell database (read-only, once per run).

    ``aggregates`` are nova's host aggregates (they live in the API database);
    ``now`` (naive UTC) pins the clock the service heartbeats are judged by.
    """

    def __init__(self, url: str, aggregates: Sequence[Aggregate] = (),
                 nova_conf: NovaConf | None = None,
                 now: datetime.datetime | None = None) -> None:
        self.url = url
        self._aggregates = list(aggregates)
        self.nova_conf = nova_conf or NovaConf()
        self.now = now
        self._skipped: list[str] = []

    def aggregates(self) -> list[Aggregate]:
        return list(self._aggregates)

    def skipped(self) -> list[str]:
        """Candidate roots that are no host in nova's database, with why."""
        return list(self._skipped)

    def host_states(self, body: Mapping[str, Any], roots: Mapping[str, str],
                    conf: SchedulerConfig) -> list[HostState]:
        snapshot = read_cell(self.url)
        now = self.now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        by_uuid = {node.uuid: node for node in snapshot.compute_nodes if node.uuid}
        by_name = {node.hypervisor_hostname: node for node in snapshot.compute_nodes}
        by_host: dict[str, list[str]] = defaultdict(list)
        for instance in snapshot.instances:
            if instance.host:
                by_host[instance.host].append(instance.uuid)
        nodes: dict[str, dict[str, Any]] = {}
        self._skipped = []
        for uuid, summary in body.get("provider_summaries", {}).items():
            if summary.get("root_provider_uuid", uuid) != uuid:
                continue
            name = roots.get(uuid, uuid)
            node = by_uuid.get(uuid) or by_name.get(name)
            if node is None:
                self._skipped.append(f"{name}: no compute node in nova's database")
                continue
            service = snapshot.service_of(node)
            if service is None:
                self._skipped.append(f"{name}: host {node.host} has no nova-compute service")
                continue
            entry = host_entry(node, service, by_host.get(node.host, ()), now, self.nova_conf)
            entry["uuid"] = uuid
            nodes[uuid] = entry
        try:
            return candidate_host_states(body, nodes, conf, self._aggregates,
                                         keep=nodes.__contains__)
        except ScenarioError as error:
            raise CellDataError(f"nova database: {error}") from error
