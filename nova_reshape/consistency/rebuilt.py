"""A rebuild's allocations and aggregates decided in memory, for trees not yet written.

The rebuild's second and third steps (:mod:`.rebuild`) are heal_allocations
with the nested placement and sync_aggregates' plan. Against an empty
database whose trees the rebuild computed itself, what they read is known
without a request: no consumer holds anything, and every tree is the
computed one. So:

* :class:`MemoryState` answers heal's reads (:class:`.heal.Allocations`)
  from the computed trees, and :func:`heal_in_memory` runs heal's own
  planner over it (same decisions, same order, same room counting);
* each heal's write is then checked as Placement checks an allocation
  write (:func:`refusal`: the class on the provider, the units, the
  capacity with what was placed before it), since the write itself will
  not go through the API;
* :func:`memberships` applies sync_aggregates' plan to the roots as
  :func:`.aggregates.apply_plan` would on a database holding only them.

Whatever would not go through (heal stopping, a write Placement would
refuse, a host with several compute nodes) makes these functions return
None: the caller then takes the requests' path, which reports it exactly
as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape.consistency import aggregates as syncing
from nova_reshape.consistency import heal as healing
from nova_reshape.consistency.nested import TreeView
from nova_reshape.consistency.placement_io import NO_ALLOCATIONS, resources_of
from nova_reshape.novadb.cells import CellRead
from placement_wsgi.capacity import capacity
from placement_wsgi.objects.bulk_load import LoadedConsumer, LoadedProvider
from placement_wsgi.objects.inventory_record import Inventory


def records(provider: LoadedProvider) -> dict[str, dict[str, Any]]:
    """The provider's inventory as Placement would store and show it (defaults filled)."""
    return {rc: Inventory.from_body(rc, body).as_dict()
            for rc, body in provider.inventory.items()}


class MemoryState:
    """heal's view of Placement when it holds exactly ``trees`` (root -> providers,
    root first, in id order) and no consumer."""

    def __init__(self, trees: Mapping[str, Sequence[LoadedProvider]]) -> None:
        self.views = {root: TreeView(root, [{"uuid": p.uuid, "name": p.name}
                                            for p in providers],
                                     {p.uuid: records(p) for p in providers}, {})
                      for root, providers in trees.items()}

    def allocations_of(self, consumer: str) -> Mapping[str, Any]:
        return NO_ALLOCATIONS

    def tree(self, root: str) -> TreeView | None:
        return self.views.get(root)


def refusal(resources: Mapping[str, Mapping[str, int]],
            inventories: Mapping[str, Mapping[str, Mapping[str, Any]]],
            used: dict[tuple[str, str], int]) -> str | None:
    """Why Placement would refuse writing ``resources`` (provider -> class -> amount)
    given ``inventories`` (provider -> class -> record) and ``used`` (counted so far,
    updated when accepted); None when it would accept."""
    for uuid, classes in resources.items():
        for rc, amount in classes.items():
            record = inventories.get(uuid, {}).get(rc)
            if record is None:
                return f"no {rc} inventory on provider {uuid}"
            if (amount < record["min_unit"] or amount > record["max_unit"]
                    or amount % record["step_size"]):
                return f"{amount} {rc} outside the units of provider {uuid}"
            if used.get((uuid, rc), 0) + amount > capacity(
                    record["total"], record["reserved"], record["allocation_ratio"]):
                return f"{rc} of provider {uuid} would exceed its capacity"
    for uuid, classes in resources.items():
        for rc, amount in classes.items():
            used[(uuid, rc)] = used.get((uuid, rc), 0) + amount
    return None


def heal_in_memory(cells: Sequence[CellRead], trees: Mapping[str, Sequence[LoadedProvider]],
                   ) -> tuple[healing.Result, dict[str, list[LoadedConsumer]]] | None:
    """heal_allocations (``--heal-nested``, cell0 left out) over ``trees``: its result as
    if every heal were written, and the consumers to write by root; None when heal
    would stop or Placement would refuse a write."""
    state = MemoryState(trees)
    live = [read for read in cells if not read.cell.is_cell0]
    decided = healing.plan(live, state, healing.Options(heal_nested=True))
    if decided.stop is not None:
        return None
    root_of = {p.uuid: root for root, providers in trees.items() for p in providers}
    inventories = {uuid: view.inventories[uuid] for view in state.views.values()
                   for uuid in view.inventories}
    used: dict[tuple[str, str], int] = {}
    by_root: dict[str, list[LoadedConsumer]] = defaultdict(list)
    seen: set[str] = set()
    for heal in decided.heals:
        resources = resources_of(heal.body)
        roots = {root_of.get(uuid) for uuid in resources}
        project, user = heal.body.get("project_id"), heal.body.get("user_id")
        if (len(roots) != 1 or None in roots or not project or not user
                or heal.instance in seen  # one uuid in two cells: a second write
                or refusal(resources, inventories, used) is not None):
            return None
        seen.add(heal.instance)
        by_root[roots.pop() or ""].append(LoadedConsumer(heal.instance, project, user,
                                                         resources))
    return healing.Result(decided.outcome, decided, len(decided.heals)), by_root


def memberships(plan: syncing.SyncPlan, roots: Mapping[str, Any],
                ) -> tuple[syncing.SyncOutcome, dict[str, list[str]]] | None:
    """``plan`` applied to a database holding the ``roots`` (uuids) and no aggregate:
    the outcome :func:`.aggregates.apply_plan` would report and root -> the aggregate
    uuids it would add, in its order; None when the plan stopped (several compute
    nodes for a host)."""
    if plan.too_many:
        return None
    outcome = syncing.SyncOutcome(plan=plan)
    by_provider: dict[str, list[syncing.Membership]] = defaultdict(list)
    for membership in plan.memberships:
        by_provider[membership.provider].append(membership)
    added: dict[str, list[str]] = {}
    for provider, members in by_provider.items():
        if provider not in roots:
            outcome.no_provider[members[0].host] = provider
            continue
        held = added.setdefault(provider, [])
        for membership in members:
            if membership.aggregate not in held:
                held.append(membership.aggregate)
                outcome.added.append(membership)
    return outcome, added
