"""Cyborg shim: accelerator devices as child providers (nova-side.md §4.7).

Nova has no accelerator shim: Cyborg's conductor writes these providers
itself. During a fast-forward upgrade Cyborg is down too, so this shim
writes them the way Cyborg would: one child of the compute node per
deployable, named after the deployable, uuid ``uuid3(NAMESPACE_DNS,
name)`` (so Cyborg finds its own provider when it starts), inventory
``{rc: {"total": capacity, "max_unit": capacity}}`` and traits
``OWNER_CYBORG`` plus the device's traits (added: traits from elsewhere
survive). The class is the description's ``resource_class``, else ``FPGA``
for FPGAs, ``PGPU`` for GPUs, ``CUSTOM_<TYPE>`` otherwise.

An older deployment that counted accelerators on the compute node's root
(the class in the root's inventory) gets those allocations moved to the
device each consumer holds. The shim never removes a provider: any other
child (neutron, providers Cyborg made for devices not described) is left
alone.
"""

from __future__ import annotations

import collections
import uuid

import os_traits

from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.host import Accelerator, Consumer, Node
from nova_reshape.virt.shim import ChildPlan, DeviceShim, ShimProblem, normalize_trait


def provider_uuid(name: str) -> str:
    """Cyborg's deterministic provider uuid for a deployable name."""
    return str(uuid.uuid3(uuid.NAMESPACE_DNS, name))


def find_accelerator(node: Node, reference: str) -> Accelerator | None:
    """An accelerator by name, or by PCI address."""
    for accelerator in node.accelerators:
        if reference in (accelerator.name, accelerator.address):
            return accelerator
    return None


class CyborgShim(DeviceShim):
    """Writes Cyborg's accelerator providers and moves legacy allocations to them."""

    kind = "cyborg"
    owner_trait = os_traits.OWNER_CYBORG

    def legacy_classes(self, node: Node) -> set[str]:
        return {accelerator.resource_class for accelerator in node.accelerators}

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list[ChildPlan]:
        return [ChildPlan(
            key=accelerator.name, name=accelerator.name, uuid=provider_uuid(accelerator.name),
            inventory={accelerator.resource_class: {"total": accelerator.capacity,
                                                    "max_unit": accelerator.capacity}},
            traits=(os_traits.OWNER_CYBORG,
                    *sorted({normalize_trait(trait) for trait in accelerator.traits})))
            for accelerator in node.accelerators]

    def targets(self, node: Node, consumer_uuid: str, consumer: Consumer | None,
                resource_class: str, amount: int) -> dict[str, int]:
        if consumer is None or not consumer.accelerators:
            raise ShimProblem("unplaceable_allocation", (
                f"consumer {consumer_uuid} holds {amount} {resource_class} on the compute "
                f"node but the host description lists no accelerator for it"))
        counts: collections.Counter[str] = collections.Counter()
        for reference, units in consumer.accelerators.items():
            accelerator = find_accelerator(node, reference)
            if accelerator is None:
                raise ShimProblem("device_missing", (
                    f"consumer {consumer_uuid} uses accelerator {reference}, which the host "
                    f"description does not list"))
            if accelerator.resource_class == resource_class:
                counts[accelerator.name] += units
        return dict(counts)
