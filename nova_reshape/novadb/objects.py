"""Parse the versioned-object JSON nova keeps in its cell database's text columns.

nova serializes an object as an *envelope*::

    {"nova_object.name": "NUMACell", "nova_object.namespace": "nova",
     "nova_object.version": "1.5", "nova_object.data": {...},
     "nova_object.changes": [...]}

Nested objects are envelopes inside ``data``; set fields are JSON lists;
dict-of-integer fields have string keys. :func:`unwrap` turns any such
document into :class:`VersionedObject` trees (``changes`` is bookkeeping
and ignored). The ``parse_*`` functions then build small frozen records of
the objects the offline tools read, accepting every version a long-lived
cloud may still hold:

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

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.numa import parse_cpu_spec

NAME = "nova_object.name"
VERSION = "nova_object.version"
DATA = "nova_object.data"


class ObjectFormatError(ValueError):
    """A serialized nova object is not what its name and version promise."""


class CpuPolicy(enum.StrEnum):
    """nova's ``CPUAllocationPolicy`` (hw:cpu_policy)."""

    SHARED = "shared"
    DEDICATED = "dedicated"
    MIXED = "mixed"


@dataclass(frozen=True)
class VersionedObject:
    """One unwrapped envelope: object name, ``(major, minor)`` version, fields."""

    name: str
    version: tuple[int, int]
    data: Mapping[str, Any]

    def at_least(self, major: int, minor: int) -> bool:
        return self.version >= (major, minor)


def version_tuple(text: Any) -> tuple[int, int]:
    """``"1.5"`` -> ``(1, 5)``; ObjectFormatError when not ``major.minor``."""
    major, _, minor = str(text).partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError as error:
        raise ObjectFormatError(f"bad object version {text!r}") from error


def unwrap(primitive: Any) -> Any:
    """Replace every envelope in a decoded JSON document by a VersionedObject."""
    if isinstance(primitive, list):
        return [unwrap(item) for item in primitive]
    if not isinstance(primitive, dict):
        return primitive
    if NAME not in primitive:
        return {key: unwrap(value) for key, value in primitive.items()}
    data = primitive.get(DATA, {})
    if not isinstance(data, dict):
        raise ObjectFormatError(f"{primitive[NAME]}: nova_object.data is not a mapping")
    return VersionedObject(name=str(primitive[NAME]),
                           version=version_tuple(primitive.get(VERSION, "1.0")),
                           data={key: unwrap(value) for key, value in data.items()})


def load_json(text: str | bytes | None, what: str) -> Any:
    """Decode a column's JSON text (None and "" stay None)."""
    if text is None or text in ("", b""):
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError) as error:
        raise ObjectFormatError(f"{what} is not JSON: {error}") from error


def expect(value: Any, name: str) -> VersionedObject:
    """``value`` as a VersionedObject named ``name``, or ObjectFormatError."""
    if not isinstance(value, VersionedObject):
        raise ObjectFormatError(f"expected a {name} object, found {type(value).__name__}")
    if value.name != name:
        raise ObjectFormatError(f"expected a {name} object, found {value.name}")
    return value


def _int_set(value: Any, what: str) -> frozenset[int]:
    if value is None:
        return frozenset()
    if not isinstance(value, list | tuple):
        raise ObjectFormatError(f"{what} is not a list of CPU numbers")
    try:
        return frozenset(int(item) for item in value)
    except (TypeError, ValueError) as error:
        raise ObjectFormatError(f"{what} holds a value that is not a number") from error


def _cpu_spec(value: Any, what: str) -> frozenset[int]:
    try:
        return frozenset(parse_cpu_spec(str(value or "")))
    except ScenarioError as error:
        raise ObjectFormatError(f"{what}: {error}") from error


def _required(data: Mapping[str, Any], key: str, what: str) -> Any:
    if key not in data or data[key] is None:
        raise ObjectFormatError(f"{what} has no {key}")
    return data[key]


def _policy(value: Any, what: str) -> CpuPolicy | None:
    if value is None:
        return None
    try:
        return CpuPolicy(value)
    except ValueError as error:
        raise ObjectFormatError(f"{what}: unknown cpu_policy {value!r}") from error


# -- host NUMA topology (compute_nodes.numa_topology) ----------------------------


@dataclass(frozen=True)
class MemPages:
    """One ``NUMAPagesTopology``: pages of one size on a host cell."""

    size_kb: int
    total: int
    used: int = 0
    reserved: int = 0


