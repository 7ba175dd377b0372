"""nova's per-node HostState: fields, aggregate metadata, consuming an instance."""

from __future__ import annotations

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.host_state import HostState, Service
from nova_reshape.scheduler.request_spec import RequestSpec
from nova_reshape.scheduler.scenario import build_host_state


def test_label_names_the_node_only_when_it_differs_from_the_host():
    assert HostState("cmp-1").label == "cmp-1"
    assert HostState("cmp-1", "node-a").label == "cmp-1/node-a"
    assert repr(HostState("cmp-1", "node-a")) == "<HostState cmp-1/node-a>"


def test_only_nova_fields_can_be_set():
    assert HostState("h", free_ram_mb=1024).free_ram_mb == 1024
    with pytest.raises(TypeError, match="HostState has no field 'colour'"):
        HostState("h", colour="red")


def test_aggregate_metadata_values_splits_and_minimum():
    host = HostState("h", aggregates=[
        Aggregate("a", frozenset({"h"}), {"cpu_allocation_ratio": "2.0", "zone": "az1,az2"}),
        Aggregate("b", frozenset({"h"}), {"cpu_allocation_ratio": "1.5", "zone": " az3"})])
    assert host.aggregate_values("zone") == ["az1,az2", " az3"]
    assert host.aggregate_values_split("zone") == {"az1", "az2", "az3"}
    assert host.aggregate_number("cpu_allocation_ratio", 16.0) == 1.5
    assert host.aggregate_number("missing", 16.0) == 16.0
    host.set_aggregates([Aggregate("c", frozenset(), {"cpu_allocation_ratio": "x"}),
                         Aggregate("d", frozenset(), {"cpu_allocation_ratio": "1.0"})])
    assert host.aggregate_number("cpu_allocation_ratio", 16.0) == 16.0  # one bad: default


def test_service_fields_are_looked_up_like_nova_s_dict():
    service = Service(disabled=True)
    assert service.get("disabled") is True and service.get("colour", "none") == "none"


def test_consuming_an_instance_takes_ram_disk_vcpus_and_counts_it():
    host = HostState("h", free_ram_mb=4096, free_disk_mb=20480, vcpus_used=1)
    host.consume_from_request(RequestSpec(flavor=Flavor(vcpus=2, memory_mb=1024, root_gb=5,
                                                        ephemeral_gb=1, swap=512)))
    assert (host.free_ram_mb, host.free_disk_mb, host.vcpus_used) == (3072, 14336, 3)
    assert (host.num_instances, host.num_io_ops) == (1, 1) and host.updated is not None


def test_cpu_info_is_parsed_once():
    host = HostState("h", cpu_info='{"arch": "x86_64"}')
    assert host.cpu_info_dict() == {"arch": "x86_64"}
    assert host.cpu_info_dict() is host.cpu_info_dict()
    assert HostState("h").cpu_info_dict() is None


def test_a_fork_filters_and_consumes_without_touching_the_original():
    topology = {"cells": [{"id": 0, "cpuset": [0, 1], "pcpuset": [2, 3], "memory": 4096}]}
    host = build_host_state({"host": "h", "vcpus": 4, "memory_mb": 4096,
                             "numa_topology": topology}, now=1000.0)
    host.allocation_candidates = [{"allocations": {}}]
    view = host.fork()
    view.limits["numa_topology"] = "set by a filter"
    view.allocation_candidates.clear()
    assert host.limits == {} and len(host.allocation_candidates) == 1
    assert view.numa_topology is host.numa_topology      # read only: shared
    twin = host.fork(consumable=True)
    twin.numa_topology.cells[0].pinned_cpus.add(2)
    twin.numa_topology.cells[0].cpu_usage += 1
    twin.pci_stats.pools.append({"count": 1})
    assert host.numa_topology.cells[0].pinned_cpus == set()
    assert host.numa_topology.cells[0].cpu_usage == 0 and host.pci_stats.pools == []


def test_a_later_fork_has_a_heartbeat_as_old_as_the_original_s():
    host = HostState("h", service=Service(last_seen_up=1000.0, created_at=900.0))
    later = host.fork(later=60.0)
    assert (later.service.last_seen_up, later.service.created_at) == (1060.0, 960.0)
    assert host.service.last_seen_up == 1000.0
    assert HostState("h").fork(later=5.0).service.last_seen_up is None


def test_a_fork_holds_every_field_of_the_original():
    host = build_host_state({"host": "cmp", "vcpus": 8, "memory_mb": 4096,
                             "free_ram_mb": 2048}, now=0.0)
    host.cell_name, host.aggregate_metadata = "cell1", {"k": {"v"}}
    twin = host.fork()
    assert type(twin) is HostState and twin is not host
    for name in HostState.__slots__:
        assert getattr(twin, name) == getattr(host, name), name
    assert twin.limits is not host.limits and twin.service is host.service

    class Labelled(HostState):
        __slots__ = ("tag",)

    special = Labelled("h")
    special.tag = "own"
    assert special.fork().tag == "own" and type(special.fork()) is Labelled
