"""nova's per-node HostState: fields, aggregate metadata, consuming an instance."""

from __future__ import annotations

import pytest

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.host_state import HostState, Service
from nova_reshape.scheduler.request_spec import RequestSpec


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
