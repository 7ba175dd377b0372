"""read_holders_on / read_nodes_on: who nova accounts on each compute node, every engine.

The cell is tests/fixtures/nova_db.py's: on cmp-1 five live instances, a
deleted one, a ``finished`` resize arriving from cmp-2 and a confirmed
migration that left for cmp-2; on cmp-2 one instance; a deleted node.
"""

from __future__ import annotations

from nova_reshape.novadb.holders import NodeRow, read_holders_on, read_nodes_on
from nova_reshape.novadb.readonly import read_only
from tests.fixtures import nova_db as fx

CMP1_KEY, CMP2_KEY = (fx.CMP1, fx.CMP1_NODE), (fx.CMP2, fx.CMP2_NODE)


def read(engine, reader, *args):
    cell = fx.nova_cell(engine)
    url = next(cell)
    try:
        with read_only(url, "nova database") as connection:
            return reader(connection, *args)
    finally:
        cell.close()


def test_live_instances_and_migrations_in_progress_per_node(engine):
    holders = read(engine, read_holders_on)
    assert holders.holders[CMP1_KEY] == {fx.PINNED, fx.UNPINNED_VF, fx.SPREAD, fx.OLD_PINNED,
                                         fx.RESIZED, fx.RESIZE_MIGRATION}
    # The resize is 'finished' (awaiting confirmation): still in progress, on both ends.
    assert holders.holders[CMP2_KEY] == {fx.PLAIN, fx.RESIZE_MIGRATION}
    assert fx.DELETED_INSTANCE not in holders.holders[CMP1_KEY]
    assert all(fx.CONFIRMED_MIGRATION not in held for held in holders.holders.values())
    cmp1 = NodeRow(fx.CMP1_UUID, fx.CMP1, fx.CMP1_NODE)
    assert holders.holders_of(cmp1) == holders.holders[CMP1_KEY]
    assert holders.holders_of(NodeRow("x", "nowhere", "none")) == frozenset()


def test_only_live_compute_nodes_by_id(engine):
    assert read(engine, read_nodes_on) == (
        NodeRow(fx.CMP1_UUID, fx.CMP1, fx.CMP1_NODE), NodeRow(fx.CMP2_UUID, fx.CMP2, fx.CMP2_NODE),
        NodeRow(fx.IRONIC_UUID, fx.IRONIC_HOST, fx.IRONIC_NODE))
    assert read(engine, read_nodes_on, [fx.CMP2]) == (
        NodeRow(fx.CMP2_UUID, fx.CMP2, fx.CMP2_NODE),)
