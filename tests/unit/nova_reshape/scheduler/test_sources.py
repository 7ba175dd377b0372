"""HostStates from a GET /allocation_candidates body (the Placement seam)."""

from __future__ import annotations

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.sources import host_states_from_allocation_candidates

CN1, CN2, GPU = "c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002", \
    "c0000000-0000-4000-8000-0000000000f1"
BODY = {
    "allocation_requests": [
        {"allocations": {CN1: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}},
         "mappings": {"": [CN1]}},
        {"allocations": {CN2: {"resources": {"VCPU": 1}}, GPU: {"resources": {"VGPU": 1}}},
         "mappings": {"": [CN2], "g": [GPU]}},
    ],
    "provider_summaries": {
        CN1: {"resources": {"VCPU": {"capacity": 16, "used": 4},
                            "MEMORY_MB": {"capacity": 8192, "used": 1024},
                            "DISK_GB": {"capacity": 100, "used": 10}},
              "traits": [], "parent_provider_uuid": None, "root_provider_uuid": CN1},
        CN2: {"resources": {"VCPU": {"capacity": 32, "used": 0}}, "traits": [],
              "parent_provider_uuid": None, "root_provider_uuid": CN2},
        GPU: {"resources": {"VGPU": {"capacity": 4, "used": 0}}, "traits": [],
              "parent_provider_uuid": CN2, "root_provider_uuid": CN2},
    },
}


def test_one_host_state_per_root_with_its_candidates():
    states = host_states_from_allocation_candidates(BODY, now=0)
    assert [s.uuid for s in states] == [CN1, CN2]
    first, second = states
    assert (first.vcpus_total, first.vcpus_used, first.cpu_allocation_ratio) == (16, 4, 1.0)
    assert (first.free_ram_mb, first.free_disk_mb) == (7168, 90 * 1024)
    assert first.allocation_candidates == [BODY["allocation_requests"][0]]
    assert first.allocation_candidates[0] is not BODY["allocation_requests"][0]
    assert second.allocation_candidates[0]["mappings"]["g"] == [GPU]


def test_node_details_override_summary_values_and_aggregates_attach():
    nodes = {CN1: {"host": "compute1", "stats": {"tier": "gold"}, "memory_mb": 4096}}
    aggregate = Aggregate("a", frozenset({"compute1"}), {"ssd": "true"})
    states = host_states_from_allocation_candidates(BODY, nodes, [aggregate], now=0)
    assert states[0].host == "compute1" and states[0].stats["tier"] == "gold"
    assert states[0].total_usable_ram_mb == 4096
    assert states[0].aggregate_values("ssd") == ["true"]
    assert states[1].host == CN2 and states[1].aggregates == []


def test_the_scheduler_runs_on_candidate_host_states():
    states = host_states_from_allocation_candidates(BODY, now=0)
    chosen = FilterScheduler(now=0).select_destinations(states, RequestSpec(), ["u1"])
    # CN2 has more free vCPUs, but CN1 wins RAM and disk (CN2 reports none).
    assert chosen[0].uuid == CN1


def test_not_a_candidates_body():
    with pytest.raises(ScenarioError):
        host_states_from_allocation_candidates({"allocation_requests": []})


def test_sources_can_share_request_dicts_between_fresh_lists():
    request = {"allocations": {CN1: {"resources": {"VCPU": 1}}}, "mappings": {"": [CN1]}}
    body = {"allocation_requests": [request], "provider_summaries": {CN1: {
        "resources": {"VCPU": {"capacity": 4, "used": 0}}, "traits": [],
        "parent_provider_uuid": None, "root_provider_uuid": CN1}}}
    (copied,) = host_states_from_allocation_candidates(body, now=0)
    (shared,) = host_states_from_allocation_candidates(body, now=0, deep_copy=False)
    assert copied.allocation_candidates[0] is not request
    assert shared.allocation_candidates[0] is request
    assert shared.allocation_candidates is not body["allocation_requests"]
