"""The plan of one node: exactly what the migration will write for it.

A :class:`NodePlan` is computed in memory from the node's tree and
allocations as read, the host description, the target release and
nova.conf (through the simulation of :mod:`nova_reshape.compute.preflight`):

* ``create``: the providers to create (name, uuid, parent), top-down;
* ``delete``: the providers that leave the tree;
* ``inventories`` / ``traits`` / ``aggregates``: per provider, the final
  value wherever it differs from Placement's (new providers included);
* ``allocations``: per consumer whose allocations change, its final
  allocations (``GET /allocations/<consumer>`` form);
* ``reshape``: whether the allocations move, in which case
  :meth:`NodePlan.reshaper_payload` is the node's one ``POST /reshaper``.

The dry run prints this plan, ``--format json`` gives :meth:`as_dict`, and
the run writes it: an empty plan means the node is ``unchanged`` and gets
no write at all. A provider's inventory is "different" in the report
client's sense (a field Placement fills in by default is not a change), so
the plan and the write agree on what to send.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nova_reshape.provider_tree import ProviderTree


@dataclasses.dataclass(frozen=True)
class NewProvider:
    """A provider the plan creates."""

    name: str
    uuid: str
    parent_uuid: str | None


@dataclasses.dataclass
class NodePlan:
    """What one node's write consists of (see the module docstring)."""

    nodename: str
    root: str
    create: list[NewProvider] = dataclasses.field(default_factory=list)
    delete: list[str] = dataclasses.field(default_factory=list)
    inventories: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    traits: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    aggregates: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    allocations: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    reshape: bool = False
    #: rp uuid -> name, for every provider the plan mentions.
    names: dict[str, str] = dataclasses.field(default_factory=dict)
    #: The full inventories of the node's tree after the write (the reshaper's).
    final_inventories: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """Nothing to write: the node is ``unchanged``."""
        return not (self.create or self.delete or self.inventories or self.traits
                    or self.aggregates or self.allocations or self.reshape)

    def reshaper_payload(self) -> dict[str, Any] | None:
        """The ``POST /reshaper`` body (generations omitted: Placement's at write time).

        Every provider of the node's tree with its full final inventory
        (emptied for the ones about to be deleted) and every consumer
        whose allocations change. None when the plan moves no allocation.
        """
        if not self.reshape:
            return None
        inventories = {rp: {"inventories": inventory}
                       for rp, inventory in sorted(self.final_inventories.items())}
        for rp in self.delete:
            inventories[rp] = {"inventories": {}}
        return {"inventories": inventories,
                "allocations": {consumer: self.allocations[consumer]
                                for consumer in sorted(self.allocations)}}

    def as_dict(self) -> dict[str, Any]:
        """The plan as data (``--format json``)."""
        def named(rp: str) -> dict[str, Any]:
            return {"uuid": rp, "name": self.names.get(rp, rp)}
        return {
            "create": [dataclasses.asdict(provider) for provider in self.create],
            "delete": [named(rp) for rp in self.delete],
            "inventories": [named(rp) | {"inventories": inventory}
                            for rp, inventory in sorted(self.inventories.items())],
            "traits": [named(rp) | {"traits": traits}
                       for rp, traits in sorted(self.traits.items())],
            "aggregates": [named(rp) | {"aggregates": aggregates}
                           for rp, aggregates in sorted(self.aggregates.items())],
            "allocations": {consumer: self.allocations[consumer]
                            for consumer in sorted(self.allocations)},
            "reshaper": self.reshaper_payload(),
        }

    def lines(self) -> list[str]:
        """The plan as text, one write per line (the dry run's)."""
        out = [f"create provider {p.name} ({p.uuid}) under "
               f"{self.names.get(p.parent_uuid or '', p.parent_uuid)}" for p in self.create]
        out += [f"delete provider {self.names.get(rp, rp)} ({rp})" for rp in self.delete]
        for rp, inventory in sorted(self.inventories.items()):
            totals = ", ".join(f"{rc} {record['total']}"
                               for rc, record in sorted(inventory.items())) or "none"
            out.append(f"inventory of {self.names.get(rp, rp)}: {totals}")
        for rp, traits in sorted(self.traits.items()):
            out.append(f"traits of {self.names.get(rp, rp)}: {', '.join(traits) or 'none'}")
        for rp, aggregates in sorted(self.aggregates.items()):
            out.append(f"aggregates of {self.names.get(rp, rp)}: "
                       f"{', '.join(aggregates) or 'none'}")
        for consumer, body in sorted(self.allocations.items()):
            held = "; ".join(
                f"{self.names.get(rp, rp)} "
                + ", ".join(f"{rc} {n}" for rc, n in sorted(entry["resources"].items()))
                for rp, entry in sorted(body.get("allocations", {}).items()))
            out.append(f"allocations of {consumer}: {held or 'none'}")
        if self.reshape:
            out.append(f"in one POST /reshaper: {len(self.final_inventories)} inventories, "
                       f"{len(self.allocations)} consumers")
        return out


