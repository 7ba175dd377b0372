"""Host description loading: the documented example, schema errors, consistency rules."""

from __future__ import annotations

import os
import re

import pytest

from nova_reshape.virt import host
from nova_reshape.virt.host import HostDescriptionError, load_host, load_hosts, parse_host

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "docs",
                   "host-description.md")


def _example() -> str:
    with open(DOC, encoding="utf-8") as stream:
        return re.search(r"```yaml\n(.*?)```", stream.read(), re.S).group(1)


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _error(document) -> str:
    with pytest.raises(HostDescriptionError) as info:
        parse_host(document, "h.yaml")
    return str(info.value)


def test_documented_example_loads(tmp_path):
    desc = load_host(_write(tmp_path, "cmp-07.yaml", _example()))
    node, ironic = desc.nodes
    assert desc.host == "cmp-07" and ironic.is_ironic and not node.is_ironic
    assert node.gpus[0].device_name == "pci_0000_84_00_0"
    assert node.numa_cells[0].cpus == frozenset(range(16))
    assert node.numa_cells[0].pcpus == frozenset(range(16, 24))
    assert node.numa_cells[0].huge_pages == {2048: 4096}
    assert node.pci_devices[1].parent == "0000:3b:00.0"
    assert node.accelerators[0].resource_class == "FPGA"
    first, second, migration = node.consumers
    assert first.mdevs == (("5f3c0b0c-7c5d-4b0e-9d55-1a2b3c4d5e6f", "0000:84:00.0"),)
    assert [share.cell for share in first.numa] == [0] and first.numa[0].vcpus is None
    assert second.numa[1].vcpus == 2 and second.accelerators == {"cmp-07-fpga-0": 1}
    assert migration.is_migration and node.consumer(second.uuid) is second
    assert node.disabled is True and ironic.disabled is None
    assert node.cpu_shared_set == frozenset([*range(16), *range(24, 32)])
    assert node.cpu_dedicated_set == frozenset(range(16, 24))
    assert (first.cpu_policy, second.is_pinned, first.is_pinned) == ("shared", True, False)


def test_unquoted_pci_address_is_not_a_base_60_number(tmp_path):
    text = "nodes:\n  - nodename: n\n    gpus:\n      - {address: 0000:00:02.0, capacity: 1}\n"
    assert load_host(_write(tmp_path, "a.yaml", text)).nodes[0].gpus[0].address == "0000:00:02.0"


@pytest.mark.parametrize("document, message", [
    ({"nodes": [{"nodename": "n", "gpus": [{"address": "0000:84:00.0", "capacity": -1}]}]},
     "h.yaml: nodes[0].gpus[0].capacity: -1 is less than the minimum of 0"),
    ({"nodes": [{"nodename": "n", "gpus": [{"address": "84:00.0", "capacity": 1}]}]},
     "h.yaml: nodes[0].gpus[0].address: '84:00.0' is not a PCI address like 0000:84:00.0"),
    ({"nodes": [{"nodename": "n", "consumers": [{"uuid": "nope"}]}]},
     "h.yaml: nodes[0].consumers[0].uuid: 'nope' is not a UUID"),
    ({"nodes": [{"nodename": "n", "colour": "red"}]},
     "h.yaml: nodes[0]: Additional properties are not allowed ('colour' was unexpected)"),
    ({"nodes": []}, "h.yaml: nodes: [] should be non-empty"),
    ({"hosts": []}, "h.yaml: (document): 'nodes' is a required property"),
    (None, "h.yaml: the file is empty"),
])
def test_schema_errors_name_file_path_and_problem(document, message):
    assert _error(document) == message


@pytest.mark.parametrize("node, message", [
    ({"gpus": [{"address": "0000:84:00.0", "capacity": 1},
               {"address": "0000:84:00.0", "capacity": 2}]},
     "nodes[0].gpus[1]: duplicate address '0000:84:00.0'"),
    ({"numa_cells": [{"id": 0, "memory_mb": 1}, {"id": 0, "memory_mb": 1}]},
     "nodes[0].numa_cells[1]: duplicate cell id 0"),
    ({"numa_cells": [{"id": 0, "memory_mb": 10, "cpus": "0-3", "pcpus": "3-4"}]},
     "nodes[0].numa_cells[0].pcpus: CPUs [3] are in both cpus and pcpus"),
    ({"numa_cells": [{"id": 0, "memory_mb": 10, "cpus": "3-1"}]},
     "nodes[0].numa_cells[0]: bad CPU set: range '3-1' runs backwards"),
    ({"numa_cells": [{"id": 0, "memory_mb": 1024, "huge_pages": {"1048576": 2}}]},
     "nodes[0].numa_cells[0].huge_pages: 2048 MiB of huge pages exceed memory_mb 1024"),
    ({"pci_devices": [{"address": "0000:3b:00.2", "vendor_id": "8086", "product_id": "154c",
                       "type": "type-VF"}]},
     "nodes[0].pci_devices[0]: a type-VF needs 'parent' (its PF's address)"),
    ({"pci_devices": [{"address": "0000:3b:00.2", "vendor_id": "8086", "product_id": "154c",
                       "parent": "0000:3b:00.0"}]},
     "nodes[0].pci_devices[0].parent: only a type-VF has a parent, this is type-PCI"),
    ({"consumers": [{"uuid": "11111111-1111-4111-8111-111111111111", "numa": [0, 0]}]},
     "nodes[0].consumers[0].numa[1]: duplicate cell 0"),
    ({"consumers": [{"uuid": "11111111-1111-4111-8111-111111111111"},
                    {"uuid": "11111111111141118111111111111111"}]},
     "nodes[0].consumers[1]: duplicate uuid '11111111-1111-4111-8111-111111111111'"),
])
def test_consistency_rules(node, message):
    assert _error({"nodes": [{"nodename": "n", **node}]}) == f"h.yaml: {message}"


