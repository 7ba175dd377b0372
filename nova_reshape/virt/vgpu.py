"""VGPU shim: one child provider per physical GPU.

The flat shape (Queens to Rocky libvirt) reported every VGPU on the compute
node's root provider. The new shape has one child per physical GPU, named
``<nodename>_<libvirt nodedev name>`` (``cmp-07_pci_0000_84_00_0``; spawn
code parses that name back, so it must match exactly), holding the GPU's
mdev class (``VGPU`` unless ``mdev_class`` says otherwise) with
``total = max_unit = capacity`` and libvirt's other fields. A GPU with
capacity 0 gets no child (Placement refuses a total of 0). Traits:
``OWNER_NOVA`` plus the GPU's ``traits`` from the description, added so
that traits an operator set (``CUSTOM_NVIDIA_11``) survive.

Each consumer's VGPU allocation on the root moves to the children holding
its mediated devices: one unit per mdev whose parent is that GPU. Unlike
libvirt, which only warns, a count that does not match the allocation is a
``ReshapeFailed`` here (the pre-flight reports it first), since moving the
counted amount would change what the consumer holds. With
``allow_vgpu_mismatch`` the shim does what libvirt does: it moves what it
counts, and the difference is recorded as a Move with no source (negative
when the consumer ends with less), which the invariants account for.
"""

from __future__ import annotations

import collections

import os_traits

from nova_reshape.provider_tree import ProviderData, ProviderTree
from nova_reshape.virt.host import Consumer, Node
from nova_reshape.virt.shim import ChildPlan, DeviceShim, ShimProblem, full_record, normalize_trait


def child_name(nodename: str, device_name: str) -> str:
    """``<nodename>_<nodedev name>``: the name spawn code parses back."""
    return f"{nodename}_{device_name}"


class VgpuShim(DeviceShim):
    """Moves mdev classes from the root to one child per physical GPU."""

    kind = "vgpu"

    def legacy_classes(self, node: Node) -> set[str]:
        return {gpu.mdev_class for gpu in node.gpus}

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list[ChildPlan]:
        return [ChildPlan(key=gpu.address, name=child_name(nodename, gpu.device_name),
                          inventory={gpu.mdev_class: full_record(gpu.capacity)},
                          traits=(os_traits.OWNER_NOVA,
                                  *(normalize_trait(t) for t in gpu.traits)))
                for gpu in node.gpus if gpu.capacity > 0]

    def targets(self, node: Node, consumer_uuid: str, consumer: Consumer | None,
                resource_class: str, amount: int) -> dict[str, int]:
        if consumer is None or not consumer.mdevs:
            raise ShimProblem("unplaceable_allocation", (
                f"consumer {consumer_uuid} holds {amount} {resource_class} on the compute "
                f"node but the host description lists no mediated device for it"))
        gpus = {gpu.address: gpu for gpu in node.gpus}
        counts: collections.Counter[str] = collections.Counter()
        for _mdev, address in consumer.mdevs:
            gpu = gpus.get(address)
            if gpu is None:
                raise ShimProblem("device_missing", (
                    f"consumer {consumer_uuid} has a mediated device on GPU {address}, "
                    f"which the host description does not list"))
            if gpu.mdev_class == resource_class:
                counts[address] += 1
        return dict(counts)

    def accepts_mismatch(self) -> bool:
        return self.options.allow_vgpu_mismatch

    def owns(self, data: ProviderData, nodename: str) -> bool:
        # A nova-owned ``<node>_pci_...`` child reporting only mdev classes:
        # a GPU that left the host or whose capacity dropped to 0.
        return (data.name.startswith(f"{nodename}_pci_")
                and os_traits.OWNER_NOVA in data.traits
                and os_traits.COMPUTE_MANAGED_PCI_DEVICE not in data.traits
                and all(rc == "VGPU" or rc.startswith("CUSTOM_") for rc in data.inventory))
