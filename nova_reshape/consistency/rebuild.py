"""Placement rebuilt from nova's databases, offline, into an empty Placement database.

nova's answer to a lost (or hopelessly out of sync) Placement database is
to create it anew, restart every nova-compute, wait for their reports,
then run ``heal_allocations`` and ``sync_aggregates``. ``placement
rebuild`` does the same in one offline step, in that order:

1. **trees**: every compute node's root as nova-compute's first start
   creates it, then brought to the target release's shape by the
   migration's own flow (VGPU, PCPU, NUMA, PCI and Cyborg's accelerators
   where its database is given), from the same in-memory host descriptions
   ``describe_hosts`` writes. The trees are built before any allocation
   exists: the descriptions go to the migration without their consumers
   (:func:`without_consumers`), so nothing is moved, only built;
2. **allocations**: heal_allocations over every cell with the nested
   placement (``--heal-nested``: each class on the provider of the tree
   that has it, VGPU on its GPU, held PCI devices on their providers),
   since the trees already have the target shape (:func:`heal_everything`);
3. **aggregates**: sync_aggregates' plan (:mod:`.aggregates`: nova's host
   aggregates as Placement aggregates on the compute roots) applied with
   its own requests, when the command gives one.

The steps that need the compute layer (the first start, the migration)
are given to :func:`rebuild` by the command (``nova_reshape/cmd/rebuild.py``):
this package sits beside ``compute/`` and does not import it.

What nova's databases cannot tell is not invented; :data:`NOT_REBUILT`
says it once.

This is the rebuild through Placement's requests. The command first
decides the same result in memory (:mod:`.rebuilt` for the heal and the
aggregates) and writes it set-based; it runs :func:`rebuild` only where
a step would stop or be refused, so the requests report it as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nova_reshape.consistency import aggregates as syncing
from nova_reshape.consistency import heal as healing
from nova_reshape.novadb.cells import CellRead
from nova_reshape.virt.host import Host

#: What the rebuild cannot know, said once by the command.
NOT_REBUILT = (
    "not rebuilt, as nova's databases do not hold it: Neutron's agent providers "
    "(bandwidth, packet rate; each agent re-creates its own at start) and the "
    "allocations of ports' resource requests; ironic nodes' providers (nova-compute "
    "creates them from Ironic at start); the allocations of Cyborg's bound accelerator "
    "requests (their providers are built with --cyborg-database; a device-profile "
    "flavor stops the heal as nova's does); the source-node allocations of moves in "
    "progress (as nova's own rebuild loses them)")


@dataclasses.dataclass(frozen=True)
class Rebuilt:
    """A finished rebuild: roots created, nodes brought to the target shape, instances
    given allocations, heal's result (its outcome and any stop line) and the
    aggregates' (None: not run, the heal stopped first or no plan was given)."""

    roots: int
    nodes: int
    healed: int
    heal: healing.Result
    aggregates: syncing.SyncOutcome | None = None

    @property
    def healed_all(self) -> bool:
        """Whether every instance heal_allocations would heal was healed."""
        return self.heal.outcome in (healing.Outcome.HEALED, healing.Outcome.NOTHING)

    @property
    def complete(self) -> bool:
        """Whether the heal and the aggregates' writes all went through (hosts the
        aggregates could not place, as sync_aggregates reports them, do not count)."""
        stopped = self.aggregates is not None and (
            self.aggregates.stopped or self.aggregates.plan.too_many)
        return self.healed_all and not stopped


def without_consumers(hosts: Iterable[Host]) -> list[Host]:
    """``hosts`` with no consumer on any node: the trees alone, for a Placement that
    holds no allocation yet (the instances are healed onto them afterwards)."""
    return [dataclasses.replace(host, nodes=tuple(
        dataclasses.replace(node, consumers=()) for node in host.nodes)) for host in hosts]


def heal_everything(cells: Sequence[CellRead], placement: Any,
                    done: Callable[[int, int], None] | None = None) -> healing.Result:
    """heal_allocations over ``cells`` (cell0 left out) with the nested placement."""
    live = [read for read in cells if not read.cell.is_cell0]
    return healing.heal(live, placement, healing.Options(heal_nested=True), done=done)


#: Builds the trees through a transport: (roots created, nodes brought to the shape).
TreeBuilder = Callable[[Any], tuple[int, int]]


def rebuild(cells: Sequence[CellRead], placement: Any, build_trees: TreeBuilder,
            healed: Callable[[int, int], None] | None = None,
            sync: syncing.SyncPlan | None = None) -> Rebuilt:
    """Build the trees (``build_trees(placement)``), heal every instance onto them,
    then (``sync`` given, the heal complete) add the aggregates' memberships. Raises
    what the steps raise; a heal or a sync that stops early is in the result."""
    roots, nodes = build_trees(placement)
    result = heal_everything(cells, placement, healed)
    rebuilt = Rebuilt(roots=roots, nodes=nodes, healed=result.written, heal=result)
    if sync is None or not rebuilt.healed_all:
        return rebuilt
    return dataclasses.replace(rebuilt, aggregates=syncing.apply_plan(placement, sync))
