"""The partial host file ``nova-reshape-manage host collect`` writes.

What only the hypervisor knows, for one compute host: the physical GPUs
that can host mediated devices (with every mdev type's
``available_instances``), the mediated devices that exist (parent GPU,
type) and which libvirt domain, i.e. which instance, holds each. Format::

    version: 1
    kind: collected
    host: cmp-07
    gpus:
      - address: "0000:84:00.0"
        mdev_types: {nvidia-35: 6, nvidia-36: 0}   # type: available_instances
    mdevs:
      - uuid: 5f3c0b0c-7c5d-4b0e-9d55-1a2b3c4d5e6f
        gpu: "0000:84:00.0"
        type: nvidia-35
        instance: 0b7c6f1e-56a9-4d0e-b1a4-37d6c1c0e001   # null: no guest holds it
    errors:
      - "/etc/libvirt/qemu/broken.xml: not well-formed (invalid token): line 3, column 2"

``describe_hosts --collected DIR`` reads every such file in DIR and merges
it into the host's description (:mod:`nova_reshape.hostfacts.describe`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import jsonschema

from nova_reshape.hostfacts.output import to_yaml
from nova_reshape.nova.pci import canonical_address
from nova_reshape.virt.host import (
    YAML_SUFFIXES,
    HostDescriptionError,
    canonical_uuid,
    format_path,
    read_yaml,
)
from nova_reshape.virt.host_schema import PCI_ADDRESS, UUID

KIND = "collected"

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["kind", "host"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": 1},
        "kind": {"const": KIND},
        "host": {"type": "string", "minLength": 1},
        "gpus": {"type": "array", "items": {
            "type": "object", "required": ["address"], "additionalProperties": False,
            "properties": {
                "address": {"type": "string", "pattern": PCI_ADDRESS},
                "mdev_types": {"type": "object",
                               "additionalProperties": {"type": "integer", "minimum": 0}}}}},
        "mdevs": {"type": "array", "items": {
            "type": "object", "required": ["uuid", "gpu"], "additionalProperties": False,
            "properties": {
                "uuid": {"type": "string", "pattern": UUID},
                "gpu": {"type": "string", "pattern": PCI_ADDRESS},
                "type": {"type": ["string", "null"]},
                "instance": {"type": ["string", "null"], "pattern": UUID}}}},
        "errors": {"type": "array", "items": {"type": "string"}},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


@dataclasses.dataclass(frozen=True)
class CollectedGpu:
    """A physical GPU and, per mdev type it supports, how many more it can create."""

    address: str
    mdev_types: Mapping[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class CollectedMdev:
    """An existing mediated device; ``instance`` is the domain (instance) uuid holding it."""

    uuid: str
    gpu: str
    type: str | None = None
    instance: str | None = None


@dataclasses.dataclass(frozen=True)
class CollectedHost:
    host: str
    gpus: tuple[CollectedGpu, ...] = ()
    mdevs: tuple[CollectedMdev, ...] = ()
    errors: tuple[str, ...] = ()
    path: str = ""

    def mdevs_of(self, gpu: str) -> list[CollectedMdev]:
        return [mdev for mdev in self.mdevs if mdev.gpu == gpu]


def to_document(collected: CollectedHost) -> dict[str, Any]:
    """The YAML document of a collected host (what ``host collect`` writes)."""
    return {
        "version": 1, "kind": KIND, "host": collected.host,
        "gpus": [{"address": gpu.address, "mdev_types": dict(sorted(gpu.mdev_types.items()))}
                 for gpu in collected.gpus],
        "mdevs": [{"uuid": mdev.uuid, "gpu": mdev.gpu, "type": mdev.type,
                   "instance": mdev.instance} for mdev in collected.mdevs],
        "errors": list(collected.errors),
    }


def from_document(document: Any, path: str) -> CollectedHost:
    """Validate a parsed collected file; HostDescriptionError naming the place if bad."""
    if document is None:
        raise HostDescriptionError(path, "", "the file is empty")
    errors = list(_VALIDATOR.iter_errors(document))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise HostDescriptionError(path, format_path(error.absolute_path), error.message)
    return CollectedHost(
        host=document["host"], path=path,
        gpus=tuple(CollectedGpu(address=canonical_address(gpu["address"]),
                                mdev_types=dict(gpu.get("mdev_types") or {}))
                   for gpu in document.get("gpus") or []),
        mdevs=tuple(CollectedMdev(
            uuid=canonical_uuid(mdev["uuid"]), gpu=canonical_address(mdev["gpu"]),
            type=mdev.get("type"),
            instance=canonical_uuid(mdev["instance"]) if mdev.get("instance") else None)
            for mdev in document.get("mdevs") or []),
        errors=tuple(document.get("errors") or ()))


def load_collected_dir(directory: str) -> dict[str, CollectedHost]:
    """Every collected file in ``directory``, by host; two files of one host are refused."""
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(YAML_SUFFIXES))
    except OSError as error:
        raise HostDescriptionError(directory, "", error.strerror or str(error)) from error
    hosts: dict[str, CollectedHost] = {}
    for name in names:
        path = os.path.join(directory, name)
        collected = from_document(read_yaml(path), path)
        if collected.host in hosts:
            raise HostDescriptionError(path, "host", f"host {collected.host} is also collected "
                                       f"in {hosts[collected.host].path}")
        hosts[collected.host] = collected
    return hosts


def dump(collected: CollectedHost) -> str:
    return to_yaml(to_document(collected))
