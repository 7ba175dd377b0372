"""Build host description documents from nova's cell database and the hypervisor.

:func:`describe_host` turns what :func:`nova_reshape.novadb.reader.read_cell`
read about one service host, plus optionally what ``host collect`` found
on it (:mod:`.collected`) and what Cyborg records
(:mod:`nova_reshape.novadb.cyborg`), into one document in the format of
docs/host-description.md. Where a source says nothing the field is left
out, never guessed; every such gap worth knowing is returned as a note for
the file header. docs/describe-hosts.md lists where each field comes from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from nova_reshape.hostfacts.collected import CollectedHost
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.nova.conf.device_spec import DeviceSpec
from nova_reshape.nova.cpuset import format_cpuset
from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.numa import InstanceNumaTopology
from nova_reshape.nova.pci import (
    NeutronTags,
    PciDevice,
    PciDeviceType,
    canonical_address,
    neutron_tags,
)
from nova_reshape.novadb.cyborg import CyborgSnapshot
from nova_reshape.novadb.devices import pool_neutron_tags
from nova_reshape.novadb.records import CellSnapshot, ComputeNodeRecord

#: PCI device types a host description can hold (nova does not report vDPA to Placement).
DESCRIBED_PCI_TYPES = (PciDeviceType.PCI, PciDeviceType.PF, PciDeviceType.VF)
#: pci_devices statuses of devices that are gone from the host.
GONE_STATUSES = ("removed", "deleted")
#: Names of the sources a fact can come from (``HostDescription.sources``).
NOVA_DB, COLLECTED, NOVA_CONF, CYBORG_DB = "nova DB", "collected file", "nova.conf", "cyborg DB"


@dataclasses.dataclass
class HostDescription:
    """One host's document, the notes for its header, and where each fact came from.

    ``sources``: nodename -> fact (a node field, or ``consumer <uuid>``) -> the
    source names (:data:`NOVA_DB`, :data:`COLLECTED`, :data:`NOVA_CONF`,
    :data:`CYBORG_DB`) it was taken from.
    """

    host: str
    document: dict[str, Any]
    notes: list[str]
    sources: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)


def describe_host(snapshot: CellSnapshot, host: str, collected: CollectedHost | None = None,
                  cyborg: CyborgSnapshot | None = None,
                  conf: NovaConf | None = None) -> HostDescription:
    """The host description of service host ``host`` (which must have compute nodes).

    ``conf`` (the host's nova.conf) adds what only it knows: the ``[pci]
    device_spec`` tags of each device, which of a GPU's supported mdev types
    ``[devices] enabled_mdev_types`` enables, and the ``[compute]`` CPU sets
    when nova's database recorded none.
    """
    notes: list[str] = []
    nodes = snapshot.nodes_of(host)
    libvirt_nodes = [node for node in nodes if not node.is_ironic]
    if collected is not None and len(libvirt_nodes) != 1:
        notes.append(f"collected devices of {host} not merged: the host has "
                     f"{len(libvirt_nodes)} non-ironic nodes, not one")
        collected = None
    documents = [_node(snapshot, node, collected, cyborg, conf, notes) for node in nodes]
    if collected is not None:
        notes.extend(f"host collect: {error}" for error in collected.errors)
    return HostDescription(host=host, document={"version": 1, "host": host, "nodes": documents},
                           notes=notes, sources={document["nodename"]: _sources(document)
                                                 for document in documents})


def _sources(document: dict[str, Any]) -> dict[str, list[str]]:
    """Take the ``_sources`` bookkeeping out of a node document (see HostDescription);
    facts in the document's order, nova's database where nothing else was recorded."""
    recorded = document.pop("_sources", {})
    sources = {name: recorded.get(name, [NOVA_DB]) for name in document
               if name not in ("nodename", "consumers")}
    for consumer in document.get("consumers", []):
        used = [NOVA_DB]
        if "mdevs" in consumer:
            used.append(COLLECTED)
        if "accelerators" in consumer:
            used.append(CYBORG_DB)
        sources[f"consumer {consumer['uuid']}"] = used
    return sources


def _node(snapshot: CellSnapshot, node: ComputeNodeRecord, collected: CollectedHost | None,
          cyborg: CyborgSnapshot | None, conf: NovaConf | None,
          notes: list[str]) -> dict[str, Any]:
    document: dict[str, Any] = {"nodename": node.hypervisor_hostname}
    sources: dict[str, list[str]] = {}
    if node.uuid:  # else the migration finds the root provider by name
        document["uuid"] = node.uuid
    document["hypervisor_type"] = node.hypervisor_type
    if node.is_ironic:
        return document
    service = snapshot.service_of(node)
    if service is None:
        notes.append(f"{node.hypervisor_hostname}: no nova-compute service row; "
                     "'disabled' left out")
    else:
        document["disabled"] = service.disabled
    document.update(_cpus_and_cells(node, conf, notes, sources))
    if collected is not None:
        gpus = _gpus(node, collected, conf, notes)
        if gpus:
            document["gpus"] = gpus
            sources["gpus"] = [COLLECTED, NOVA_CONF] if conf and conf.enabled_mdev_types \
                else [COLLECTED]
    devices = _pci_devices(snapshot, node, conf, notes)
    if devices:
        document["pci_devices"] = devices
        sources["pci_devices"] = [NOVA_DB, NOVA_CONF] if conf is not None else [NOVA_DB]
    if cyborg is not None:
        accelerators = cyborg.accelerators_of(node.hypervisor_hostname, node.host)
        if accelerators:
            document["accelerators"] = [accelerator.as_description()
                                        for accelerator in accelerators]
            sources["accelerators"] = [CYBORG_DB]
    # Neutron's devices are not in Placement: no consumer holds them there.
    neutron = {device["address"] for device in devices
               if neutron_tags(device).belong_to_neutron}
    consumers = _consumers(snapshot, node, collected, cyborg, neutron, notes)
    if consumers:
        document["consumers"] = consumers
    document["_sources"] = sources
    return document


def _configured_cpus(conf: NovaConf | None) -> dict[str, str]:
    """The ``[compute]`` CPU sets nova.conf sets (an empty set is left out)."""
    if conf is None:
        return {}
    return {key: format_cpuset(value)
            for key, value in (("cpu_shared_set", conf.cpu_shared_set),
                               ("cpu_dedicated_set", conf.cpu_dedicated_set)) if value}


def _cpus_and_cells(node: ComputeNodeRecord, conf: NovaConf | None, notes: list[str],
                    sources: dict[str, list[str]]) -> dict[str, Any]:
    topology = node.numa_topology
    configured = _configured_cpus(conf)
    if topology is None or not topology.cells:
        sources.update((key, [NOVA_CONF]) for key in configured)
        return dict(configured)
    fields: dict[str, Any] = {}
    shared = frozenset().union(*(cell.shared for cell in topology.cells))
    dedicated = frozenset().union(*(cell.dedicated for cell in topology.cells))
    legacy = any(cell.legacy_pinning for cell in topology.cells)
    if legacy and configured:
        # nova recorded every CPU as one set: nova.conf says how they are split.
        fields.update(configured)
        sources.update((key, [NOVA_CONF]) for key in configured)
    else:
        if shared:
            fields["cpu_shared_set"] = format_cpuset(shared)
        if dedicated:
            fields["cpu_dedicated_set"] = format_cpuset(dedicated)
    if legacy and not configured:
        notes.append(f"{node.hypervisor_hostname}: nova recorded no separate dedicated CPUs "
                     "(NUMA cells from before pcpuset, or no [compute] cpu_dedicated_set): "
                     "every CPU is counted as shared")
    cells = []
    for cell in topology.cells:
        entry: dict[str, Any] = {"id": cell.id}
        if cell.shared:
            entry["cpus"] = format_cpuset(cell.shared)
        if cell.dedicated:
            entry["pcpus"] = format_cpuset(cell.dedicated)
        entry["memory_mb"] = cell.memory_mb
        # The smallest page size is the base page, not a huge page.
        base = min((pages.size_kb for pages in cell.mempages), default=None)
        huge = {pages.size_kb: pages.total for pages in cell.mempages
                if pages.size_kb != base and pages.total}
        if huge:
            entry["huge_pages"] = huge
        cells.append(entry)
    fields["numa_cells"] = cells
    return fields


def _gpus(node: ComputeNodeRecord, collected: CollectedHost, conf: NovaConf | None,
          notes: list[str]) -> list[dict[str, Any]]:
    gpus = []
    enabled = set(conf.enabled_mdev_types) if conf is not None else set()
    for gpu in collected.gpus:
        mdevs = collected.mdevs_of(gpu.address)
        used_types = sorted({mdev.type for mdev in mdevs if mdev.type})
        enabled_here = sorted(enabled & set(gpu.mdev_types))
        if used_types:
            types = used_types
        elif len(enabled_here) == 1:
            types = enabled_here
        elif len(gpu.mdev_types) == 1:
            types = list(gpu.mdev_types)
        else:
            notes.append(f"{node.hypervisor_hostname}: GPU {gpu.address} has no mediated "
                         f"device and supports {', '.join(sorted(gpu.mdev_types)) or 'no type'}"
                         ": which type nova enables is in nova.conf; GPU left out")
            continue
        capacity = len(mdevs) + sum(gpu.mdev_types.get(name, 0) for name in types)
        gpus.append({"address": gpu.address, "mdev_types": types, "capacity": capacity})
    return gpus


def _port_tags(instances: Iterable[InstanceRecord]) -> dict[str, NeutronTags]:
    """request_id -> Neutron tags of SR-IOV port requests (the devices nova keeps for
    neutron ports)."""
    tags = {}
    for instance in instances:
        for request in instance.pci_requests:
            if request.request_id and request.from_neutron_port:
                for spec in request.spec:
                    if neutron_tags(spec).tagged:
                        tags[request.request_id] = neutron_tags(spec)
    return tags


def device_neutron_tags(device: PciDevice, node: ComputeNodeRecord,
                        ports: Mapping[str, NeutronTags],
                        spec: DeviceSpec | None) -> NeutronTags:
    """Whether (and why) a device is Neutron's: the port request holding it, else its
    pool in nova's database, else the matching ``[pci] device_spec`` entry. Where the
    pool and nova.conf disagree the one-step migration refuses (hostfacts.conflicts)."""
    if device.request_id in ports:
        return ports[device.request_id]
    pooled = pool_neutron_tags(device, node.pci_pools)
    if pooled is not None:
        return pooled
    return spec.neutron if spec is not None else NeutronTags()


def _pci_devices(snapshot: CellSnapshot, node: ComputeNodeRecord, conf: NovaConf | None,
                 notes: list[str]) -> list[dict[str, Any]]:
    ports = _port_tags(snapshot.instances_on(node))
    described = []
    for device in snapshot.pci_devices_of(node):
        if device.status in GONE_STATUSES:
            continue
        if device.dev_type not in DESCRIBED_PCI_TYPES:
            notes.append(f"{node.hypervisor_hostname}: PCI device {device.address} of type "
                         f"{device.dev_type} left out (not reported to Placement)")
            continue
        entry: dict[str, Any] = {"address": canonical_address(device.address),
                                 "vendor_id": device.vendor_id.lower(),
                                 "product_id": device.product_id.lower(),
                                 "type": device.dev_type}
        if device.dev_type == PciDeviceType.VF and device.parent_addr:
            entry["parent"] = canonical_address(device.parent_addr)
        spec = conf.spec_for(device.address, device.vendor_id, device.product_id) \
            if conf is not None else None
        neutron = device_neutron_tags(device, node, ports, spec)
        if neutron.physical_network:
            entry["physical_network"] = neutron.physical_network
        if neutron.remote_managed:
            entry["remote_managed"] = True
        if spec is not None:
            entry.update(_spec_tags(spec))
        described.append(entry)
    return described


def _spec_tags(spec: DeviceSpec) -> dict[str, Any]:
    """The Placement tags of the ``[pci] device_spec`` entry matching a device."""
    tags: dict[str, Any] = {}
    if spec.resource_class:
        tags["resource_class"] = spec.resource_class
    if spec.traits:
        tags["traits"] = list(spec.traits)
    return tags


def _numa(topology: InstanceNumaTopology | None) -> list[Any] | None:
    """Cell ids when the cells are alike (an even split is exact), else explicit shares."""
    if topology is None or not topology.cells:
        return None
    shapes = {(len(cell.cpuset), len(cell.pcpuset), cell.memory_mb) for cell in topology.cells}
    if len(shapes) == 1:
        return [cell.id for cell in topology.cells]
    return [{"cell": cell.id, "vcpus": len(cell.cpuset), "pcpus": len(cell.pcpuset),
             "memory_mb": cell.memory_mb} for cell in topology.cells]


def _held(devices: Iterable[PciDevice]) -> dict[str, list[str]]:
    held: dict[str, list[str]] = {}
    for device in devices:
        if device.held and device.status not in GONE_STATUSES:
            held.setdefault(device.instance_uuid or "", []).append(
                canonical_address(device.address))
    return held


def _consumers(snapshot: CellSnapshot, node: ComputeNodeRecord, collected: CollectedHost | None,
               cyborg: CyborgSnapshot | None, neutron: set[str],
               notes: list[str]) -> list[dict[str, Any]]:
    held = {uuid: [address for address in addresses if address not in neutron]
            for uuid, addresses in _held(snapshot.pci_devices_of(node)).items()}
    mdevs: dict[str, list[dict[str, str]]] = {}
    for mdev in collected.mdevs if collected is not None else ():
        if mdev.instance:
            mdevs.setdefault(mdev.instance, []).append({"uuid": mdev.uuid, "gpu": mdev.gpu})
    instances = list(snapshot.instances_on(node))
    listed = {instance.uuid for instance in instances}
    migrations = []
    for migration in snapshot.migrations_on(node):
        if migration.source_key == node.key and migration.holds_source_allocations:
            migrations.append(migration)
        instance = snapshot.instance(migration.instance_uuid)
        # A move not yet finished: the instance already holds the destination's resources.
        if migration.dest_key == node.key and instance is not None and \
                instance.uuid not in listed:
            instances.append(instance)
            listed.add(instance.uuid)
    consumers = []
    for instance in instances:
        entry: dict[str, Any] = {"uuid": instance.uuid}
        if instance.cpu_policy is CpuPolicy.DEDICATED:
            entry["cpu_policy"] = CpuPolicy.DEDICATED.value
        on_this_node = (instance.host, instance.node) == node.key
        numa = _numa(instance.numa_topology) if on_this_node else None
        if numa is not None:
            entry["numa"] = numa
        if held.get(instance.uuid):
            entry["pci"] = held[instance.uuid]
        if on_this_node and instance.uuid in mdevs:
            entry["mdevs"] = mdevs.pop(instance.uuid)
        elif on_this_node and collected is not None and "resources:VGPU" in instance.extra_specs:
            notes.append(f"{node.hypervisor_hostname}: instance {instance.uuid} asks "
                         "resources:VGPU but no mediated device of it was collected")
        if cyborg is not None:
            accelerators = cyborg.held_by(instance.uuid)
            if accelerators:
                entry["accelerators"] = [{"device": name, "count": count}
                                         for name, count in sorted(accelerators.items())]
        consumers.append(entry)
    for migration in migrations:
        entry = {"uuid": migration.uuid, "kind": "migration",
                 "instance": migration.instance_uuid}
        instance = snapshot.instance(migration.instance_uuid)
        flavor = instance.flavor if instance is not None else None
        source_flavor = (flavor.old or flavor.cur) if flavor is not None else None
        if source_flavor is not None and source_flavor.cpu_policy is CpuPolicy.DEDICATED:
            entry["cpu_policy"] = CpuPolicy.DEDICATED.value
        consumers.append(entry)
    for uuid in sorted(mdevs):
        notes.append(f"{node.hypervisor_hostname}: domain {uuid} holds mediated devices but "
                     "nova has no instance of that uuid on this node; left out")
    return consumers


def unknown_hosts(requested: Iterable[str], known: Iterable[str]) -> list[str]:
    """The ``requested`` hosts that are not among the ``known`` ones (hosts read)."""
    return sorted(set(requested) - set(known))


def collected_without_nova(collected: Mapping[str, CollectedHost],
                           known: Iterable[str]) -> list[str]:
    """The hosts of collected files that are not among the ``known`` ones (hosts read)."""
    return sorted(set(collected) - set(known))
