"""nova's PCI vocabulary: addresses, device types, devices, free pools and requests.

Frozen records of what nova keeps in ``pci_devices``,
``compute_nodes.pci_stats`` and ``instance_extra.pci_requests``; parsing
them is :mod:`nova_reshape.novadb.devices`'.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field


def canonical_address(address: str) -> str:
    """PCI addresses compare lower-cased (``0000:D8:00.0`` == ``0000:d8:00.0``)."""
    return address.lower()


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


@dataclass(frozen=True)
class PciDevicePool:
    """One ``PciDevicePool``: ``count`` free devices alike in vendor, product, NUMA
    node and the device_spec tags (physical_network, trusted, dev_type, ...)."""

    vendor_id: str
    product_id: str
    count: int
    numa_node: int | None = None
    tags: Mapping[str, str] = field(default_factory=dict)


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
