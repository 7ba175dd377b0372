"""A virt driver built from host descriptions and device shims.

The offline migration has no hypervisor to ask: what a driver would read
from libvirt comes from host description files instead
(:mod:`nova_reshape.virt.host`). :class:`DescribedDriver` composes the
shims, in libvirt's order (VGPU, PCPU, NUMA, then PCI and accelerators):
each brings its part of the node's tree to the new shape.

``update_provider_tree(tree, nodename)`` runs *every* shim even when an
early one needs a reshape, so all new children are in the tree, then
raises ``ReshapeNeeded`` if any shim did. Called again with allocations,
each shim edits them in turn. The resource classes the shims move are
disjoint unless the description gives a PCI device and an accelerator the
same class (a pre-flight finding); the first shim then takes them.

``moves`` lists every allocation change of the last call with allocations
(see :class:`~nova_reshape.virt.shim.Move`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.cyborg import CyborgShim
from nova_reshape.virt.driver import ComputeDriver
from nova_reshape.virt.host import Host, Node
from nova_reshape.virt.numa import NumaShim
from nova_reshape.virt.pci import PciShim
from nova_reshape.virt.pcpu import PcpuShim
from nova_reshape.virt.releases import DriverOptions
from nova_reshape.virt.shim import DeviceShim, Move
from nova_reshape.virt.vgpu import VgpuShim

#: Every shim, in the order they run.
ALL_SHIMS: tuple[type[DeviceShim], ...] = (VgpuShim, PcpuShim, NumaShim, PciShim,
                                           CyborgShim)


def shims_for(options: DriverOptions) -> tuple[type[DeviceShim], ...]:
    """The shims of the reshapes the options' target release performs, in order."""
    kinds = {kind.value for kind in options.reshapes}
    return tuple(shim for shim in ALL_SHIMS if shim.kind in kinds)


def nodes_of(hosts: Iterable[Host]) -> dict[str, Node]:
    """nodename -> Node for every node of ``hosts``, ironic ones included."""
    return {node.nodename: node for host in hosts for node in host.nodes}


class DescribedDriver(ComputeDriver):
    """Drives the shims for the nodes of some host descriptions.

    ``nodes``: nodename -> Node. ``shims``: the shim classes to compose
    (default all, in :data:`ALL_SHIMS` order); ``options`` is handed to
    each shim.
    """

    def __init__(self, nodes: Mapping[str, Node],
                 shims: Sequence[type[DeviceShim]] = ALL_SHIMS,
                 options: DriverOptions | None = None) -> None:
        self.nodes = dict(nodes)
        self.options = options or DriverOptions()
        self.shims = [shim(self.nodes, self.options) for shim in shims]
        self.moves: list[Move] = []

    @classmethod
    def from_hosts(cls, hosts: Iterable[Host],
                   shims: Sequence[type[DeviceShim]] = ALL_SHIMS) -> DescribedDriver:
        return cls(nodes_of(hosts), shims)

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        """Run every shim on ``nodename``; ReshapeNeeded if any needs one."""
        if nodename not in self.nodes:
            raise exception.ComputeHostNotFound(host=nodename)
        self.moves = []
        needed = False
        for shim in self.shims:
            shim.moves = []
            try:
                shim.update_provider_tree(provider_tree, nodename, allocations=allocations)
            except exception.ReshapeNeeded:
                needed = True
            self.moves.extend(shim.moves)
        if needed:
            raise exception.ReshapeNeeded()
