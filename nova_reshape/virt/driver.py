"""The part of a virt driver the resource tracker needs.

A driver describes one or more compute nodes (nodename = the hypervisor
hostname = the name of the node's root provider). The resource tracker asks
it to bring a :class:`~nova_reshape.provider_tree.ProviderTree` up to date:

``update_provider_tree(provider_tree, nodename, allocations=None)``
    Edit ``provider_tree`` in place for the providers the driver owns
    (inventory, traits, aggregates, child providers); leave other providers
    (sharing, Cyborg, neutron) alone. A provider the driver drops from the
    tree is deleted in Placement.

    If data must move between providers and ``allocations`` is None, raise
    :class:`~nova_reshape.exception.ReshapeNeeded` before touching any
    allocation data (creating the new children first is fine). When called
    with ``allocations`` (``{consumer: GET /allocations/<consumer> body}``),
    edit that dict in place so it describes every consumer's final
    allocations, leave allocations on providers it does not reshape as they
    are, and raise :class:`~nova_reshape.exception.ReshapeFailed` for data it
    cannot reconcile.

``capabilities_as_traits()``
    Optional: ``{trait: bool}`` for capability traits the tracker sets or
    clears on the root provider (default: none).
"""

from __future__ import annotations

from typing import Any

from nova_reshape.provider_tree import ProviderTree


class ComputeDriver:
    """Base class of drivers and shims; subclasses implement update_provider_tree."""

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        """Bring ``provider_tree`` in line with the host (see module docstring)."""
        raise NotImplementedError()

    def capabilities_as_traits(self) -> dict[str, bool]:
        """Capability traits of the root provider: trait -> present."""
        return {}
