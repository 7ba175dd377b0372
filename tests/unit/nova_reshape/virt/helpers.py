"""Building blocks for the shim unit tests: trees, allocations, descriptions."""

from __future__ import annotations

import copy
from typing import Any

from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.host import Node, parse_host

NODE = "cmp-07"
ROOT = "aaaaaaaa-0000-4000-8000-000000000001"
I1 = "11111111-1111-4111-8111-111111111111"
I2 = "22222222-2222-4222-8222-222222222222"
MIG = "33333333-3333-4333-8333-333333333333"
SHARED = "dddddddd-0000-4000-8000-0000000000dd"


def record(total: int, **fields: Any) -> dict[str, Any]:
    return {"total": total, "reserved": 0, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": 1.0, **fields}


def tree_with_root(inventory: dict[str, Any], traits: tuple[str, ...] = ()) -> ProviderTree:
    tree = ProviderTree()
    tree.new_root(NODE, ROOT, generation=5)
    tree.update_inventory(NODE, inventory)
    tree.update_traits(NODE, traits)
    return tree


def body(held: dict[str, dict[str, int]], generation: int = 1) -> dict[str, Any]:
    """A GET /allocations/<consumer> body (1.28)."""
    return {"allocations": {rp: {"generation": 5, "resources": dict(res)}
                            for rp, res in held.items()},
            "project_id": "p", "user_id": "u", "consumer_generation": generation}


def node(**fields: Any) -> Node:
    """A Node parsed from a description fragment (so the loader's rules apply)."""
    raw = {"nodename": NODE, "uuid": ROOT, **fields}
    return parse_host({"nodes": [raw]}, "test.yaml").nodes[0]


def held(allocations: dict[str, Any], consumer: str, tree: ProviderTree) -> dict[str, Any]:
    """A consumer's allocations keyed by provider *name* (resources only)."""
    names = {u: tree.data(u).name for u in tree.get_provider_uuids()}
    return {names.get(rp, rp): entry["resources"]
            for rp, entry in allocations[consumer]["allocations"].items()}


def snapshot(allocations: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(allocations)
