"""What ``placement audit`` and ``heal_allocations`` would fix on the nodes a migration reshapes.

The reshape moves every allocation it finds in a node's tree to the new
child providers and knows nothing of instances that hold none. So, before
``migrate_compute_inventory`` writes anything, two questions are asked of
the nodes it covers (and of no other), read-only:

* **orphaned**: an allocation in the node's tree that nova's audit finds
  orphaned (:func:`~.audit.find_orphans`: its consumer is neither an
  instance of the node nor a migration in progress there); the reshape
  would carry it into the new tree. Fixed by ``placement audit --delete``;
* **missing**: an instance of the node that heal_allocations would give
  allocations (:func:`~.heal.missing_allocations`: it holds none), or at
  which it would stop for want of a compute node or a healable flavor; the
  reshape would leave it out of the new tree. Fixed by ``placement
  heal_allocations --instance`` (``--heal-nested`` for a vGPU flavor, which
  nova's rule refuses), where a command can fix it.

An allocation whose consumer has another project or user than its
instance is moved by the reshape as it is (and healed as well after it):
no finding, and not looked for.

Reads: the provider listing once, then the allocations of the providers
in the covered trees only (in bulk on the database,
:func:`~.placement_reads.provider_allocations`), read once for both
questions. An instance seen there holds allocations; only an instance
not seen on its node's tree is read through the API (``GET
/allocations/{uuid}``: it may hold them elsewhere), so the reads stay
set-based whatever the number of instances (:class:`CoveredAllocations`).
Nothing here writes.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.consistency import audit, heal, nested, placement_io, resources
from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.consistency.placement_reads import (
    Provider,
    ProviderAllocations,
    ReadProgress,
    list_providers,
    provider_allocations,
)
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.novadb.cells import CellRead
from nova_reshape.transport.base import Placement

#: The commands that fix a finding (the run's nova and Placement inputs added).
AUDIT_COMMAND = "nova-reshape-manage placement audit --delete --resource_provider {provider}"
HEAL_COMMAND = "nova-reshape-manage placement heal_allocations --instance {instance}"


class Kind(enum.StrEnum):
    """What is wrong; its value is the migration's pre-flight class."""

    ORPHANED = "orphaned_allocation"
    MISSING = "missing_allocation"


@dataclasses.dataclass(frozen=True)
class CoveredNode:
    """A node the run reshapes: its name, its uuid (None: found by name) and host."""

    nodename: str
    uuid: str | None
    host: str | None


@dataclasses.dataclass(frozen=True)
class Inconsistency:
    """One finding: ``node`` (its name), the ``consumer`` and ``provider`` concerned,
    ``what`` is wrong, and the ``command`` that fixes it (None: none does)."""

    kind: Kind
    node: str
    consumer: str
    provider: str | None
    what: str
    command: str | None


class CoveredAllocations:
    """heal's view of Placement (:class:`~.heal.Allocations`) for the covered nodes:
    a consumer seen on a covered tree holds what was seen (its owner unknown: the
    check does not ask); any other is read through the API when asked."""

    def __init__(self, placement: Placement,
                 seen: Mapping[str, Mapping[str, Mapping[str, int]]]) -> None:
        self.seen = seen
        self.reads = placement_io.PlacementState(placement, per_consumer=True)

    def allocations_of(self, consumer: str) -> Mapping[str, Any]:
        held = self.seen.get(consumer)
        if held is None:
            return self.reads.allocations_of(consumer)
        return {"allocations": {provider: {"resources": dict(amounts)}
                                for provider, amounts in held.items()}}

    def tree(self, root: str) -> nested.TreeView | None:
        return self.reads.tree(root)


def covered_roots(providers: Sequence[Provider],
                  nodes: Sequence[CoveredNode]) -> dict[str, str]:
    """Root provider uuid -> node name, for each node Placement has a tree of: the
    provider of the node's uuid, else the root provider named as the node."""
    uuids = {provider.uuid for provider in providers}
    roots_by_name = {provider.name: provider.uuid for provider in providers
                     if provider.uuid == provider.root}
    found = {}
    for node in nodes:
        uuid = node.uuid if node.uuid in uuids else roots_by_name.get(node.nodename)
        if uuid is not None:
            found[uuid] = node.nodename
    return found


