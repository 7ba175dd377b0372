"""``--heal-nested``: an instance's allocation placed on the providers of its node's tree.

nova 34 writes a healed allocation on the compute node provider only, so
after a reshape (VGPU on one child per GPU, PCI devices on device
providers, CPUs and memory on NUMA children) it either refuses (a vGPU
flavor, exit 8) or writes classes the root no longer has (Placement
refuses, exit 3). With ``--heal-nested`` each request group goes where the
tree holds its classes:

* the flavor's unnumbered group, class by class: the root when the root has
  an inventory of the class, else the first provider of the tree (root
  first, then in creation order) that has the class with room for the
  amount;
* a numbered group (``resources1:VGPU=1``): the first provider holding all
  of its classes with room;
* PCI devices the instance holds in nova's database (``pci_devices``): one
  unit of the device provider's class on the provider of that device
  (``<node>_<ADDRESS>``, a VF on its parent's), as the migration's PCI shim
  names them; devices with no provider (Neutron's) are left out.

Which physical GPU holds an instance's mediated devices is not in nova's
databases: the first GPU child with room is taken, exact when the node has
one GPU. What finds no provider stays on the root, where Placement refuses
it as it would refuse nova's write. Room is counted with what was already
placed in this run, so two instances never share a unit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from nova_reshape.nova.pci import PciDevice
from nova_reshape.scheduler.resource_request import ResourceRequest
from nova_reshape.virt.pci import provider_name
from placement_wsgi.capacity import capacity


@dataclasses.dataclass
class TreeView:
    """One compute node's provider tree: providers root first (``uuid``, ``name``),
    inventories by provider, and usage by provider (updated as the run places)."""

    root: str
    providers: list[Mapping[str, Any]]
    inventories: dict[str, dict[str, Mapping[str, Any]]]
    usages: dict[str, dict[str, int]]

    def room(self, uuid: str, resource_class: str) -> float:
        """What the provider can still hand out of ``resource_class`` (0 without it)."""
        record = self.inventories.get(uuid, {}).get(resource_class)
        if record is None:
            return 0
        total = capacity(record["total"], record.get("reserved", 0),
                         record.get("allocation_ratio", 1.0))
        return total - self.usages.get(uuid, {}).get(resource_class, 0)

    def fits(self, uuid: str, resources: Mapping[str, int]) -> bool:
        return all(self.room(uuid, rc) >= amount and self._unit_fits(uuid, rc, amount)
                   for rc, amount in resources.items())

    def _unit_fits(self, uuid: str, resource_class: str, amount: int) -> bool:
        record = self.inventories.get(uuid, {}).get(resource_class, {})
        return amount <= record.get("max_unit", amount)

    def take(self, allocations: Mapping[str, Mapping[str, int]]) -> None:
        """Count ``allocations`` (provider -> class -> amount) as used."""
        for uuid, resources in allocations.items():
            used = self.usages.setdefault(uuid, {})
            for rc, amount in resources.items():
                used[rc] = used.get(rc, 0) + amount

    def by_name(self) -> dict[str, str]:
        return {provider["name"]: provider["uuid"] for provider in self.providers}


def _first_fitting(tree: TreeView, resources: Mapping[str, int]) -> str:
    for provider in tree.providers:
        if tree.fits(provider["uuid"], resources):
            return provider["uuid"]
    return tree.root


def _add(placed: dict[str, dict[str, int]], uuid: str, resources: Mapping[str, int],
         tree: TreeView | None = None) -> None:
    """Add ``resources`` on ``uuid`` to ``placed`` (and count them used in ``tree``)."""
    if tree is not None:
        tree.take({uuid: resources})
    mine = placed.setdefault(uuid, {})
    for rc, amount in resources.items():
        mine[rc] = mine.get(rc, 0) + amount


def device_resources(tree: TreeView, nodename: str,
                     devices: Iterable[PciDevice]) -> dict[str, dict[str, int]]:
    """Provider -> {its device class: devices held} for the held devices that have a
    provider in the tree."""
    names = tree.by_name()
    placed: dict[str, dict[str, int]] = {}
    for device in devices:
        name = provider_name(nodename, device.parent_addr if device.dev_type == "type-VF"
                             and device.parent_addr else device.address)
        uuid = names.get(name)
        classes = list(tree.inventories.get(uuid or "", {}))
        if uuid and len(classes) == 1:
            _add(placed, uuid, {classes[0]: 1})
    return placed


def place(request: ResourceRequest, tree: TreeView, nodename: str,
          devices: Iterable[PciDevice] = ()) -> dict[str, dict[str, int]]:
    """Provider -> class -> amount for ``request`` and ``devices`` (see the module);
    the tree's usage is updated group by group, so each group sees the room the
    previous ones left."""
    placed: dict[str, dict[str, int]] = {}
    root_classes = tree.inventories.get(tree.root, {})
    for suffix, group in request.groups().items():
        if suffix:
            _add(placed, _first_fitting(tree, group.resources), group.resources, tree)
            continue
        for rc, amount in group.resources.items():
            target = tree.root if rc in root_classes else _first_fitting(tree, {rc: amount})
            _add(placed, target, {rc: amount}, tree)
    for uuid, resources in device_resources(tree, nodename, devices).items():
        _add(placed, uuid, resources, tree)
    return placed
