"""Allocation, candidate and usage methods of the report client.

Run over real HTTP and through PlacementDirect, on every enabled engine.
"""

from __future__ import annotations

import uuid

import pytest

from nova_reshape import exception

VCPU = {"total": 16}
MEM = {"total": 8192}


@pytest.fixture
def hosts(seed) -> tuple[str, str]:
    source = seed.provider("source")
    dest = seed.provider("dest")
    for rp in (source, dest):
        seed.inventory(rp, {"VCPU": VCPU, "MEMORY_MB": MEM})
    return source, dest


def _request(rp: str, vcpu: int = 1) -> dict:
    return {"allocations": {rp: {"resources": {"VCPU": vcpu}}}}


def test_claim_new_consumer(report, placement, seed, hosts):
    source, _ = hosts
    consumer = str(uuid.uuid4())
    request = _request(source, 2)
    assert report.claim_resources(None, consumer, request, "p1", "u1", "1.36") is True
    assert request == _request(source, 2)  # the caller's request is not modified
    put = next((v, json) for m, u, v, json in placement.calls if m == "PUT")
    assert put == ("1.36", {"allocations": {source: {"resources": {"VCPU": 2}}},
                            "project_id": "p1", "user_id": "u1",
                            "consumer_generation": None})
    body = seed.consumer(consumer)
    assert body["allocations"][source]["resources"] == {"VCPU": 2}
    assert (body["project_id"], body["user_id"]) == ("p1", "u1")


def test_claim_for_a_move_doubles_up(report, seed, hosts):
    source, dest = hosts
    consumer = str(uuid.uuid4())
    seed.allocate(consumer, {source: {"VCPU": 2, "MEMORY_MB": 256}})
    assert report.claim_resources(None, consumer, _request(dest, 2), "p1", "u1", "1.36")
    allocations = seed.consumer(consumer)["allocations"]
    assert allocations[source]["resources"] == {"VCPU": 2, "MEMORY_MB": 256}
    assert allocations[dest]["resources"] == {"VCPU": 2}


def test_claim_with_stale_consumer_generation_fails(report, seed, hosts):
    source, dest = hosts
    consumer = str(uuid.uuid4())
    seed.allocate(consumer, {source: {"VCPU": 1}})
    request = {**_request(dest), "consumer_generation": 0}
    with pytest.raises(exception.AllocationUpdateFailed):
        report.claim_resources(None, consumer, request, "p1", "u1", "1.36")


def test_claim_beyond_capacity_is_false(report, hosts):
    source, _ = hosts
    assert report.claim_resources(None, str(uuid.uuid4()), _request(source, 1000),
                                  "p1", "u1", "1.36") is False


def test_put_allocations(report, placement, seed, hosts):
    source, _ = hosts
    consumer = str(uuid.uuid4())
    payload = {"allocations": {source: {"resources": {"VCPU": 3}}}, "project_id": "p",
               "user_id": "u", "consumer_generation": None}
    assert report.put_allocations(None, consumer, payload) is True
    assert placement.calls[-1][2] == "1.28"
    assert seed.consumer(consumer)["consumer_generation"] == 1
    with pytest.raises(exception.AllocationUpdateFailed, match="consumer generation"):
        report.put_allocations(None, consumer, payload)  # generation None is stale now


def test_get_allocs_for_consumer_and_legacy(report, seed, hosts):
    source, _ = hosts
    consumer = str(uuid.uuid4())
    assert report.get_allocs_for_consumer(None, consumer) == {"allocations": {}}
    assert report.get_allocations_for_consumer(None, consumer) == {}
    seed.allocate(consumer, {source: {"VCPU": 1}})
    full = report.get_allocs_for_consumer(None, consumer)
    assert full["consumer_generation"] == 1 and full["project_id"] == "p1"
    legacy = report.get_allocations_for_consumer(None, consumer)
    assert legacy[source]["resources"] == {"VCPU": 1}
    with pytest.raises(exception.ConsumerAllocationRetrievalFailed):
        report.get_allocs_for_consumer(None, "no/such/route")  # a 404


