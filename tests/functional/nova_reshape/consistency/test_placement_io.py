"""heal_allocations' Placement reads (bulk on the database, per consumer over the API)
and its batched writes, on every enabled engine."""

from __future__ import annotations

import pytest

from nova_reshape.consistency import placement_io
from nova_reshape.transport import open_direct
from placement_wsgi.direct import PlacementDirect
from tests.fixtures import heal_cloud as hc
from tests.fixtures.config import make_conf


@pytest.fixture
def placement_url(engine, tmp_path):
    return hc.placement(engine, tmp_path, pcpu=False, gpu_child=True)[0]


def _read(placement):
    state = placement_io.PlacementState(placement, trees=True)
    consumers = {uuid: state.allocations_of(uuid)
                 for uuid in (hc.WRONG_OWNER, hc.MOVED, hc.PLAIN)}
    view = state.tree(hc.CMP3_UUID)
    return state, consumers, view


def test_bulk_and_per_consumer_reads_agree(placement_url):
    with open_direct(make_conf(placement_url)) as direct:
        bulk, consumers, view = _read(direct)
        assert bulk.bulk is not None
    with PlacementDirect(make_conf(placement_url)) as client:
        one_by_one, consumers_api, view_api = _read(client)
        assert one_by_one.bulk is None
    assert consumers == consumers_api
    assert consumers[hc.WRONG_OWNER]["project_id"] == "px"
    assert consumers[hc.PLAIN]["allocations"] == {}
    assert [p["uuid"] for p in view.providers] == [hc.CMP3_UUID, hc.GPU_UUID]
    assert [p["uuid"] for p in view_api.providers] == [hc.CMP3_UUID, hc.GPU_UUID]
    assert view.usages[hc.CMP3_UUID] == view_api.usages[hc.CMP3_UUID] == {
        rc: 2 * amount for rc, amount in hc.SMALL.items()}
    assert view.inventories[hc.GPU_UUID]["VGPU"]["total"] == 4
    assert view_api.inventories[hc.GPU_UUID]["VGPU"]["total"] == 4


def body(resources):
    return placement_io.allocation_body({hc.CMP3_UUID: resources}, "p1", "u1", None)


def test_a_refused_batch_is_written_one_by_one_up_to_the_refusal(placement_url):
    bodies = [(hc.PLAIN, body(hc.SMALL)), (hc.PINNED, body({"PCPU": 2})),
              (hc.VOLUME, body({"VCPU": 1}))]
    with open_direct(make_conf(placement_url)) as placement:
        written = placement_io.write(placement, bodies, batch=10)
        state = placement_io.PlacementState(placement)
    assert written.count == 1 and written.refused[0] == hc.PINNED
    assert "HTTP 409" in written.refused[1] and "Inventory for 'PCPU'" in written.refused[1]
    assert state.allocations_of(hc.PLAIN)["allocations"]
    assert not state.allocations_of(hc.VOLUME)["allocations"]


def test_batches_are_written_whole(placement_url):
    seen = []
    bodies = [(hc.PLAIN, body(hc.SMALL)), (hc.VOLUME, body({"VCPU": 1}))]
    with open_direct(make_conf(placement_url)) as placement:
        written = placement_io.write(placement, bodies, done=lambda n, total: seen.append(
            (n, total)), batch=1)
    assert written == placement_io.Written(2) and seen == [(1, 2), (2, 2)]
