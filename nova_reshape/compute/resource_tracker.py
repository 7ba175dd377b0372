"""The resource tracker's Placement update, including the reshape.

For each compute node the tracker reads the node's provider tree from
Placement (through the report client's cache), lets the virt driver edit
it, and writes the differences back. A driver that needs allocations moved
between providers raises ``ReshapeNeeded``; at start-up the tracker then
gives it every allocation on the node's providers and sends the result as
one atomic ``POST /reshaper``. After start-up a ``ReshapeNeeded`` is a bug
and is re-raised.

Conflicts (another writer bumped a provider generation: a
``ResourceProviderUpdateConflict`` or ``PlacementReshapeConflict``) clear the
report client's cache; the whole update is then run again from a freshly
read tree, up to :data:`CONFLICT_ATTEMPTS` times in all.

The offline migration command runs exactly this flow with ``startup=True``
against ``PlacementDirect``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any

import os_traits

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderTree

LOG = logging.getLogger(__name__)

#: Attempts of one node's update when it keeps hitting generation conflicts.
CONFLICT_ATTEMPTS = 4

#: Optional hook for PCI-in-placement: edits the tree for the node's PCI
#: devices, given the allocations, and returns True if allocations moved.
PciUpdater = Callable[[ProviderTree, str, "dict[str, Any] | None"], bool]


@dataclasses.dataclass
class ComputeNode:
    """What the flow needs of nova's ComputeNode: root provider uuid and name."""

    uuid: str
    hypervisor_hostname: str


