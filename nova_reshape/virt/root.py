"""The compute node root's CPU, memory and disk records as nova.conf sets them.

At every start nova's libvirt driver rewrites the root's ``VCPU``,
``MEMORY_MB`` and ``DISK_GB`` records with the allocation ratio and the
reservation nova.conf gives. :func:`configured` applies the same rules to
the records the root already has (the totals are the hypervisor's, which
a host description does not carry, so they are kept):

* ratio: ``[DEFAULT] <cpu|ram|disk>_allocation_ratio`` when set (not 0);
  else the record's current ratio; a new record gets
  ``initial_<...>_allocation_ratio``;
* reserved: ``reserved_host_cpus``, ``reserved_host_memory_mb``, and
  ``reserved_host_disk_mb`` rounded up to whole GB.

Without nova.conf nothing is changed: the values Placement holds are the
best knowledge there is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import os_resource_classes as orc

from nova_reshape.nova.conf.compute import NovaConf

#: class -> nova.conf's word in ``<word>_allocation_ratio``.
RATIO_NAMES = {orc.VCPU: "cpu", orc.MEMORY_MB: "ram", orc.DISK_GB: "disk"}


def ratio(conf: NovaConf, resource_class: str, current: Mapping[str, Any] | None) -> float:
    """nova's allocation ratio for ``resource_class`` given its current record (or None)."""
    word = RATIO_NAMES[resource_class]
    configured = getattr(conf, f"{word}_allocation_ratio")
    if configured:
        return float(configured)
    if current is None:
        return float(getattr(conf, f"initial_{word}_allocation_ratio"))
    return float(current.get("allocation_ratio", 1.0))


def reserved(conf: NovaConf, resource_class: str) -> int:
    """nova's reservation for ``resource_class``."""
    if resource_class == orc.VCPU:
        return conf.reserved_host_cpus
    if resource_class == orc.MEMORY_MB:
        return conf.reserved_host_memory_mb
    return math.ceil(conf.reserved_host_disk_mb / 1024)


def configured(inventory: Mapping[str, Mapping[str, Any]],
               conf: NovaConf | None) -> dict[str, dict[str, Any]]:
    """``inventory`` with nova.conf's ratio and reservation on VCPU/MEMORY_MB/DISK_GB."""
    result = {rc: dict(record) for rc, record in inventory.items()}
    if conf is None:
        return result
    for rc, record in result.items():
        if rc in RATIO_NAMES:
            record["allocation_ratio"] = ratio(conf, rc, inventory[rc])
            record["reserved"] = reserved(conf, rc)
    return result
