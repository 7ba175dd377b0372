"""PCI addresses as nova writes and compares them, and which devices belong to Neutron.

One rule, :func:`neutron_tags`, decides whether a PCI device is Neutron's
rather than nova's to report to Placement, whatever the tags come from: a
``[pci] device_spec`` entry of nova.conf, a device pool of nova's database
(``compute_nodes.pci_stats``), the spec of a neutron port's PCI request, or
a host description. nova never reports a device tagged with a
``physical_network`` to Placement (neutron's SR-IOV ports use it; nova
deletes a provider it finds for one at start), and a ``remote_managed``
device (a SmartNIC DPU's VF) is only ever handed to neutron ports; neither
gets a provider of this tool, and the allocations of instances holding
them through ports stay where they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

#: The tags that hand a device to Neutron.
PHYSICAL_NETWORK, REMOTE_MANAGED = "physical_network", "remote_managed"
#: The strings nova (oslo's bool_from_string) reads as true.
_TRUE_STRINGS = frozenset({"1", "t", "true", "on", "y", "yes"})


def canonical_address(address: str) -> str:
    """PCI addresses compare lower-cased (``0000:D8:00.0`` == ``0000:d8:00.0``)."""
    return address.lower()


def is_true(value: object) -> bool:
    """A tag value as nova reads a boolean tag (``True``, ``"true"``, ``"yes"``, ``1``)."""
    if isinstance(value, bool):
        return value
    return value is not None and str(value).strip().lower() in _TRUE_STRINGS


class NeutronTags(NamedTuple):
    """The tags of a device that make it Neutron's (none: the device is nova's)."""

    physical_network: str | None = None
    remote_managed: bool = False

    @property
    def belong_to_neutron(self) -> bool:
        return bool(self.physical_network) or self.remote_managed

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