@dataclass(frozen=True)
class HostNumaCell:
    """One host ``NUMACell``.

    ``cpuset`` and ``pcpuset`` are as stored. Since NUMACell 1.4 ``cpuset``
    holds the CPUs for shared guests and ``pcpuset`` those for pinned
    guests; a host without ``[compute] cpu_dedicated_set`` stores the same
    CPUs in both (nova's legacy pinning mode, where pinned guests still
    consume VCPU). Before 1.4 only ``cpuset`` exists. :attr:`shared` and
    :attr:`dedicated` give the split the inventory follows.
    """

    id: int
    cpuset: frozenset[int]
    memory_mb: int
    pcpuset: frozenset[int] = frozenset()
    pinned_cpus: frozenset[int] = frozenset()
    siblings: tuple[frozenset[int], ...] = ()
    mempages: tuple[MemPages, ...] = ()
    socket: int | None = None
    #: False for NUMACell before 1.4 (and pre-Liberty data): no pcpuset field.
    has_pcpuset: bool = True
    version: tuple[int, int] = (1, 5)
    #: vCPUs and MB the resource tracker last counted as used on the cell.
    cpu_usage: int = 0
    memory_usage: int = 0

    @property
    def shared(self) -> frozenset[int]:
        """CPUs that back VCPU: ``cpuset``."""
        return self.cpuset

    @property
    def dedicated(self) -> frozenset[int]:
        """CPUs that back PCPU: ``pcpuset`` minus CPUs also in ``cpuset`` (legacy mode)."""
        return self.pcpuset - self.cpuset

    @property
    def legacy_pinning(self) -> bool:
        """True when pinned guests draw on the shared CPUs (no separate dedicated set)."""
        return not self.has_pcpuset or bool(self.cpuset & self.pcpuset)


@dataclass(frozen=True)
class HostNumaTopology:
    cells: tuple[HostNumaCell, ...]
    #: True when the column held the pre-Liberty unversioned form.
    legacy_format: bool = False


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
        pages.append(MemPages(size_kb=int(_required(page, "size_kb", "NUMAPagesTopology")),
                              total=int(_required(page, "total", "NUMAPagesTopology")),
                              used=int(page.get("used") or 0),
                              reserved=int(page.get("reserved") or 0)))
    has_pcpuset = cell.at_least(1, 4) or "pcpuset" in data
    return HostNumaCell(
        id=int(_required(data, "id", what)),
        cpuset=_int_set(data.get("cpuset"), f"{what} cpuset"),
        pcpuset=_int_set(data.get("pcpuset"), f"{what} pcpuset"),
        memory_mb=int(_required(data, "memory", what)),
        pinned_cpus=_int_set(data.get("pinned_cpus"), f"{what} pinned_cpus"),
        siblings=tuple(_int_set(item, f"{what} siblings") for item in data.get("siblings") or []),
        mempages=tuple(pages), socket=data.get("socket"), has_pcpuset=has_pcpuset,
        version=cell.version, cpu_usage=int(data.get("cpu_usage") or 0),
        memory_usage=int(data.get("memory_usage") or 0))


def _legacy_host_topology(document: Mapping[str, Any]) -> HostNumaTopology:
    cells = []
    for raw in document.get("cells") or []:
        what = f"legacy NUMA cell {raw.get('id')}"
        cells.append(HostNumaCell(
            id=int(_required(raw, "id", what)), cpuset=_cpu_spec(raw.get("cpus"), what),
            memory_mb=int((raw.get("mem") or {}).get("total", 0)), has_pcpuset=False,
            version=(0, 0)))
    return HostNumaTopology(cells=tuple(cells), legacy_format=True)


# -- PCI device pools (compute_nodes.pci_stats) -------------------------------------


@dataclass(frozen=True)
class PciDevicePool:
    """One ``PciDevicePool``: ``count`` free devices alike in vendor, product, NUMA
    node and the device_spec tags (physical_network, trusted, dev_type, ...)."""

    vendor_id: str
    product_id: str
    count: int
    numa_node: int | None = None
    tags: Mapping[str, str] = field(default_factory=dict)


def parse_pci_pools(text: str | None) -> tuple[PciDevicePool, ...]:
    """``compute_nodes.pci_stats`` (a ``PciDevicePoolList``) -> its pools."""
    document = load_json(text, "PciDevicePoolList")
    if document is None:
        return ()
    pools = expect(unwrap(document), "PciDevicePoolList").data.get("objects") or []
    if not isinstance(pools, list):
        raise ObjectFormatError("PciDevicePoolList objects is not a list")
    parsed = []
    for item in pools:
        data = expect(item, "PciDevicePool").data
        tags = data.get("tags") or {}
        if not isinstance(tags, dict):
            raise ObjectFormatError("PciDevicePool tags is not a mapping")
        parsed.append(PciDevicePool(
            vendor_id=str(_required(data, "vendor_id", "PciDevicePool")),
            product_id=str(_required(data, "product_id", "PciDevicePool")),
            count=int(_required(data, "count", "PciDevicePool")),
            numa_node=data.get("numa_node"), tags={str(k): v for k, v in tags.items()}))
    return tuple(parsed)


