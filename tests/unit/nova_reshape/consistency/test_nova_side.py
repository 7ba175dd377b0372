"""NovaHolders: which consumers nova accounts on each compute node, over the cells read."""

from __future__ import annotations

from nova_reshape.consistency.nova_side import NovaHolders
from nova_reshape.nova.cell import CellMapping
from nova_reshape.novadb.cells import EachCell, SkippedCell
from nova_reshape.novadb.holders import CellHolders, NodeRow

CELL1 = CellMapping(uuid="c1", name="cell1", database_connection="sqlite://")
CELL2 = CellMapping(uuid="c2", name="cell2", database_connection="sqlite://")


def cell(*nodes):
    return CellHolders(nodes=tuple(NodeRow(uuid, host, node) for uuid, host, node, _ in nodes),
                       holders={(host, node): frozenset(held) for _, host, node, held in nodes})


def each(*cells, skipped=()):
    return EachCell(read=tuple((mapping, "sqlite://", holders) for mapping, holders in cells),
                    skipped=skipped, host_cells={})


def test_holders_by_compute_node_uuid_over_cells():
    nova = NovaHolders.from_cells(each((CELL1, cell(("n1", "h1", "h1.x", {"i1", "m1"}),
                                                    ("n2", "h2", "h2.x", set()))),
                                       (CELL2, cell(("n3", "h3", "h3.x", {"i3"})))))
    assert nova.holders("n1") == {"i1", "m1"} and nova.holders("n3") == {"i3"}
    assert nova.holders("n2") == frozenset() and nova.is_compute_node("n2")
    assert not nova.is_compute_node("shared") and nova.holders("shared") == frozenset()
    assert nova.complete and nova.audits("shared")


def test_a_node_uuid_in_two_cells_keeps_the_first_cells_holders():
    nova = NovaHolders.from_cells(each((CELL1, cell(("n1", "h1", "h1.x", {"i1"}))),
                                       (CELL2, cell(("n1", "h9", "h9.x", {"i9"})))))
    assert nova.holders("n1") == {"i1"}


def test_with_some_cells_only_their_nodes_trees_are_audited():
    one = each((CELL1, cell(("n1", "h1", "h1.x", {"i1"}))))
    for nova in (NovaHolders.from_cells(one, selected=True),
                 NovaHolders.from_cells(each((CELL1, cell(("n1", "h1", "h1.x", {"i1"}))),
                                             skipped=(SkippedCell(CELL2, "down", ()),)))):
        assert not nova.complete
        assert nova.audits("n1") and not nova.audits("shared")
