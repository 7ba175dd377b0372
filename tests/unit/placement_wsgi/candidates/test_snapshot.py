"""What the combination step knows about a provider: room per class, traits (snapshot.py)."""

from __future__ import annotations

from placement_wsgi.candidates.snapshot import InventoryRow, Snapshot
from placement_wsgi.capacity import capacity

VCPU, VGPU = 0, 4
FAST, SLOW = 11, 12


def row(provider: int, rc: int, total: int, max_unit: int, reserved: int = 0,
        ratio: float = 1.0) -> InventoryRow:
    return InventoryRow(provider, rc, capacity(total, reserved, ratio), 1, max_unit, 1)


def test_room_is_capacity_less_usage_capped_by_max_unit():
    assert row(1, VCPU, 8, 16, reserved=2, ratio=1.5).room(used=3) == 6  # 9 - 3
    assert row(1, VCPU, 8, 4, ratio=2.0).room(used=0) == 4              # max_unit caps
    assert row(1, VCPU, 3, 3, ratio=0.7).room(used=0) == 2              # int(2.1)
    assert row(1, VCPU, 2, 2).room(used=3) == -1                        # over-used


def test_snapshot_room_uses_usage_and_is_remembered():
    snapshot = Snapshot(inventories={VGPU: {7: row(7, VGPU, 4, 4), 8: row(8, VGPU, 4, 2)}},
                        usage={VGPU: {7: 3}})
    assert (snapshot.room(7, VGPU), snapshot.room(8, VGPU)) == (1, 2)
    snapshot.usage[VGPU][7] = 0
    assert snapshot.room(7, VGPU) == 1  # memoised for the request


def test_traits_of_a_provider_among_those_asked_for():
    snapshot = Snapshot(trait_holders={FAST: {1, 2}, SLOW: {2}})
    assert snapshot.traits_of(1) == {FAST}
    assert snapshot.traits_of(2) == {FAST, SLOW}
    assert snapshot.traits_of(3) == frozenset()