def test_duplicate_nodename_in_one_file():
    assert _error({"nodes": [{"nodename": "n"}, {"nodename": "n"}]}) == (
        "h.yaml: nodes[1]: duplicate nodename 'n'")


def test_invalid_yaml_names_line_and_column(tmp_path):
    path = _write(tmp_path, "bad.yaml", "nodes:\n  - nodename: a\n   bad: [\n")
    with pytest.raises(HostDescriptionError, match=r"bad\.yaml: line \d+, column \d+: invalid"):
        load_host(path)


def test_missing_file(tmp_path):
    with pytest.raises(HostDescriptionError, match="No such file"):
        load_host(str(tmp_path / "absent.yaml"))


def test_directory_expands_to_sorted_yaml_files_and_nodes_are_unique_across_files(tmp_path):
    _write(tmp_path, "b.yml", "nodes: [{nodename: b}]\n")
    _write(tmp_path, "a.yaml", "nodes: [{nodename: a}]\n")
    _write(tmp_path, "notes.txt", "not yaml\n")
    hosts = load_hosts([str(tmp_path)])
    assert [h.nodes[0].nodename for h in hosts] == ["a", "b"]
    _write(tmp_path, "c.yaml", "nodes: [{nodename: a}]\n")
    with pytest.raises(HostDescriptionError, match=r"c\.yaml: nodes\[0\]: nodename a is also "
                                                   r"described in .*a\.yaml"):
        load_hosts([str(tmp_path)])


def test_empty_directory_is_an_error(tmp_path):
    with pytest.raises(HostDescriptionError, match="holds no"):
        load_hosts([str(tmp_path)])


def test_node_cpu_sets_in_nova_syntax_and_bad_ones():
    node = parse_host({"nodes": [{"nodename": "n", "cpu_dedicated_set": "0-7,^3,^5-6",
                                  "cpu_shared_set": [8, 9]}]}).nodes[0]
    assert node.cpu_dedicated_set == {0, 1, 2, 4, 7} and node.cpu_shared_set == {8, 9}
    assert parse_host({"nodes": [{"nodename": "n"}]}).nodes[0].cpu_shared_set is None
    with pytest.raises(HostDescriptionError, match=r"nodes\[0\]\.cpu_shared_set: bad CPU set"):
        parse_host({"nodes": [{"nodename": "n", "cpu_shared_set": "5-1"}]}, "h.yaml")
    with pytest.raises(HostDescriptionError, match="is not a CPU set"):
        parse_host({"nodes": [{"nodename": "n", "cpu_dedicated_set": "0-3,x"}]}, "h.yaml")


def test_names():
    assert host.nodedev_name("0000:D8:00.1") == "pci_0000_d8_00_1"
    assert host.accelerator_resource_class("gpu") == "PGPU"
    assert host.accelerator_resource_class("fpga") == "FPGA"
    assert host.accelerator_resource_class("qat") == "CUSTOM_QAT"


def test_a_built_document_skips_the_schema_pass_but_its_faults_are_still_named():
    document = {"host": "h", "nodes": [{"nodename": "n", "cpu_dedicated_set": "0-3",
                                        "numa_cells": [{"id": 0, "memory_mb": 1024}]}]}
    assert parse_host(document, "built", built=True) == parse_host(document, "built")
    broken = {"host": "h", "nodes": [{"nodename": "n", "numa_cells": [{"id": 0}]}]}
    with pytest.raises(HostDescriptionError, match=r"built: nodes\[0\]\.numa_cells\[0\]"):
        parse_host(broken, "built", built=True)
    with pytest.raises(HostDescriptionError, match="bad CPU set"):
        parse_host({"nodes": [{"nodename": "n", "cpu_shared_set": "x"}]}, "built", built=True)
