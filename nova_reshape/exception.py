"""Exceptions of the compute side, named as nova names them.

Callers written against nova catch these by name, so the names, parents and
keyword arguments follow nova's. Each class has a ``msg_fmt`` filled from
the keyword arguments; a positional message replaces it (nova's
``InventoryInUse(detail)`` style). The keyword arguments are kept on
``self.kwargs`` so handlers can inspect, e.g., ``error.kwargs["uuid"]``.
"""

from __future__ import annotations

from typing import Any


class NovaException(Exception):
    """Base of every exception here; ``msg_fmt % kwargs`` is the message."""

    msg_fmt = "An unknown exception occurred."

    def __init__(self, message: Any = None, **kwargs: Any) -> None:
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                # A missing or mistyped argument must not hide the real error.
                message = f"{self.msg_fmt} ({kwargs})"
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class Invalid(NovaException):
    msg_fmt = "Bad Request - Invalid Parameters"


class NotFound(NovaException):
    msg_fmt = "Resource could not be found."


class InvalidConfiguration(Invalid):
    msg_fmt = "Configuration is Invalid."


class ComputeHostNotFound(NotFound):
    msg_fmt = "Compute host %(host)s could not be found."


class ReshapeNeeded(NovaException):
    """Signal from a driver: it needs the allocations to finish its tree."""

    msg_fmt = "Virt driver indicates that provider inventories need to be moved."


class ReshapeFailed(NovaException):
    msg_fmt = "Resource provider data migration failed: %(error)s"


class PlacementAPIConnectFailure(NovaException):
    msg_fmt = "Unable to communicate with the Placement API."


class PlacementAPIConflict(NovaException):
    msg_fmt = (
        "A conflict was encountered attempting to invoke the placement API at URL %(url)s: "
        "%(error)s")


class ResourceProviderUpdateConflict(PlacementAPIConflict):
    msg_fmt = (
        "A conflict was encountered attempting to update resource provider %(uuid)s "
        "(generation %(generation)d): %(error)s")


class PlacementReshapeConflict(PlacementAPIConflict):
    msg_fmt = (
        "A conflict was encountered attempting to reshape a provider tree: %(error)s")


class ResourceProviderCreationFailed(NovaException):
    msg_fmt = "Failed to create resource provider %(name)s"


class ResourceProviderRetrievalFailed(NovaException):
    msg_fmt = "Failed to get resource provider with UUID %(uuid)s"


class ResourceProviderAggregateRetrievalFailed(NovaException):
    msg_fmt = "Failed to get aggregates for resource provider %(uuid)s."


class ResourceProviderTraitRetrievalFailed(NovaException):
    msg_fmt = "Failed to get traits for resource provider %(uuid)s"


class ResourceProviderAllocationRetrievalFailed(NovaException):
    msg_fmt = (
        "Failed to retrieve allocations for resource provider %(rp_uuid)s: %(error)s")


class ConsumerAllocationRetrievalFailed(NovaException):
    msg_fmt = "Failed to retrieve allocations for consumer %(consumer_uuid)s: %(error)s"


class ResourceProviderUpdateFailed(NovaException):
    msg_fmt = (
        "Failed to update resource provider via URL %(url)s: %(error)s")


class ResourceProviderSyncFailed(NovaException):
    msg_fmt = (
        "Failed to synchronize the placement service with resource provider information "
        "supplied by the compute host.")


class ResourceProviderInUse(NovaException):
    msg_fmt = "Resource provider has allocations."


class ResourceProviderDeletionFailed(NovaException):
    msg_fmt = "Failed to delete resource provider %(uuid)s"


class ResourceProviderNotFound(NotFound):
    msg_fmt = "No such resource provider %(name_or_uuid)s."


class InvalidInventory(Invalid):
    msg_fmt = (
        "Inventory for '%(resource_class)s' on resource provider '%(resource_provider)s' "
        "invalid.")


class InventoryInUse(InvalidInventory):
    msg_fmt = (
        "Inventory for '%(resource_classes)s' on resource provider '%(resource_provider)s' "
        "in use.")


class InvalidResourceClass(Invalid):
    msg_fmt = "Resource class '%(resource_class)s' invalid."


class TraitCreationFailed(NovaException):
    msg_fmt = "Failed to create trait %(name)s: %(error)s"


class TraitRetrievalFailed(NovaException):
    msg_fmt = "Failed to retrieve traits from the placement API: %(error)s"


class AllocationUpdateFailed(NovaException):
    msg_fmt = "Failed to update allocations for consumer %(consumer_uuid)s. Error: %(error)s"


class AllocationDeleteFailed(NovaException):
    msg_fmt = "Failed to delete allocations for consumer %(consumer_uuid)s. Error: %(error)s"


class AllocationMoveFailed(NovaException):
    msg_fmt = (
        "Failed to move allocations from consumer %(source_consumer)s to consumer "
        "%(target_consumer)s. Error: %(error)s")


class UsagesRetrievalFailed(NovaException):
    msg_fmt = "Failed to retrieve usages for project %(project_id)s and user %(user_id)s."


class PlacementPciException(NovaException):
    msg_fmt = "Failed to gather or report PCI resources to Placement: %(error)s"


class PlacementPciDependentDeviceException(PlacementPciException):
    msg_fmt = (
        "Configuring both %(parent_dev)s and %(children_devs)s in [pci]device_spec is not "
        "supported. Either the parent PF or its children VFs can be configured.")


class PlacementPciMixedResourceClassException(PlacementPciException):
    msg_fmt = (
        "VFs from the same PF cannot be configured with different 'resource_class' values "
        "in [pci]device_spec. We got %(new_rc)s for %(new_dev)s and %(current_rc)s for "
        "%(current_devs)s.")


class PlacementPciMixedTraitsException(PlacementPciException):
    msg_fmt = (
        "VFs from the same PF cannot be configured with different set of 'traits' in "
        "[pci]device_spec. We got %(new_traits)s for %(new_dev)s and %(current_traits)s "
        "for %(current_devs)s.")


class NoValidHost(NovaException):
    msg_fmt = "No valid host was found. %(reason)s"
