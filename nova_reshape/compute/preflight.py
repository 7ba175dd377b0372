"""Pre-flight checks of the offline migration: everything is read, nothing written.

For each node the command reads the node's provider tree and allocations,
then :func:`check_node` compares them with the host description and
simulates the reshape on copies. Every problem becomes a :class:`Finding`
naming the node, the consumer and the provider concerned, and the fix. The
command writes nothing while any finding remains, so an operator fixes the
host files (or the deployment, on the old release) and runs it again.

The failure classes (``Finding.code``) and their fixes are listed in
:data:`~nova_reshape.compute.findings.FAILURE_CLASSES`;
docs/migrate-compute-inventory.md explains them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from nova_reshape import exception
from nova_reshape.compute import invariants
from nova_reshape.compute.findings import Finding
from nova_reshape.compute.plan import NodePlan, make_plan
from nova_reshape.compute.resource_tracker import root_traits
from nova_reshape.provider_tree import ATOMIC_TYPES, ProviderTree
from nova_reshape.virt.cyborg import existing_provider, provider_uuid
from nova_reshape.virt.described import DescribedDriver
from nova_reshape.virt.host import Node
from nova_reshape.virt.pci import left_to_neutron
from nova_reshape.virt.pcpu import pinned_need
from nova_reshape.virt.shim import ChildPlan, DeviceShim, Move, ShimProblem
from placement_wsgi.constants import SHARING_TRAIT


@dataclasses.dataclass
class Simulation:
    """The node before and after the reshape as planned (copies)."""

    tree_before: ProviderTree
    tree_after: ProviderTree
    allocations_before: dict[str, Any]
    allocations_after: dict[str, Any]
    moves: list[Move]
    reshape: bool
    #: What the write will send (empty: the node is unchanged).
    plan: NodePlan
    #: The node's devices Neutron accounts for (no provider; allocations left as they are).
    left_to_neutron: tuple[str, ...] = ()


class Listing:
    """Every provider in Placement (``GET /resource_providers`` at 1.14)."""

    def __init__(self, providers: Sequence[Mapping[str, Any]]) -> None:
        self.by_uuid = {p["uuid"]: p for p in providers}
        self.by_name = {p["name"]: p for p in providers}
        #: root uuid -> every provider of its tree
        self.trees: dict[str, list[Mapping[str, Any]]] = {}
        for provider in providers:
            root = provider.get("root_provider_uuid") or provider["uuid"]
            self.trees.setdefault(root, []).append(provider)


def resolve_root(node: Node, listing: Listing) -> tuple[str | None, list[Finding]]:
    """The root provider uuid of ``node``, or findings saying why there is none."""
    name = node.nodename
    by_uuid = listing.by_uuid.get(node.uuid) if node.uuid else None
    by_name = listing.by_name.get(name)
    if by_uuid is None and by_name is None:
        return None, [Finding("node_not_found", name, "no provider named " + name + (
            f" or with uuid {node.uuid}" if node.uuid else "") + " exists in Placement")]
    found = by_uuid or by_name
    assert found is not None
    if by_uuid is not None and by_uuid["name"] != name:
        return None, [Finding("node_mismatch", name, (
            f"provider {node.uuid} is named {by_uuid['name']}, not {name}"),
            provider=node.uuid)]
    if node.uuid and by_uuid is None and by_name is not None:
        return None, [Finding("node_mismatch", name, (
            f"provider {name} has uuid {by_name['uuid']}, the host file says {node.uuid}"),
            provider=by_name["uuid"])]
    if found.get("parent_provider_uuid"):
        return None, [Finding("node_mismatch", name, (
            f"provider {name} is not a root provider (its parent is "
            f"{found['parent_provider_uuid']})"), provider=found["uuid"])]
    return found["uuid"], []


def listing_keys(node: Node, driver: DescribedDriver, tree: ProviderTree,
                 allocations: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The uuids and names :func:`check_node` may look up in its :class:`Listing`
    for ``node`` (read as ``tree`` and ``allocations``): its root's, its planned
    children's names, Cyborg's uuid of each accelerator, every provider its
    consumers hold allocations on. A listing of those providers and their roots
    checks the node as a listing of every provider does."""
    uuids = {node.uuid} if node.uuid else set()
    names = {node.nodename}
    if tree.exists(node.nodename):
        for shim in driver.shims:
            try:
                names.update(plan.name for plan in shim.plan(node, tree, node.nodename))
            except exception.PlacementPciException:
                pass  # a finding of the check itself
    if any(shim.kind == "cyborg" for shim in driver.shims):
        uuids.update(provider_uuid(accelerator.name) for accelerator in node.accelerators)
    for body in allocations.values():
        uuids.update(body.get("allocations", {}))
    return uuids, names


