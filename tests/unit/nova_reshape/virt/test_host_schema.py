"""The host description's JSON Schema and its patterns (virt/host_schema.py)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from nova_reshape.virt import host_schema

VALIDATOR = jsonschema.Draft202012Validator(host_schema.HOST_SCHEMA)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(host_schema.HOST_SCHEMA)


@pytest.mark.parametrize(("pattern", "good", "bad"), [
    (host_schema.PCI_ADDRESS, ["0000:84:00.0", "0000:AF:1f.7"], ["84:00.0", "0000:84:00.8"]),
    (host_schema.CPUSET_STRING, ["0-7,16-23", "0-7,^3", " 4 "], ["0-", "a-b", "1;2"]),
    (host_schema.TAG_NAME, ["nvidia_11", "A100"], ["nvidia-11", ""]),
])
def test_patterns(pattern, good, bad):
    assert all(re.match(pattern, text) for text in good)
    assert not any(re.match(pattern, text) for text in bad)


def test_a_minimal_description_and_what_it_must_have():
    assert VALIDATOR.is_valid({"version": 1, "nodes": [{"nodename": "cmp-07"}]})
    assert not VALIDATOR.is_valid({"nodes": [{}]})  # a node needs its nodename
    assert not VALIDATOR.is_valid({"nodes": []})
    assert not VALIDATOR.is_valid({"version": 2, "nodes": [{"nodename": "cmp-07"}]})
    assert not VALIDATOR.is_valid({"nodes": [{"nodename": "cmp-07"}], "extra": 1})
    assert not VALIDATOR.is_valid({"nodes": [{"nodename": "cmp-07", "uuid": "nope"}]})


#: One node of every part the schema describes.
UUID = "aaaaaaaa-0000-4000-8000-000000000001"
GPU_ADDRESS = "0000:84:00.0"

#: One node of every part the schema describes.
DOCUMENT: dict[str, Any] = {
    "version": 1,
    "host": "cmp-07",
    "nodes": [{
        "nodename": "cmp-07", "uuid": UUID, "hypervisor_type": "QEMU",
        "cpu_shared_set": "0-7,^3", "cpu_dedicated_set": [8, 9], "disabled": False,
        "gpus": [{"address": GPU_ADDRESS, "device_name": "pci_0000_84_00_0",
                  "mdev_types": ["nvidia-35"], "mdev_class": "VGPU", "capacity": 16,
                  "traits": ["A100"]}],
        "numa_cells": [{"id": 0, "cpus": 3, "pcpus": [8, 9], "memory_mb": 4096,
                        "reserved_memory_mb": 0, "huge_pages": {"2048": 16}}],
        "pci_devices": [{"address": "0000:05:00.0", "vendor_id": "8086", "product_id": "1520",
                         "type": "type-PF", "resource_class": "CUSTOM_NIC", "traits": ["X"],
                         "physical_network": "physnet1", "remote_managed": False}],
        "accelerators": [{"name": "fpga0", "type": "FPGA", "address": "0000:06:00.0",
                          "vendor_id": "1234", "product_id": "5678",
                          "resource_class": "FPGA", "capacity": 2, "traits": ["Y"]}],
        "consumers": [
            {"uuid": UUID, "kind": "instance", "instance": UUID,
             "mdevs": [{"uuid": UUID, "gpu": GPU_ADDRESS}], "numa": [0],
             "pci": ["0000:05:00.0"], "cpu_policy": "dedicated",
             "accelerators": [{"device": "fpga0", "count": 1}]},
            {"uuid": UUID, "numa": [{"cell": 0, "vcpus": 2, "pcpus": 0, "memory_mb": 512}]},
        ],
    }],
}

#: What each value is replaced with: every JSON type, the edges of the keywords,
#: and the values JSON equality treats apart from Python's (True and 1, 1 and 1.0).
REPLACEMENTS: list[Any] = [None, True, False, 0, 1, -1, 2, 1.0, 3.5, "", "x", "0-", GPU_ADDRESS,
                           UUID, "VGPU", "instance", [], [0], [1, 1], [1, True], [1, 1.0],
                           ["a", "a"], [{}], {}, {"cell": 0}, {"extra": 1}]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _places(item, (*path, index))


def _mutants() -> Iterator[Any]:
    for path in _places(DOCUMENT):
        if not path:
            continue
        for replacement in [*REPLACEMENTS, "<deleted>", "<extra key>"]:
            mutant = copy.deepcopy(DOCUMENT)
            parent = mutant
            for part in path[:-1]:
                parent = parent[part]
            if replacement == "<deleted>":
                del parent[path[-1]]
            elif replacement == "<extra key>":
                if not isinstance(parent[path[-1]], dict):
                    continue
                parent[path[-1]]["unknown"] = 1
            else:
                parent[path[-1]] = copy.deepcopy(replacement)
            yield mutant


def test_the_full_document_is_valid_and_certainly_valid():
    assert VALIDATOR.is_valid(DOCUMENT)
    assert host_schema.certainly_valid(DOCUMENT)


def test_no_mutant_jsonschema_refuses_is_certainly_valid_and_the_valid_ones_are():
    """The fast check (draft 7 code) never passes what draft 2020-12 refuses, and
    passes the valid documents: each value replaced by every JSON type and the
    keywords' edges, each key deleted, an extra key added."""
    accepted = refused = 0
    for mutant in _mutants():
        valid = VALIDATOR.is_valid(mutant)
        if host_schema.certainly_valid(mutant):
            assert valid, mutant
            accepted += 1
        else:
            assert not valid, mutant
            refused += 1
    assert accepted > 100 and refused > 1000
