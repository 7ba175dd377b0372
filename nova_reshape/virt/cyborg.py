"""Cyborg shim: accelerator devices as child providers.

Nova has no accelerator shim: Cyborg's conductor writes these providers
itself. During a fast-forward upgrade Cyborg is down too, so this shim
writes them the way Cyborg would: one child of the compute node per
deployable, named after the deployable, uuid ``uuid3(NAMESPACE_DNS,
name)`` (so Cyborg finds its own provider when it starts), inventory
``{rc: {"total": capacity, "max_unit": capacity}}`` and traits
``OWNER_CYBORG`` plus the device's traits (added: traits from elsewhere
survive). The class is the description's ``resource_class``, else ``FPGA``
for FPGAs, ``PGPU`` for GPUs, ``CUSTOM_<TYPE>`` otherwise.

A device Cyborg already reported is used, never duplicated: its provider
is the child of the compute node found by the planned name, by Cyborg's
uuid of that name, or else the only child carrying ``OWNER_CYBORG`` and
the device's class whose name ends in ``_<address>`` (Cyborg named it
after another host name). :func:`existing_provider` finds it and says
when the choice is ambiguous (a pre-flight finding).

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

from nova_reshape.provider_tree import ProviderData, ProviderTree
from nova_reshape.virt.host import Accelerator, Consumer, Node
from nova_reshape.virt.shim import ChildPlan, DeviceShim, ShimProblem, normalize_trait


def provider_uuid(name: str) -> str:
    """Cyborg's deterministic provider uuid for a deployable name."""
    return str(uuid.uuid3(uuid.NAMESPACE_DNS, name))


def existing_provider(accelerator: Accelerator, tree: ProviderTree, nodename: str,
                      ) -> tuple[ProviderData | None, str | None]:
    """The provider already standing for ``accelerator`` in the node's tree, and a problem.

    The problem (a message) is set when the device matches several Cyborg
    providers, or a provider found by Cyborg's uuid has another name.
    """
    root = tree.data(nodename)
    if tree.exists(accelerator.name):
        return tree.data(accelerator.name), None
    by_uuid = provider_uuid(accelerator.name)
    if tree.exists(by_uuid):
        data = tree.data(by_uuid)
        return None, (f"provider {data.name} ({by_uuid}) has the uuid Cyborg derives from "
                      f"{accelerator.name} but another name")
    if accelerator.address is None:
        return None, None
    matches = []
    for rp_uuid in tree.get_provider_uuids(nodename):
        data = tree.data(rp_uuid)
        if (data.parent_uuid == root.uuid and os_traits.OWNER_CYBORG in data.traits
                and accelerator.resource_class in data.inventory
                and data.name.lower().endswith(f"_{accelerator.address}")):
            matches.append(data)
    if len(matches) > 1:
        names = ", ".join(sorted(data.name for data in matches))
        return None, f"accelerator {accelerator.address} matches several Cyborg providers: {names}"
    return (matches[0] if matches else None), None


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
        plans = []
        for accelerator in node.accelerators:
            existing, _problem = existing_provider(accelerator, tree, nodename)
            name = existing.name if existing else accelerator.name
            plans.append(ChildPlan(
                key=accelerator.name, name=name,
                uuid=existing.uuid if existing else provider_uuid(accelerator.name),
                inventory={accelerator.resource_class: {"total": accelerator.capacity,
                                                        "max_unit": accelerator.capacity}},
                traits=(os_traits.OWNER_CYBORG,
                        *sorted({normalize_trait(trait) for trait in accelerator.traits}))))
        return plans

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
