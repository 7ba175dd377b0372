"""PCPU shim: pinned guests' VCPU becomes PCPU on the root (Train on).

Before Train, pinned guests (flavor ``hw:cpu_policy=dedicated``) consumed
``VCPU`` like any other. Since Train libvirt reports the CPUs of
``[compute] cpu_dedicated_set`` as ``PCPU`` and those of
``cpu_shared_set`` as ``VCPU`` on the compute node's root provider, and at
its first start reshapes once: when a dedicated set is configured, the root
holds no ``PCPU`` yet and pinned guests exist, every pinned consumer's
``VCPU`` allocation becomes a ``PCPU`` allocation of the same amount on
each provider entry holding ``VCPU`` and no ``PCPU``; unpinned consumers
keep theirs. All of it in the node's one ``POST /reshaper``.

Root inventory as libvirt writes it, for the sets the host description
(or nova.conf) gives:

* ``PCPU``: ``total = max_unit =`` number of dedicated CPUs, ratio 1,
  nothing reserved;
* ``VCPU``: ``total = max_unit =`` number of shared CPUs; none at all when
  only a dedicated set is given (as nova); the root's current ratio and
  reservation are kept unless nova.conf sets them;
* a class whose total is 0 is left out (Placement refuses a total of 0);
* with nova.conf, ``MEMORY_MB`` and ``DISK_GB`` get its ratios and
  reservations too (:mod:`nova_reshape.virt.root`), as at every start.

With neither set given the shim changes nothing (nova would count every
online CPU, which a host description does not say).
"""

from __future__ import annotations

from typing import Any

import os_resource_classes as orc

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt import root
from nova_reshape.virt.host import Node
from nova_reshape.virt.shim import DeviceShim, Move, full_record

#: nova's [DEFAULT] initial_cpu_allocation_ratio default.
INITIAL_CPU_RATIO = 4.0


def pinned_need(node: Node, root_uuid: str, allocations: dict[str, Any]) -> int:
    """PCPU the pinned consumers hold or will hold on the root after the reshape."""
    need = 0
    for consumer in node.consumers:
        if not consumer.is_pinned:
            continue
        held = allocations.get(consumer.uuid, {}).get("allocations", {})
        resources = held.get(root_uuid, {}).get("resources", {})
        need += resources.get(orc.PCPU, resources.get(orc.VCPU, 0))
    return need


class PcpuShim(DeviceShim):
    """Sets the root's VCPU/PCPU from the CPU sets and converts pinned guests' VCPU."""

    kind = "pcpu"

    def legacy_classes(self, node: Node) -> set[str]:
        return set()

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list:
        return []

    def reshape_needed(self, node: Node, tree: ProviderTree, nodename: str) -> bool:
        """nova's condition: a dedicated set, no PCPU on the root yet, pinned guests."""
        return (bool(node.cpu_dedicated_set)
                and orc.PCPU not in tree.data(nodename).inventory
                and any(consumer.is_pinned for consumer in node.consumers))

    def root_inventory(self, node: Node, tree: ProviderTree,
                       nodename: str) -> dict[str, dict[str, Any]] | None:
        """The root's inventory with VCPU/PCPU from the CPU sets and nova.conf's
        ratios and reservations (:mod:`nova_reshape.virt.root`); None: unchanged."""
        current = tree.data(nodename).inventory
        conf = self.options.conf_for(nodename)
        if node.cpu_shared_set is None and node.cpu_dedicated_set is None:
            return None if conf is None else root.configured(current, conf)
        inventory = root.configured({rc: record for rc, record in current.items()
                                     if rc not in (orc.VCPU, orc.PCPU)}, conf)
        shared = len(node.cpu_shared_set or ())
        if shared:
            old = current.get(orc.VCPU)
            if conf is not None:
                ratio, reserved = root.ratio(conf, orc.VCPU, old), root.reserved(conf, orc.VCPU)
            else:
                ratio = (old or {}).get("allocation_ratio", INITIAL_CPU_RATIO)
                reserved = (old or {}).get("reserved", 0)
            inventory[orc.VCPU] = full_record(shared, reserved=reserved,
                                              allocation_ratio=float(ratio))
        dedicated = len(node.cpu_dedicated_set or ())
        if dedicated:
            inventory[orc.PCPU] = full_record(dedicated)
        return inventory

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        node = self.describe(nodename)
        if node is None:
            return
        needed = self.reshape_needed(node, provider_tree, nodename)
        if needed and allocations is None:
            raise exception.ReshapeNeeded()
        if needed and allocations is not None:
            self._convert(node, allocations)
        inventory = self.root_inventory(node, provider_tree, nodename)
        if inventory is not None:
            provider_tree.update_inventory(nodename, inventory)

    def _convert(self, node: Node, allocations: dict[str, Any]) -> None:
        for consumer in node.consumers:
            if not consumer.is_pinned or consumer.uuid not in allocations:
                continue
            held = allocations[consumer.uuid].get("allocations", {})
            for rp_uuid in sorted(held):
                resources = held[rp_uuid].get("resources", {})
                if orc.PCPU in resources or orc.VCPU not in resources:
                    continue
                amount = resources.pop(orc.VCPU)
                resources[orc.PCPU] = amount
                self.moves.append(Move(consumer.uuid, orc.PCPU, amount, rp_uuid, rp_uuid,
                                       self.kind, from_class=orc.VCPU))
