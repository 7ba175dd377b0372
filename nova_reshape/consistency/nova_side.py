"""Which consumers nova accounts on each compute node, over every cell read.

``placement audit`` asks, for an allocation on a provider, whether nova
still accounts its consumer on the provider's root compute node: one of
the node's live instances or in-progress migrations
(:mod:`nova_reshape.novadb.holders` says which). :class:`NovaHolders`
answers that for every compute node of the cells read, by compute node
uuid, from one set-based read per cell.

Where not every cell was read (``--cell``, or a cell left out as
unreachable), a provider rooted elsewhere may belong to a compute node of
a cell not read, so :attr:`NovaHolders.complete` is False and the audit
looks only at trees rooted at a compute node it read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nova_reshape.novadb.cells import EachCell
from nova_reshape.novadb.holders import CellHolders


@dataclass(frozen=True)
class NovaHolders:
    """Compute node uuid -> the consumers nova accounts there (every cell read)."""

    by_node: Mapping[str, frozenset[str]]
    #: Whether every cell holding compute nodes was read.
    complete: bool = True

    @classmethod
    def from_cells(cls, each: EachCell[CellHolders], selected: bool = False) -> NovaHolders:
        """The holders of every cell ``each`` read; ``selected``: only some cells were
        asked for. A compute node uuid found in two cells keeps the first cell's
        holders (nova's audit takes whichever cell answers first)."""
        by_node: dict[str, frozenset[str]] = {}
        for _, _, cell in each.read:
            for node in cell.nodes:
                if node.uuid and node.uuid not in by_node:
                    by_node[node.uuid] = cell.holders_of(node)
        return cls(by_node=by_node, complete=not selected and not each.skipped)

    def is_compute_node(self, uuid: str) -> bool:
        return uuid in self.by_node

    def holders(self, compute_node: str) -> frozenset[str]:
        """The consumers nova accounts on ``compute_node`` (none when it is no compute
        node: then no allocation there is accounted)."""
        return self.by_node.get(compute_node, frozenset())

    def audits(self, root: str) -> bool:
        """Whether a provider tree rooted at ``root`` is audited: always when every
        cell was read, else only under a compute node of the cells read."""
        return self.complete or root in self.by_node
