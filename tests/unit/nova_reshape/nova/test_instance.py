"""An instance's CPU policy and extra specs, as nova reads them from its flavor and NUMA cells."""

from __future__ import annotations

from nova_reshape.nova.flavor import CpuPolicy, Flavor, FlavorInfo
from nova_reshape.nova.instance import InstanceRecord
from nova_reshape.nova.numa import InstanceNumaCell, InstanceNumaTopology


def cell(policy: CpuPolicy | None) -> InstanceNumaCell:
    return InstanceNumaCell(0, frozenset(), frozenset({0, 1}), 1024, cpu_policy=policy)


def test_an_instance_without_flavor_or_topology_has_no_policy():
    instance = InstanceRecord("i1", "cmp-1", "n1")
    assert instance.extra_specs == {} and instance.cpu_policy is None


def test_the_current_flavor_gives_extra_specs_and_policy():
    flavor = FlavorInfo(cur=Flavor(extra_specs={"hw:cpu_policy": "shared"}),
                        old=Flavor(extra_specs={"hw:cpu_policy": "dedicated"}))
    instance = InstanceRecord("i1", "cmp-1", "n1", flavor=flavor)
    assert instance.extra_specs == {"hw:cpu_policy": "shared"}
    assert instance.cpu_policy is CpuPolicy.SHARED


def test_pinned_numa_cells_make_the_instance_dedicated_whatever_the_flavor_says():
    instance = InstanceRecord("i1", "cmp-1", "n1", flavor=FlavorInfo(cur=Flavor()),
                              numa_topology=InstanceNumaTopology((cell(CpuPolicy.DEDICATED),)))
    assert instance.cpu_policy is CpuPolicy.DEDICATED
    unpinned = InstanceRecord("i1", "cmp-1", "n1",
                              numa_topology=InstanceNumaTopology((cell(CpuPolicy.SHARED),)))
    assert unpinned.cpu_policy is None