class ResourceTracker:
    """Pushes one host's compute nodes to Placement through a report client.

    ``driver`` implements ``update_provider_tree`` (see
    :mod:`nova_reshape.virt.driver`); ``reportclient`` is a
    :class:`~nova_reshape.report.SchedulerReportClient`. ``compute_nodes``
    are the nodes this host owns. ``disabled`` sets (True) or clears (False)
    the ``COMPUTE_STATUS_DISABLED`` trait on every root; None leaves it. With
    ``allocations_every_update`` (nova since Zed) the node's allocations are
    read on every update; without it (Stein to Yoga) only when the driver
    asks for a reshape. ``pci_updater`` is the PCI-in-placement hook, which
    may reshape on any update.
    """

    def __init__(self, host: str, driver: Any, reportclient: Any,
                 compute_nodes: Iterable[ComputeNode] = (), disabled: bool | None = False,
                 allocations_every_update: bool = True,
                 pci_updater: PciUpdater | None = None) -> None:
        self.host = host
        self.driver = driver
        self.reportclient = reportclient
        self.compute_nodes = {node.hypervisor_hostname: node for node in compute_nodes}
        self.disabled = disabled
        self.allocations_every_update = allocations_every_update
        self.pci_updater = pci_updater

    # -- entry points ---------------------------------------------------------

    def update_available_resource(self, context: Any, nodename: str,
                                  startup: bool = False) -> None:
        """Update one node; ComputeHostNotFound if this host does not own it."""
        node = self.compute_nodes.get(nodename)
        if node is None:
            raise exception.ComputeHostNotFound(host=nodename)
        self._update(context, node, startup)

    def _update_available_resource_for_node(self, context: Any, nodename: str,
                                            startup: bool = False) -> None:
        """Update one node, applying nova's exception policy.

        ReshapeFailed and ReshapeNeeded always propagate (a start-up failure
        must stop the service or the migration); PCI and configuration
        problems propagate at start-up only; anything else is logged and the
        next periodic update tries again.
        """
        try:
            self.update_available_resource(context, nodename, startup=startup)
        except exception.ComputeHostNotFound:
            LOG.warning("Compute node '%s' not found. Possible race between compute node "
                        "creation and deletion.", nodename)
        except exception.ReshapeFailed:
            LOG.critical("Resource provider data migration failed fatally during %s for "
                         "node %s.", "startup" if startup else "periodic task", nodename,
                         exc_info=True)
            raise
        except exception.ReshapeNeeded:
            LOG.exception("The virt driver asked for a reshape outside start-up, or again "
                          "after being given the allocations, for node %s; this is "
                          "unexpected.", nodename)
            raise
        except (exception.PlacementPciException, exception.InvalidConfiguration):
            if startup:
                raise
            LOG.exception("Error updating PCI resources for node %s.", nodename)
        except Exception:
            LOG.exception("Error updating resources for node %s.", nodename)

    def _update(self, context: Any, compute_node: ComputeNode, startup: bool = False) -> None:
        """Push ``compute_node`` to Placement, re-driving after conflicts."""
        self._update_to_placement(context, compute_node, startup)

    # -- the Placement update -------------------------------------------------

    def _update_to_placement(self, context: Any, compute_node: ComputeNode,
                             startup: bool) -> None:
        for attempt in range(1, CONFLICT_ATTEMPTS + 1):
            try:
                self._update_to_placement_once(context, compute_node, startup)
                return
            except (exception.ResourceProviderUpdateConflict,
                    exception.PlacementReshapeConflict) as error:
                if attempt == CONFLICT_ATTEMPTS:
                    raise
                # The report client already dropped the stale cache; the next
                # attempt starts from what Placement holds now.
                LOG.info("Conflict updating placement for node %s (attempt %d of %d), "
                         "retrying from fresh data: %s", compute_node.hypervisor_hostname,
                         attempt, CONFLICT_ATTEMPTS, error)

    def _update_to_placement_once(self, context: Any, compute_node: ComputeNode,
                                  startup: bool) -> None:
        nodename = compute_node.hypervisor_hostname
        report = self.reportclient
        prov_tree = report.get_provider_tree_and_ensure_root(
            context, compute_node.uuid, name=nodename)
        allocations = None
        if self.allocations_every_update:
            allocations = report.get_allocations_for_provider_tree(context, nodename)

        driver_reshaped = False
        try:
            self.driver.update_provider_tree(prov_tree, nodename)
        except exception.ReshapeNeeded:
            if not startup:
                raise
            LOG.info("Performing resource provider inventory and allocation data migration "
                     "during compute service startup or fast-forward upgrade.")
            if allocations is None:
                allocations = report.get_allocations_for_provider_tree(context, nodename)
            self.driver.update_provider_tree(prov_tree, nodename, allocations=allocations)
            driver_reshaped = True

        self._set_root_traits(prov_tree, nodename)

        pci_reshaped = False
        if self.pci_updater is not None:
            pci_reshaped = bool(self.pci_updater(prov_tree, nodename, allocations))

        try:
            report.update_from_provider_tree(
                context, prov_tree,
                allocations=allocations if (driver_reshaped or pci_reshaped) else None)
        except exception.InventoryInUse as error:
            raise exception.PlacementPciException(error=str(error)) from error

    def _set_root_traits(self, prov_tree: ProviderTree, nodename: str) -> None:
        """Capability, COMPUTE_NODE, OWNER_NOVA and status traits on the root.

        Starts from the cached traits so traits set by others survive.
        """
        capabilities = getattr(self.driver, "capabilities_as_traits", None)
        prov_tree.update_traits(nodename, root_traits(
            prov_tree.data(nodename).traits, capabilities() if capabilities else {},
            self.disabled))


def root_traits(current: Iterable[str], capabilities: dict[str, bool],
                disabled: bool | None) -> set[str]:
    """The root's traits after nova's start: ``current`` with nova's own set.

    Capability traits are added or removed as the driver says,
    ``COMPUTE_NODE`` and ``OWNER_NOVA`` added, ``COMPUTE_STATUS_DISABLED``
    added or removed per the service's ``disabled`` flag (None: left as it
    is, for a caller that does not know the flag). Every other trait (an
    operator's custom ones) is kept.
    """
    traits = set(current)
    for trait, present in capabilities.items():
        if present:
            traits.add(trait)
        else:
            traits.discard(trait)
    traits.add(os_traits.COMPUTE_NODE)
    traits.add(os_traits.OWNER_NOVA)
    if disabled:
        traits.add(os_traits.COMPUTE_STATUS_DISABLED)
    elif disabled is not None:
        traits.discard(os_traits.COMPUTE_STATUS_DISABLED)
    return traits
