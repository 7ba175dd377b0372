"""What every device shim shares: child uuids, full records, moves, problems (virt/shim.py)."""

from __future__ import annotations

import uuid

from nova_reshape import exception
from nova_reshape.virt.shim import Move, ShimProblem, child_uuid, full_record

ROOT = "aaaaaaaa-0000-4000-8000-000000000001"


def test_child_uuid_is_the_same_for_a_dry_run_and_the_run():
    first = child_uuid(ROOT, "cmp-07_pci_0000_84_00_0")
    assert first == child_uuid(ROOT, "cmp-07_pci_0000_84_00_0")
    assert first != child_uuid(ROOT, "cmp-07_pci_0000_84_00_1")
    assert uuid.UUID(first).version == 5


def test_full_record_has_every_field():
    assert full_record(4) == {"total": 4, "reserved": 0, "min_unit": 1, "max_unit": 4,
                              "step_size": 1, "allocation_ratio": 1.0}
    assert full_record(8, reserved=1, allocation_ratio=2.0, max_unit=2, step_size=2) == {
        "total": 8, "reserved": 1, "min_unit": 1, "max_unit": 2, "step_size": 2,
        "allocation_ratio": 2.0}


def test_created_and_converted_moves_change_the_totals():
    moved = Move("i1", "VGPU", 1, source="root", target="gpu", shim="vgpu")
    healed = Move("i1", "VGPU", 1, source=None, target="gpu", shim="vgpu")
    converted = Move("i1", "PCPU", 2, source="root", target="root", shim="pcpu",
                     from_class="VCPU")
    assert not moved.created and not moved.changes_totals
    assert healed.created and healed.changes_totals
    assert not converted.created and converted.changes_totals


def test_a_shim_problem_is_a_reshape_failure_with_its_code():
    problem = ShimProblem("device_missing", "no GPU at 0000:84:00.0")
    assert isinstance(problem, exception.ReshapeFailed)
    assert problem.code == "device_missing"
    assert "no GPU at 0000:84:00.0" in str(problem)
