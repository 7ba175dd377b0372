"""Capacity per resource class, before and after, and whether the migration kept it.

A reshape moves inventory and allocations between the providers of one
node's tree; summed over the cloud, each resource class's total, reserved
and used must not move. Two exceptions are expected and named: a pinned
guest's VCPU becomes PCPU (so VCPU and PCPU are summed as one group, whose
capacity may still change with the classes' ratios), and PCI devices
reported to Placement for the first time bring their class and the
allocations the PCI shim creates (the class is new). Capacity is
:func:`placement_wsgi.capacity.capacity`, the project's one formula.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from placement_wsgi.capacity import capacity

#: Classes counted together: the PCPU reshape converts one into the other.
GROUPS = {"VCPU": "VCPU+PCPU", "PCPU": "VCPU+PCPU"}


def group_of(resource_class: str) -> str:
    """The name a class is summed under (its own but for VCPU and PCPU)."""
    return GROUPS.get(resource_class, resource_class)


class Amounts(NamedTuple):
    """One class's numbers over some providers."""

    total: int = 0
    reserved: int = 0
    capacity: float = 0.0
    used: int = 0

    def __add__(self, other: Any) -> Amounts:  # type: ignore[override]
        return Amounts(*(mine + theirs for mine, theirs in zip(self, other, strict=True)))


class Mark(enum.StrEnum):
    """What happened to a class's numbers, summed over the cloud."""

    #: Total, reserved and used the same before and after.
    CONSERVED = "conserved"
    #: Nothing of the class before: devices now in Placement (PCI), allocations created.
    NEW = "new"
    #: Gone after: its inventory left the cloud's providers.
    GONE = "gone"
    #: Total, reserved or used differ: look at the nodes.
    CHANGED = "changed"


def mark(before: Amounts, after: Amounts) -> Mark:
    """The class's mark from its sums before and after."""
    if before[:2] + before[3:] == after[:2] + after[3:]:
        return Mark.CONSERVED
    if before == Amounts():
        return Mark.NEW
    if after == Amounts():
        return Mark.GONE
    return Mark.CHANGED


def differs(before: Amounts, after: Amounts) -> list[str]:
    """The names of the kept numbers (total, reserved, used) that differ."""
    return [name for name in ("total", "reserved", "used")
            if getattr(before, name) != getattr(after, name)]


Inventories = Mapping[str, Mapping[str, Mapping[str, Any]]]


def per_group(inventories: Inventories, usage: Mapping[str, Mapping[str, int]]
              ) -> dict[str, Amounts]:
    """group -> amounts over providers ``inventories`` (uuid -> class -> record)
    with ``usage`` (uuid -> class -> amount held)."""
    sums: dict[str, Amounts] = {}
    for rp_uuid, inventory in inventories.items():
        used = usage.get(rp_uuid, {})
        for rc, record in inventory.items():
            reserved = int(record.get("reserved", 0))
            amounts = Amounts(int(record["total"]), reserved,
                              capacity(int(record["total"]), reserved,
                                       float(record.get("allocation_ratio", 1.0))),
                              int(used.get(rc, 0)))
            key = group_of(rc)
            sums[key] = sums.get(key, Amounts()) + amounts
    return sums


class CapacityRow(NamedTuple):
    """One group's line of the report."""

    group: str
    before: Amounts
    after: Amounts
    mark: Mark


class CloudCapacity:
    """Sums of every node's groups before and after, added as nodes finish
    (one small mapping, whatever the number of nodes)."""

    def __init__(self) -> None:
        self.before: dict[str, Amounts] = {}
        self.after: dict[str, Amounts] = {}

    def add(self, before: Mapping[str, Iterable[float]],
            after: Mapping[str, Iterable[float]]) -> None:
        for sums, amounts in ((self.before, before), (self.after, after)):
            for group, numbers in amounts.items():
                sums[group] = sums.get(group, Amounts()) + Amounts(*numbers)

    def rows(self) -> list[CapacityRow]:
        """One row per group, sorted by name."""
        return [CapacityRow(group, self.before.get(group, Amounts()),
                            self.after.get(group, Amounts()),
                            mark(self.before.get(group, Amounts()),
                                 self.after.get(group, Amounts())))
                for group in sorted(set(self.before) | set(self.after))]
