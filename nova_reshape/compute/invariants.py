"""Invariants of a reshape, checked after every node and in tests.

A reshape may move allocations between providers of one compute node's
tree, never change what a consumer holds. For one node, with "scope" the
providers of that node's tree (before, respectively after):

``not_conserved``
    For every consumer and resource class, the sum of its allocations over
    the scope after equals the sum before, plus whatever a shim
    deliberately *created* (PCI healing, recorded as
    :class:`~nova_reshape.virt.shim.Move` with no source) and with what a
    shim *converted* moved from one class to the other (a pinned guest's
    VCPU becoming PCPU, a Move with ``from_class``).
``over_capacity``
    No provider in scope holds more of a class than its capacity,
    ``(total - reserved) * allocation_ratio``.
``orphan_allocation``
    No allocation in scope sits on a provider that has no inventory of that
    class (or that is gone from the tree).

The functions take plain data (allocation bodies as returned by
``GET /allocations/<consumer>``; inventories ``{rp: {rc: record}}``) so
they can check a planned reshape in memory or the result read back from
Placement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from placement_wsgi.capacity import capacity as shared_capacity

Allocations = Mapping[str, Mapping[str, Any]]
Inventories = Mapping[str, Mapping[str, Mapping[str, Any]]]


@dataclasses.dataclass(frozen=True)
class Violation:
    code: str
    consumer: str | None
    provider: str | None
    resource_class: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvariantsBroken(Exception):
    """A node's write, checked before commit, breaks ``violations``: rolled back."""

    def __init__(self, violations: list[Violation]) -> None:
        self.violations = violations
        super().__init__("; ".join(str(violation) for violation in violations))


def sums(allocations: Allocations, scope: Iterable[str]) -> dict[str, dict[str, int]]:
    """consumer -> {rc: total held on providers in ``scope``}."""
    scope = set(scope)
    result: dict[str, dict[str, int]] = {}
    for consumer, body in allocations.items():
        totals: dict[str, int] = {}
        for rp_uuid, entry in body.get("allocations", {}).items():
            if rp_uuid in scope:
                _add(totals, entry.get("resources", {}))
        result[consumer] = {rc: amount for rc, amount in totals.items() if amount}
    return result


def _add(totals: dict[str, int], resources: Mapping[str, int]) -> None:
    """``totals`` += ``resources``, class by class (what ``Counter.update`` does, in
    a plain dict: these sums run for every consumer of every node, twice)."""
    for rc, amount in resources.items():
        totals[rc] = totals[rc] + amount if rc in totals else amount


def usage(allocations: Allocations) -> dict[str, dict[str, int]]:
    """provider -> {rc: total held by every consumer}."""
    result: dict[str, dict[str, int]] = {}
    for body in allocations.values():
        for rp_uuid, entry in body.get("allocations", {}).items():
            _add(result.setdefault(rp_uuid, {}), entry.get("resources", {}))
    return result


def capacity(record: Mapping[str, Any]) -> float:
    """``(total - reserved) * allocation_ratio`` with Placement's defaults."""
    return shared_capacity(record["total"], record.get("reserved", 0),
                           float(record.get("allocation_ratio", 1.0)))


def check_conservation(before: Allocations, after: Allocations, scope_before: Iterable[str],
                       scope_after: Iterable[str], created: Iterable[Any] = (),
                       ) -> list[Violation]:
    """Per consumer and class, after == before + created/converted (module docstring)."""
    expected = sums(before, scope_before)
    for move in created:
        totals = expected.setdefault(move.consumer, {})
        totals[move.resource_class] = totals.get(move.resource_class, 0) + move.amount
        from_class = getattr(move, "from_class", None)
        if from_class is not None:
            totals[from_class] = totals.get(from_class, 0) - move.amount
            if not totals[from_class]:
                del totals[from_class]
    actual = sums(after, scope_after)
    violations = []
    for consumer in sorted(set(expected) | set(actual)):
        want, have = expected.get(consumer, {}), actual.get(consumer, {})
        for rc in sorted(set(want) | set(have)):
            if want.get(rc, 0) != have.get(rc, 0):
                violations.append(Violation(
                    "not_conserved", consumer, None, rc,
                    f"consumer {consumer} held {want.get(rc, 0)} {rc} on the node before "
                    f"(counting created allocations) and {have.get(rc, 0)} after"))
    return violations


def check_capacity(inventories: Inventories, allocations: Allocations,
                   names: Mapping[str, str] | None = None) -> list[Violation]:
    """No provider of ``inventories`` used beyond its capacity."""
    names = names or {}
    violations = []
    for rp_uuid, held in sorted(usage(allocations).items()):
        inventory = inventories.get(rp_uuid)
        if inventory is None:
            continue
        for rc, amount in sorted(held.items()):
            record = inventory.get(rc)
            if record is not None and amount > capacity(record):
                violations.append(Violation(
                    "over_capacity", None, rp_uuid, rc,
                    f"provider {names.get(rp_uuid, rp_uuid)} would hold {amount} {rc}, "
                    f"capacity {capacity(record):g}"))
    return violations


def check_orphans(inventories: Inventories, allocations: Allocations, scope: Iterable[str],
                  names: Mapping[str, str] | None = None) -> list[Violation]:
    """No allocation in ``scope`` on a provider without inventory of that class."""
    names = names or {}
    scope = set(scope)
    violations = []
    for consumer, body in sorted(allocations.items()):
        for rp_uuid, entry in sorted(body.get("allocations", {}).items()):
            if rp_uuid not in scope:
                continue  # another host's or a sharing provider: not this node's
            inventory = inventories.get(rp_uuid, {})
            for rc in sorted(entry.get("resources", {})):
                if rc not in inventory:
                    violations.append(Violation(
                        "orphan_allocation", consumer, rp_uuid, rc,
                        f"consumer {consumer} holds {rc} on provider "
                        f"{names.get(rp_uuid, rp_uuid)}, which has no {rc} inventory"))
    return violations


def check_node(before: Allocations, after: Allocations, scope_before: Iterable[str],
               inventories_after: Inventories, created: Iterable[Any] = (),
               names: Mapping[str, str] | None = None) -> list[Violation]:
    """All three invariants for one node; ``inventories_after`` keys are the new scope.

    Providers that left the tree count as in scope with no inventory, so an
    allocation left on one is an orphan.
    """
    scope_before = set(scope_before)
    scope_after = set(inventories_after)
    orphan_scope = scope_after | scope_before
    return (check_conservation(before, after, scope_before, scope_after, created)
            + check_capacity(inventories_after, after, names)
            + check_orphans(inventories_after, after, orphan_scope, names))
