"""PCI shim: passthrough devices as child providers.

Follows nova's PCI-in-placement translation: one child per ``type-PCI``
device and per PF, named ``<nodename>_<ADDRESS upper-cased>``
(``cmp-07_0000:D8:00.0``; the address form, unlike VGPU's nodedev name).
``type-VF`` devices count on their parent PF's provider, which exists even
when the PF itself is not listed; listing a PF *and* its VFs is refused
(``PlacementPciDependentDeviceException``), as are VFs of one PF with
different resource classes or traits. Devices that belong to Neutron (a
``physical_network`` tag, the rule of :mod:`nova_reshape.nova.pci`) get no
provider: nova 34 deletes one it finds; what a consumer holds of them
through a port stays where it is (:func:`left_to_neutron` lists them for the
dry run). A ``remote_managed`` device without a physical network is nova's
like any other: it counts on its provider, and a consumer holding it, through
a port or a flavor alias, gets its allocation there.

Resource class: the device's ``resource_class`` tag, upper-cased and made
``CUSTOM_`` unless standard, else ``CUSTOM_PCI_<VENDOR>_<PRODUCT>``.
Inventory ``{"total": n, "max_unit": n}`` only. Traits, set exactly (so
others are removed): the normalized ``traits`` tags,
``COMPUTE_MANAGED_PCI_DEVICE`` and ``OWNER_NOVA``. Children carrying
``COMPUTE_MANAGED_PCI_DEVICE`` that no listed device maps to are removed.

Allocations: an older release may have counted devices on the root (a
device class in the root's inventory); those move to the device each
consumer holds. Otherwise Placement knew nothing of the devices and the
allocations are *created*: every consumer present in the allocations gets
``{class: number of devices held}`` on each device provider (inserted or
corrected, like nova's healing). The reshape is needed when the root holds
a device class, or when a device a consumer uses has no provider with its
class yet (first run, or a run killed before its reshape).
"""

from __future__ import annotations

import collections
import dataclasses

import os_traits

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderData, ProviderTree
from nova_reshape.virt.host import Consumer, Node, PciDevice
from nova_reshape.virt.shim import (
    ChildPlan,
    DeviceShim,
    ShimProblem,
    normalize_resource_class,
    normalize_trait,
)


def provider_name(nodename: str, address: str) -> str:
    """``<nodename>_<ADDRESS>`` with the address upper-cased."""
    return f"{nodename}_{address.upper()}"


def device_resource_class(device: PciDevice) -> str:
    if device.resource_class:
        return normalize_resource_class(device.resource_class)
    return f"CUSTOM_PCI_{device.vendor_id.upper()}_{device.product_id.upper()}"


def device_traits(device: PciDevice) -> tuple[str, ...]:
    return tuple(sorted({normalize_trait(trait) for trait in device.traits}))


@dataclasses.dataclass(frozen=True)
class PciProvider:
    """One planned PCI provider: a device, or a PF standing for its VFs."""

    address: str
    resource_class: str
    total: int
    traits: tuple[str, ...]
    members: tuple[str, ...]


def pci_providers(node: Node) -> dict[str, PciProvider]:
    """Provider address -> what it holds; raises PlacementPci*Exception on bad specs."""
    devices = [d for d in node.pci_devices if not d.neutron.belong_to_neutron]
    vfs: dict[str, list[PciDevice]] = collections.defaultdict(list)
    for device in devices:
        if device.type == "type-VF":
            vfs[device.parent or ""].append(device)
    providers: dict[str, PciProvider] = {}
    for device in devices:
        if device.type == "type-VF":
            continue
        if device.address in vfs:
            raise exception.PlacementPciDependentDeviceException(
                parent_dev=device.address,
                children_devs=",".join(vf.address for vf in vfs[device.address]))
        providers[device.address] = PciProvider(
            device.address, device_resource_class(device), 1, device_traits(device),
            (device.address,))
    for parent, children in sorted(vfs.items()):
        first = children[0]
        for vf in children[1:]:
            if device_resource_class(vf) != device_resource_class(first):
                raise exception.PlacementPciMixedResourceClassException(
                    new_rc=device_resource_class(vf), new_dev=vf.address,
                    current_rc=device_resource_class(first), current_devs=first.address)
            if device_traits(vf) != device_traits(first):
                raise exception.PlacementPciMixedTraitsException(
                    new_traits=",".join(device_traits(vf)), new_dev=vf.address,
                    current_traits=",".join(device_traits(first)), current_devs=first.address)
        providers[parent] = PciProvider(
            parent, device_resource_class(first), len(children), device_traits(first),
            tuple(vf.address for vf in children))
    return providers


