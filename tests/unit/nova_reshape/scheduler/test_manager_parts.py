"""Selection, prefilters and the accelerator seam (no Placement needed)."""

from __future__ import annotations

import json

import pytest

from nova_reshape.accelerator.arq import BOUND, ArqStore
from nova_reshape.accelerator.device_profile import DeviceProfile
from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import prefilters
from nova_reshape.scheduler.accelerator_seam import (
    AcceleratorRequestFailed,
    ArqStoreClient,
    as_request_group,
    create_and_bind,
    match_arqs,
)
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.resource_request import RequestGroup
from nova_reshape.scheduler.selection import Selection

RP = "c0000000-0000-4000-8000-000000000001"
DEV = "d0000000-0000-4000-8000-000000000001"


def test_selection_from_host_state():
    host = HostState("cmp1", "node1", uuid=RP, cell_uuid="cell-1",
                     limits={"numa_topology": "topo"})
    host.set_aggregates([Aggregate("az", frozenset({"cmp1"}), {"availability_zone": "az1"})])
    request = {"allocations": {RP: {"resources": {"VCPU": 1}}}, "mappings": {"": [RP]}}
    selection = Selection.from_host_state(host, request, "1.36")
    assert (selection.compute_node_uuid, selection.service_host, selection.nodename,
            selection.cell_uuid) == (RP, "cmp1", "node1", "cell-1")
    assert isinstance(selection.allocation_request, str)
    assert json.loads(selection.allocation_request) == request
    assert selection.allocation_request_version == "1.36"
    assert selection.availability_zone == "az1"
    assert selection.limits.numa_topology == "topo" and selection.limits.vcpu is None
    assert selection.to_legacy_dict() == {"host": "cmp1", "nodename": "node1",
                                          "limits": {"numa_topology": "topo"}}
    bare = Selection.from_host_state(HostState("cmp2"), None, None, "zone-default")
    assert bare.allocation_request == "null" and bare.allocation_request_dict is None
    assert bare.availability_zone == "zone-default"


def test_prefilters_edit_the_spec_once():
    spec = RequestSpec(availability_zone="az1")
    aggregates = [Aggregate("a", frozenset(), {"availability_zone": "az1"}, uuid="agg-b"),
                  Aggregate("b", frozenset(), {"availability_zone": "az1"}, uuid="agg-a"),
                  Aggregate("c", frozenset(), {"availability_zone": "az2"}, uuid="agg-c")]
    for _ in range(2):
        prefilters.run_prefilters(spec, aggregates=aggregates, require_owner_nova=True)
    assert spec.requested_destination.aggregates == ["agg-a,agg-b"]
    assert spec.root_forbidden == {"COMPUTE_STATUS_DISABLED"}
    assert spec.root_required == {"OWNER_NOVA"}
    nowhere = RequestSpec(availability_zone="az9")
    prefilters.availability_zone(nowhere, aggregates)
    assert nowhere.requested_destination is None


def test_device_profile_prefilter_resolves_groups_and_requires_accelerators():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1",
                                            "trait:CUSTOM_INTEL": "required"},))])
    spec = RequestSpec(flavor=Flavor(extra_specs={"accel:device_profile": "dp"}))
    prefilters.accelerators(spec, ArqStoreClient(store))
    prefilters.accelerators(spec, ArqStoreClient(store))  # already resolved: no duplicate
    assert spec.root_required == {"COMPUTE_ACCELERATORS"}
    assert [(g.requester_id, g.resources, g.required_traits)
            for g in spec.requested_resources] == [
        ("device_profile_0", {"FPGA": 1}, {"CUSTOM_INTEL"})]
    assert all(isinstance(g, RequestGroup) for g in spec.requested_resources)
    missing = RequestSpec(flavor=Flavor(extra_specs={"accel:device_profile": "nope"}))
    with pytest.raises(prefilters.RequestFilterFailed, match="nope"):
        prefilters.accelerators(missing, ArqStoreClient(store))
    with pytest.raises(prefilters.RequestFilterFailed, match="no accelerator service"):
        prefilters.accelerators(RequestSpec(flavor=Flavor(
            extra_specs={"accel:device_profile": "dp"})), None)


