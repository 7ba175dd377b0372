"""MetricsFilter, PciPassthroughFilter and NUMATopologyFilter."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.filters import load_filters
from tests.unit.nova_reshape.scheduler.helpers import host, passes, run_filter, scenario


def test_metrics_filter_requires_every_configured_metric():
    config = {"metrics": {"weight_setting": ["cpu.percent=-1.0", "cpu.frequency=1",
                                             "cpu.idle.time=oops"]}}
    hosts = [host("h1", metrics={"cpu.percent": 0.3, "cpu.frequency": 2400}),
             host("h2", metrics={"cpu.percent": 0.3}), host("h3")]
    kept, rejected = run_filter("MetricsFilter", hosts, config=config)
    assert kept == ["h1"]  # cpu.idle.time has a bad ratio and is dropped
    assert rejected["h2"] == "host does not report metric(s) cpu.frequency"


def test_metrics_filter_without_setting_passes_all():
    assert passes("MetricsFilter", [host("h1")]) == ["h1"]


VF = {"vendor_id": "8086", "product_id": "1520", "numa_node": 0,
      "tags": {"dev_type": "type-VF", "physical_network": "physnet1"}}
PF = {"vendor_id": "8086", "product_id": "1521", "numa_node": 0, "count": 2,
      "tags": {"dev_type": "type-PF"}}


def _pci(count, spec, **extra):
    request = {"count": count, "spec": spec}
    request.update(extra)
    return {"pci_requests": [request]}


def test_pci_filter_counts_matching_devices():
    hosts = [host("h1", pci_device_pools=[dict(VF, count=4)]),
             host("h2", pci_device_pools=[dict(VF, count=1)]), host("h3")]
    kept, rejected = run_filter("PciPassthroughFilter", hosts,
                                request=_pci(2, [{"vendor_id": "8086", "product_id": "1520"}]))
    assert kept == ["h1"]
    assert "cannot satisfy" in rejected["h2"]
    assert rejected["h3"] == "host has no PCI devices"


def test_pci_filter_matches_case_insensitively_and_ignores_placement_keys():
    hosts = [host("h1", pci_device_pools=[dict(VF, count=1)])]
    spec = [{"vendor_id": "8086", "physical_network": "PHYSNET1",
             "resource_class": "CUSTOM_X", "traits": "T"}]
    assert passes("PciPassthroughFilter", hosts, request=_pci(1, spec)) == ["h1"]


def test_pci_filter_pf_pools_only_serve_pf_requests():
    hosts = [host("h1", pci_device_pools=[PF])]
    assert passes("PciPassthroughFilter", hosts, request=_pci(1, [{"vendor_id": "8086"}])) == []
    assert passes("PciPassthroughFilter", hosts,
                  request=_pci(1, [{"vendor_id": "8086", "dev_type": "type-PF"}])) == ["h1"]


def test_pci_requests_are_applied_in_turn():
    hosts = [host("h1", pci_device_pools=[dict(VF, count=3)])]
    spec = [{"vendor_id": "8086"}]
    two_and_one = {"pci_requests": [{"count": 2, "spec": spec}, {"count": 1, "spec": spec}]}
    two_and_two = {"pci_requests": [{"count": 2, "spec": spec}, {"count": 2, "spec": spec}]}
    assert passes("PciPassthroughFilter", hosts, request=two_and_one) == ["h1"]
    assert passes("PciPassthroughFilter", hosts, request=two_and_two) == []


def test_pci_requests_from_flavor_alias():
    config = {"pci": {"alias": ['{"name": "nic", "vendor_id": "8086", "product_id": "1520",'
                                ' "device_type": "type-VF"}']}}
    hosts = [host("h1", pci_device_pools=[dict(VF, count=2)]), host("h2")]
    request = {"flavor": {"extra_specs": {"pci_passthrough:alias": "nic:2"}}}
    assert passes("PciPassthroughFilter", hosts, request=request, config=config) == ["h1"]
    request = {"flavor": {"extra_specs": {"pci_passthrough:alias": "nic:3"}}}
    assert passes("PciPassthroughFilter", hosts, request=request, config=config) == []


def test_undefined_pci_alias_is_a_scenario_error():
    with pytest.raises(ScenarioError, match="not defined"):
        scenario([host("h1")], {"flavor": {"extra_specs": {"pci_passthrough:alias": "gpu:1"}}})


def test_pci_filter_prunes_allocation_candidates():
    loaded = scenario([host("h1", pci_device_pools=[dict(VF, count=1)]), host("h2")],
                      _pci(1, [{"vendor_id": "8086"}]),
                      {"filter_scheduler": {"enabled_filters": ["PciPassthroughFilter"]}})
    for state in loaded.hosts:
        state.allocation_candidates = [{"mappings": {}}]
    (pci_filter,) = load_filters(loaded.conf)
    kept, _ = pci_filter.filter_all(loaded.hosts, loaded.spec)
    assert [h.host for h in kept] == ["h1"]
    assert loaded.hosts[0].allocation_candidates == [{"mappings": {}}]


def _cell(cell_id, cpus=(), pcpus=(), memory=4096, **extra):
    cell = {"id": cell_id, "cpuset": list(cpus), "pcpuset": list(pcpus), "memory": memory}
    cell.update(extra)
    return cell


TWO_CELLS = {"cells": [_cell(0, range(0, 4), range(4, 8)), _cell(1, range(8, 12), range(12, 16))]}


def _flavor(vcpus=2, memory_mb=2048, **extra_specs):
    return {"flavor": {"vcpus": vcpus, "memory_mb": memory_mb, "extra_specs": extra_specs}}


def test_numa_filter_without_requested_topology_passes_all():
    assert passes("NUMATopologyFilter", [host("h1"), host("h2", numa_topology=TWO_CELLS)],
                  request=_flavor(**{"hw:cpu_policy": "shared"})) == ["h1", "h2"]


def test_numa_filter_host_without_topology_fails():
    kept, rejected = run_filter("NUMATopologyFilter", [host("h1")],
                                request=_flavor(**{"hw:numa_nodes": "1"}))
    assert kept == [] and rejected["h1"] == "host has no NUMA topology"


def test_numa_nodes_split_must_fit_on_distinct_cells():
    one_cell = {"cells": [_cell(0, range(0, 8), memory=8192)]}
    hosts = [host("h1", numa_topology=TWO_CELLS), host("h2", numa_topology=one_cell)]
    kept, rejected = run_filter("NUMATopologyFilter", hosts,
                                request=_flavor(4, 4096, **{"hw:numa_nodes": "2"}))
    assert kept == ["h1"]
    assert "1 NUMA cell(s)" in rejected["h2"]


def test_dedicated_policy_needs_free_pcpus():
    busy = {"cells": [_cell(0, range(0, 4), range(4, 8), pinned_cpus=[4, 5, 6])]}
    hosts = [host("h1", numa_topology=TWO_CELLS), host("h2", numa_topology=busy)]
    kept, rejected = run_filter("NUMATopologyFilter", hosts,
                                request=_flavor(2, 1024, **{"hw:cpu_policy": "dedicated"}))
    assert kept == ["h1"]
    assert "free dedicated CPUs" in rejected["h2"]


def test_thread_policy_require_needs_smt():
    smt = {"cells": [_cell(0, (), range(0, 4), siblings=[[0, 1], [2, 3]])]}
    hosts = [host("h1", numa_topology=smt), host("h2", numa_topology=TWO_CELLS)]
    kept, rejected = run_filter("NUMATopologyFilter", hosts, request=_flavor(
        2, 1024, **{"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require"}))
    assert kept == ["h1"]
    assert "SMT" in rejected["h2"]


def test_thread_policy_isolate_takes_whole_cores():
    smt = {"cells": [_cell(0, (), range(0, 4), siblings=[[0, 1], [2, 3]])]}
    request = _flavor(3, 1024, **{"hw:cpu_policy": "dedicated",
                                  "hw:cpu_thread_policy": "isolate"})
    assert passes("NUMATopologyFilter", [host("h1", numa_topology=smt)], request=request) == []
    request["flavor"]["vcpus"] = 2
    assert passes("NUMATopologyFilter", [host("h1", numa_topology=smt)], request=request) == \
        ["h1"]


def test_shared_cpus_respect_the_cpu_allocation_ratio():
    busy = {"cells": [_cell(0, range(0, 2), memory=8192, cpu_usage=7)]}
    hosts = [host("h1", numa_topology=busy, cpu_allocation_ratio=4.0),
             host("h2", numa_topology=busy, cpu_allocation_ratio=1.0)]
    kept, rejected = run_filter("NUMATopologyFilter", hosts,
                                request=_flavor(1, 1024, **{"hw:numa_nodes": "1"}))
    assert kept == ["h1"]
    assert "CPU usage" in rejected["h2"]


def test_mem_page_size_creates_an_implicit_cell_and_needs_free_pages():
    pages = {"cells": [_cell(0, range(0, 4), memory=8192, mempages=[
        {"size_kb": 4, "total": 1048576}, {"size_kb": 2048, "total": 512, "used": 500}])]}
    hosts = [host("h1", numa_topology=pages)]
    assert passes("NUMATopologyFilter", hosts,
                  request=_flavor(1, 1024, **{"hw:mem_page_size": "large"})) == []
    assert passes("NUMATopologyFilter", hosts,
                  request=_flavor(1, 16, **{"hw:mem_page_size": "2048"})) == ["h1"]
    assert passes("NUMATopologyFilter", hosts,
                  request=_flavor(1, 1024, **{"hw:mem_page_size": "small"})) == ["h1"]


def test_numa_filter_sets_limits():
    loaded = scenario([host("h1", numa_topology=TWO_CELLS, cpu_allocation_ratio=2.0)],
                      _flavor(2, 1024, **{"hw:numa_nodes": "1"}),
                      {"filter_scheduler": {"enabled_filters": ["NUMATopologyFilter"]}})
    (numa_filter,) = load_filters(loaded.conf)
    numa_filter.filter_all(loaded.hosts, loaded.spec)
    assert loaded.hosts[0].limits["numa_topology"].cpu_allocation_ratio == 2.0


@pytest.mark.parametrize(("policy", "expected"), [
    ("required", []), ("legacy", []), ("preferred", ["h1"])])
def test_pci_numa_affinity_policies(policy, expected):
    # The device is on cell 1, which is too small for the guest; cell 0 fits.
    topo = {"cells": [_cell(0, range(0, 4), memory=4096), _cell(1, range(4, 8), memory=512)]}
    request = _flavor(2, 1024, **{"hw:numa_nodes": "1"})
    request["pci_requests"] = [{"count": 1, "spec": [{"vendor_id": "8086"}],
                                "numa_policy": policy}]
    hosts = [host("h1", numa_topology=topo, pci_device_pools=[dict(VF, count=1, numa_node=1)])]
    assert passes("NUMATopologyFilter", hosts, request=request) == expected
