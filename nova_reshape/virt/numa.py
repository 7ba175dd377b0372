"""NUMA shim: one child provider per host NUMA cell.

Nova never merged NUMA providers; this follows the numa-topology-with-rps
proposal in the simplified form the migration needs: every cell of the
host becomes a child ``<nodename>_NUMA<id>`` of the compute node with trait
``HW_NUMA_ROOT`` (and ``OWNER_NOVA``) and the cell's ``VCPU`` (its shared
``cpus``), ``PCPU`` (its dedicated ``pcpus``) and ``MEMORY_MB`` (its
``memory_mb``; reserved = ``reserved_memory_mb``). A class a cell has none
of is omitted. The root keeps everything else (``DISK_GB``); VGPU, PCI and
accelerator children stay under the root. Memory stays on the cell
provider (the proposal's per-page-size grandchildren are not modelled);
``huge_pages`` only has to fit in the cell.

Allocation ratios are carried over from the root's old ``VCPU`` /
``MEMORY_MB`` records (later runs keep whatever the cells have). The
root's old ``reserved`` goes to the lowest cell providing the class,
capped at that cell's total, unless the description reserves memory per
cell.

Each consumer's ``VCPU``/``PCPU``/``MEMORY_MB`` on the root is split across
the cells it is placed on: the amounts the description gives per cell, or
else evenly (the first cells take the remainder). A consumer with such
allocations but no NUMA placement cannot be moved: ``ReshapeFailed``.
"""

from __future__ import annotations

from typing import Any

import os_traits

from nova_reshape.provider_tree import ProviderData, ProviderTree
from nova_reshape.virt.host import Consumer, Node, NumaCell
from nova_reshape.virt.shim import ChildPlan, DeviceShim, ShimProblem, full_record

CLASSES = ("VCPU", "PCPU", "MEMORY_MB")
#: NumaShare field holding a consumer's amount of each class.
SHARE_FIELDS = {"VCPU": "vcpus", "PCPU": "pcpus", "MEMORY_MB": "memory_mb"}


def cell_name(nodename: str, cell_id: int) -> str:
    return f"{nodename}_NUMA{cell_id}"


def cell_capacity(cell: NumaCell, resource_class: str) -> int:
    """The cell's total of one class (0 when it provides none)."""
    if resource_class == "VCPU":
        return len(cell.cpus)
    if resource_class == "PCPU":
        return len(cell.pcpus)
    return cell.memory_mb


class NumaShim(DeviceShim):
    """Moves VCPU, PCPU and MEMORY_MB from the root to one child per NUMA cell."""

    kind = "numa"

    def legacy_classes(self, node: Node) -> set[str]:
        return {rc for rc in CLASSES if any(cell_capacity(c, rc) for c in node.numa_cells)}

    def plan(self, node: Node, tree: ProviderTree, nodename: str) -> list[ChildPlan]:
        root = tree.data(nodename)
        cells = sorted(node.numa_cells, key=lambda cell: cell.id)
        per_cell_reservation = any(cell.reserved_memory_mb for cell in cells)
        first = {rc: next((c.id for c in cells if cell_capacity(c, rc)), None)
                 for rc in CLASSES}
        plans = []
        for cell in cells:
            name = cell_name(nodename, cell.id)
            existing = tree.data(name).inventory if tree.exists(name) else {}
            inventory: dict[str, dict[str, Any]] = {}
            for rc in CLASSES:
                total = cell_capacity(cell, rc)
                if not total:
                    continue
                legacy = root.inventory.get(rc, {})
                current = existing.get(rc, {})
                ratio = legacy.get("allocation_ratio", current.get("allocation_ratio", 1.0))
                if rc == "PCPU":
                    ratio = 1.0
                if rc == "MEMORY_MB" and per_cell_reservation:
                    reserved = cell.reserved_memory_mb
                elif legacy:
                    reserved = legacy.get("reserved", 0) if first[rc] == cell.id else 0
                else:
                    reserved = current.get("reserved", 0)
                inventory[rc] = full_record(total, reserved=min(reserved, total),
                                            allocation_ratio=ratio)
            plans.append(ChildPlan(key=str(cell.id), name=name, inventory=inventory,
                                   traits=(os_traits.HW_NUMA_ROOT, os_traits.OWNER_NOVA)))
        return plans

    def targets(self, node: Node, consumer_uuid: str, consumer: Consumer | None,
                resource_class: str, amount: int) -> dict[str, int]:
        if consumer is None or consumer.numa is None:
            raise ShimProblem("unplaceable_allocation", (
                f"consumer {consumer_uuid} holds {amount} {resource_class} on the compute "
                f"node but the host description gives it no NUMA placement"))
        cells = {cell.id: cell for cell in node.numa_cells}
        for share in consumer.numa:
            if share.cell not in cells:
                raise ShimProblem("device_missing", (
                    f"consumer {consumer_uuid} is placed on NUMA cell {share.cell}, which "
                    f"the host description does not list"))
        field = SHARE_FIELDS[resource_class]
        explicit = [getattr(share, field) for share in consumer.numa]
        if any(value is not None for value in explicit):
            return {str(share.cell): value or 0
                    for share, value in zip(consumer.numa, explicit, strict=True)}
        return split_evenly(amount, [share.cell for share in consumer.numa
                                     if cell_capacity(cells[share.cell], resource_class)])

    def owns(self, data: ProviderData, nodename: str) -> bool:
        return (os_traits.HW_NUMA_ROOT in data.traits
                and data.name.startswith(f"{nodename}_NUMA"))


def split_evenly(amount: int, cells: list[int]) -> dict[str, int]:
    """``amount`` over ``cells`` as evenly as possible, the first ones taking more."""
    if not cells:
        return {}
    base, remainder = divmod(amount, len(cells))
    return {str(cell): base + (1 if index < remainder else 0)
            for index, cell in enumerate(cells)}