def _label(tree: ProviderTree, rp_uuid: str) -> str:
    return f"{tree.identity(rp_uuid).name} ({rp_uuid})" if tree.exists(rp_uuid) else rp_uuid


class _NodeCheck:
    """The explicit checks of one node; findings accumulate in ``self.findings``."""

    def __init__(self, node: Node, driver: DescribedDriver, tree: ProviderTree,
                 allocations: Mapping[str, Any], listing: Listing | None) -> None:
        self.node = node
        self.name = node.nodename
        self.driver = driver
        self.tree = tree
        self.allocations = allocations
        self.listing = listing
        self.root = tree.data(self.name)
        self.scope = set(tree.get_provider_uuids(self.name))
        self.findings: list[Finding] = []

    def add(self, code: str, message: str, consumer: str | None = None,
            provider: str | None = None) -> None:
        self.findings.append(Finding(code, self.name, message, consumer, provider))

    def run(self) -> list[Finding]:
        self.check_references()
        self.check_consumers_known()
        self.check_sharing()
        self.check_pcpu()
        self.check_accelerators()
        claimed: dict[str, str] = {}
        for shim in self.driver.shims:
            try:
                plans = shim.plan(self.node, self.tree, self.name)
            except exception.PlacementPciException as error:
                self.add("pci_config", str(error))
                continue
            moved = shim.legacy_classes(self.node) & set(self.root.inventory)
            for rc in sorted(moved):
                if rc in claimed:
                    self.add("ambiguous_class", (
                        f"both the {claimed[rc]} and the {shim.kind} devices take {rc} off "
                        f"the compute node"), provider=_label(self.tree, self.root.uuid))
                claimed.setdefault(rc, shim.kind)
            self.check_plans(shim, plans)
            self.check_totals(shim, plans, moved)
            self.check_stale(shim, plans)
            self.check_moves(shim, moved)
        return self.findings

    def check_references(self) -> None:
        """Every device a described consumer uses is described (a device gone)."""
        node = self.node
        gpus = {gpu.address for gpu in node.gpus}
        cells = {cell.id for cell in node.numa_cells}
        devices = {device.address for device in node.pci_devices}
        accelerators = ({acc.name for acc in node.accelerators}
                        | {acc.address for acc in node.accelerators if acc.address})
        for consumer in node.consumers:
            missing = ([f"GPU {address}" for _, address in consumer.mdevs
                        if address not in gpus]
                       + [f"NUMA cell {share.cell}" for share in consumer.numa or ()
                          if share.cell not in cells]
                       + [f"PCI device {address}" for address in consumer.pci
                          if address not in devices]
                       + [f"accelerator {ref}" for ref in consumer.accelerators
                          if ref not in accelerators])
            for item in missing:
                self.add("device_missing", f"the consumer uses {item}, which the host "
                         "description does not list", consumer=consumer.uuid)

    def check_pcpu(self) -> None:
        """Pinned guests' PCPU (held, or VCPU about to become PCPU) fits the dedicated set."""
        dedicated = self.node.cpu_dedicated_set
        if dedicated is None or not any(shim.kind == "pcpu" for shim in self.driver.shims):
            return
        need = pinned_need(self.node, self.root.uuid, dict(self.allocations))
        if need > len(dedicated):
            self.add("pcpu_shortage", f"the pinned guests would hold {need} PCPU but "
                     f"cpu_dedicated_set has {len(dedicated)} CPUs",
                     provider=_label(self.tree, self.root.uuid))

    def check_accelerators(self) -> None:
        """Each accelerator has at most one existing Cyborg provider, and Cyborg's uuid."""
        if not any(shim.kind == "cyborg" for shim in self.driver.shims):
            return
        for accelerator in self.node.accelerators:
            existing, problem = existing_provider(accelerator, self.tree, self.name)
            if problem:
                self.add("accelerator_conflict", problem)
                continue
            if existing is not None or self.listing is None:
                continue
            other = self.listing.by_uuid.get(provider_uuid(accelerator.name))
            if other is not None:
                self.add("accelerator_conflict", (
                    f"Cyborg's uuid for {accelerator.name} belongs to provider "
                    f"{other['name']} outside this node's tree"), provider=other["uuid"])

    def check_consumers_known(self) -> None:
        for consumer in self.node.consumers:
            if consumer.uuid not in self.allocations:
                self.add("unknown_consumer", f"the host description lists {consumer.kind} "
                         f"{consumer.uuid} but it holds nothing on this node in Placement",
                         consumer=consumer.uuid)

    def check_sharing(self) -> None:
        moving: set[str] = set()
        for shim in self.driver.shims:
            try:
                moving |= shim.legacy_classes(self.node)
            except exception.PlacementPciException:
                pass  # reported as pci_config by run()
        for rp_uuid in self.tree.get_provider_uuids():
            data = self.tree.data(rp_uuid)
            if SHARING_TRAIT not in data.traits:
                continue
            if rp_uuid in self.scope:
                self.add("sharing_provider", "a provider in the compute node's tree carries "
                         f"{SHARING_TRAIT}", provider=_label(self.tree, rp_uuid))
            elif moving & set(data.inventory):
                classes = ", ".join(sorted(moving & set(data.inventory)))
                self.add("sharing_provider", f"a sharing provider associated with the node "
                         f"offers {classes}, which this migration moves",
                         provider=_label(self.tree, rp_uuid))

    def check_plans(self, shim: DeviceShim, plans: list[ChildPlan]) -> None:
        for plan in plans:
            if self.tree.exists(plan.name):
                data = self.tree.data(plan.name)
                if data.uuid not in self.scope or data.parent_uuid != self.root.uuid:
                    self.add("name_taken", f"the {shim.kind} provider {plan.name} is needed "
                             "but that name is used elsewhere in the tree",
                             provider=_label(self.tree, data.uuid))
                    continue
                owners = {t for t in data.traits if t.startswith("OWNER_")}
                foreign = owners - {shim.owner_trait}
                if foreign:
                    self.add("foreign_provider", f"{plan.name} would be reused for a "
                             f"{shim.kind} device but carries {', '.join(sorted(foreign))}",
                             provider=_label(self.tree, data.uuid))
                continue
            other = self.listing.by_name.get(plan.name) if self.listing else None
            if other is not None and other["uuid"] not in self.scope:
                self.add("name_taken", f"the {shim.kind} provider {plan.name} is needed but "
                         "another provider has that name", provider=f"{plan.name} "
                         f"({other['uuid']})")

    def check_totals(self, shim: DeviceShim, plans: list[ChildPlan], moved: set[str]) -> None:
        for rc in sorted(moved):
            described = sum(plan.inventory[rc]["total"] for plan in plans if rc in plan.inventory)
            reported = self.root.inventory[rc]["total"]
            if described != reported:
                self.add("description_mismatch", (
                    f"the compute node has {reported} {rc} in Placement but the host "
                    f"description's {shim.kind} devices add up to {described}"),
                    provider=_label(self.tree, self.root.uuid))

    def check_stale(self, shim: DeviceShim, plans: list[ChildPlan]) -> None:
        planned = {plan.name for plan in plans}
        for rp_uuid in self.scope - {self.root.uuid}:
            place = self.tree.identity(rp_uuid)
            if place.parent_uuid != self.root.uuid or place.name in planned:
                continue
            data = self.tree.data(rp_uuid)
            if not shim.owns(data, self.name):
                continue
            for consumer, body in sorted(self.allocations.items()):
                if rp_uuid in body.get("allocations", {}):
                    self.add("device_missing", f"the consumer holds allocations on "
                             f"{data.name}, whose device the host description no longer "
                             "lists (the provider would be deleted)", consumer=consumer,
                             provider=_label(self.tree, rp_uuid))

    def check_moves(self, shim: DeviceShim, moved: set[str]) -> None:
        root_uuid = self.root.uuid
        for consumer_uuid, body in sorted(self.allocations.items()):
            held = body.get("allocations", {})
            resources = held.get(root_uuid, {}).get("resources", {})
            classes = sorted(moved & set(resources))
            if not classes:
                continue
            consumer = self.node.consumer(consumer_uuid)
            label = _label(self.tree, root_uuid)
            elsewhere = self._other_hosts(held)
            if (consumer is not None and consumer.is_migration) or elsewhere:
                why = (f"it also holds allocations on {', '.join(elsewhere)}" if elsewhere
                       else "the host description marks it as a migration")
                self.add("migration_in_progress", f"{', '.join(classes)} on the compute node "
                         f"would move but {why}", consumer=consumer_uuid, provider=label)
                continue
            for rc in classes:
                amount = resources[rc]
                try:
                    shares = shim.targets(self.node, consumer_uuid, consumer, rc, amount)
                except ShimProblem as problem:
                    self.add(problem.code, problem.kwargs["error"], consumer=consumer_uuid,
                             provider=label)
                    continue
                if sum(shares.values()) != amount and not shim.accepts_mismatch():
                    self.add("amount_mismatch", (
                        f"it holds {amount} {rc} on the compute node but the host "
                        f"description gives it {sum(shares.values())}"),
                        consumer=consumer_uuid, provider=label)

    def _other_hosts(self, held: Mapping[str, Any]) -> list[str]:
        """Other compute nodes' roots among a consumer's providers (not sharing ones)."""
        if self.listing is None:
            return []
        roots = []
        for rp_uuid in held:
            if rp_uuid in self.scope:
                continue
            provider = self.listing.by_uuid.get(rp_uuid)
            if provider is None:
                continue
            if self.tree.exists(rp_uuid) and SHARING_TRAIT in self.tree.data(rp_uuid).traits:
                continue
            root = self.listing.by_uuid.get(provider.get("root_provider_uuid") or rp_uuid)
            if root is not None:
                roots.append(root["name"])
        return sorted(set(roots))