def test_get_allocations_for_resource_provider(report, seed, hosts):
    source, _ = hosts
    consumer = str(uuid.uuid4())
    seed.allocate(consumer, {source: {"VCPU": 4}})
    info = report.get_allocations_for_resource_provider(None, source)
    assert info.allocations == {consumer: {"resources": {"VCPU": 4}}}


def test_remove_provider_tree_from_instance_allocation(report, seed, hosts):
    source, dest = hosts
    child = seed.provider("dest-child", parent=dest)
    seed.inventory(child, {"VGPU": {"total": 2}})
    consumer = str(uuid.uuid4())
    assert report.remove_provider_tree_from_instance_allocation(None, consumer, dest) is False
    seed.allocate(consumer, {source: {"VCPU": 1}, dest: {"VCPU": 1}, child: {"VGPU": 1}})
    assert report.remove_provider_tree_from_instance_allocation(None, consumer, dest) is True
    assert list(seed.consumer(consumer)["allocations"]) == [source]
    # Nothing of that tree left: True without writing.
    assert report.remove_provider_tree_from_instance_allocation(None, consumer, dest) is True
    assert seed.consumer(consumer)["consumer_generation"] == 2


def test_delete_allocation_for_instance(report, placement, seed, hosts):
    source, _ = hosts
    consumer = str(uuid.uuid4())
    assert report.delete_allocation_for_instance(None, consumer) is False
    seed.allocate(consumer, {source: {"VCPU": 1}})
    placement.reset()
    assert report.delete_allocation_for_instance(None, consumer) is True
    assert [(m, v) for m, _, v, _ in placement.calls] == [("GET", "1.28"), ("PUT", "1.28")]
    assert placement.calls[1][3]["allocations"] == {}
    assert seed.consumer(consumer) == {"allocations": {}}
    other = str(uuid.uuid4())
    seed.allocate(other, {source: {"VCPU": 1}})
    placement.reset()
    assert report.delete_allocation_for_instance(None, other, force=True) is True
    assert [(m, v) for m, _, v, _ in placement.calls] == [("DELETE", None)]
    assert report.delete_allocation_for_instance(None, other, force=True) is False


def test_move_allocations(report, placement, seed, hosts):
    source, _ = hosts
    instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
    seed.allocate(instance, {source: {"VCPU": 2}}, project="pp", user="uu")
    assert report.move_allocations(None, instance, migration) is True
    assert placement.calls[-1][:3] == ("POST", "/allocations", "1.28")
    assert seed.consumer(instance) == {"allocations": {}}
    moved = seed.consumer(migration)
    assert moved["allocations"][source]["resources"] == {"VCPU": 2}
    assert (moved["project_id"], moved["user_id"]) == ("pp", "uu")


def test_usages_counts_for_quota(report, seed, hosts):
    source, _ = hosts
    seed.allocate(str(uuid.uuid4()), {source: {"VCPU": 2, "MEMORY_MB": 512}},
                  project="proj", user="alice")
    seed.allocate(str(uuid.uuid4()), {source: {"VCPU": 1}}, project="proj", user="bob")
    counts = report.get_usages_counts_for_quota(None, "proj", "alice")
    assert counts == {"project": {"cores": 3, "ram": 512}, "user": {"cores": 2, "ram": 512}}
    assert report.get_usages_counts_for_quota(None, "nobody") == {
        "project": {"cores": 0, "ram": 0}}


def test_allocation_candidates(report, placement, hosts):
    source, dest = hosts
    result = report.get_allocation_candidates(None, "resources=VCPU:1")
    if placement.calls[-1] and result == (None, None, None):
        status = placement.placement.get("/allocation_candidates?resources=VCPU:1",
                                          microversion="1.36").status_code
        if status == 501:
            pytest.skip("GET /allocation_candidates is not implemented yet")
    assert placement.calls[-1][:3] == ("GET", "/allocation_candidates?resources=VCPU:1", "1.36")
    requests_, summaries, version = result
    assert version == "1.36"
    assert {rp for ar in requests_ for rp in ar["allocations"]} == {source, dest}
    assert set(summaries) == {source, dest}
    assert report.get_allocation_candidates(None, "resources=VCPU:bad") == (None, None, None)
