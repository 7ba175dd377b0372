"""Each node's part of the report, made while its trees still exist.

The run keeps no trees past a node (see
:class:`~nova_reshape.compute.node_result.NodeResult`), so the report's
``show`` (:func:`recorded`, a :data:`~nova_reshape.compute.node_result.Show`)
reduces them at once to a :class:`NodeDetail`: the node's capacity per
class before and after (a few numbers), its device kinds, and its trees
laid out for drawing plus its moves as one compact JSON text, which goes
straight to a :class:`Spool` file (the run keeps each node's result from
its check to its write, so the detail it holds must stay small). The text
output's own detail rides along in ``inner`` and is put back when the
report takes the node (:func:`take_detail`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO, NamedTuple

from nova_reshape.compute import invariants, node_result, preflight
from nova_reshape.compute.node_result import NodeResult, NodeStatus, Show
from nova_reshape.provider_tree import ProviderTree
from nova_reshape.runreport import capacity, layout
from nova_reshape.virt.shim import Move

#: Traits and classes that tell a node's device kinds (filterable in the report).
_KIND_TRAITS = {"COMPUTE_MANAGED_PCI_DEVICE": "pci", "OWNER_CYBORG": "cyborg"}
_KIND_CLASSES = {"VGPU": "vgpu", "PCPU": "pcpu"}
_KIND_SHIMS = {"vgpu": "vgpu", "pcpu": "pcpu", "pci": "pci", "cyborg": "cyborg",
               "numa": "numa"}
DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"

#: Statuses whose tree "after" is what Placement holds (or, dry run, would hold).
_AFTER_STANDS = frozenset({NodeStatus.MIGRATED, NodeStatus.UPDATED,
                           NodeStatus.WOULD_MIGRATE, NodeStatus.WOULD_UPDATE})

Sums = dict[str, tuple[float, ...]]


class SpoolRef(NamedTuple):
    """Where a node's drawing was spooled: file, offset, length in bytes."""

    path: str
    offset: int
    length: int


#: This process's open spool files, by (directory, pid).
_SPOOLS: dict[tuple[str, int], BinaryIO] = {}


@dataclasses.dataclass(frozen=True)
class Spool:
    """Files in ``directory`` (one per process: parallel workers spool side by side)
    holding the nodes' drawings until the report writes them."""

    directory: str

    def put(self, text: str) -> SpoolRef:
        key = (self.directory, os.getpid())
        stream = _SPOOLS.get(key)
        if stream is None:
            stream = _SPOOLS[key] = open(  # noqa: SIM115 - kept open for the run
                os.path.join(self.directory, f"spool-{os.getpid()}"), "wb")
        data = text.encode()
        offset = stream.tell()
        stream.write(data)
        stream.flush()
        return SpoolRef(stream.name, offset, len(data))

    @staticmethod
    def get(ref: SpoolRef) -> str:
        with open(ref.path, "rb") as stream:
            stream.seek(ref.offset)
            return stream.read(ref.length).decode()

    def close(self) -> None:
        """Close this process's spool file in ``directory``."""
        stream = _SPOOLS.pop((self.directory, os.getpid()), None)
        if stream is not None:
            stream.close()


@dataclasses.dataclass
class NodeDetail:
    """A node's trees and plan reduced for the report (pickles: sent by workers)."""

    #: group -> (total, reserved, capacity, used), before and after.
    before: Sums
    after: Sums
    kinds: tuple[str, ...]
    disabled: bool
    #: Whether ``after`` was read back from Placement after the write.
    read_back: bool
    #: The trees laid out, the moves and the plan, compact JSON, spooled.
    drawing: SpoolRef
    #: What the text or JSON output's own ``show`` made of the node.
    inner: Any = None


def _inventory_line(rc: str, record: Mapping[str, Any], used: int) -> str:
    text = f"{rc} {record['total']}"
    if record.get("reserved"):
        text += f" res {record['reserved']}"
    ratio = float(record.get("allocation_ratio", 1.0))
    if ratio != 1.0:
        text += f" x{ratio:g}"
    return text + (f" · used {used}" if used else "")


def _provider_lines(data: Any, used: Mapping[str, int]) -> list[str]:
    lines = [data.name]
    lines += [_inventory_line(rc, record, used.get(rc, 0))
              for rc, record in sorted(data.inventory.items())]
    traits = sorted(data.traits)
    lines += [", ".join(traits[index:index + 2]) for index in range(0, len(traits), 2)]
    return lines


def tree_drawing(tree: ProviderTree, root: str, allocations: Mapping[str, Any],
                 other: Iterable[str] = ()) -> dict[str, Any]:
    """``root``'s tree laid out: size, boxes (uuid, name, lines, x, y, w, h, whether
    the other tree lacks it) and edges."""
    usage = invariants.usage(allocations)
    other = set(other)
    providers = [tree.data(uuid) for uuid in tree.get_provider_uuids(root)]
    lines = {data.uuid: _provider_lines(data, usage.get(data.uuid, {})) for data in providers}
    placed = layout.layout([layout.Placed(data.uuid, data.parent_uuid, len(lines[data.uuid]),
                                          max(map(len, lines[data.uuid])))
                            for data in providers])
    return {"w": placed.width, "h": placed.height,
            "boxes": [[box.uuid, lines[box.uuid], box.x, box.y, box.width, box.height,
                       box.uuid not in other] for box in placed.boxes],
            "edges": [list(edge) for edge in placed.edges]}


