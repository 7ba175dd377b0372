"""The routed-network and remote-managed-port pre-filters (prefilters/networks.py)."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.prefilters import RequestFilterFailed
from nova_reshape.scheduler.request_spec import RequestedNetwork
from tests.unit.nova_reshape.scheduler.prefilters.helpers import (
    Neutron,
    make_spec,
    run_filters,
)

# -- routed_networks_filter ------------------------------------------------------------

def test_routed_networks_require_segment_aggregates_per_nic():
    on = {"query_placement_for_routed_network_aggregates": True}
    nics = [RequestedNetwork(network_id="n1"), RequestedNetwork(port_id="p-fixed"),
            RequestedNetwork(port_id="p-free")]
    spec, steps = run_filters(make_spec(requested_networks=nics), scheduler=on, networks=Neutron())
    assert spec.requested_destination.aggregates == ["seg-a,seg-b", "seg-a", "seg-c"]
    assert steps["routed_networks_filter"].added == {"member_of": ["seg-a,seg-b", "seg-a",
                                                                   "seg-c"]}
    spec, steps = run_filters(make_spec(requested_networks=nics), networks=Neutron())
    assert not steps["routed_networks_filter"].ran and spec.requested_destination is None
    spec, steps = run_filters(make_spec(), scheduler=on, networks=Neutron())
    assert steps["routed_networks_filter"].ran and spec.requested_destination is None
    with pytest.raises(RequestFilterFailed, match="network broken"):
        run_filters(make_spec(requested_networks=[RequestedNetwork(network_id="broken")]),
                    scheduler=on, networks=Neutron())


# -- remote_managed_ports_filter ----------------------------------------------------------

def test_remote_managed_ports():
    spec, steps = run_filters(make_spec(requested_networks=[RequestedNetwork(port_id="p-dpu")]),
                              networks=Neutron())
    assert steps["remote_managed_ports_filter"].added == {
        "root_required": ["COMPUTE_REMOTE_MANAGED_PORTS"]}
    spec, steps = run_filters(make_spec(requested_networks=[RequestedNetwork(port_id="p-free")]),
                              networks=Neutron())
    assert "COMPUTE_REMOTE_MANAGED_PORTS" not in spec.root_required
