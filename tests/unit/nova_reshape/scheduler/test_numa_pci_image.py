"""NUMA constraints and fitting, PCI pools, image property coercion."""

from __future__ import annotations

import pytest

from nova_reshape.scheduler import image, numa, pci
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


def test_pci_pools_sorted_by_key_count_and_consumed_in_order():
    stats = pci.load_pools([
        {"vendor_id": "8086", "product_id": "1", "count": 1, "tags": {"physical_network": "p"}},
        {"vendor_id": "8086", "product_id": "1", "count": 2}])
    assert [p["count"] for p in stats.pools] == [2, 1]
    request = pci.PciRequest(count=2, spec=[{"vendor_id": "8086"}])
    stats.apply_requests([request])
    assert [p["count"] for p in stats.pools] == [1]
    with pytest.raises(pci.PciDeviceRequestFailed):
        stats.apply_requests([request])


def test_pci_vdpa_and_remote_managed_pools_need_explicit_requests():
    stats = pci.load_pools([{"vendor_id": "15b3", "count": 1, "tags": {"dev_type": "vdpa"}},
                            {"vendor_id": "15b3", "count": 1,
                             "tags": {"remote_managed": "true"}}])
    assert not stats.support_requests([pci.PciRequest(2, [{"vendor_id": "15b3"}])])
    assert stats.support_requests([pci.PciRequest(1, [{"dev_type": "vdpa"}])])
    assert stats.support_requests([pci.PciRequest(1, [{"remote_managed": "true"}])])


@pytest.mark.parametrize("raw", [[{"count": -1}], [{"count": True}], "pool", [{"tags": "x"}]])
def test_invalid_pci_pools(raw):
    with pytest.raises(ScenarioError):
        pci.load_pools(raw)


def test_image_properties_are_coerced_and_unknown_ones_dropped():
    props = image.image_properties({
        "architecture": "amd64", "hw_vm_mode": "hv", "img_hv_type": "XAPI",
        "hw_numa_nodes": "2", "hw_qemu_guest_agent": "yes", "my_custom": "x",
        "hw_numa_cpus.0": "0-1", "hw_numa_mem.0": "512", "os_distro": "ubuntu"})
    assert props == {"hw_architecture": "x86_64", "hw_vm_mode": "hvm", "img_hv_type": "xen",
                     "hw_numa_nodes": 2, "hw_qemu_guest_agent": True, "os_distro": "ubuntu",
                     "hw_numa_cpus": ["0-1"], "hw_numa_mem": [512]}


def test_current_property_names_win_over_legacy_ones():
    assert image.image_properties({"architecture": "i386", "hw_architecture": "aarch64"}) == \
        {"hw_architecture": "aarch64"}


@pytest.mark.parametrize("raw", [{"hw_numa_nodes": "two"}, {"img_hv_type": "hal9000"},
                                 {"traits_required": "X"}])
def test_invalid_image_properties(raw):
    with pytest.raises(ScenarioError):
        image.image_properties(raw)


@pytest.mark.parametrize(("predicate", "version", "expected"), [
    (">= 7.0, < 9.0", "8.2.0", True), (">= 7.0, < 9.0", "9.0.0", False),
    ("== 8.2", "8.2.0", True), ("!= 8.2", "8.2.0", False), ("> 8", "8.0.1", True),
    ("<= 1.0", "1.0.0", True),
])
def test_version_predicates(predicate, version, expected):
    assert image.version_satisfies(predicate, version) is expected


def test_version_to_str():
    assert image.version_to_str(8002000) == "8.2.0"
    assert image.version_to_str(7000001) == "7.0.1"
