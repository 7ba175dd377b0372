"""Provider trees and allocations for many nodes at once, from a bulk read.

The report client learns a node's tree with dozens of requests (the tree's
listing, then inventory, aggregates and traits of every provider, then the
sharing providers in its aggregates) and its consumers' allocations with one
request per provider and one per consumer. On the database (PlacementDirect)
the same state comes from :func:`placement_wsgi.objects.tree_state.read_trees`
in a few set-based statements per batch of trees. This module turns that
state into exactly what the migration consumes today:

* :func:`provider_tree`: the :class:`ProviderTree` that
  ``SchedulerReportClient.get_provider_tree_and_ensure_root(ctx, root)``
  returns for a client that knew nothing before (same providers, names,
  parents, generations, inventories, traits and aggregates; sharing
  providers as roots of their own);
* :func:`node_states`: ``(root uuid, tree, allocations)`` per root, where
  ``allocations`` is what ``get_allocations_for_provider_tree(ctx, nodename)``
  returns: ``{consumer: GET /allocations/{consumer} body at 1.28}`` for
  every consumer holding anything in the node's tree.

Trees are built one at a time from a stream read in batches, so memory
stays bounded whatever the number of nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, Protocol

from nova_reshape.provider_tree import ProviderTree
from placement_wsgi.objects.tree_state import DEFAULT_BATCH_SIZE, TreeState


class BulkReader(Protocol):
    """A transport that can read trees in bulk (``open_direct``'s DirectTransport)."""

    def read_trees(self, roots: Sequence[str] | None = None,
                   batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[TreeState]: ...


class NodeState(NamedTuple):
    """One node's state as the migration reads it.

    ``allocations``: consumer -> its ``GET /allocations/{consumer}`` body (1.28),
    except for the consumers in ``partial``, whose body holds only their
    allocations on the providers of this tree (read per provider over the
    API: no consumer generation, owner or allocations elsewhere). A bulk
    read leaves ``partial`` empty.

    ``unread``: providers of the tree whose allocations are not read yet
    (over the API, until the check needs them; see
    :func:`~nova_reshape.compute.readers.check_read`): ``allocations`` then
    holds only what the consumers hold on the other providers.
    """

    root: str
    tree: ProviderTree
    allocations: dict[str, dict[str, Any]]
    partial: frozenset[str] = frozenset()
    unread: frozenset[str] = frozenset()


def _refresh(tree: ProviderTree, state: TreeState, uuid: str, generation: int) -> None:
    """What the report client's association refresh stores for one provider."""
    tree.update_inventory(uuid, state.inventories.get(uuid, {}), generation=generation)
    tree.update_aggregates(uuid, state.aggregates.get(uuid, []), generation=generation)
    tree.update_traits(uuid, state.traits.get(uuid, []), generation=generation)


def provider_tree(state: TreeState) -> ProviderTree:
    """The tree a fresh report client caches for ``state.root`` (see module docstring)."""
    tree = ProviderTree()
    tree.populate_from_iterable(state.providers)
    entries = {entry["uuid"]: entry for entry in (*state.providers, *state.sharing)}
    for provider in state.providers:
        _refresh(tree, state, provider["uuid"], provider["generation"])
        for sharing in state.sharing_of.get(provider["uuid"], ()):
            entry = entries[sharing]
            if not tree.exists(sharing):
                tree.new_root(entry["name"], sharing, generation=entry["generation"])
            _refresh(tree, state, sharing, entry["generation"])
    return tree


def node_state(state: TreeState) -> NodeState:
    """The :class:`NodeState` of one tree as read."""
    return NodeState(state.root, provider_tree(state), state.allocations)


def node_states(placement: BulkReader, roots: Sequence[str] | None = None,
                batch_size: int = DEFAULT_BATCH_SIZE) -> Iterator[NodeState]:
    """:class:`NodeState` of every root in ``roots`` (or every root), streamed.

    ``roots`` that are not root providers are skipped; the order is that of
    ``roots`` (or provider id order).
    """
    for state in placement.read_trees(roots, batch_size):
        yield node_state(state)
