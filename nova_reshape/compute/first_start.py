"""What nova-compute's first start writes for a compute node Placement has no provider of.

A compute node without a root provider (a Placement database rebuilt from
nothing, ``placement rebuild``) gets one from nova-compute's resource
tracker at its next start: the report client creates the root (uuid and
name of the ``compute_nodes`` row), the virt driver reports ``VCPU``,
``MEMORY_MB`` and ``DISK_GB`` from the hypervisor, and the tracker sets
``COMPUTE_NODE``, ``OWNER_NOVA`` and (for a disabled service)
``COMPUTE_STATUS_DISABLED``. Offline the hypervisor's totals are those it
last reported into nova's ``compute_nodes`` row; ratios and reservations
follow nova.conf's rules (:mod:`nova_reshape.virt.root`: ``*_allocation_ratio``
when set, else the row's, else ``initial_*``; nova's defaults without a
nova.conf). This is the flat root an older release would have left; the
target release's shape (CPU sets, NUMA, VGPU, PCI, accelerators) is then
the migration's job, exactly as on a deployment that had Placement.

:func:`create_roots` runs the real flow (:class:`ResourceTracker` over a
:class:`~nova_reshape.report.SchedulerReportClient`) with
:class:`ComputeNodeDriver` as the virt driver, once per node. Ironic nodes
are not created here: their inventory is Ironic's, which nova's databases
do not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import os_resource_classes as orc

from nova_reshape.compute.resource_tracker import ComputeNode, ResourceTracker
from nova_reshape.nova.conf.compute import NovaConf
from nova_reshape.novadb.records import ComputeNodeRecord
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.report import SchedulerReportClient
from nova_reshape.transport.base import Placement
from nova_reshape.virt import root
from nova_reshape.virt.driver import ComputeDriver

#: The row's column holding each class's total, and its stored ratio.
_TOTALS = ((orc.VCPU, "vcpus", "cpu_allocation_ratio"),
           (orc.MEMORY_MB, "memory_mb", "ram_allocation_ratio"),
           (orc.DISK_GB, "local_gb", "disk_allocation_ratio"))


class NewNode(NamedTuple):
    """A compute node to create: its row, whether its service is disabled, its nova.conf."""

    record: ComputeNodeRecord
    disabled: bool
    conf: NovaConf | None


def root_inventory(record: ComputeNodeRecord,
                   conf: NovaConf | None) -> dict[str, dict[str, Any]]:
    """The root's inventory as the node's hypervisor last reported it (see the module);
    a class whose total is 0 is left out, as Placement refuses it."""
    conf = conf or NovaConf()
    inventory = {}
    for rc, column, ratio_column in _TOTALS:
        total = getattr(record, column)
        if not total or total < 0:
            continue
        stored = getattr(record, ratio_column)
        inventory[rc] = {
            "total": total, "min_unit": 1, "max_unit": total, "step_size": 1,
            "reserved": root.reserved(conf, rc),
            "allocation_ratio": root.ratio(conf, rc, None if stored is None
                                           else {"allocation_ratio": stored})}
    return inventory


class ComputeNodeDriver(ComputeDriver):
    """A virt driver that reports each node's root inventory from its ``compute_nodes``
    row (``inventories``: nodename -> :func:`root_inventory`)."""

    def __init__(self, inventories: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
        self.inventories = inventories

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        provider_tree.update_inventory(nodename, dict(self.inventories[nodename]))


def create_roots(placement: Placement, nodes: Iterable[NewNode],
                 done: Callable[[int], None] | None = None) -> int:
    """Run nova-compute's start-up update for every node of ``nodes`` (ironic ones
    left out) through ``placement``; how many were run. Raises what the tracker
    raises (a node Placement refuses stops the run)."""
    count = 0
    for node in nodes:
        if not creates_root(node):
            continue
        # One report client per node, as each nova-compute has its own: a shared
        # one would carry every tree created so far in its cache.
        start(node, SchedulerReportClient(placement))
        count += 1
        if done is not None:
            done(count)
    return count


def creates_root(node: NewNode) -> bool:
    """Whether nova-compute's start creates a root for ``node`` here (not for ironic
    nodes, nor for a row without a uuid)."""
    return not node.record.is_ironic and bool(node.record.uuid)


def start(node: NewNode, reportclient: Any) -> None:
    """nova-compute's start-up update of ``node`` through ``reportclient`` (a
    :class:`SchedulerReportClient`, or anything answering the tracker's calls)."""
    record = node.record
    name = record.hypervisor_hostname
    driver = ComputeNodeDriver({name: root_inventory(record, node.conf)})
    tracker = ResourceTracker(record.host, driver, reportclient,
                              [ComputeNode(uuid=record.uuid or "", hypervisor_hostname=name)],
                              disabled=node.disabled)
    tracker.update_available_resource(None, name, startup=True)


class FreshReportClient:
    """The report client of a nova-compute whose node Placement has no provider of, in
    memory: the tree it hands the tracker is the new root alone (no allocation), and
    :attr:`tree` is what the tracker asks it to write (:func:`flat_root`)."""

    def __init__(self) -> None:
        self.tree: ProviderTree | None = None

    def get_provider_tree_and_ensure_root(self, context: object, rp_uuid: str,
                                          name: str | None = None,
                                          parent_provider_uuid: str | None = None,
                                          ) -> ProviderTree:
        tree = ProviderTree()
        tree.new_root(name or rp_uuid, rp_uuid, generation=0)
        return tree

    def get_allocations_for_provider_tree(self, context: object,
                                          nodename: str) -> dict[str, Any]:
        return {}

    def update_from_provider_tree(self, context: object, new_tree: ProviderTree,
                                  allocations: Any = None) -> None:
        self.tree = new_tree


def flat_root(node: NewNode) -> ProviderTree:
    """The root :func:`create_roots` would create for ``node`` (which
    :func:`creates_root`), computed in memory by the same tracker flow."""
    client = FreshReportClient()
    start(node, client)
    assert client.tree is not None
    return client.tree
