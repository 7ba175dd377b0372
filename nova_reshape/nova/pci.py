"""nova's PCI vocabulary: addresses, device types, devices, free pools and requests,
and which devices belong to Neutron.

Frozen records of what nova keeps in ``pci_devices``,
``compute_nodes.pci_stats`` and ``instance_extra.pci_requests``; parsing
them is :mod:`nova_reshape.novadb.devices`'.

One rule, :func:`neutron_tags`, decides whether a PCI device is Neutron's
rather than nova's to report to Placement, whatever the tags come from: a
``[pci] device_spec`` entry of nova.conf, a device pool of nova's database
(``compute_nodes.pci_stats``), the spec of a neutron port's PCI request, or
a host description. It is nova 34's rule: only a ``physical_network`` tag
hands a device to Neutron (its SR-IOV ports use it); nova never reports such
a device to Placement and deletes a provider it finds for one at start, so
it gets no provider of this tool and the allocations of instances holding it
through ports stay where they are. ``remote_managed`` (a SmartNIC DPU's VF)
is recorded with it but decides nothing: nova accepts it with or without a
``physical_network`` and reports a ``remote_managed`` device without one like
any other, a provider under the compute node and an allocation for the
instance holding it, through a port or a flavor alias.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

#: The Neutron tags of a device (only the first hands it to Neutron).
PHYSICAL_NETWORK, REMOTE_MANAGED = "physical_network", "remote_managed"
#: The strings nova (oslo's bool_from_string) reads as true.
_TRUE_STRINGS = frozenset({"1", "t", "true", "on", "y", "yes"})


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

    @property
    def neutron(self) -> NeutronTags:
        """The pool's tags that hand its devices to Neutron (see :func:`neutron_tags`)."""
        return neutron_tags(self.tags)

    def may_hold(self, device: PciDevice) -> bool:
        """Whether ``device`` can be one of the pool's: same vendor and product, and
        the same NUMA node, ``dev_type``, ``address`` (the PF's, for a VF: pools
        are split per device or PF since nova 26) and ``parent_ifname`` where
        the pool records them."""
        if (int(self.vendor_id, 16), int(self.product_id, 16)) != \
                (int(device.vendor_id, 16), int(device.product_id, 16)):
            return False
        if None not in (self.numa_node, device.numa_node) and self.numa_node != device.numa_node:
            return False
        recorded = {"dev_type": device.dev_type,
                    "address": canonical_address(device.parent_addr or device.address),
                    "parent_ifname": device.extra_info.get("parent_ifname")}
        return all(recorded[key] is None or canonical_address(str(self.tags[key])) ==
                   canonical_address(recorded[key]) for key in recorded if key in self.tags)


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


def is_true(value: object) -> bool:
    """A tag value as nova reads a boolean tag (``True``, ``"true"``, ``"yes"``, ``1``)."""
    if isinstance(value, bool):
        return value
    return value is not None and str(value).strip().lower() in _TRUE_STRINGS


class NeutronTags(NamedTuple):
    """A device's Neutron tags: ``physical_network`` makes it Neutron's;
    ``remote_managed`` is recorded (only remote-managed ports may use the device)
    but leaves it nova's to report, as nova 34 does."""

    physical_network: str | None = None
    remote_managed: bool = False

    @property
    def belong_to_neutron(self) -> bool:
        """nova 34 skips exactly the devices tagged with a physical network."""
        return bool(self.physical_network)

    @property
    def tagged(self) -> bool:
        """Whether any Neutron tag is set (what a port request spec records)."""
        return self.belong_to_neutron or self.remote_managed

    def __str__(self) -> str:
        parts = [f"physical_network {self.physical_network}"] if self.physical_network else []
        if self.remote_managed:
            parts.append("remote_managed")
        return ", ".join(parts) or "no neutron tag"


def neutron_tags(tags: Mapping[str, object]) -> NeutronTags:
    """The Neutron tags among ``tags`` (a device_spec entry's, a pool's, a port
    request spec's or a host description device's keys and values)."""
    network = tags.get(PHYSICAL_NETWORK)
    return NeutronTags(physical_network=str(network) if network else None,
                       remote_managed=is_true(tags.get(REMOTE_MANAGED)))
