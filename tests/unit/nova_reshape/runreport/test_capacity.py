"""Capacity per group, the cloud's sums, and the marks."""

from __future__ import annotations

from nova_reshape.runreport import capacity
from nova_reshape.runreport.capacity import Amounts, Mark


def test_per_group_sums_providers_with_the_one_capacity_formula():
    inventories = {
        "root": {"VCPU": {"total": 32, "reserved": 2, "allocation_ratio": 4.0},
                 "PCPU": {"total": 8}, "MEMORY_MB": {"total": 1024, "reserved": 24}},
        "gpu": {"VGPU": {"total": 4, "allocation_ratio": 1.0}},
    }
    usage = {"root": {"VCPU": 5, "PCPU": 2, "MEMORY_MB": 512}, "gpu": {"VGPU": 1}}
    sums = capacity.per_group(inventories, usage)
    assert sums["VCPU+PCPU"] == Amounts(40, 2, 30 * 4.0 + 8, 7)
    assert sums["MEMORY_MB"] == Amounts(1024, 24, 1000.0, 512)
    assert sums["VGPU"] == Amounts(4, 0, 4.0, 1)
    assert set(sums) == {"VCPU+PCPU", "MEMORY_MB", "VGPU"}


def test_marks():
    same = Amounts(10, 1, 9.0, 3)
    assert capacity.mark(same, same) == Mark.CONSERVED
    # a ratio change moves capacity only: still conserved (total, reserved, used kept)
    assert capacity.mark(same, same._replace(capacity=36.0)) == Mark.CONSERVED
    assert capacity.mark(Amounts(), Amounts(4, 0, 4.0, 1)) == Mark.NEW
    assert capacity.mark(same, Amounts()) == Mark.GONE
    assert capacity.mark(same, same._replace(used=4)) == Mark.CHANGED
    assert capacity.differs(same, same._replace(used=4, total=11)) == ["total", "used"]


def test_cloud_capacity_adds_nodes_and_rows_are_sorted_with_their_marks():
    cloud = capacity.CloudCapacity()
    cloud.add({"VGPU": (4, 0, 4.0, 2)}, {"VGPU": (4, 0, 4.0, 2), "CUSTOM_PCI": (1, 0, 1.0, 1)})
    cloud.add({"VGPU": (2, 0, 2.0, 0)}, {"VGPU": (2, 0, 2.0, 0)})
    rows = cloud.rows()
    assert [row.group for row in rows] == ["CUSTOM_PCI", "VGPU"]
    assert rows[0].mark == Mark.NEW and rows[0].after == Amounts(1, 0, 1.0, 1)
    assert rows[1] == capacity.CapacityRow("VGPU", Amounts(6, 0, 6.0, 2),
                                           Amounts(6, 0, 6.0, 2), Mark.CONSERVED)
