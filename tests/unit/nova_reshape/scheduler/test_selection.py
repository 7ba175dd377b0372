"""Selections built from host states, as nova returns them."""

from __future__ import annotations

import json

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.host_state import HostState
from nova_reshape.scheduler.selection import Selection

RP = "c0000000-0000-4000-8000-000000000001"


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
