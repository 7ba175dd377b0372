"""Checking a written node against what was planned, from its state as written.

In-process on the database the migration hands each node's state as its
write leaves it, read inside the write's transaction before commit; over
the API, the state read back after the batch's writes. With the
simulation that was written: allocations must be
conserved, inventories must hold them (:mod:`nova_reshape.compute.invariants`)
and Placement must now hold what the plan said
(:func:`nova_reshape.compute.plan.unplanned`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nova_reshape.compute import invariants, plan, preflight
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.virt.shim import Move


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
