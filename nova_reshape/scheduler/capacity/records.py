"""The capacity table: per flavor, per host whether it is valid and how many more fit.

:meth:`CapacityReport.to_dict` is the documented, stable JSON document of
``nova-reshape-scheduler capacity --format json``::

    {"flavors": [{"name": F, "hosts": [{"name": NODENAME, "valid": true|false,
                                        "fits": N, "reason": "..."}],
                  "total": N}]}

A valid host's ``reason`` is the empty string; an invalid host fits 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class HostFit(NamedTuple):
    """One host (a compute node's root provider) for one flavor."""

    #: The root provider's name: nova's hypervisor hostname (the node name).
    name: str
    uuid: str
    valid: bool
    #: How many more instances of the flavor alone the host takes (0 when invalid).
    fits: int
    #: Why the host is not valid: the Placement reason or the filter's ("" when valid).
    reason: str = ""


@dataclass
class FlavorCapacity:
    """Every host's verdict for one flavor; ``notes`` qualify the answer."""

    name: str
    hosts: list[HostFit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(host.fits for host in self.hosts)

    def valid_hosts(self) -> dict[str, HostFit]:
        """uuid -> the host, for the valid ones."""
        return {host.uuid: host for host in self.hosts if host.valid}

    def by_uuid(self) -> dict[str, HostFit]:
        return {host.uuid: host for host in self.hosts}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name,
                "hosts": [{"name": host.name, "valid": host.valid, "fits": host.fits,
                           "reason": host.reason} for host in self.hosts],
                "total": self.total}


@dataclass
class CapacityReport:
    """The table for every flavor asked, in the order asked; ``notes`` apply to all."""

    flavors: list[FlavorCapacity] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[FlavorCapacity]:
        return iter(self.flavors)

    def by_name(self) -> dict[str, FlavorCapacity]:
        return {flavor.name: flavor for flavor in self.flavors}

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON document (see the module)."""
        return {"flavors": [flavor.to_dict() for flavor in self.flavors]}
