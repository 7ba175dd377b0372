"""The common machinery of the device shims.

Every shim moves one kind of resource from the compute node's root
provider (where an older release reported it, "the flat shape") to child
providers (the new shape), and the matching allocations with it. A shim
describes *what* the new shape is; :class:`DeviceShim` does the tree and
allocation editing the same way for all of them:

1. :meth:`DeviceShim.plan` lists the child providers the node should have
   (:class:`ChildPlan`: name, inventory, traits). Missing ones are created
   (creating them before a ``ReshapeNeeded`` is allowed, as libvirt does);
   existing ones (found by name, so a re-run after a kill reuses them) get
   their inventory and traits brought up to date.
2. The reshape is needed when the root still holds inventory of a class the
   shim moves (:meth:`DeviceShim.legacy_classes`) or when
   :meth:`DeviceShim.extra_reshape_needed` says so. Without allocations
   that raises :class:`~nova_reshape.exception.ReshapeNeeded` before any
   allocation data is looked at.
3. With allocations, each consumer's amount of a moved class on the root is
   handed out to children by :meth:`DeviceShim.targets` (which must account
   for all of it, or the shim raises ``ReshapeFailed``); allocations a shim
   *creates* rather than moves (PCI healing) come from
   :meth:`DeviceShim.created`. Allocations on other providers are left
   alone. Every change is recorded as a :class:`Move` in ``self.moves``.
4. The moved classes leave the root's inventory; children the shim owns
   (:meth:`DeviceShim.owns`) that the plan no longer lists are removed.

A tree already in the new shape (children present, nothing of the moved
classes on the root) goes through steps 1 and 4 only, which change nothing:
the shim is a no-op.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any

from nova_reshape import exception
from nova_reshape.provider_tree import ProviderData, ProviderTree
from nova_reshape.virt.driver import ComputeDriver
from nova_reshape.virt.host import Consumer, Node
from nova_reshape.virt.names import normalize_resource_class, normalize_trait
from nova_reshape.virt.releases import DriverOptions


@dataclasses.dataclass(frozen=True)
class ChildPlan:
    """One child provider of the new shape.

    ``key`` identifies the device for :meth:`DeviceShim.targets` (an address,
    a cell id, an accelerator name). ``replace_traits`` sets the trait list
    exactly (PCI); otherwise the traits are added and others kept.
    ``uuid`` is used when the provider has to be created (None:
    :func:`child_uuid`, so the dry run shows the uuid the run will create).
    """

    key: str
    name: str
    inventory: Mapping[str, Mapping[str, Any]]
    traits: tuple[str, ...] = ()
    replace_traits: bool = False
    uuid: str | None = None


@dataclasses.dataclass(frozen=True)
class Move:
    """One allocation change: ``amount`` of ``resource_class`` for ``consumer``.

    ``source`` is None when the allocation was created (healed) rather than
    moved; providers are given by uuid. ``from_class`` is set when the
    allocation changed class (a pinned guest's VCPU becoming PCPU).
    """

    consumer: str
    resource_class: str
    amount: int
    source: str | None
    target: str
    shim: str
    from_class: str | None = None

    @property
    def created(self) -> bool:
        return self.source is None

    @property
    def changes_totals(self) -> bool:
        """Whether the consumer's per-class totals change (created or converted)."""
        return self.created or self.from_class is not None


class ShimProblem(exception.ReshapeFailed):
    """A ``ReshapeFailed`` that says which pre-flight class it belongs to.

    ``code`` is one of the pre-flight codes (``unplaceable_allocation``,
    ``device_missing``, ``amount_mismatch``); callers that only know
    ``ReshapeFailed`` see no difference.
    """

    def __init__(self, code: str, error: str) -> None:
        super().__init__(error=error)
        self.code = code


def child_uuid(root_uuid: str, name: str) -> str:
    """The uuid of a child the migration names: uuid5 of the root's uuid and the name.

    Deterministic, so a dry run and the run that follows agree, and a re-run
    after a kill creates the same provider.
    """
    return str(uuid.uuid5(uuid.UUID(root_uuid), name))


def full_record(total: int, reserved: int = 0, allocation_ratio: float = 1.0,
                max_unit: int | None = None, step_size: int = 1) -> dict[str, Any]:
    """An inventory record with every field, as libvirt reports its children."""
    return {"total": total, "reserved": reserved, "min_unit": 1,
            "max_unit": total if max_unit is None else max_unit, "step_size": step_size,
            "allocation_ratio": allocation_ratio}


class DeviceShim(ComputeDriver):
    """Base of the shims: subclasses define the new shape, this applies it.

    ``nodes`` maps nodename -> :class:`~nova_reshape.virt.host.Node`. A
    nodename the shim has no description for is left untouched.
    """

    #: Short name used in logs and Move records.
    kind = "device"
    #: The owner trait this shim's providers may carry; another OWNER_* trait
    #: on a provider it would adopt means it belongs to another service.
    owner_trait = "OWNER_NOVA"

    def __init__(self, nodes: Mapping[str, Node], options: DriverOptions | None = None) -> None:
        self.nodes = nodes
        self.options = options or DriverOptions()
        self.moves: list[Move] = []

    # -- what subclasses define ------------------------------------------------

    def legacy_classes(self, node: Node) -> set[str]:
        """Classes that belong on children and leave the root."""
        raise NotImplementedError()

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list[ChildPlan]:
        """The children the node should have; may read the current tree."""
        raise NotImplementedError()

    def targets(self, node: Node, consumer_uuid: str, consumer: Consumer | None,
                resource_class: str, amount: int) -> dict[str, int]:
        """Where ``amount`` of ``resource_class`` held on the root goes: key -> amount.

        Must add up to ``amount``; raise ReshapeFailed when it cannot.
        """
        raise NotImplementedError()

    def created(self, node: Node, consumer: Consumer) -> dict[str, dict[str, int]]:
        """Allocations the consumer must hold on children: key -> {rc: amount}."""
        return {}

    def extra_reshape_needed(self, node: Node, tree: ProviderTree, nodename: str,
                             plans: list[ChildPlan]) -> bool:
        """A reason to reshape other than moved classes on the root.

        Called with the tree as read from Placement, before this call creates
        or updates children.
        """
        return False

    def accepts_mismatch(self) -> bool:
        """Whether a consumer's held amount may differ from what its devices count."""
        return False

    def owns(self, data: ProviderData, nodename: str) -> bool:
        """Whether an unplanned child of ``nodename`` is one of this shim's stale providers."""
        return False

    # -- the algorithm ---------------------------------------------------------

    def describe(self, nodename: str) -> Node | None:
        return self.nodes.get(nodename)

    def update_provider_tree(self, provider_tree: ProviderTree, nodename: str,
                             allocations: dict[str, Any] | None = None) -> None:
        """Apply this shim's shape to ``nodename`` (see the module docstring)."""
        node = self.describe(nodename)
        if node is None:
            return
        plans = self.plan(node, provider_tree, nodename)
        # Judged on the tree as read, before this call adds children.
        extra = self.extra_reshape_needed(node, provider_tree, nodename, plans)
        keyed = self._ensure_children(provider_tree, nodename, plans)
        root = provider_tree.data(nodename)
        moved = self.legacy_classes(node) & set(root.inventory)
        if (moved or extra) and allocations is None:
            raise exception.ReshapeNeeded()
        if allocations is not None:
            # Given allocations (this or another shim asked for the reshape):
            # move what is on the root, then heal what must be held.
            self._move(node, root.uuid, moved, keyed, allocations)
            self._create(node, keyed, allocations)
        if moved:
            inventory = {rc: record for rc, record in root.inventory.items() if rc not in moved}
            provider_tree.update_inventory(nodename, inventory)
        self._remove_stale(provider_tree, nodename, {plan.name for plan in plans})

    def _ensure_children(self, tree: ProviderTree, nodename: str,
                         plans: list[ChildPlan]) -> dict[str, ProviderData]:
        """Create or update every planned child; key -> its data."""
        root_uuid = tree.identity(nodename).uuid
        own = set(tree.get_provider_uuids(nodename))
        keyed: dict[str, ProviderData] = {}
        for plan in plans:
            if tree.exists(plan.name):
                existing = tree.identity(plan.name)
                if existing.uuid not in own or existing.parent_uuid != root_uuid:
                    raise ShimProblem("name_taken", (
                        f"provider {plan.name} ({existing.uuid}) exists outside compute node "
                        f"{nodename}'s tree; its name is needed for the {self.kind} child"))
            elif plan.uuid is not None and tree.exists(plan.uuid):
                raise ShimProblem("name_taken", (
                    f"provider {plan.uuid} exists under another name than {plan.name}"))
            else:
                tree.new_child(plan.name, root_uuid,
                               uuid=plan.uuid or child_uuid(root_uuid, plan.name))
            tree.update_inventory(plan.name, plan.inventory)
            if plan.replace_traits:
                tree.update_traits(plan.name, plan.traits)
            else:
                tree.add_traits(plan.name, *plan.traits)
            keyed[plan.key] = tree.data(plan.name)
        return keyed

    def _move(self, node: Node, root_uuid: str, moved: set[str],
              keyed: Mapping[str, ProviderData], allocations: dict[str, Any]) -> None:
        for consumer_uuid in sorted(allocations):
            held = allocations[consumer_uuid].get("allocations", {})
            entry = held.get(root_uuid)
            if not entry:
                continue
            resources = entry.get("resources", {})
            for resource_class in sorted(moved & set(resources)):
                amount = resources[resource_class]
                shares = self.targets(node, consumer_uuid, node.consumer(consumer_uuid),
                                      resource_class, amount)
                placed = sum(shares.values())
                if placed != amount and not self.accepts_mismatch():
                    raise ShimProblem("amount_mismatch", (
                        f"{self.kind}: consumer {consumer_uuid} holds {amount} "
                        f"{resource_class} but {placed} could be placed"))
                if placed != amount:
                    # What nova does: move what is counted; the difference is recorded.
                    self.moves.append(Move(consumer_uuid, resource_class, placed - amount,
                                           None, root_uuid, self.kind))
                for key, share in sorted(shares.items()):
                    if share <= 0:
                        continue
                    target = self._target(keyed, key, consumer_uuid, resource_class)
                    self._add(held, target.uuid, resource_class, share)
                    self.moves.append(Move(consumer_uuid, resource_class, share, root_uuid,
                                           target.uuid, self.kind))
                del resources[resource_class]
            if not resources:
                del held[root_uuid]

    def _create(self, node: Node, keyed: Mapping[str, ProviderData],
                allocations: dict[str, Any]) -> None:
        for consumer_uuid in sorted(allocations):
            consumer = node.consumer(consumer_uuid)
            if consumer is None:
                continue
            held = allocations[consumer_uuid].setdefault("allocations", {})
            for key, wanted in sorted(self.created(node, consumer).items()):
                target = self._target(keyed, key, consumer_uuid, ",".join(wanted))
                resources = held.setdefault(target.uuid, {}).setdefault("resources", {})
                for resource_class, amount in sorted(wanted.items()):
                    current = resources.get(resource_class, 0)
                    if current == amount:
                        continue
                    resources[resource_class] = amount
                    self.moves.append(Move(consumer_uuid, resource_class, amount - current,
                                           None, target.uuid, self.kind))

    def _target(self, keyed: Mapping[str, ProviderData], key: str, consumer_uuid: str,
                resource_class: str) -> ProviderData:
        target = keyed.get(key)
        if target is None:
            raise ShimProblem("device_missing", (
                f"{self.kind}: consumer {consumer_uuid} uses device {key} for "
                f"{resource_class}, which this node does not have"))
        return target

    @staticmethod
    def _add(held: dict[str, Any], rp_uuid: str, resource_class: str, amount: int) -> None:
        resources = held.setdefault(rp_uuid, {}).setdefault("resources", {})
        resources[resource_class] = resources.get(resource_class, 0) + amount

    def _remove_stale(self, tree: ProviderTree, nodename: str, planned: set[str]) -> None:
        root_uuid = tree.identity(nodename).uuid
        for rp_uuid in tree.get_provider_uuids(nodename):
            if rp_uuid == root_uuid or not tree.exists(rp_uuid):
                continue
            place = tree.identity(rp_uuid)
            if (place.parent_uuid == root_uuid and place.name not in planned
                    and self.owns(tree.data(rp_uuid), nodename)):
                tree.remove(rp_uuid)


__all__ = ["ChildPlan", "DeviceShim", "Move", "ShimProblem", "full_record",
           "normalize_resource_class", "normalize_trait"]
