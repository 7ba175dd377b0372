"""nova's serialized NUMA objects, as found in cell databases of several ages."""

from __future__ import annotations

import json

import pytest

from nova_reshape.nova.errors import ObjectFormatError
from nova_reshape.nova.flavor import CpuPolicy
from nova_reshape.novadb import objects
from tests.fixtures.nova_db import envelope


def pages(size_kb: int, total: int, used: int = 0, reserved: int = 0) -> dict:
    return envelope("NUMAPagesTopology", "1.1",
                    {"size_kb": size_kb, "total": total, "used": used, "reserved": reserved})


# A Train-or-later host cell with a dedicated set, as the libvirt driver stores it.
HOST_CELL_1_5 = envelope("NUMACell", "1.5", {
    "id": 0, "cpuset": [0, 1, 2, 3], "pcpuset": [4, 5, 6, 7], "memory": 65536,
    "cpu_usage": 2, "memory_usage": 4096, "pinned_cpus": [4, 5],
    "siblings": [[0, 4], [1, 5], [2, 6], [3, 7]],
    "mempages": [pages(4, 16252928 // 4), pages(2048, 1024, used=512), pages(1048576, 0)],
    "network_metadata": envelope("NetworkMetadata", "1.0",
                                 {"physnets": ["physnet1"], "tunneled": False}),
    "socket": 0})

# A Stein host cell (NUMACell 1.3): no pcpuset, cpuset held every usable CPU.
HOST_CELL_1_3 = envelope("NUMACell", "1.3", {
    "id": 1, "cpuset": [8, 9, 10, 11], "memory": 32768, "cpu_usage": 0,
    "memory_usage": 0, "pinned_cpus": [9], "siblings": [], "mempages": [pages(4, 8388608)]})


def test_unwrap_nested_envelopes_and_ignores_changes():
    document = envelope("NUMATopology", "1.2", {"cells": [HOST_CELL_1_5]})
    unwrapped = objects.unwrap(document)
    assert unwrapped.name == "NUMATopology" and unwrapped.version == (1, 2)
    cell = unwrapped.data["cells"][0]
    assert cell.name == "NUMACell" and cell.at_least(1, 4)
    assert cell.data["network_metadata"].data["physnets"] == ["physnet1"]
    assert "nova_object.changes" not in cell.data


def test_host_topology_with_dedicated_set():
    text = json.dumps(envelope("NUMATopology", "1.2", {"cells": [HOST_CELL_1_5]}))
    topology = objects.parse_host_numa_topology(text)
    (cell,) = topology.cells
    assert cell.id == 0 and cell.memory_mb == 65536 and cell.socket == 0
    assert cell.shared == {0, 1, 2, 3}
    assert cell.dedicated == {4, 5, 6, 7}
    assert cell.pinned_cpus == {4, 5}
    assert cell.siblings[0] == {0, 4}
    assert [(p.size_kb, p.total, p.used) for p in cell.mempages] == [
        (4, 4063232, 0), (2048, 1024, 512), (1048576, 0, 0)]
    assert not cell.legacy_pinning and not topology.legacy_format
    assert (cell.cpu_usage, cell.memory_usage) == (2, 4096)


def test_host_cell_before_pcpuset_keeps_every_cpu_shared():
    text = json.dumps(envelope("NUMATopology", "1.2", {"cells": [HOST_CELL_1_3]}))
    (cell,) = objects.parse_host_numa_topology(text).cells
    assert cell.version == (1, 3) and not cell.has_pcpuset
    assert cell.shared == {8, 9, 10, 11} and cell.dedicated == frozenset()
    assert cell.legacy_pinning


def test_host_cell_in_legacy_pinning_mode_counts_the_overlap_as_shared():
    # No cpu_dedicated_set: nova stores the same CPUs in cpuset and pcpuset.
    cell_doc = envelope("NUMACell", "1.5", {"id": 0, "cpuset": [0, 1], "pcpuset": [0, 1],
                                            "memory": 1024, "pinned_cpus": [], "siblings": [],
                                            "mempages": []})
    (cell,) = objects.parse_host_numa_topology(
        json.dumps(envelope("NUMATopology", "1.2", {"cells": [cell_doc]}))).cells
    assert cell.shared == {0, 1} and cell.dedicated == frozenset() and cell.legacy_pinning


def test_pre_liberty_host_topology():
    text = json.dumps({"cells": [{"id": 0, "cpus": "0-3,^2", "mem": {"total": 2048, "used": 0},
                                  "cpu_usage": 0}]})
    topology = objects.parse_host_numa_topology(text)
    assert topology.legacy_format
    assert topology.cells[0].cpuset == {0, 1, 3} and topology.cells[0].memory_mb == 2048


def test_unset_columns_are_none_or_empty():
    assert objects.parse_host_numa_topology(None) is None
    assert objects.parse_instance_numa_topology("") is None
    assert objects.parse_pci_requests(None) == ()
    assert objects.parse_flavor_info(None) is None


def instance_topology(*cells: dict, version: str = "1.3") -> str:
    return json.dumps(envelope("InstanceNUMATopology", version, {
        "cells": list(cells), "instance_uuid": "6d3c2e9a-0000-4000-8000-000000000001",
        "id": 7, "emulator_threads_policy": None}))


def test_instance_cell_1_6_pinned():
    cell = envelope("InstanceNUMACell", "1.6", {
        "id": 1, "cpuset": [], "pcpuset": [0, 1], "cpuset_reserved": None, "memory": 2048,
        "pagesize": None, "cpu_topology": None, "cpu_pinning_raw": {"0": 12, "1": 13},
        "cpu_policy": "dedicated", "cpu_thread_policy": "prefer"})
    topology = objects.parse_instance_numa_topology(instance_topology(cell))
    (parsed,) = topology.cells
    assert parsed.id == 1 and parsed.pcpuset == {0, 1} and parsed.cpuset == frozenset()
    assert parsed.cpu_pinning == {0: 12, 1: 13}
    assert parsed.cpu_policy is CpuPolicy.DEDICATED and topology.pinned


def test_instance_cell_1_4_dedicated_keeps_pinned_cpus_in_cpuset():
    # Before 1.5 a dedicated cell's pinned vCPUs were in cpuset.
    cell = envelope("InstanceNUMACell", "1.4", {
        "id": 0, "cpuset": [0, 1, 2, 3], "cpuset_reserved": None, "memory": 4096,
        "pagesize": 2048, "cpu_pinning_raw": {"0": 4, "1": 5, "2": 6, "3": 7},
        "cpu_policy": "dedicated", "cpu_thread_policy": None})
    (parsed,) = objects.parse_instance_numa_topology(instance_topology(cell)).cells
    assert parsed.pcpuset == {0, 1, 2, 3} and parsed.cpuset == frozenset()
    assert parsed.pagesize == 2048 and parsed.pinned


def test_instance_cell_1_2_pinning_without_policy_is_pinned():
    cell = envelope("InstanceNUMACell", "1.2", {
        "id": 0, "cpuset": [0, 1], "memory": 1024, "pagesize": None,
        "cpu_pinning_raw": {"0": 2, "1": 3}})
    (parsed,) = objects.parse_instance_numa_topology(instance_topology(cell)).cells
    assert parsed.cpu_policy is None and parsed.pinned and parsed.pcpuset == {0, 1}


def test_instance_cells_unpinned_and_mixed_are_not_dedicated():
    shared = envelope("InstanceNUMACell", "1.6", {
        "id": 0, "cpuset": [0, 1], "pcpuset": [], "memory": 1024, "cpu_pinning_raw": None,
        "cpu_policy": None})
    mixed = envelope("InstanceNUMACell", "1.6", {
        "id": 1, "cpuset": [2], "pcpuset": [3], "memory": 1024,
        "cpu_pinning_raw": {"3": 9}, "cpu_policy": "mixed"})
    topology = objects.parse_instance_numa_topology(instance_topology(shared, mixed))
    assert not topology.pinned
    assert topology.cells[1].cpu_policy is CpuPolicy.MIXED
    assert topology.cells[1].cpuset == {2} and topology.cells[1].pcpuset == {3}


def test_pre_liberty_instance_topology():
    text = json.dumps({"cells": [{"id": 0, "cpus": "0-1", "mem": {"total": 512},
                                  "pagesize": None}]})
    topology = objects.parse_instance_numa_topology(text)
    assert topology.legacy_format and topology.cells[0].cpuset == {0, 1}
    assert topology.cells[0].memory_mb == 512 and not topology.pinned


@pytest.mark.parametrize(("parser", "text", "message"), [
    (objects.parse_host_numa_topology, "{not json", "NUMATopology is not JSON"),
    (objects.parse_host_numa_topology,
     json.dumps(envelope("InstanceNUMATopology", "1.3", {"cells": []})),
     "expected a NUMATopology object, found InstanceNUMATopology"),
    (objects.parse_host_numa_topology,
     json.dumps(envelope("NUMATopology", "1.2", {"cells": [envelope("NUMACell", "1.5", {
         "id": 0, "cpuset": "0-3", "memory": 1})]})),
     "NUMACell 0 cpuset is not a list of CPU numbers"),
    (objects.parse_host_numa_topology,
     json.dumps(envelope("NUMATopology", "one.two", {"cells": []})), "bad object version"),
    (objects.parse_instance_numa_topology,
     instance_topology(envelope("InstanceNUMACell", "1.6", {
         "id": 0, "cpuset": [0], "memory": 1, "cpu_policy": "greedy"})),
     "unknown cpu_policy 'greedy'"),
    (objects.parse_instance_numa_topology,
     instance_topology(envelope("InstanceNUMACell", "1.6", {"id": 0, "cpuset": [0]})),
     "InstanceNUMACell 0 has no memory"),
    (objects.parse_pci_requests, '{"count": 1}', "not a list of requests"),
    (objects.parse_flavor_info, json.dumps({"old": None}), "no 'cur' flavor"),
    (objects.parse_pci_pools, json.dumps(envelope("PciDevicePoolList", "1.1", {"objects": [
        envelope("PciDevicePool", "1.1", {"vendor_id": "8086", "product_id": "154c"})]})),
     "PciDevicePool has no count"),
    (objects.parse_pci_pools, json.dumps(envelope("PciDevicePool", "1.1", {})),
     "expected a PciDevicePoolList object"),
])
def test_malformed_objects_are_named(parser, text, message):
    with pytest.raises(ObjectFormatError, match=message):
        parser(text)
