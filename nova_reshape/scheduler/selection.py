"""Selection: one destination (or alternate) handed back by select_destinations.

Field names and meanings are nova's Selection v1.1: the
compute node, its service host and node name, its cell, the limits the
filters computed, the allocation request (a **JSON string** of
``{"allocations": ..., "mappings": ...}``, ``"null"`` when nothing was
fetched from Placement) with its microversion, and the host's availability
zone. ``accel_uuids`` is a nova-reshape addition: the ARQs bound for the
instance when the manager also did the conductor's accelerator step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.scheduler.host_state import HostState

#: nova's ``[DEFAULT] default_availability_zone``.
DEFAULT_AVAILABILITY_ZONE = "nova"


@dataclass(frozen=True)
class SchedulerLimits:
    """Per-host limits filters set (``host_state.limits``); None when not set."""

    numa_topology: Any = None
    vcpu: int | None = None
    disk_gb: int | None = None
    memory_mb: int | None = None

    @classmethod
    def from_dict(cls, limits: dict[str, Any]) -> SchedulerLimits:
        return cls(numa_topology=limits.get("numa_topology"), vcpu=limits.get("vcpu"),
                   disk_gb=limits.get("disk_gb"), memory_mb=limits.get("memory_mb"))

    def to_dict(self) -> dict[str, Any]:
        """Only the limits that are set (nova's legacy ``limits`` dict)."""
        return {name: value for name, value in (
            ("numa_topology", self.numa_topology), ("vcpu", self.vcpu),
            ("disk_gb", self.disk_gb), ("memory_mb", self.memory_mb)) if value is not None}


@dataclass
class Selection:
    compute_node_uuid: str | None
    service_host: str
    nodename: str
    cell_uuid: str | None
    limits: SchedulerLimits
    allocation_request: str | None
    allocation_request_version: str | None
    availability_zone: str | None
    accel_uuids: list[str] = field(default_factory=list)

    @classmethod
    def from_host_state(cls, host: HostState, allocation_request: dict[str, Any] | None = None,
                        allocation_request_version: str | None = None,
                        default_availability_zone: str = DEFAULT_AVAILABILITY_ZONE
                        ) -> Selection:
        """A Selection for ``host`` carrying ``allocation_request`` (claimed or not)."""
        zones = host.aggregate_values("availability_zone")
        return cls(
            compute_node_uuid=host.uuid, service_host=host.host, nodename=host.nodename,
            cell_uuid=host.cell_uuid, limits=SchedulerLimits.from_dict(host.limits),
            allocation_request=json.dumps(allocation_request),
            allocation_request_version=allocation_request_version,
            availability_zone=zones[0] if zones else default_availability_zone)

    @property
    def allocation_request_dict(self) -> dict[str, Any] | None:
        """The allocation request parsed back (None for ``"null"``)."""
        return json.loads(self.allocation_request) if self.allocation_request else None

    def to_legacy_dict(self) -> dict[str, Any]:
        """What a ``return_objects=False`` caller gets: host, nodename, limits."""
        return {"host": self.service_host, "nodename": self.nodename,
                "limits": self.limits.to_dict()}