# -- instance NUMA topology (instance_extra.numa_topology) -----------------------


@dataclass(frozen=True)
class InstanceNumaCell:
    """One ``InstanceNUMACell``: the guest cell and the host cell (``id``) it is on.

    ``cpuset`` holds the guest's shared vCPUs and ``pcpuset`` its pinned
    ones, whatever the stored version: a cell from before 1.5 with policy
    dedicated (or, before 1.3, with a pinning) had its pinned vCPUs in
    ``cpuset`` and is read as nova's own data migration rewrites it.
    """

    id: int
    cpuset: frozenset[int]
    pcpuset: frozenset[int]
    memory_mb: int
    pagesize: int | None = None
    cpu_policy: CpuPolicy | None = None
    cpu_thread_policy: str | None = None
    #: guest vCPU -> host CPU, for pinned cells.
    cpu_pinning: Mapping[int, int] = field(default_factory=dict)
    version: tuple[int, int] = (1, 6)

    @property
    def pinned(self) -> bool:
        """Dedicated policy, or a pinning recorded before policies were stored."""
        if self.cpu_policy is not None:
            return self.cpu_policy is CpuPolicy.DEDICATED
        return bool(self.cpu_pinning)


@dataclass(frozen=True)
class InstanceNumaTopology:
    cells: tuple[InstanceNumaCell, ...]
    emulator_threads_policy: str | None = None
    legacy_format: bool = False

    @property
    def pinned(self) -> bool:
        """Some cell of the guest is pinned with the dedicated policy."""
        return any(cell.pinned for cell in self.cells)


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
                id=int(_required(raw, "id", what)), cpuset=_cpu_spec(raw.get("cpus"), what),
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
    cpuset = _int_set(data.get("cpuset"), f"{what} cpuset")
    pcpuset = _int_set(data.get("pcpuset"), f"{what} pcpuset")
    policy = _policy(data.get("cpu_policy"), what)
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
        id=int(_required(data, "id", what)), cpuset=cpuset, pcpuset=pcpuset,
        memory_mb=int(_required(data, "memory", what)), pagesize=data.get("pagesize"),
        cpu_policy=policy, cpu_thread_policy=data.get("cpu_thread_policy"),
        cpu_pinning=pinning, version=cell.version)


# -- PCI requests (instance_extra.pci_requests) ----------------------------------


@dataclass(frozen=True)
class PciRequest:
    """One ``InstancePCIRequest``: ``count`` devices matching any of ``spec``."""

    count: int
    spec: tuple[Mapping[str, str | None], ...]
    alias_name: str | None = None
    request_id: str | None = None
    requester_id: str | None = None
    numa_policy: str | None = None

    @property
    def from_neutron_port(self) -> bool:
        """nova's rule: a request without an alias comes from an SR-IOV port."""
        return self.alias_name is None


def parse_pci_requests(text: str | None) -> tuple[PciRequest, ...]:
    """``instance_extra.pci_requests`` -> its requests (empty when unset)."""
    document = load_json(text, "InstancePCIRequests")
    if document is None:
        return ()
    document = unwrap(document)
    if isinstance(document, VersionedObject):
        document = expect(document, "InstancePCIRequests").data.get("requests") or []
    if not isinstance(document, list):
        raise ObjectFormatError("InstancePCIRequests is not a list of requests")
    return tuple(_pci_request(item) for item in document)


def _pci_request(item: Any) -> PciRequest:
    if isinstance(item, VersionedObject):
        item = expect(item, "InstancePCIRequest").data
    if not isinstance(item, dict):
        raise ObjectFormatError("an InstancePCIRequest is not a mapping")
    spec = item.get("spec") or []
    if not isinstance(spec, list) or not all(isinstance(entry, dict) for entry in spec):
        raise ObjectFormatError("InstancePCIRequest spec is not a list of mappings")
    return PciRequest(count=int(_required(item, "count", "InstancePCIRequest")),
                      spec=tuple(spec), alias_name=item.get("alias_name"),
                      request_id=item.get("request_id"), requester_id=item.get("requester_id"),
                      numa_policy=item.get("numa_policy"))