def _orphan_line(finding: audit.Finding) -> str:
    held = ", ".join(f"{name}={amount}" for name, amount in sorted(finding.resources.items()))
    whose = ("is neither an instance of this node nor a migration in progress there"
             if finding.root_is_node else
             "cannot be nova's: the tree's root is no compute node of the cells read")
    return f"allocation {held} of a consumer that {whose}; the reshape would move it"


def orphaned(reads: Sequence[ProviderAllocations], nova: NovaHolders,
             roots: Mapping[str, str]) -> list[Inconsistency]:
    """The orphaned allocations of ``reads`` (the covered trees', provider order)."""
    return [Inconsistency(Kind.ORPHANED, roots[finding.root], finding.consumer,
                          finding.provider, _orphan_line(finding),
                          AUDIT_COMMAND.format(provider=finding.provider))
            for finding in audit.find_orphans(reads, nova)]


def _instances(cells: Sequence[CellRead], uuids: set[str]) -> dict[str, InstanceRecord]:
    return {instance.uuid: instance for read in cells for instance in read.snapshot.instances
            if instance.uuid in uuids}


def _missing_finding(found: heal.MissingAllocation, node: str,
                     instance: InstanceRecord) -> Inconsistency:
    if found.problem is heal.Problem.NO_ALLOCATIONS:
        command = HEAL_COMMAND.format(instance=found.instance)
        if resources.unhealable(instance) is resources.Unhealable.VGPU:
            command += " --heal-nested"
        what = ("instance holds no allocation in Placement; the reshape would leave it out "
                f"(heal_allocations would write {found.detail})")
        return Inconsistency(Kind.MISSING, node, found.instance, None, what, command)
    what = (f"instance holds no allocation in Placement and heal_allocations cannot give it "
            f"one ({found.problem}: {found.detail}); the reshape would leave it out")
    return Inconsistency(Kind.MISSING, node, found.instance, None, what, None)


def missing(cells: Sequence[CellRead], state: heal.Allocations,
            nodes: Sequence[CoveredNode]) -> list[Inconsistency]:
    """The instances of ``nodes`` that hold no allocation.

    heal_allocations' rule runs with ``--heal-nested`` (a vGPU flavor is healed,
    not a stop); an instance it would still stop at (a Cyborg device profile, an
    unreadable flavor, no compute node) is a finding only when it holds nothing.
    """
    covered = {(node.host, node.nodename): node.nodename for node in nodes if node.host}
    lacking = [item for item in heal.missing_allocations(cells, state, heal_nested=True)
               if (item.host, item.node) in covered
               and item.problem is not heal.Problem.WRONG_OWNER
               and not _holds_any(state, item)]
    instances = _instances(cells, {item.instance for item in lacking})
    return [_missing_finding(item, covered[(item.host, item.node)], instances[item.instance])
            for item in lacking]


def _holds_any(state: heal.Allocations, item: heal.MissingAllocation) -> bool:
    """Whether the instance holds allocations (heal's stops come before it looks)."""
    if item.problem is heal.Problem.NO_ALLOCATIONS:
        return False
    return bool(state.allocations_of(item.instance).get("allocations"))


def check(placement: Placement, nova: NovaHolders, cells: Sequence[CellRead],
          nodes: Sequence[CoveredNode],
          progress: ReadProgress | None = None) -> list[Inconsistency]:
    """Both checks on ``nodes`` (see the module): orphaned first, then missing, each
    in its command's order; nothing written."""
    providers = list_providers(placement)
    roots = covered_roots(providers, nodes)
    reads = list(provider_allocations(
        placement, [provider for provider in providers if provider.root in roots], progress))
    seen: dict[str, dict[str, Mapping[str, int]]] = {}
    for read in reads:
        for consumer, held in read.consumers.items():
            seen.setdefault(consumer, {})[read.provider.uuid] = held
    state = CoveredAllocations(placement, seen)
    return [*orphaned(reads, nova, roots), *missing(cells, state, nodes)]
