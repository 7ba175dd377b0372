"""JSON Schema of a host description file (docs/host-description.md).

A host description is what the offline migration knows of one compute host
that the virt driver would otherwise ask the hypervisor for: its compute
nodes and, per node, the physical GPUs, NUMA cells, PCI devices and
accelerators, and which of them every existing consumer (instance or
migration record) uses today. The file is YAML; this schema is applied to
the parsed document. Checks that a schema cannot express (duplicates,
cross references inside one node) live in :mod:`nova_reshape.virt.host`.

The schema is a Python dict rather than a ``.json`` file so it ships with
the package without package-data configuration; ``python -m
nova_reshape.virt.host_schema`` prints it as JSON.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import fastjsonschema

#: ``0000:84:00.0`` (domain:bus:slot.function), either case.
PCI_ADDRESS = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
UUID = r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
#: A CPU set: ``0-7,16-23``, with nova's ``^`` exclusions (``0-7,^3``), or a list.
CPUSET_STRING = r"^\s*\^?\d+(\s*-\s*\d+)?(\s*,\s*\^?\d+(\s*-\s*\d+)?)*\s*$"

#: Trait tags; normalized like nova's (upper-cased, CUSTOM_ unless standard).
TAG_NAME = r"^[A-Za-z0-9_]+$"
_TRAITS = {"type": "array", "items": {"type": "string", "pattern": TAG_NAME},
           "uniqueItems": True}
_COUNT = {"type": "integer", "minimum": 0}
_POSITIVE = {"type": "integer", "minimum": 1}
_CPUSET = {"oneOf": [
    {"type": "integer", "minimum": 0},
    {"type": "string", "pattern": CPUSET_STRING},
    {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True},
]}
_HEX4 = {"type": "string", "pattern": "^[0-9a-fA-F]{4}$"}

GPU = {
    "type": "object",
    "description": "A physical GPU able to host mediated devices (one VGPU child provider).",
    "required": ["address", "capacity"],
    "additionalProperties": False,
    "properties": {
        "address": {"type": "string", "pattern": PCI_ADDRESS},
        "device_name": {"type": "string", "minLength": 1,
                        "description": "libvirt nodedev name; default pci_<dddd>_<bb>_<ss>_<f>"},
        "mdev_types": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "mdev_class": {"type": "string", "pattern": r"^(VGPU|CUSTOM_[A-Z0-9_]+)$"},
        "capacity": _COUNT,
        "traits": _TRAITS,
    },
}

NUMA_CELL = {
    "type": "object",
    "description": "A host NUMA cell (one <nodename>_NUMA<id> child provider).",
    "required": ["id", "memory_mb"],
    "additionalProperties": False,
    "properties": {
        "id": _COUNT,
        "cpus": _CPUSET,
        "pcpus": _CPUSET,
        "memory_mb": _POSITIVE,
        "reserved_memory_mb": _COUNT,
        "huge_pages": {
            "type": "object",
            "description": "page size in KiB -> number of pages",
            "patternProperties": {"^[0-9]+$": _COUNT},
            "additionalProperties": False,
        },
    },
}

PCI_DEVICE = {
    "type": "object",
    "description": "A PCI device allowed for passthrough ([pci] device_spec).",
    "required": ["address", "vendor_id", "product_id"],
    "additionalProperties": False,
    "properties": {
        "address": {"type": "string", "pattern": PCI_ADDRESS},
        "vendor_id": _HEX4,
        "product_id": _HEX4,
        "type": {"enum": ["type-PCI", "type-PF", "type-VF"]},
        "parent": {"type": "string", "pattern": PCI_ADDRESS,
                   "description": "address of the parent PF (type-VF only)"},
        "resource_class": {"type": "string", "pattern": TAG_NAME},
        "traits": _TRAITS,
        "physical_network": {"type": "string"},
        "remote_managed": {"type": "boolean",
                           "description": "a SmartNIC DPU's device: Neutron's, like one "
                                          "with a physical_network"},
    },
}

ACCELERATOR = {
    "type": "object",
    "description": "A Cyborg deployable (one accelerator child provider).",
    "required": ["type", "capacity"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 200},
        "type": {"type": "string", "pattern": TAG_NAME},
        "address": {"type": "string", "pattern": PCI_ADDRESS},
        "vendor_id": _HEX4,
        "product_id": _HEX4,
        "resource_class": {"type": "string", "pattern": TAG_NAME},
        "capacity": _POSITIVE,
        "traits": _TRAITS,
    },
}

_NUMA_SHARE = {
    "type": "object",
    "required": ["cell"],
    "additionalProperties": False,
    "properties": {"cell": _COUNT, "vcpus": _COUNT, "pcpus": _COUNT, "memory_mb": _COUNT},
}

CONSUMER = {
    "type": "object",
    "description": "An instance or migration record holding allocations on this node.",
    "required": ["uuid"],
    "additionalProperties": False,
    "properties": {
        "uuid": {"type": "string", "pattern": UUID},
        "kind": {"enum": ["instance", "migration"]},
        "instance": {"type": "string", "pattern": UUID},
        "mdevs": {"type": "array", "items": {
            "type": "object", "required": ["gpu"], "additionalProperties": False,
            "properties": {"uuid": {"type": "string", "pattern": UUID},
                           "gpu": {"type": "string", "pattern": PCI_ADDRESS}}}},
        "numa": {"oneOf": [
            {"type": "array", "items": _COUNT, "minItems": 1},
            {"type": "array", "items": _NUMA_SHARE, "minItems": 1},
        ]},
        "pci": {"type": "array", "items": {"type": "string", "pattern": PCI_ADDRESS}},
        "cpu_policy": {"enum": ["dedicated", "shared"],
                       "description": "the flavor's hw:cpu_policy (default shared)"},
        "accelerators": {"type": "array", "items": {
            "type": "object", "required": ["device"], "additionalProperties": False,
            "properties": {"device": {"type": "string", "minLength": 1},
                           "count": _POSITIVE}}},
    },
}

NODE = {
    "type": "object",
    "required": ["nodename"],
    "additionalProperties": False,
    "properties": {
        "nodename": {"type": "string", "minLength": 1, "maxLength": 200},
        "uuid": {"type": "string", "pattern": UUID},
        "hypervisor_type": {"type": "string", "minLength": 1},
        "cpu_shared_set": _CPUSET,
        "cpu_dedicated_set": _CPUSET,
        "disabled": {"type": "boolean",
                     "description": "the nova-compute service's disabled flag; absent: "
                     "COMPUTE_STATUS_DISABLED is left as Placement has it"},
        "gpus": {"type": "array", "items": GPU},
        "numa_cells": {"type": "array", "items": NUMA_CELL},
        "pci_devices": {"type": "array", "items": PCI_DEVICE},
        "accelerators": {"type": "array", "items": ACCELERATOR},
        "consumers": {"type": "array", "items": CONSUMER},
    },
}

HOST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://nova-reshape.invalid/host-description.schema.json",
    "title": "nova-reshape host description",
    "type": "object",
    "required": ["nodes"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": 1},
        "host": {"type": "string", "minLength": 1},
        "nodes": {"type": "array", "items": NODE, "minItems": 1},
    },
}


@functools.cache
def _generated_check() -> Any:
    # fastjsonschema writes the schema out as Python code: about a third of
    # jsonschema's CPU for a valid file. Compiled on first use (80 ms).
    return fastjsonschema.compile(HOST_SCHEMA)


def certainly_valid(document: Any) -> bool:
    """True only for a document jsonschema's draft 2020-12 validator finds no
    error in; False for every other, which the caller then gives to that
    validator for its messages.

    fastjsonschema implements draft 7; the keywords this schema uses mean the
    same in both drafts, and ``tests/unit/nova_reshape/virt/test_host_schema.py``
    checks that it accepts no altered document jsonschema refuses.
    """
    try:
        _generated_check()(document)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(HOST_SCHEMA, indent=2))
