"""How ``nova-reshape-manage`` shows trees and moves (progress: :mod:`nova_reshape.progress`).

Trees are drawn top-down with box-drawing branches, one provider per line:
name, short uuid, inventory totals (with ``reserved`` and ratio when not
the defaults) and traits. Moves are one line each. JSON output uses
:func:`tree_json` and :func:`move_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nova_reshape.compute import node_result, preflight
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.virt.shim import Move


def _inventory_text(inventory: Mapping[str, Mapping[str, Any]]) -> str:
    parts = []
    for rc, record in sorted(inventory.items()):
        text = f"{rc} {record['total']}"
        extras = []
        if record.get("reserved"):
            extras.append(f"reserved {record['reserved']}")
        ratio = float(record.get("allocation_ratio", 1.0))
        if ratio != 1.0:
            extras.append(f"x{ratio:g}")
        if extras:
            text += f" ({', '.join(extras)})"
        parts.append(text)
    return ", ".join(parts) or "no inventory"


def draw_tree(tree: ProviderTree, root: str) -> list[str]:
    """Lines drawing ``root``'s subtree."""
    lines: list[str] = []

    def visit(rp_uuid: str, prefix: str, connector: str) -> None:
        data = tree.data(rp_uuid)
        traits = f"  [{', '.join(sorted(data.traits))}]" if data.traits else ""
        lines.append(f"{prefix}{connector}{data.name} ({rp_uuid[:8]}): "
                     f"{_inventory_text(data.inventory)}{traits}")
        children = [u for u in tree.get_provider_uuids(rp_uuid)
                    if tree.data(u).parent_uuid == rp_uuid]
        below = prefix + ("" if not connector else ("    " if connector == "└── " else "│   "))
        for index, child in enumerate(children):
            visit(child, below, "└── " if index == len(children) - 1 else "├── ")

    visit(tree.data(root).uuid, "", "")
    return lines


def tree_json(tree: ProviderTree, root: str) -> dict[str, Any]:
    data = tree.data(root)
    children = [u for u in tree.get_provider_uuids(data.uuid)
                if tree.data(u).parent_uuid == data.uuid]
    return {"name": data.name, "uuid": data.uuid, "inventory": data.inventory,
            "traits": sorted(data.traits), "children": [tree_json(tree, c) for c in children]}


def _name(names: Mapping[str, str], rp_uuid: str | None) -> str:
    if rp_uuid is None:
        return "(new)"
    return names.get(rp_uuid, rp_uuid)


def move_line(move: Move, names: Mapping[str, str]) -> str:
    if move.from_class is not None:
        return (f"convert {move.from_class} {move.amount} to {move.resource_class} of "
                f"consumer {move.consumer} on {_name(names, move.target)}")
    if move.created and move.shim == "vgpu":
        return (f"adjust {move.resource_class} by {move.amount:+d} for consumer "
                f"{move.consumer}: its mediated devices count differs from its allocation "
                "(--allow-vgpu-mismatch)")
    verb = "create" if move.created else "move"
    return (f"{verb} {move.resource_class} {move.amount} of consumer {move.consumer}: "
            f"{_name(names, move.source)} -> {_name(names, move.target)}")


def move_json(move: Move, names: Mapping[str, str]) -> dict[str, Any]:
    return {"consumer": move.consumer, "resource_class": move.resource_class,
            "amount": move.amount, "created": move.created, "shim": move.shim,
            "from_class": move.from_class,
            "source": move.source, "source_name": _name(names, move.source) if move.source
            else None, "target": move.target, "target_name": _name(names, move.target)}


def _names_and_trees(simulation: preflight.Simulation, tree_after: ProviderTree | None,
                     ) -> tuple[dict[str, str], ProviderTree, ProviderTree]:
    """Provider names of every tree shown; the trees before and after (as read
    back when the node was written and read back, else as simulated)."""
    trees = [tree for tree in (simulation.tree_before, simulation.tree_after, tree_after)
             if tree is not None]
    return (preflight.names_of(*trees), simulation.tree_before,
            tree_after or simulation.tree_after)


def node_text(result: node_result.NodeResult, simulation: preflight.Simulation,
              tree_after: ProviderTree | None) -> list[str]:
    """The lines ``--dry-run`` and ``--verbose`` show under a node's line (a
    :data:`~nova_reshape.compute.node_result.Show`): trees before and after, the
    moves, and the plan."""
    names, before, after = _names_and_trees(simulation, tree_after)
    lines = []
    if result.root:
        lines.append("  before:")
        lines.extend(f"    {line}" for line in draw_tree(before, result.root))
        lines.append("  after:")
        lines.extend(f"    {line}" for line in draw_tree(after, result.root))
        lines.extend(f"  {move_line(move, names)}" for move in result.moves)
    if simulation.left_to_neutron:
        lines.append(f"  left to Neutron: {'; '.join(simulation.left_to_neutron)}")
    planned = simulation.plan.lines()
    lines.append("  plan: nothing to write" if not planned else "  plan:")
    lines.extend(f"    {line}" for line in planned)
    return lines


def node_json(result: node_result.NodeResult, simulation: preflight.Simulation,
              tree_after: ProviderTree | None) -> dict[str, Any]:
    """The parts of a node's JSON entry drawn from its trees and plan (a
    :data:`~nova_reshape.compute.node_result.Show`): moves, before, after, plan."""
    names, before, after = _names_and_trees(simulation, tree_after)
    return {
        "moves": [move_json(move, names) for move in result.moves],
        "before": tree_json(before, result.root) if result.root else None,
        "after": tree_json(after, result.root) if result.root else None,
        "plan": simulation.plan.as_dict(),
        "left_to_neutron": list(simulation.left_to_neutron),
    }
