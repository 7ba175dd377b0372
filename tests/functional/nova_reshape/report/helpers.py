"""Providers and inventories the report client tests share."""

from __future__ import annotations

import uuid

from nova_reshape.provider_tree import ProviderTree

CN = "c0c0c0c0-0000-4000-8000-000000000001"
CHILD = "c0c0c0c0-0000-4000-8000-000000000002"
VCPU = {"total": 8, "reserved": 0, "min_unit": 1, "max_unit": 8, "step_size": 1,
        "allocation_ratio": 1.0}
MEM = {"total": 4096, "reserved": 0, "min_unit": 1, "max_unit": 4096, "step_size": 1,
       "allocation_ratio": 1.0}


def tree_with_children(report) -> ProviderTree:
    """cmp-07 with inventory, traits and an aggregate; a GPU child and its grandchild."""
    tree = report.get_provider_tree_and_ensure_root(None, CN, name="cmp-07")
    tree.update_inventory(CN, {"VCPU": VCPU, "MEMORY_MB": MEM})
    tree.update_traits(CN, ["COMPUTE_NODE", "CUSTOM_GOLD"])
    agg = "a0a0a0a0-0000-4000-8000-000000000001"
    tree.update_aggregates(CN, [agg])
    tree.new_child("cmp-07_gpu0", CN, uuid=CHILD)
    tree.update_inventory(CHILD, {"CUSTOM_GPU": {"total": 2}})
    grandchild = tree.new_child("cmp-07_gpu0_vf", CHILD)
    tree.update_inventory(grandchild, {"VGPU": {"total": 4}})
    return tree


def seed_vcpu_on_root(seed) -> tuple[str, str]:
    """A root with VCPU+MEMORY_MB and two consumers using VCPU there."""
    seed.provider("cmp-07", uuid_=CN)
    seed.inventory(CN, {"VCPU": VCPU, "MEMORY_MB": MEM})
    i1, i2 = str(uuid.uuid4()), str(uuid.uuid4())
    seed.allocate(i1, {CN: {"VCPU": 2, "MEMORY_MB": 512}})
    seed.allocate(i2, {CN: {"VCPU": 1}})
    return i1, i2
