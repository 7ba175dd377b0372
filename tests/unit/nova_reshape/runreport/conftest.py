"""A small node planned from a flat root to a root with one GPU child (no Placement)."""

from __future__ import annotations

import pytest

from nova_reshape.compute import plan, preflight
from nova_reshape.compute.node_result import NodeResult, NodeStatus
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move

ROOT, GPU, CONSUMER = "r-uuid", "g-uuid", "c-uuid"


def _root(tree: ProviderTree, vgpu: int | None) -> None:
    tree.new_root("cmp-1", ROOT)
    inventory = {"VCPU": {"total": 8, "reserved": 0, "allocation_ratio": 4.0},
                 "MEMORY_MB": {"total": 4096, "reserved": 512, "allocation_ratio": 1.0}}
    if vgpu:
        inventory["VGPU"] = {"total": vgpu, "reserved": 0, "allocation_ratio": 1.0}
    tree.update_inventory(ROOT, inventory)
    tree.update_traits(ROOT, ["COMPUTE_NODE", "COMPUTE_STATUS_DISABLED"])


@pytest.fixture
def simulation() -> preflight.Simulation:
    before, after = ProviderTree(), ProviderTree()
    _root(before, vgpu=2)
    _root(after, vgpu=None)
    after.new_child("cmp-1_pci_0000_84_00_0", ROOT, uuid=GPU)
    after.update_inventory(GPU, {"VGPU": {"total": 2, "reserved": 0, "allocation_ratio": 1.0}})
    held = {"VCPU": 2, "MEMORY_MB": 1024}
    allocations_before = {CONSUMER: {"allocations": {ROOT: {"resources": {**held, "VGPU": 1}}}}}
    allocations_after = {CONSUMER: {"allocations": {ROOT: {"resources": held},
                                                    GPU: {"resources": {"VGPU": 1}}}}}
    moves = [Move(CONSUMER, "VGPU", 1, ROOT, GPU, "vgpu")]
    node_plan = plan.NodePlan("cmp-1", ROOT, reshape=True)
    return preflight.Simulation(before, after, allocations_before, allocations_after, moves,
                                True, node_plan)


@pytest.fixture
def result(simulation) -> NodeResult:
    return NodeResult("cmp-1", NodeStatus.WOULD_MIGRATE, root=ROOT, moves=simulation.moves)