def plain_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars; anything else through
    ``copy.deepcopy``), without ``deepcopy``'s memo: allocations are copied twice per
    simulation."""
    if isinstance(value, dict):
        return {key: item if type(item) in ATOMIC_TYPES else plain_copy(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in ATOMIC_TYPES else plain_copy(item) for item in value]
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return copy.deepcopy(value)


def simulate(node: Node, driver: DescribedDriver, tree: ProviderTree,
             allocations: Mapping[str, Any]) -> Simulation:
    """Run the driver and the root-trait update on copies, as nova's start would."""
    after = copy.deepcopy(tree)
    before_allocations = plain_copy(dict(allocations))
    after_allocations = plain_copy(dict(allocations))
    reshape = False
    try:
        driver.update_provider_tree(after, node.nodename)
    except exception.ReshapeNeeded:
        driver.update_provider_tree(after, node.nodename, allocations=after_allocations)
        reshape = True
    after.update_traits(node.nodename, root_traits(
        after.data(node.nodename).traits, driver.capabilities_as_traits(), node.disabled))
    root = tree.identity(node.nodename).uuid
    plan = make_plan(node.nodename, root, tree, after, before_allocations, after_allocations,
                     reshape)
    return Simulation(copy.deepcopy(tree), after, before_allocations, after_allocations,
                      list(driver.moves) if reshape else [], reshape, plan,
                      left_to_neutron(node))


