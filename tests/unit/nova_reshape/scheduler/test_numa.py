"""NUMA constraints from flavor and image, and fitting an instance onto host cells."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler import numa
from nova_reshape.scheduler.errors import ScenarioError


@pytest.mark.parametrize(("specs", "props", "cells"), [
    ({}, {}, None),
    ({"hw:cpu_policy": "shared"}, {}, None),
    ({"hw:cpu_policy": "dedicated"}, {}, [(set(), {0, 1, 2, 3}, 4096)]),
    ({"hw:mem_page_size": "large"}, {}, [({0, 1, 2, 3}, set(), 4096)]),
    ({"hw:numa_nodes": "2"}, {}, [({0, 1}, set(), 2048), ({2, 3}, set(), 2048)]),
    ({}, {"hw_numa_nodes": 2}, [({0, 1}, set(), 2048), ({2, 3}, set(), 2048)]),
    ({"hw:numa_nodes": "2", "hw:numa_cpus.0": "0", "hw:numa_cpus.1": "1-3",
      "hw:numa_mem.0": "1024", "hw:numa_mem.1": "3072"}, {},
     [({0}, set(), 1024), ({1, 2, 3}, set(), 3072)]),
    ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0-1"}, {},
     [({0, 1}, {2, 3}, 4096)]),
    ({}, {"hw_cpu_policy": "dedicated"}, [(set(), {0, 1, 2, 3}, 4096)]),
])
def test_numa_constraints(specs, props, cells):
    topology = numa.numa_get_constraints(4, 4096, specs, props)
    if cells is None:
        assert topology is None
    else:
        assert [(set(c.cpuset), set(c.pcpuset), c.memory) for c in topology.cells] == cells


@pytest.mark.parametrize(("specs", "props"), [
    ({"hw:numa_nodes": "3"}, {}),
    ({"hw:numa_nodes": "2"}, {"hw_numa_nodes": 1}),
    ({"hw:cpu_policy": "shared"}, {"hw_cpu_policy": "dedicated"}),
    ({"hw:cpu_thread_policy": "isolate"}, {}),
    ({"hw:cpu_policy": "bogus"}, {}),
    ({"hw:mem_page_size": "huge"}, {}),
    ({}, {"hw_mem_page_size": "large"}),
    ({"hw:numa_nodes": "2", "hw:numa_cpus.0": "0"}, {}),
    ({"hw:cpu_policy": "mixed"}, {}),
])
def test_invalid_numa_requests(specs, props):
    with pytest.raises(ScenarioError):
        numa.numa_get_constraints(4, 4096, specs, props)


def test_page_sizes_and_cpu_specs():
    assert numa.parse_page_size("2MB") == 2048
    assert numa.parse_page_size("1GB") == 1048576
    assert numa.parse_page_size("any") == numa.PAGE_ANY
    assert numa.cpu_spec("0-3,^2,8") == {0, 1, 3, 8}
    with pytest.raises(ScenarioError, match="invalid CPU set '0-x'"):
        numa.cpu_spec("0-x")


def test_fit_pins_on_siblings_and_usage_is_recorded():
    host = numa.load_host_topology({"cells": [{"id": 0, "pcpuset": [0, 1, 2, 3],
                                               "memory": 4096, "siblings": [[0, 1], [2, 3]]}]})
    wanted = numa.numa_get_constraints(2, 1024, {"hw:cpu_policy": "dedicated"}, {})
    fitted, why = numa.fit_instance_to_host(host, wanted, numa.Limits(1.0, 1.0))
    assert why == "" and sorted(fitted.cells[0].pinning.values()) in ([0, 1], [2, 3])
    numa.apply_usage(host, fitted)
    assert host.cells[0].avail_pcpus == 2 and host.cells[0].memory_usage == 1024
    again, _ = numa.fit_instance_to_host(host, wanted, numa.Limits(1.0, 1.0))
    numa.apply_usage(host, again)
    third, why = numa.fit_instance_to_host(host, wanted, numa.Limits(1.0, 1.0))
    assert third is None and "free dedicated CPUs" in why


def test_instance_never_overcommits_against_itself_on_a_cell():
    host = numa.load_host_topology({"cells": [{"id": 0, "cpuset": [0, 1], "memory": 1024,
                                               "mempages": []}]})
    wanted = numa.numa_get_constraints(1, 2048, {"hw:numa_nodes": "1"}, {})
    fitted, why = numa.fit_instance_to_host(host, wanted, numa.Limits(16.0, 16.0))
    assert fitted is None and "2048 MB exceeds" in why
