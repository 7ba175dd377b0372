"""The spool that keeps a run's checked nodes on disk between its two phases."""

from __future__ import annotations

import gc
import weakref

from nova_reshape.compute import migrate
from nova_reshape.compute.spool import Spool


def test_records_come_back_once_in_the_order_put():
    spool = Spool()
    for index in range(5):
        spool.put(migrate.NodeResult(f"n{index}", migrate.UNCHANGED, order=index))
    assert len(spool) == 5
    assert [result.nodename for result in spool.drain()] == [f"n{i}" for i in range(5)]
    assert len(spool) == 0 and list(spool.drain()) == []


def test_a_record_put_is_not_held_in_memory():
    spool = Spool()
    result = migrate.NodeResult("n0", migrate.MIGRATED, moves=[])
    alive = weakref.ref(result)
    spool.put(result)
    del result
    gc.collect()
    assert alive() is None
    [back] = spool.drain()
    assert back.nodename == "n0" and back.status == migrate.MIGRATED


def test_a_drain_stopped_early_or_a_close_drops_the_rest():
    spool = Spool()
    for index in range(3):
        spool.put(index)
    records = spool.drain()
    assert next(records) == 0
    records.close()
    assert len(spool) == 0 and list(spool.drain()) == []
    spool.put(7)
    spool.close()
    assert list(spool.drain()) == []