def inventories_of(tree: ProviderTree, nodename: str) -> dict[str, dict[str, Any]]:
    """rp uuid -> inventory for the node's subtree."""
    return {rp: tree.data(rp).inventory for rp in tree.get_provider_uuids(nodename)}


def names_of(*trees: ProviderTree) -> dict[str, str]:
    names = {}
    for tree in trees:
        names.update({rp: tree.identity(rp).name for rp in tree.get_provider_uuids()})
    return names


def check_simulation(node: Node, simulation: Simulation) -> list[Finding]:
    """Capacity and the invariants on the planned result."""
    name = node.nodename
    before = inventories_of(simulation.tree_before, name)
    after = inventories_of(simulation.tree_after, name)
    names = names_of(simulation.tree_before, simulation.tree_after)
    usage_before = invariants.usage(simulation.allocations_before)
    usage_after = invariants.usage(simulation.allocations_after)
    findings = []
    for violation in invariants.check_capacity(after, simulation.allocations_after, names):
        rp, rc = violation.provider or "", violation.resource_class
        changed = (usage_before.get(rp, {}).get(rc) != usage_after.get(rp, {}).get(rc)
                   or before.get(rp, {}).get(rc) != after.get(rp, {}).get(rc))
        if changed:  # overcommit the old release already had is not ours to refuse
            findings.append(Finding("capacity_exceeded", name, violation.message,
                                    provider=f"{names.get(rp, rp)} ({rp})"))
    created = [move for move in simulation.moves if move.changes_totals]
    for violation in (invariants.check_conservation(
            simulation.allocations_before, simulation.allocations_after, before, after, created)
            + invariants.check_orphans(after, simulation.allocations_after,
                                       set(before) | set(after), names)):
        findings.append(Finding("reshape_failed", name, str(violation),
                                consumer=violation.consumer, provider=violation.provider))
    return findings


def check_node(node: Node, driver: DescribedDriver, tree: ProviderTree,
               allocations: Mapping[str, Any], listing: Listing | None = None,
               ) -> tuple[list[Finding], Simulation | None]:
    """All findings for one node, and the simulation when it could run."""
    findings = _NodeCheck(node, driver, tree, allocations, listing).run()
    if findings:
        return findings, None
    try:
        simulation = simulate(node, driver, tree, allocations)
    except (exception.ReshapeFailed, exception.PlacementPciException) as error:
        code = getattr(error, "code", "reshape_failed")
        return [Finding(code, node.nodename, str(error))], None
    return check_simulation(node, simulation), simulation
