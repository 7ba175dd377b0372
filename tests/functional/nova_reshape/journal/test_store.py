"""Runs and node entries: written in the caller's transaction, read back as written."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from nova_reshape.journal import schema, store
from nova_reshape.journal.snapshot import Snapshot

ROOT = "3ac044b7-7ce0-5d25-946b-4fab58d45586"


def _snapshot(total: int) -> Snapshot:
    return Snapshot(root=ROOT, providers=[{"uuid": ROOT, "name": "cmp", "parent": None,
                                           "generation": total}],
                    inventories={ROOT: {"VCPU": {"total": total}}}, traits={ROOT: []},
                    aggregates={ROOT: []}, allocations={})


def test_a_run_its_nodes_and_its_end_are_read_back(database):
    engine = database.engine
    run_id = store.start_run(engine, "migrate_compute_inventory", "placement migrate",
                             {"target": "34"})
    [running] = store.list_runs(engine)
    assert running.status is store.RunStatus.RUNNING and running.ended_at is None
    assert running.inputs["target"] == "34" and "traits" in running.inputs["custom_names_before"]
    with engine.begin() as connection:
        store.record_node(connection, run_id, "cmp", "host1", _snapshot(4), _snapshot(8))
    store.finish_run(engine, run_id, store.RunStatus.OK, {"migrated": 1, "unchanged": 2})
    run = store.get_run(engine, run_id)
    assert (run.status, run.changed, run.counts) == (
        store.RunStatus.OK, 1, {"migrated": 1, "unchanged": 2})
    assert run.ended_at >= run.started_at
    [entry] = store.entries(engine, run_id)
    assert (entry.nodename, entry.host, entry.root) == ("cmp", "host1", ROOT)
    assert entry.before == _snapshot(4) and entry.after == _snapshot(8)
    assert run.to_dict()["status"] == "ok" and entry.to_dict()["after"]["root"] == ROOT


def test_an_entry_is_rolled_back_with_its_transaction_and_never_doubled(database):
    engine = database.engine
    run_id = store.start_run(engine, "revert", "placement revert x", {}, reverts="x")
    with pytest.raises(RuntimeError), engine.begin() as connection:
        store.record_node(connection, run_id, "cmp", None, _snapshot(4), _snapshot(8))
        raise RuntimeError("the node's change failed")
    assert store.entries(engine, run_id) == []
    with engine.begin() as connection:
        store.record_node(connection, run_id, "cmp", None, _snapshot(4), _snapshot(8))
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as connection:
        store.record_node(connection, run_id, "cmp", None, _snapshot(8), _snapshot(4))
    assert len(store.entries(engine, run_id)) == 1
    assert store.get_run(engine, run_id).reverts == "x"


def test_the_readers_create_nothing(database):
    assert store.list_runs(database.engine) == []
    assert store.get_run(database.engine, "nope") is None
    assert store.entries(database.engine, "nope") == []
    assert not sa.inspect(database.engine).has_table(schema.VERSION_TABLE)


def test_entries_are_read_in_batches_in_the_order_of_their_keys(database):
    engine = database.engine
    run_id = store.start_run(engine, "migrate_compute_inventory", "m", {})
    roots = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(5)]
    for index, root in enumerate(roots):
        snapshot = Snapshot(root=root, providers=[], inventories={}, traits={}, aggregates={},
                            allocations={})
        with engine.begin() as connection:
            store.record_node(connection, run_id, f"n{index}", f"h{index % 2}", snapshot,
                              snapshot)
    keys = store.entry_keys(engine, run_id)
    assert [(key.nodename, key.host) for key in keys] == [
        ("n0", "h0"), ("n1", "h1"), ("n2", "h0"), ("n3", "h1"), ("n4", "h0")]
    batches = list(store.entries_of(engine, keys[::-1], batch_size=2))
    assert [len(batch) for batch in batches] == [2, 2, 1]
    assert [entry.root for batch in batches for entry in batch] == roots[::-1]
    assert [entry.nodename for entry in store.entries(engine, run_id)] == [
        "n0", "n1", "n2", "n3", "n4"]


def test_several_nodes_are_recorded_in_one_statement_in_their_order(database):
    engine = database.engine
    run_id = store.start_run(engine, "rebuild", "placement rebuild", {})
    other = "8c5a2a6b-5a44-5b2b-9d3a-0f6bb9a8e9b1"
    absent = Snapshot(root=other, providers=[], inventories={}, traits={}, aggregates={},
                      allocations={})
    with engine.begin() as connection:
        store.record_nodes(connection, run_id, [
            store.Change("cmp", "h1", _snapshot(0), _snapshot(4)),
            store.Change("new", "h2", absent, absent)])
        store.record_nodes(connection, run_id, [])
    assert [(entry.nodename, entry.host, entry.root, entry.before)
            for entry in store.entries(engine, run_id)] == [
        ("cmp", "h1", ROOT, _snapshot(0)), ("new", "h2", other, absent)]