def holder_of(node: Node) -> dict[str, str]:
    """Device address -> address of the provider it counts on (nova's devices only)."""
    result = {}
    for device in node.pci_devices:
        if device.neutron.belong_to_neutron:
            continue
        result[device.address] = device.parent if device.type == "type-VF" else device.address
    return result


def left_to_neutron(node: Node) -> tuple[str, ...]:
    """One line per device of the node that Neutron, not this migration, accounts for."""
    return tuple(f"{device.address} ({device.type}, {device.neutron})"
                 for device in node.pci_devices if device.neutron.belong_to_neutron)


class PciShim(DeviceShim):
    """Reports PCI devices as children and moves or heals their allocations."""

    kind = "pci"

    def legacy_classes(self, node: Node) -> set[str]:
        return {provider.resource_class for provider in pci_providers(node).values()}

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list[ChildPlan]:
        return [ChildPlan(
            key=address, name=provider_name(nodename, address),
            inventory={provider.resource_class: {"total": provider.total,
                                                 "max_unit": provider.total}},
            traits=tuple(sorted({*provider.traits, os_traits.COMPUTE_MANAGED_PCI_DEVICE,
                                 os_traits.OWNER_NOVA})),
            replace_traits=True)
            for address, provider in sorted(pci_providers(node).items())]

    def _held(self, node: Node, consumer_uuid: str,
              consumer: Consumer) -> dict[str, collections.Counter[str]]:
        """Provider address -> {class: devices} the consumer holds."""
        providers = pci_providers(node)
        holders = holder_of(node)
        neutron = {device.address for device in node.pci_devices
                   if device.neutron.belong_to_neutron}
        held: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for address in consumer.pci:
            if address in neutron:
                continue  # held through a port: Neutron's allocation, left where it is
            key = holders.get(address)
            if key is None or key not in providers:
                raise ShimProblem("device_missing", (
                    f"consumer {consumer_uuid} uses PCI device {address}, which the host "
                    f"description does not list"))
            held[key][providers[key].resource_class] += 1
        return held

    def targets(self, node: Node, consumer_uuid: str, consumer: Consumer | None,
                resource_class: str, amount: int) -> dict[str, int]:
        if consumer is None or not consumer.pci:
            raise ShimProblem("unplaceable_allocation", (
                f"consumer {consumer_uuid} holds {amount} {resource_class} on the compute "
                f"node but the host description lists no PCI device for it"))
        held = self._held(node, consumer_uuid, consumer)
        return {key: counts[resource_class] for key, counts in held.items()
                if counts[resource_class]}

    def created(self, node: Node, consumer: Consumer) -> dict[str, dict[str, int]]:
        return {key: dict(counts)
                for key, counts in self._held(node, consumer.uuid, consumer).items()}

    def extra_reshape_needed(self, node: Node, tree: ProviderTree, nodename: str,
                             plans: list[ChildPlan]) -> bool:
        by_key = {plan.key: plan for plan in plans}
        for consumer in node.consumers:
            for key in self._held(node, consumer.uuid, consumer) if consumer.pci else ():
                plan = by_key[key]
                if not tree.exists(plan.name):
                    return True
                if not set(plan.inventory) <= set(tree.data(plan.name).inventory):
                    return True
        return False

    def owns(self, data: ProviderData, nodename: str) -> bool:
        return os_traits.COMPUTE_MANAGED_PCI_DEVICE in data.traits

