"""JournaledWrites: batches of writes, one transaction each, every node journaled in it.

On every engine: no run until the first write; one entry per node however
many transactions touch it (the "before" of the first, the "after" of the
last); a consumer that leaves the tree stays in the snapshots (holding
nothing), so a revert knows it; a batch Placement refuses leaves neither
its writes nor an entry.
"""

from __future__ import annotations

import pytest

from nova_reshape import journal
from nova_reshape.consistency.journaled_writes import JournaledWrites, RunInputs, Touch
from nova_reshape.journal import snapshot
from nova_reshape.transport.direct import open_direct
from placement_wsgi import errors
from placement_wsgi.objects.allocation import ConsumerAllocations
from tests.fixtures.config import make_conf

ROOT = "c0000000-0000-4000-8000-00000000000a"
LEAVING, STAYING = ("70000000-0000-4000-8000-000000000001",
                    "70000000-0000-4000-8000-000000000002")
INPUTS = RunInputs("test", "test --delete", {})


def _ok(response):
    assert response.status_code < 300, response.text


def _seed(transport):
    _ok(transport.request("POST", "/resource_providers", microversion="1.20",
                          json={"uuid": ROOT, "name": "cmp-a"}))
    _ok(transport.request("PUT", f"/resource_providers/{ROOT}/inventories", json={
        "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}))
    for consumer in (LEAVING, STAYING):
        _ok(transport.request("PUT", f"/allocations/{consumer}", microversion="1.28", json={
            "allocations": {ROOT: {"resources": {"VCPU": 1}}}, "project_id": "p",
            "user_id": "u", "consumer_generation": None}))


def test_one_entry_per_node_over_two_transactions(db_url):
    with open_direct(make_conf(db_url)) as transport:
        _seed(transport)
        with JournaledWrites(transport, INPUTS) as writes:
            assert writes.run_id is None  # nothing written: no run
            writes.write([Touch(ROOT, LEAVING, "host-a")],
                         lambda requests: requests.delete_allocations(LEAVING))
            writes.write([Touch(ROOT, STAYING)], lambda requests: requests.put_allocations([
                ConsumerAllocations(STAYING, "p", "u", {ROOT: {"VCPU": 2}},
                                    consumer_generation=1)]))
            run_id = writes.run_id
        [entry] = journal.entries(transport.direct.database.engine, run_id)
        assert (entry.nodename, entry.host, entry.root) == ("cmp-a", "host-a", ROOT)
        assert entry.before.allocations[LEAVING]["allocations"] == {ROOT: {"VCPU": 1}}
        assert entry.before.allocations[STAYING]["allocations"] == {ROOT: {"VCPU": 1}}
        assert entry.after.allocations[LEAVING] == dict(snapshot.NO_CONSUMER)
        assert entry.after.allocations[STAYING]["allocations"] == {ROOT: {"VCPU": 2}}
        assert journal.get_run(transport.direct.database.engine, run_id).status is (
            journal.RunStatus.OK)


def test_a_refused_batch_leaves_no_write_and_no_entry(db_url):
    with open_direct(make_conf(db_url)) as transport:
        _seed(transport)
        with JournaledWrites(transport, INPUTS) as writes:
            with pytest.raises(errors.Conflict):
                writes.write([Touch(ROOT, STAYING)], lambda requests: (
                    requests.delete_allocations(LEAVING), requests.put_allocations([
                        ConsumerAllocations(STAYING, "p", "u", {ROOT: {"VCPU": 99}},
                                            consumer_generation=1)])))
            run_id = writes.run_id
        assert journal.entries(transport.direct.database.engine, run_id) == []
        body = transport.request("GET", f"/allocations/{LEAVING}").json()
        assert body["allocations"][ROOT]["resources"] == {"VCPU": 1}


def test_without_a_run_nothing_is_journaled(db_url):
    with open_direct(make_conf(db_url)) as transport:
        _seed(transport)
        with JournaledWrites(transport, None) as writes:
            writes.write([Touch(ROOT, LEAVING)],
                         lambda requests: requests.delete_allocations(LEAVING))
            assert writes.run_id is None
        assert journal.list_runs(transport.direct.database.engine) == []
