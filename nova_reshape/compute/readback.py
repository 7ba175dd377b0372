"""Checking a written node against what was planned, from its state as written.

In-process on the database the migration hands each node's state as its
write leaves it, read inside the write's transaction before commit; over
the API, the state read back after the batch's writes. With the
simulation that was written: allocations must be
conserved, inventories must hold them (:mod:`nova_reshape.compute.invariants`)
and Placement must now hold what the plan said
(:func:`nova_reshape.compute.plan.unplanned`).

Over the API the read-back starts with one listing of the tree
(:func:`as_listed`). Every write of a node is checked by Placement against
the generation the previous one answered (the ``POST /reshaper`` against
every provider's), and each answer is checked, so when the listing shows
exactly the planned providers, each at the generation its last write
answered (or, after the reshaper, which answers none, past the generation
it was sent), nothing but the node's own writes touched the tree: the node
is then as planned, and the listing is its read-back. Anything else (a
provider added or gone, a generation the writes do not explain) and the
tree is read back in full. What the listing does not re-read is what the
service stored for each accepted write: it is trusted to do what its 2xx
answer says (docs/performance.md, "Over HTTP").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from nova_reshape.compute import invariants, plan, preflight
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move
from placement_wsgi.objects.inventory_record import Inventory


def held_in_tree(state: NodeState, inventories: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """consumer -> its allocations on the providers of ``inventories`` only."""
    held: dict[str, dict[str, Any]] = {}
    for consumer, body in state.allocations.items():
        for rp_uuid, entry in body.get("allocations", {}).items():
            if rp_uuid in inventories:
                mine = held.setdefault(consumer, {"allocations": {}})
                mine["allocations"][rp_uuid] = {"resources": dict(entry["resources"])}
    return held


def violations(nodename: str, simulation: preflight.Simulation, moves: Sequence[Move],
               state: NodeState) -> list[invariants.Violation]:
    """Every invariant the node as read back (``state``) breaks, and every
    difference from the plan of ``simulation`` (as ``not_as_planned``)."""
    tree = state.tree
    inventories = preflight.inventories_of(tree, nodename)
    after = held_in_tree(state, inventories)
    before_scope = simulation.tree_before.get_provider_uuids(nodename)
    names = preflight.names_of(simulation.tree_before, tree)
    found = invariants.check_node(
        simulation.allocations_before, after, before_scope, inventories,
        [move for move in moves if move.changes_totals], names)
    found += [
        invariants.Violation("not_as_planned", None, None, "", problem)
        for problem in plan.unplanned(simulation.plan, simulation.tree_after, tree,
                                      simulation.allocations_after, after)]
    return found


class WrittenTree(NamedTuple):
    """A node as its writes over the API should have left it, for its read-back."""

    nodename: str
    #: The tree the plan leads to, and the allocations (consumer -> body) it leaves.
    tree: ProviderTree
    allocations: Mapping[str, Any]
    #: provider uuid -> its generation as the node's last write to it answered (as
    #: read, for a provider not written), for every provider of the node after.
    generations: Mapping[str, int]
    #: provider uuid -> the generation the reshaper was sent for it (the reshaper
    #: answers none: Placement's must now be past it).
    reshaped: Mapping[str, int]


def stored(inventory: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``inventory`` as Placement stores and shows it: a plan's records leave out
    the fields at their default, which Placement fills in."""
    return {rc: Inventory.from_body(rc, record).as_dict() for rc, record in inventory.items()}


def _explained(written: WrittenTree, rp: str, generation: int) -> bool:
    if rp in written.reshaped:
        return generation > written.reshaped[rp]
    return generation == written.generations.get(rp)


def explains(written: WrittenTree, records: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``records`` (the tree's listing, 1.14) show exactly the planned
    providers (uuid, name, parent), each at a generation the node's writes
    explain: nothing but those writes touched the tree (module docstring)."""
    planned = written.tree
    want = {rp: planned.data(rp) for rp in planned.get_provider_uuids(written.nodename)}
    listed = {record["uuid"]: record for record in records}
    if set(listed) != set(want):
        return False
    return all(
        (record["name"], record.get("parent_provider_uuid")) == (want[rp].name,
                                                                 want[rp].parent_uuid)
        and _explained(written, rp, record["generation"]) for rp, record in listed.items())


def listing_of(tree: ProviderTree, root: str) -> list[dict[str, Any]]:
    """``root``'s subtree of ``tree`` as its listing gives it (uuid, name, parent,
    generation)."""
    return [{"uuid": rp, "name": data.name, "parent_provider_uuid": data.parent_uuid,
             "generation": data.generation}
            for rp, data in ((rp, tree.data(rp)) for rp in tree.get_provider_uuids(root))]


def as_listed(written: WrittenTree, records: Sequence[Mapping[str, Any]]) -> NodeState | None:
    """The node as planned, at the generations of ``records`` (its tree's listing,
    1.14), when the listing proves the node's writes are all that touched it
    (module docstring); None when it does not (read the tree back in full).

    Inventories are the plan's as Placement stores them (:func:`stored`);
    allocations the plan's, each consumer's share on the tree only and
    partial, as a provider's allocation listing gives them.
    """
    if not explains(written, records):
        return None
    planned = written.tree
    want = {rp: planned.data(rp) for rp in planned.get_provider_uuids(written.nodename)}
    listed = {record["uuid"]: record for record in records}
    tree = ProviderTree()
    tree.populate_from_iterable(records)
    for rp, record in listed.items():
        data = want[rp]
        tree.update_inventory(rp, stored(data.inventory), generation=record["generation"])
        tree.update_traits(rp, data.traits)
        tree.update_aggregates(rp, data.aggregates)
    held: dict[str, dict[str, Any]] = {}
    for consumer, body in written.allocations.items():
        for rp, entry in (body or {}).get("allocations", {}).items():
            if rp in want:
                mine = held.setdefault(consumer, {"allocations": {}})
                mine["allocations"][rp] = {"resources": dict(entry["resources"])}
    return NodeState(written.tree.data(written.nodename).uuid, tree, held, frozenset(held))
