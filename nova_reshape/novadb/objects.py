"""Parse the versioned-object JSON nova keeps in its cell database's text columns.

nova serializes an object as an *envelope*::

    {"nova_object.name": "NUMACell", "nova_object.namespace": "nova",
     "nova_object.version": "1.5", "nova_object.data": {...},
     "nova_object.changes": [...]}

Nested objects are envelopes inside ``data``; set fields are JSON lists;
dict-of-integer fields have string keys. :func:`unwrap` turns any such
document into :class:`VersionedObject` trees (``changes`` is bookkeeping
and ignored). The ``parse_*`` functions then build the frozen records of
nova's vocabulary (:mod:`nova_reshape.nova.numa`, :mod:`nova_reshape.nova.pci`)
the offline tools read, accepting every version a long-lived cloud may
still hold:

* ``compute_nodes.numa_topology``: ``NUMATopology`` of ``NUMACell``
  (before 1.4 there is no ``pcpuset``: ``cpuset`` held every usable CPU),
  and the pre-Liberty unversioned ``{"cells": [{"cpus": "0-3", "mem":
  {"total": ...}}]}``;
* ``instance_extra.numa_topology``: ``InstanceNUMATopology`` of
  ``InstanceNUMACell`` (``cpu_pinning_raw`` since 1.2, ``cpu_policy``
  since 1.3, ``pcpuset`` since 1.5; before 1.5 a dedicated cell kept its
  pinned CPUs in ``cpuset``), and the pre-Liberty unversioned form;
* ``instance_extra.pci_requests``: a plain JSON list of request dicts
  (nova writes it without an envelope); an ``InstancePCIRequests``
  envelope is accepted too;
* ``instance_extra.flavor``: ``{"cur": Flavor, "old": ..., "new": ...}``;
* ``PciDevice`` envelopes (e.g. in a migration context).

Anything else wrong raises :class:`ObjectFormatError` naming the object and
the problem; callers add the row it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nova_reshape.nova.errors import ObjectFormatError
from nova_reshape.nova.flavor import CpuPolicy, policy_of
from nova_reshape.nova.numa import (
    HostNumaCell,
    HostNumaTopology,
    InstanceNumaCell,
    InstanceNumaTopology,
    MemPages,
)
from nova_reshape.novadb.devices import (  # noqa: F401 (this module is the parsers' one entry)
    parse_extra_info,
    parse_flavor,
    parse_flavor_info,
    parse_pci_device,
    parse_pci_pools,
    parse_pci_requests,
)
from nova_reshape.novadb.envelope import (  # noqa: F401
    DATA,
    NAME,
    VERSION,
    VersionedObject,
    cpu_spec,
    expect,
    int_set,
    load_json,
    required,
    unwrap,
    version_tuple,
)

# -- host NUMA topology (compute_nodes.numa_topology) ----------------------------


def parse_host_numa_topology(text: str | None) -> HostNumaTopology | None:
    """``compute_nodes.numa_topology`` -> HostNumaTopology (None when unset)."""
    document = load_json(text, "NUMATopology")
    if document is None:
        return None
    if isinstance(document, dict) and NAME not in document:
        return _legacy_host_topology(document)
    topology = expect(unwrap(document), "NUMATopology")
    cells = topology.data.get("cells") or []
    return HostNumaTopology(cells=tuple(_host_cell(cell) for cell in cells))


def _host_cell(value: Any) -> HostNumaCell:
    cell = expect(value, "NUMACell")
    data = cell.data
    what = f"NUMACell {data.get('id')}"
    pages = []
    for item in data.get("mempages") or []:
        page = expect(item, "NUMAPagesTopology").data
        pages.append(MemPages(size_kb=int(required(page, "size_kb", "NUMAPagesTopology")),
                              total=int(required(page, "total", "NUMAPagesTopology")),
                              used=int(page.get("used") or 0),
                              reserved=int(page.get("reserved") or 0)))
    has_pcpuset = cell.at_least(1, 4) or "pcpuset" in data
    return HostNumaCell(
        id=int(required(data, "id", what)),
        cpuset=int_set(data.get("cpuset"), f"{what} cpuset"),
        pcpuset=int_set(data.get("pcpuset"), f"{what} pcpuset"),
        memory_mb=int(required(data, "memory", what)),
        pinned_cpus=int_set(data.get("pinned_cpus"), f"{what} pinned_cpus"),
        siblings=tuple(int_set(item, f"{what} siblings") for item in data.get("siblings") or []),
        mempages=tuple(pages), socket=data.get("socket"), has_pcpuset=has_pcpuset,
        version=cell.version, cpu_usage=int(data.get("cpu_usage") or 0),
        memory_usage=int(data.get("memory_usage") or 0))


def _legacy_host_topology(document: Mapping[str, Any]) -> HostNumaTopology:
    cells = []
    for raw in document.get("cells") or []:
        what = f"legacy NUMA cell {raw.get('id')}"
        cells.append(HostNumaCell(
            id=int(required(raw, "id", what)), cpuset=cpu_spec(raw.get("cpus"), what),
            memory_mb=int((raw.get("mem") or {}).get("total", 0)), has_pcpuset=False,
            version=(0, 0)))
    return HostNumaTopology(cells=tuple(cells), legacy_format=True)


# -- instance NUMA topology (instance_extra.numa_topology) -----------------------


def parse_instance_numa_topology(text: str | None) -> InstanceNumaTopology | None:
    """``instance_extra.numa_topology`` -> InstanceNumaTopology (None when unset)."""
    document = load_json(text, "InstanceNUMATopology")
    if document is None:
        return None
    if isinstance(document, dict) and NAME not in document:
        cells = []
        for raw in document.get("cells") or []:
            what = f"legacy instance NUMA cell {raw.get('id')}"
            cells.append(InstanceNumaCell(
                id=int(required(raw, "id", what)), cpuset=cpu_spec(raw.get("cpus"), what),
                pcpuset=frozenset(), memory_mb=int((raw.get("mem") or {}).get("total", 0)),
                pagesize=raw.get("pagesize"), version=(0, 0)))
        return InstanceNumaTopology(cells=tuple(cells), legacy_format=True)
    topology = expect(unwrap(document), "InstanceNUMATopology")
    return InstanceNumaTopology(
        cells=tuple(_instance_cell(cell) for cell in topology.data.get("cells") or []),
        emulator_threads_policy=topology.data.get("emulator_threads_policy"))


def _instance_cell(value: Any) -> InstanceNumaCell:
    cell = expect(value, "InstanceNUMACell")
    data = cell.data
    what = f"InstanceNUMACell {data.get('id')}"
    cpuset = int_set(data.get("cpuset"), f"{what} cpuset")
    pcpuset = int_set(data.get("pcpuset"), f"{what} pcpuset")
    policy = policy_of(data.get("cpu_policy"), what)
    raw_pinning = data.get("cpu_pinning_raw") or {}
    try:
        pinning = {int(guest): int(host) for guest, host in raw_pinning.items()}
    except (AttributeError, TypeError, ValueError) as error:
        raise ObjectFormatError(f"{what}: cpu_pinning_raw is not a map of CPU numbers") \
            from error
    pinned_before_pcpuset = policy is CpuPolicy.DEDICATED or (policy is None and pinning)
    if "pcpuset" not in data and pinned_before_pcpuset:
        cpuset, pcpuset = frozenset(), cpuset
    return InstanceNumaCell(
        id=int(required(data, "id", what)), cpuset=cpuset, pcpuset=pcpuset,
        memory_mb=int(required(data, "memory", what)), pagesize=data.get("pagesize"),
        cpu_policy=policy, cpu_thread_policy=data.get("cpu_thread_policy"),
        cpu_pinning=pinning, version=cell.version)
