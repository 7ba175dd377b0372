"""Where a migration run finds each node's root provider and the providers its check looks up.

The check of a node looks at few providers outside the node's tree: the
node's own root (by name and by the uuid its host file gives), the names of
the children it would create (another provider may bear one), Cyborg's uuid of each
accelerator, and the providers the node's consumers hold allocations on
elsewhere, with their roots (:func:`~nova_reshape.compute.preflight.listing_keys`).
A :class:`~nova_reshape.compute.preflight.Listing` of those answers the check
as a listing of every provider does. Two ways to get it:

* :class:`WholeListing`, over the API: every provider in one
  ``GET /resource_providers`` (1.14), read once per run; the survey reader
  (:mod:`~nova_reshape.compute.api_reader`) needs the whole listing anyway.
  It grows with the cloud (about 13 KB per node of a migrated cloud).
* :class:`BatchListing`, in-process on the database: per batch of nodes, the
  providers named or with a uuid the batch's nodes give, then those the
  batch's checks look up, each in one read
  (:func:`placement_wsgi.objects.tree_state.listed_providers`): no API call,
  and memory bounded by the batch whatever the size of the cloud.

:func:`listing_for` chooses once, by the rule the run's reader is chosen
by: the bulk source when one is given or the transport is in-process on
the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from nova_reshape.compute import preflight
from nova_reshape.compute.readers import read_listing
from nova_reshape.compute.tree_source import BulkReader, NodeState
from nova_reshape.transport.base import Placement
from nova_reshape.transport.direct import on_database
from nova_reshape.virt.described import DescribedDriver
from nova_reshape.virt.host import Node


class ProviderLookup(BulkReader, Protocol):
    """A bulk source that also lists providers by uuid or name (``open_direct``'s)."""

    def listed_providers(self, uuids: Sequence[str],
                         names: Sequence[str]) -> list[dict[str, Any]]: ...


class ProviderListing(Protocol):
    """The listings a run checks its nodes against (see the module docstring)."""

    #: Whether :meth:`for_check` needs the batch's states (read before any is checked).
    per_batch: bool

    def begin(self) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """The run starts: root -> its providers, as far as listed (for the reader)."""
        ...

    def of_nodes(self, nodes: Sequence[Node]) -> preflight.Listing:
        """A listing that resolves each of ``nodes`` to its root provider."""
        ...

    def for_check(self, listing: preflight.Listing,
                  checked: Iterable[tuple[Node, NodeState]],
                  driver: DescribedDriver) -> preflight.Listing:
        """``listing`` with every provider the checks of ``checked`` look up."""
        ...


class WholeListing:
    """Every provider, listed once through the API (see the module docstring)."""

    per_batch = False

    def __init__(self, placement: Placement) -> None:
        self.placement = placement
        self.listing: preflight.Listing | None = None

    def begin(self) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        self.listing = read_listing(self.placement)
        return self.listing.trees

    def of_nodes(self, nodes: Sequence[Node]) -> preflight.Listing:
        assert self.listing is not None, "begin() first"
        return self.listing

    def for_check(self, listing: preflight.Listing,
                  checked: Iterable[tuple[Node, NodeState]],
                  driver: DescribedDriver) -> preflight.Listing:
        return listing


class BatchListing:
    """A batch's providers only, read in bulk (see the module docstring)."""

    per_batch = True

    def __init__(self, source: ProviderLookup) -> None:
        self.source = source

    def begin(self) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        return {}

    def of_nodes(self, nodes: Sequence[Node]) -> preflight.Listing:
        return preflight.Listing(self.source.listed_providers(
            [node.uuid for node in nodes if node.uuid], [node.nodename for node in nodes]))

    def for_check(self, listing: preflight.Listing,
                  checked: Iterable[tuple[Node, NodeState]],
                  driver: DescribedDriver) -> preflight.Listing:
        uuids: set[str] = set()
        names: set[str] = set()
        for node, state in checked:
            node_uuids, node_names = preflight.listing_keys(node, driver, state.tree,
                                                            state.allocations)
            uuids |= node_uuids
            names |= node_names
        uuids -= set(listing.by_uuid)
        names -= set(listing.by_name)
        if not uuids and not names:
            return listing
        found = self.source.listed_providers(sorted(uuids), sorted(names))
        return preflight.Listing([*listing.by_uuid.values(),
                                  *(p for p in found if p["uuid"] not in listing.by_uuid)])


def listing_for(placement: Placement, bulk: BulkReader | None) -> ProviderListing:
    """The run's listing: per batch from ``bulk`` (or ``placement`` when it is
    in-process on the database) when that lists providers, else the whole
    listing through ``placement``."""
    source = bulk if bulk is not None else on_database(placement)
    if source is not None and hasattr(source, "listed_providers"):
        return BatchListing(source)
    return WholeListing(placement)