# -- flavors (instance_extra.flavor) ---------------------------------------------


@dataclass(frozen=True)
class Flavor:
    """The ``Flavor`` fields a placement decision depends on."""

    flavorid: str
    name: str | None
    vcpus: int
    memory_mb: int
    root_gb: int = 0
    ephemeral_gb: int = 0
    swap: int = 0
    extra_specs: Mapping[str, str] = field(default_factory=dict)

    @property
    def cpu_policy(self) -> CpuPolicy | None:
        return _policy(self.extra_specs.get("hw:cpu_policy"), f"flavor {self.flavorid}")


@dataclass(frozen=True)
class FlavorInfo:
    """An instance's flavors: current, and old/new during a resize."""

    cur: Flavor
    old: Flavor | None = None
    new: Flavor | None = None


def parse_flavor(value: Any) -> Flavor:
    """One ``Flavor`` envelope (already decoded JSON or unwrapped)."""
    data = expect(unwrap(value), "Flavor").data
    specs = data.get("extra_specs") or {}
    if not isinstance(specs, dict):
        raise ObjectFormatError("Flavor extra_specs is not a mapping")
    return Flavor(flavorid=str(data.get("flavorid", "")), name=data.get("name"),
                  vcpus=int(_required(data, "vcpus", "Flavor")),
                  memory_mb=int(_required(data, "memory_mb", "Flavor")),
                  root_gb=int(data.get("root_gb") or 0),
                  ephemeral_gb=int(data.get("ephemeral_gb") or 0),
                  swap=int(data.get("swap") or 0),
                  extra_specs={str(key): str(item) for key, item in specs.items()})


def parse_flavor_info(text: str | None) -> FlavorInfo | None:
    """``instance_extra.flavor`` -> FlavorInfo (None when unset)."""
    document = load_json(text, "flavor")
    if document is None:
        return None
    if not isinstance(document, dict) or "cur" not in document:
        raise ObjectFormatError("flavor has no 'cur' flavor")
    return FlavorInfo(cur=parse_flavor(document["cur"]),
                      old=parse_flavor(document["old"]) if document.get("old") else None,
                      new=parse_flavor(document["new"]) if document.get("new") else None)


# -- PCI devices -------------------------------------------------------------------


class PciDeviceType(enum.StrEnum):
    """nova's ``PciDeviceType`` (the ``dev_type`` column)."""

    PCI = "type-PCI"
    PF = "type-PF"
    VF = "type-VF"
    VDPA = "vdpa"


@dataclass(frozen=True)
class PciDevice:
    """A ``pci_devices`` row / ``PciDevice`` object: one device nova may pass through.

    ``instance_uuid`` is the consumer that holds (``allocated``) or has
    claimed it (``claimed``, e.g. on a resize's destination).
    """

    compute_node_id: int | None
    address: str
    vendor_id: str
    product_id: str
    dev_type: str
    status: str
    instance_uuid: str | None = None
    parent_addr: str | None = None
    numa_node: int | None = None
    uuid: str | None = None
    label: str | None = None
    request_id: str | None = None
    extra_info: Mapping[str, str] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return self.instance_uuid is not None and self.status in ("allocated", "claimed")


def parse_extra_info(text: str | None) -> dict[str, str]:
    """``pci_devices.extra_info`` JSON -> dict (empty when unset)."""
    document = load_json(text, "PciDevice extra_info")
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ObjectFormatError("PciDevice extra_info is not a mapping")
    return {str(key): value if isinstance(value, str) else json.dumps(value)
            for key, value in document.items()}


def parse_pci_device(value: Any) -> PciDevice:
    """One ``PciDevice`` envelope (e.g. from a migration context)."""
    data = expect(unwrap(value), "PciDevice").data
    extra = data.get("extra_info") or {}
    return PciDevice(
        compute_node_id=data.get("compute_node_id"),
        address=str(_required(data, "address", "PciDevice")),
        vendor_id=str(_required(data, "vendor_id", "PciDevice")),
        product_id=str(_required(data, "product_id", "PciDevice")),
        dev_type=str(_required(data, "dev_type", "PciDevice")),
        status=str(_required(data, "status", "PciDevice")),
        instance_uuid=data.get("instance_uuid"), parent_addr=data.get("parent_addr"),
        numa_node=data.get("numa_node"), uuid=data.get("uuid"), label=data.get("label"),
        request_id=data.get("request_id"),
        extra_info=dict(extra) if isinstance(extra, dict) else {})
