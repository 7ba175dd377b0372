"""The depth-first search of one anchor (search.py): what each prefix check rejects,
in what order candidates come, and that ``place``/``undo`` are exact inverses."""

from __future__ import annotations

import itertools

from placement_wsgi.candidates.constraints import Constraints
from placement_wsgi.candidates.options import Slot
from placement_wsgi.candidates.request import parse_query
from placement_wsgi.candidates.resolved import ResolvedGroup, ResolvedRequest
from placement_wsgi.candidates.search import Prefix, search
from placement_wsgi.candidates.snapshot import InventoryRow, Snapshot
from placement_wsgi.microversion import Version

VCPU, MEMORY, VGPU = 0, 1, 4
NAMES = {VCPU: "VCPU", MEMORY: "MEMORY_MB", VGPU: "VGPU"}


def _row(provider: int, rc: int, total: int) -> InventoryRow:
    return InventoryRow(provider, rc, float(total), 1, total, 1)


def _two_vgpu_groups(policy: str) -> tuple[ResolvedRequest, list[Slot]]:
    """``resources1=VGPU:2&resources2=VGPU:2``: one class asked for by two slots."""
    request = parse_query([("resources1", "VGPU:2"), ("resources2", "VGPU:2"),
                           ("group_policy", policy)], Version(1, 36))
    groups = [ResolvedGroup(0, "1", ((VGPU, 2),)), ResolvedGroup(1, "2", ((VGPU, 2),))]
    slots = [Slot(0, ((VGPU, 2),), True), Slot(1, ((VGPU, 2),), True)]
    return ResolvedRequest(request=request, groups=groups, class_names=NAMES), slots


def _gpus(totals: dict[int, int]) -> Snapshot:
    """Children 7, 8, ... of root 1, each with ``totals[provider]`` VGPUs."""
    return Snapshot(has_trees=True,
                    root_of={1: 1, **dict.fromkeys(totals, 1)},
                    parent_of={1: None, **dict.fromkeys(totals, 1)},
                    inventories={VGPU: {p: _row(p, VGPU, total) for p, total in totals.items()}})


def test_summed_amounts_must_fit_on_a_shared_provider() -> None:
    resolved, slots = _two_vgpu_groups("none")
    constraints = Constraints(resolved, _gpus({7: 3, 8: 4}), slots, ())
    # 7 holds 3: one group of 2 fits, both (4) do not; 8 holds 4: both fit
    assert list(search(slots, [[7, 8], [7, 8]], constraints, 0)) == [(7, 8), (8, 7), (8, 8)]


def test_usage_counts_against_the_room() -> None:
    resolved, slots = _two_vgpu_groups("none")
    snapshot = _gpus({7: 3, 8: 4})
    snapshot.usage = {VGPU: {8: 1}}
    constraints = Constraints(resolved, snapshot, slots, ())
    assert list(search(slots, [[7, 8], [7, 8]], constraints, 0)) == [(7, 8), (8, 7)]


def test_isolate_gives_every_group_its_own_provider() -> None:
    resolved, slots = _two_vgpu_groups("isolate")
    constraints = Constraints(resolved, _gpus({7: 8, 8: 8, 9: 8}), slots, ())
    found = list(search(slots, [[7, 8, 9], [7, 8, 9]], constraints, 0))
    assert found == [pair for pair in itertools.product([7, 8, 9], repeat=2)
                     if pair[0] != pair[1]]


def test_no_candidate_when_nothing_fits_and_the_search_ends() -> None:
    resolved, slots = _two_vgpu_groups("isolate")
    constraints = Constraints(resolved, _gpus({7: 8}), slots, ())
    assert list(search(slots, [[7], [7]], constraints, 0)) == []


def test_before_1_29_one_provider_per_tree() -> None:
    request = parse_query([("resources", "VCPU:1,MEMORY_MB:64")], Version(1, 28))
    resolved = ResolvedRequest(request=request, class_names=NAMES, groups=[
        ResolvedGroup(0, "", ((VCPU, 1), (MEMORY, 64)))])
    slots = [Slot(0, ((VCPU, 1),), False), Slot(0, ((MEMORY, 64),), False)]
    snapshot = Snapshot(has_trees=True, root_of={1: 1, 2: 1, 3: 1},
                        parent_of={1: None, 2: 1, 3: 1})
    constraints = Constraints(resolved, snapshot, slots, ())
    # either class may come from 2 or 3, but not one from each: same tree
    assert list(search(slots, [[2, 3], [2, 3]], constraints, 2)) == [(2, 2), (3, 3)]


def test_search_is_lazy() -> None:
    resolved, slots = _two_vgpu_groups("none")
    constraints = Constraints(resolved, _gpus({p: 64 for p in range(7, 47)}), slots, ())
    providers = list(range(7, 47))
    found = search(slots, [providers, providers], constraints, 0)
    assert next(found) == (7, 7)
    assert next(found) == (7, 8)


def test_place_and_undo_are_inverses() -> None:
    resolved, slots = _two_vgpu_groups("isolate")
    snapshot = _gpus({7: 4, 8: 4})
    constraints = Constraints(resolved, snapshot, slots, ())
    prefix = Prefix(slots, [[7, 8], [7, 8]], constraints, 0)
    start = (dict(prefix.load), set(prefix.isolated), list(prefix.assigned))
    assert prefix.place(0, 7, 0)
    assert prefix.load == {(7, VGPU): 2} and prefix.isolated == {7}
    assert not prefix.place(1, 7, 1)  # isolate: 7 is taken
    assert prefix.load == {(7, VGPU): 2}  # a refused placement changes nothing
    assert prefix.place(1, 8, 1)
    prefix.undo(1, 8)
    prefix.undo(0, 7)
    # every load back to zero (keys may stay), nothing isolated or assigned
    assert {key: value for key, value in prefix.load.items() if value} == start[0]
    assert (prefix.isolated, prefix.assigned) == (start[1], start[2])