def test_as_request_group_accepts_dicts():
    group = as_request_group({"requester_id": "x", "resources": {"FPGA": "2"},
                              "forbidden_traits": ["CUSTOM_OLD"]})
    assert (group.requester_id, group.resources, group.forbidden_traits) == (
        "x", {"FPGA": 2}, {"CUSTOM_OLD"})


def test_arqs_are_matched_through_mappings_and_bound():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "2"}, {"resources:PGPU": "1"}))],
                     devices={DEV: "0000:af:00.1", "gpu": "0000:3b:00.0"})
    client = ArqStoreClient(store)
    uuids = create_and_bind(client, "dp", "inst-1", "node1",
                            {"device_profile_0": [DEV], "device_profile_1": ["gpu"]})
    assert len(uuids) == 3
    arqs = {arq.uuid: arq for arq in store.list(instance="inst-1")}
    assert set(arqs) == set(uuids)
    assert all(arq.state == BOUND and arq.hostname == "node1" for arq in arqs.values())
    assert sorted(arq.device_rp_uuid for arq in arqs.values()) == [DEV, DEV, "gpu"]


def test_an_unmapped_group_fails_and_the_created_arqs_are_deleted():
    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1"},))])
    with pytest.raises(AcceleratorRequestFailed, match="device_profile_0"):
        create_and_bind(ArqStoreClient(store), "dp", "inst-1", "node1", {"": [RP]})
    assert store.list() == []
    with pytest.raises(AcceleratorRequestFailed):
        match_arqs([{"uuid": "a", "device_profile_group_id": 1}], {"device_profile_1": []})


def test_a_failing_bind_is_wrapped_and_cleaned_up():
    class Broken(ArqStoreClient):
        def bind_arqs(self, bindings):
            raise RuntimeError("cyborg is down")

    store = ArqStore([DeviceProfile("dp", ({"resources:FPGA": "1"},))])
    with pytest.raises(AcceleratorRequestFailed, match="cyborg is down"):
        create_and_bind(Broken(store), "dp", "i", "n", {"device_profile_0": [DEV]})
    assert store.list() == []


def test_static_nodes_answer_only_for_their_own_uuids():
    from nova_reshape.scheduler.nodes import StaticNodes

    nodes = StaticNodes({"u1": {"host": "h1", "nodename": "n1"}, "u2": {"host": "h1",
                                                                       "nodename": "n2"},
                         "u3": {"host": "h3"}})
    assert nodes.entries(["u3", "child", "u1"]) == {"u3": {"host": "h3"},
                                                    "u1": {"host": "h1", "nodename": "n1"}}
    assert sorted(nodes.lookup("h1", None)) == ["u1", "u2"]
    assert nodes.lookup("h1", "n2") == ["u2"]
    assert nodes.lookup(None, "h3") == ["u3"]  # nodename defaults to the host name


def test_sources_can_share_request_dicts_between_fresh_lists():
    from nova_reshape.scheduler.sources import host_states_from_allocation_candidates

    request = {"allocations": {RP: {"resources": {"VCPU": 1}}}, "mappings": {"": [RP]}}
    body = {"allocation_requests": [request], "provider_summaries": {RP: {
        "resources": {"VCPU": {"capacity": 4, "used": 0}}, "traits": [],
        "parent_provider_uuid": None, "root_provider_uuid": RP}}}
    (copied,) = host_states_from_allocation_candidates(body, now=0)
    (shared,) = host_states_from_allocation_candidates(body, now=0, deep_copy=False)
    assert copied.allocation_candidates[0] is not request
    assert shared.allocation_candidates[0] is request
    assert shared.allocation_candidates is not body["allocation_requests"]