def _resources(body: Any) -> dict[str, dict[str, int]]:
    return {rp: dict(entry.get("resources", {}))
            for rp, entry in (body or {}).get("allocations", {}).items()
            if entry.get("resources")}


def make_plan(nodename: str, root: str, before: ProviderTree, after: ProviderTree,
              allocations_before: dict[str, Any], allocations_after: dict[str, Any],
              reshape: bool) -> NodePlan:
    """The differences between the node as read and as simulated."""
    plan = NodePlan(nodename, root, reshape=reshape)
    scope_before = before.get_provider_uuids(nodename)
    scope_after = after.get_provider_uuids(nodename)
    for rp in scope_before + scope_after:
        tree = after if after.exists(rp) else before
        plan.names[rp] = tree.identity(rp).name
    for rp in scope_after:
        data = after.data(rp)
        plan.final_inventories[rp] = data.inventory
        if not before.exists(rp):
            plan.create.append(NewProvider(data.name, rp, data.parent_uuid))
            if data.inventory:
                plan.inventories[rp] = data.inventory
            if data.traits:
                plan.traits[rp] = sorted(data.traits)
            if data.aggregates:
                plan.aggregates[rp] = sorted(data.aggregates)
            continue
        if before.has_inventory_changed(rp, data.inventory):
            plan.inventories[rp] = data.inventory
        if before.have_traits_changed(rp, data.traits):
            plan.traits[rp] = sorted(data.traits)
        if before.have_aggregates_changed(rp, data.aggregates):
            plan.aggregates[rp] = sorted(data.aggregates)
    plan.delete = [rp for rp in reversed(scope_before) if not after.exists(rp)]
    for consumer in sorted(set(allocations_before) | set(allocations_after)):
        new = allocations_after.get(consumer)
        if _resources(allocations_before.get(consumer)) != _resources(new):
            plan.allocations[consumer] = new or {"allocations": {}}
    return plan


def unplanned(plan: NodePlan, planned: ProviderTree, actual: ProviderTree,
              allocations_planned: dict[str, Any], allocations_actual: dict[str, Any],
              ) -> list[str]:
    """Where the node as read back differs from the plan's result (empty: as planned).

    Compares the providers (uuid, name, parent), their traits and
    inventories, and the allocations of every consumer the plan changes.
    """
    problems = []
    name = plan.nodename
    want = {rp: planned.data(rp) for rp in planned.get_provider_uuids(name)}
    have = {rp: actual.data(rp) for rp in actual.get_provider_uuids(name)}
    for rp in sorted(set(want) ^ set(have)):
        where = "planned but missing" if rp in want else "present but not planned"
        problems.append(f"provider {plan.names.get(rp, rp)} ({rp}) {where}")
    for rp in sorted(set(want) & set(have)):
        label = f"provider {want[rp].name} ({rp})"
        if (want[rp].name, want[rp].parent_uuid) != (have[rp].name, have[rp].parent_uuid):
            problems.append(f"{label} is named or placed differently than planned")
        if want[rp].traits != have[rp].traits:
            problems.append(f"{label} has traits {sorted(have[rp].traits)}, planned "
                            f"{sorted(want[rp].traits)}")
        if actual.has_inventory_changed(rp, want[rp].inventory):
            problems.append(f"{label} has another inventory than planned")
    for consumer in sorted(plan.allocations):
        planned_held = {rp: res for rp, res in _resources(
            allocations_planned.get(consumer)).items() if rp in want}
        actual_held = {rp: res for rp, res in _resources(
            allocations_actual.get(consumer)).items() if rp in want}
        if planned_held != actual_held:
            problems.append(f"consumer {consumer} holds {actual_held}, planned {planned_held}")
    return problems