def _sums(tree: ProviderTree, root: str, allocations: Mapping[str, Any]) -> Sums:
    inventories = {uuid: tree.data(uuid).inventory for uuid in tree.get_provider_uuids(root)}
    return {group: tuple(amounts) for group, amounts in
            capacity.per_group(inventories, invariants.usage(allocations)).items()}


def kinds_of(trees: Iterable[tuple[ProviderTree, str]], moves: Iterable[Move]) -> tuple[str, ...]:
    """The node's device kinds: from its providers' classes and traits and its moves."""
    kinds = {_KIND_SHIMS[move.shim] for move in moves if move.shim in _KIND_SHIMS}
    for tree, root in trees:
        for uuid in tree.get_provider_uuids(root):
            data = tree.data(uuid)
            kinds.update(_KIND_CLASSES[rc] for rc in data.inventory if rc in _KIND_CLASSES)
            kinds.update(_KIND_TRAITS[t] for t in data.traits if t in _KIND_TRAITS)
    return tuple(sorted(kinds))


def move_row(move: Move, names: Mapping[str, str]) -> list[Any]:
    """consumer, class, amount, from (provider name, None: created), to, shim, former class."""
    return [move.consumer, move.resource_class, move.amount,
            names.get(move.source, move.source) if move.source else None,
            names.get(move.target, move.target), move.shim, move.from_class]


def recorded(spool: Spool, inner: Show | None, result: NodeResult,
             simulation: preflight.Simulation, tree_after: ProviderTree | None) -> NodeDetail:
    """The report's ``show``: ``inner`` (the output's own, or None) wrapped with the
    node's :class:`NodeDetail`, its drawing put in ``spool``. Use as
    ``functools.partial(recorded, spool, inner)``."""
    root = result.root
    before = simulation.tree_before
    after = tree_after or simulation.tree_after
    names = preflight.names_of(*(tree for tree in (before, simulation.tree_after, tree_after)
                                 if tree is not None))
    uuids_before = before.get_provider_uuids(root)
    uuids_after = after.get_provider_uuids(root)
    drawing = {"before": tree_drawing(before, root, simulation.allocations_before,
                                      uuids_after),
               "after": tree_drawing(after, root, simulation.allocations_after, uuids_before),
               "moves": [move_row(move, names) for move in result.moves],
               "plan": simulation.plan.lines()}
    return NodeDetail(
        before=_sums(before, root, simulation.allocations_before),
        after=_sums(after, root, simulation.allocations_after),
        kinds=kinds_of(((before, root), (after, root)), result.moves),
        disabled=DISABLED_TRAIT in before.data(root).traits,
        read_back=tree_after is not None,
        drawing=spool.put(json.dumps(drawing, separators=(",", ":"))),
        inner=inner(result, simulation, tree_after) if inner is not None else None)


def take_detail(result: NodeResult) -> NodeDetail | None:
    """The node's :class:`NodeDetail` (None: the run never planned it), putting the
    output's own detail back in its place on ``result``."""
    detail = result.detail
    if not isinstance(detail, NodeDetail):
        return None
    result.detail = detail.inner
    return detail


def after_sums(result: NodeResult, detail: NodeDetail) -> Sums:
    """The node's capacity after the run: as planned or read back where it was
    written (or would be, dry run), else as before (nothing was written)."""
    if detail.read_back or result.status in _AFTER_STANDS:
        return detail.after
    return detail.before


def findings_of(result: NodeResult) -> list[dict[str, Any]]:
    return [finding.as_dict() for finding in result.findings]


def entry(result: NodeResult, detail: NodeDetail | None, dry_run: bool) -> dict[str, Any]:
    """The node's record in the report: what its row shows and, under ``drawing``,
    what its expanded view draws (None when the run never planned it)."""
    findings = findings_of(result)
    reason = findings[0] if findings else None
    return {
        "node": result.nodename, "status": str(result.status), "root": result.root,
        "kinds": list(detail.kinds) if detail else [],
        "disabled": bool(detail and detail.disabled),
        "moves": len(result.moves), "calls": result.calls, "writes": result.writes,
        "error": result.error,
        "reason": reason["message"] if reason else result.error,
        "fix": reason["fix"] if reason else None,
        "findings": findings,
        "violations": [dataclasses.asdict(violation) for violation in result.violations],
        "after_is": _after_is(result, detail, dry_run),
        "drawing": json.loads(Spool.get(detail.drawing)) if detail else None,
    }


def _after_is(result: NodeResult, detail: NodeDetail | None, dry_run: bool) -> str:
    """How to read the node's tree "after": written, planned or not written."""
    if detail is None:
        return "none"
    if detail.read_back or result.status in (node_result.MIGRATED, node_result.UPDATED):
        return "written"
    if result.status == node_result.UNCHANGED:
        return "unchanged"
    return "planned" if dry_run and result.status in _AFTER_STANDS else "not written"
