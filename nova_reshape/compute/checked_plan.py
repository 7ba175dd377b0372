"""A node's checked plan, kept until its write, and when it still holds.

The check plans each node from its tree and allocations as read; the
write, later, reads the node again. Planning again from that read costs a
whole pre-flight (:func:`~nova_reshape.compute.preflight.check_node`,
about a fifth of a node's CPU) and gives the same plan whenever Placement
still holds what the check read: every change Placement accepts to a
provider's inventories, traits, aggregates or allocations bumps its
generation, and every change to a consumer's allocations bumps the
consumer's. So a :class:`CheckedPlan` records what the check saw
(:func:`seen`: each provider of the tree with its name, parent and
generation, each consumer with its generation) and what the plan leads
to; :func:`still_valid` hands the plan back as a
:class:`~nova_reshape.compute.preflight.Simulation` on the state read
before the write when that state shows exactly what the check saw, and
None otherwise (the run plans again, as before). A consumer read only
partly (over the API, no generation) never matches a whole one.

The record holds no tree as read (the state read before the write is that
tree): it is spooled on disk with the node between the phases
(:mod:`~nova_reshape.compute.spool`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from nova_reshape.compute.plan import NodePlan
from nova_reshape.compute.preflight import Simulation
from nova_reshape.compute.tree_source import NodeState
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move

#: What a read shows of a node: its providers (uuid, name, parent, generation)
#: and its consumers (uuid, generation; None when read partly), both sorted.
Seen = tuple[tuple[tuple[str, str, str | None, int | None], ...],
             tuple[tuple[str, int | None], ...]]


def seen(state: NodeState) -> Seen:
    """What ``state`` shows that every change in Placement moves (module docstring)."""
    tree = state.tree
    providers = []
    for uuid in tree.get_provider_uuids():
        data = tree.data(uuid)
        providers.append((uuid, data.name, data.parent_uuid, data.generation))
    consumers = tuple(sorted(
        (consumer, None if consumer in state.partial else body.get("consumer_generation"))
        for consumer, body in state.allocations.items()))
    return tuple(sorted(providers)), consumers


class CheckedPlan(NamedTuple):
    """A node's plan as checked, and what the check read (see the module docstring)."""

    seen: Seen
    tree_after: ProviderTree
    allocations_after: dict[str, Any]
    moves: list[Move]
    reshape: bool
    plan: NodePlan
    left_to_neutron: tuple[str, ...]


def checked_plan(simulation: Simulation, state: NodeState) -> CheckedPlan:
    """The plan of ``simulation``, checked on ``state``, to keep until the write."""
    return CheckedPlan(seen(state), simulation.tree_after, simulation.allocations_after,
                       simulation.moves, simulation.reshape, simulation.plan,
                       simulation.left_to_neutron)


def still_valid(checked: CheckedPlan, state: NodeState) -> Simulation | None:
    """The checked plan on ``state`` (read before the write) when ``state`` shows
    exactly what the check read; None when anything moved (plan again)."""
    if seen(state) != checked.seen:
        return None
    return Simulation(state.tree, checked.tree_after, state.allocations,
                      checked.allocations_after, list(checked.moves), checked.reshape,
                      checked.plan, checked.left_to_neutron)
