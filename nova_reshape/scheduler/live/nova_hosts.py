"""HostStates from nova's cell database (``explain --nova-database URL``).

nova's scheduler takes the hosts' identities from Placement (the roots of
the allocation candidates) but every other HostState field from its cell
database: the ``compute_nodes`` row of the node (capacity, usage, free RAM
and disk, allocation ratios, NUMA topology, free PCI device pools, the
resource tracker's ``stats`` with num_instances, io_workload and
failed_builds, hypervisor, cpu_info, supported instances, metrics), the
``services`` row of its host (disabled, forced down, last heartbeat) and the
instances of its host (nova keys them by service host, not by node).
:class:`NovaDatabaseHostStates` takes every cell as
:mod:`nova_reshape.novadb.cells` reads them (the one reader of nova's
compute hosts: one read-only transaction per cell), or one cell database's
URL, and describes each node in the scenario host vocabulary, so the
HostState is built by the same code as a scenario's.

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
from nova_reshape.novadb.cells import CellRead, CellsSnapshot, read_one_cell
from nova_reshape.novadb.reader import CellDataError
from nova_reshape.novadb.records import ComputeNodeRecord, ServiceRecord
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.sources import candidate_host_states

#: A node's ``(cpu_shared_set, cpu_dedicated_set)``, None where not given.
CpuSets = tuple[frozenset[int] | None, frozenset[int] | None]


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
    """A HostStateSource reading nova's cell databases (read-only, once per source).

    ``cells``: the cells as :mod:`nova_reshape.novadb.cells` read them (every
    cell an API database maps), or one cell database's URL, read with
    :func:`~nova_reshape.novadb.cells.read_one_cell` at the first call.
    ``aggregates`` are nova's host aggregates (they live in the API
    database); ``now`` (naive UTC) pins the clock the service heartbeats are
    judged by. ``assume_up``: every service counts as up (its heartbeat is
    not judged), for a cloud whose computes are stopped on purpose and will
    run again (an offline upgrade); disabled and forced-down services stay
    as they are. ``cpu_sets``: per node name, the ``(cpu_shared_set,
    cpu_dedicated_set)`` its nova-compute will start with: the node's NUMA
    cells are then those it reports at that start (:func:`started_numa`),
    not those stored. The per-node entries are built once and reused by every
    call, so a source serves many requests (one per flavor) at one read.
    """

    def __init__(self, cells: str | CellsSnapshot, aggregates: Sequence[Aggregate] = (),
                 nova_conf: NovaConf | None = None,
                 now: datetime.datetime | None = None, assume_up: bool = False,
                 cpu_sets: Mapping[str, CpuSets] | None = None) -> None:
        self.url = cells if isinstance(cells, str) else None
        self._cells = None if isinstance(cells, str) else cells
        self._aggregates = list(aggregates)
        self.nova_conf = nova_conf or NovaConf()
        self.now = now
        self.assume_up = assume_up
        self.cpu_sets = dict(cpu_sets or {})
        self._skipped: list[str] = []
        self._index: _NodeIndex | None = None

    def aggregates(self) -> list[Aggregate]:
        return list(self._aggregates)

    def skipped(self) -> list[str]:
        """Candidate roots that are no host in nova's database, with why."""
        return list(self._skipped)

    def _nodes(self) -> _NodeIndex:
        if self._index is None:
            if self._cells is None:
                self._cells = read_one_cell(self.url or "")
            now = self.now or datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
            self._index = _NodeIndex(self._cells, now, self)
        return self._index

    def host_states(self, body: Mapping[str, Any], roots: Mapping[str, str],
                    conf: SchedulerConfig) -> list[HostState]:
        index = self._nodes()
        nodes: dict[str, dict[str, Any]] = {}
        self._skipped = []
        for uuid, summary in body.get("provider_summaries", {}).items():
            if summary.get("root_provider_uuid", uuid) != uuid:
                continue
            name = roots.get(uuid, uuid)
            entry, why = index.entry(uuid, name)
            if entry is None:
                self._skipped.append(f"{name}: {why}")
                continue
            nodes[uuid] = {**entry, "uuid": uuid}
        try:
            return candidate_host_states(body, nodes, conf, self._aggregates,
                                         keep=nodes.__contains__)
        except ScenarioError as error:
            raise CellDataError(f"nova database: {error}") from error


class _NodeIndex:
    """Every compute node of the cells, found by uuid or hypervisor hostname, with
    its scenario host entry built once (or why it is no host for nova)."""

    def __init__(self, cells: CellsSnapshot, now: datetime.datetime,
                 source: NovaDatabaseHostStates) -> None:
        self.by_uuid: dict[str, tuple[CellRead, ComputeNodeRecord]] = {}
        self.by_name: dict[str, tuple[CellRead, ComputeNodeRecord]] = {}
        self.instances: dict[tuple[int, str], list[str]] = defaultdict(list)
        for number, read in enumerate(cells.cells):
            for node in read.snapshot.compute_nodes:
                if node.uuid:
                    self.by_uuid[node.uuid] = (read, node)
                self.by_name[node.hypervisor_hostname] = (read, node)
            for instance in read.snapshot.instances:
                if instance.host:
                    self.instances[(number, instance.host)].append(instance.uuid)
        self.numbers = {id(read): number for number, read in enumerate(cells.cells)}
        self.now, self.source = now, source
        self._entries: dict[int, tuple[dict[str, Any] | None, str]] = {}

    def entry(self, uuid: str, name: str) -> tuple[dict[str, Any] | None, str]:
        """The node's host entry (None and why when nova has no such host)."""
        found = self.by_uuid.get(uuid) or self.by_name.get(name)
        if found is None:
            return None, "no compute node in nova's database"
        key = id(found[1])
        if key not in self._entries:
            self._entries[key] = self._build(*found)
        return self._entries[key]

    def _build(self, read: CellRead, node: ComputeNodeRecord
               ) -> tuple[dict[str, Any] | None, str]:
        service = read.snapshot.service_of(node)
        if service is None:
            return None, f"host {node.host} has no nova-compute service"
        instances = self.instances.get((self.numbers[id(read)], node.host), ())
        entry = host_entry(node, service, instances, self.now, self.source.nova_conf)
        if self.source.assume_up:
            entry.pop("last_heartbeat_age_s", None)
            entry["up"] = True
        sets = self.source.cpu_sets.get(node.hypervisor_hostname)
        if sets is not None and "numa_topology" in entry:
            entry["numa_topology"] = started_numa(entry["numa_topology"], *sets)
        return entry, ""


def started_numa(numa: Mapping[str, Any], shared: frozenset[int] | None,
                 dedicated: frozenset[int] | None) -> dict[str, Any]:
    """The NUMA cells (scenario vocabulary) a nova-compute reports once started with
    ``[compute] cpu_shared_set`` ``shared`` and ``cpu_dedicated_set`` ``dedicated``:
    each cell's CPUs (shared and dedicated as stored) split anew, a set not given
    being empty; neither given: the cells as stored (nova counts every CPU)."""
    if shared is None and dedicated is None:
        return dict(numa)
    cells = []
    for cell in numa["cells"]:
        cpus = set(cell["cpuset"]) | set(cell["pcpuset"])
        cells.append({**cell, "cpuset": sorted(cpus & (shared or frozenset())),
                      "pcpuset": sorted(cpus & (dedicated or frozenset()))})
    return {**numa, "cells": cells}
