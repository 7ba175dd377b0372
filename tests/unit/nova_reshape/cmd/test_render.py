"""How the command draws provider trees and lists allocation moves."""

from __future__ import annotations

import pytest

from nova_reshape.cmd import render
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move

CN, NUMA0, NUMA1, GPU = (f"{digit}" * 8 + "-0000-4000-8000-000000000000" for digit in "1234")


@pytest.fixture
def tree() -> ProviderTree:
    """cn1 (VCPU x4, 1 reserved) with two NUMA children; a GPU under the first."""
    tree = ProviderTree()
    tree.new_root("cn1", CN)
    tree.update_inventory(CN, {"VCPU": {"total": 8, "reserved": 1, "allocation_ratio": 4.0},
                               "MEMORY_MB": {"total": 2048}})
    tree.new_child("numa0", CN, uuid=NUMA0)
    tree.update_traits(NUMA0, ["HW_NUMA_ROOT", "CUSTOM_B"])
    tree.new_child("gpu", NUMA0, uuid=GPU)
    tree.update_inventory(GPU, {"VGPU": {"total": 2}})
    tree.new_child("numa1", CN, uuid=NUMA1)
    return tree


def test_a_tree_is_drawn_one_provider_a_line_with_branches(tree):
    assert render.draw_tree(tree, "cn1") == [
        "cn1 (11111111): MEMORY_MB 2048, VCPU 8 (reserved 1, x4)",
        "├── numa0 (22222222): no inventory  [CUSTOM_B, HW_NUMA_ROOT]",
        "│   └── gpu (44444444): VGPU 2",
        "└── numa1 (33333333): no inventory",
    ]


def test_tree_json_nests_children_with_sorted_traits(tree):
    drawn = render.tree_json(tree, CN)
    assert [child["name"] for child in drawn["children"]] == ["numa0", "numa1"]
    assert drawn["children"][0]["traits"] == ["CUSTOM_B", "HW_NUMA_ROOT"]
    assert drawn["children"][0]["children"][0] == {
        "name": "gpu", "uuid": GPU, "inventory": {"VGPU": {"total": 2}}, "traits": [],
        "children": []}


NAMES = {CN: "cn1", NUMA0: "numa0"}


@pytest.mark.parametrize(("move", "line"), [
    (Move("c1", "VCPU", 2, CN, NUMA0, "numa"), "move VCPU 2 of consumer c1: cn1 -> numa0"),
    (Move("c1", "CUSTOM_PCI_10DE_20B5", 1, None, GPU, "pci"),
     f"create CUSTOM_PCI_10DE_20B5 1 of consumer c1: (new) -> {GPU}"),
    (Move("c1", "PCPU", 2, NUMA0, NUMA0, "numa", from_class="VCPU"),
     "convert VCPU 2 to PCPU of consumer c1 on numa0"),
])
def test_a_move_is_one_line_naming_providers_where_known(move, line):
    assert render.move_line(move, NAMES) == line


def test_a_vgpu_count_adjustment_says_why():
    line = render.move_line(Move("c1", "VGPU", -1, None, GPU, "vgpu"), NAMES)
    assert line.startswith("adjust VGPU by -1 for consumer c1:")
    assert line.endswith("(--allow-vgpu-mismatch)")


def test_move_json_carries_names_and_no_source_name_for_a_creation():
    created = render.move_json(Move("c1", "VGPU", 1, None, NUMA0, "vgpu"), NAMES)
    assert (created["source"], created["source_name"], created["target_name"]) \
        == (None, None, "numa0")
    moved = render.move_json(Move("c1", "VCPU", 2, CN, NUMA0, "numa"), NAMES)
    assert moved["source_name"] == "cn1" and moved["created"] is False
