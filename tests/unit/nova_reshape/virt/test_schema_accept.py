"""The schema's fast acceptance test (virt/schema_accept.py): never accepts what
jsonschema refuses, accepts the valid documents, refuses to compile unknown keywords."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from nova_reshape.virt import host_schema
from nova_reshape.virt.schema_accept import UnsupportedSchema, compile_acceptor

VALIDATOR = jsonschema.Draft202012Validator(host_schema.HOST_SCHEMA)
ACCEPTS = compile_acceptor(host_schema.HOST_SCHEMA)
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


def test_the_full_document_is_valid_and_accepted():
    assert VALIDATOR.is_valid(DOCUMENT)
    assert ACCEPTS(DOCUMENT)


def test_no_mutant_jsonschema_refuses_is_accepted_and_the_valid_ones_are():
    accepted = refused = 0
    for mutant in _mutants():
        valid = VALIDATOR.is_valid(mutant)
        if ACCEPTS(mutant):
            assert valid, mutant
            accepted += 1
        else:
            refused += 1
            # a valid document left to jsonschema holds a float (3.0 is an integer to it)
            assert not valid or any(type(leaf) is float for leaf in _leaves(mutant)), mutant
    assert accepted > 100 and refused > 1000


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("schema", [
    {"type": "string", "format": "uuid"},
    {"$ref": "#/definitions/x"},
    {"anyOf": [{"type": "string"}]},
    {"type": ["string", "null"]},
    {"enum": [1, 2]},
])
def test_a_keyword_it_does_not_implement_is_refused_when_compiled(schema):
    with pytest.raises(UnsupportedSchema):
        compile_acceptor(schema)


def test_one_of_counts_matching_branches():
    accepts = compile_acceptor({"oneOf": [{"type": "integer"}, {"type": "integer", "minimum": 0}]})
    assert accepts(-1)
    assert not accepts(1)  # both match: jsonschema refuses it too
    assert not accepts(1.0)  # an integer to draft 2020-12: left to jsonschema
