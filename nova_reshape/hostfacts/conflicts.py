"""Where the sources of a host description disagree: reasons to refuse, never to guess.

``describe_hosts`` writes files an operator reads, so a gap or a doubt is a
note in the file's header. The one-step migration
(``migrate_compute_inventory --nova-database``) has no reader in between:
each such doubt that could change a tree or an allocation is a pre-flight
refusal of class ``source_conflict`` instead, one line per conflict.
docs/migrate-compute-inventory.md lists them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from nova_reshape.hostfacts.collected import CollectedHost
from nova_reshape.hostfacts.describe import GONE_STATUSES
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.nova.pci import canonical_address
from nova_reshape.novadb.devices import pool_neutron_tags
from nova_reshape.novadb.records import CellSnapshot, ComputeNodeRecord

#: The pre-flight class of these refusals (a key of compute.findings.FAILURE_CLASSES).
CODE = "source_conflict"


def conflicts(snapshot: CellSnapshot, host: str, document: Mapping[str, Any],
              collected: CollectedHost | None,
              conf: NovaConf | None = None) -> Iterator[tuple[str, str]]:
    """(nodename, message) for each disagreement between the sources of ``host``
    (``conf``: the host's nova.conf, whose ``[pci] device_spec`` must agree with
    nova's pool tags on which devices are Neutron's)."""
    nodes = {node.hypervisor_hostname: node for node in snapshot.nodes_of(host)}
    if conf is not None:
        for node in nodes.values():
            yield from ((node.hypervisor_hostname, message)
                        for message in _neutron_conflicts(snapshot, node, conf))
    libvirt = [node for node in nodes.values() if not node.is_ironic]
    if collected is not None and len(libvirt) != 1:
        for node in libvirt:
            yield (node.hypervisor_hostname,
                   f"{collected.path} describes host {host} but nova has "
                   f"{len(libvirt)} non-ironic nodes on it: which node has the mediated "
                   "devices is unknown")
        collected = None
    for entry in document["nodes"]:
        node = nodes[entry["nodename"]]
        if node.is_ironic:
            continue
        yield from ((node.hypervisor_hostname, message)
                    for message in _node_conflicts(snapshot, node, entry, collected))


def _neutron_conflicts(snapshot: CellSnapshot, node: ComputeNodeRecord,
                       conf: NovaConf) -> Iterator[str]:
    """Devices nova.conf and nova's pool tags do not agree to give to Neutron (or not)."""
    for device in snapshot.pci_devices_of(node):
        if device.status in GONE_STATUSES:
            continue
        spec = conf.spec_for(device.address, device.vendor_id, device.product_id)
        pooled = pool_neutron_tags(device, node.pci_pools)
        configured = spec.neutron if spec is not None else None
        if pooled is None or configured is None or pooled == configured:
            continue
        yield (f"PCI device {device.address}: its [pci] device_spec entry says "
               f"{configured} but its pool in nova's database (compute_nodes.pci_stats) "
               f"says {pooled}: which of them is Neutron's is unknown")


def _node_conflicts(snapshot: CellSnapshot, node: ComputeNodeRecord, entry: Mapping[str, Any],
                    collected: CollectedHost | None) -> Iterator[str]:
    consumers = {consumer["uuid"]: consumer for consumer in entry.get("consumers", [])}
    pinned = sorted(uuid for uuid, consumer in consumers.items()
                    if consumer.get("cpu_policy") == CpuPolicy.DEDICATED.value)
    if pinned and not entry.get("cpu_dedicated_set"):
        yield (f"pinned guest(s) {', '.join(pinned)} but neither nova's database nor "
               "nova.conf gives the host a dedicated CPU set ([compute] cpu_dedicated_set)")
    for instance in snapshot.instances_on(node):
        if "resources:VGPU" in instance.extra_specs and \
                not consumers.get(instance.uuid, {}).get("mdevs"):
            where = f"the collected file {collected.path}" if collected is not None \
                else "no collected file of the host (host collect)"
            yield (f"instance {instance.uuid} asks resources:VGPU but {where} gives it no "
                   "mediated device")
    if collected is None:
        return
    for error in collected.errors:
        yield f"{collected.path}: host collect could not read everything: {error}"
    passthrough = {canonical_address(device.address): device
                   for device in snapshot.pci_devices_of(node)
                   if device.status not in GONE_STATUSES}
    for gpu in collected.gpus:
        device = passthrough.get(canonical_address(gpu.address))
        if device is not None:
            yield (f"PCI device {gpu.address} is a {device.dev_type} passthrough device in "
                   f"nova's database but a GPU for mediated devices in {collected.path}")
    for mdev in collected.mdevs:
        if mdev.instance and mdev.instance not in consumers:
            yield (f"{collected.path}: domain {mdev.instance} holds mediated device "
                   f"{mdev.uuid} but nova has no instance of that uuid on this node")
