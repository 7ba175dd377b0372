"""RequestSpec: the request being scheduled, in the shape nova's filters read.

Only what filters and weighers consult is modelled. ``scheduler_hints``
values are lists, as nova stores them; ``get_scheduler_hint`` unwraps
one-element lists the way nova's RequestSpec does.
"""

from __future__ import annotations

import uuid as uuid_mod
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.numa import InstanceTopology
from nova_reshape.scheduler.pci import PciRequest
from nova_reshape.scheduler.request_group import RequestGroup

CELL_NAMESPACE = uuid_mod.UUID("6b1a0c0e-4d4c-4f39-9a53-2f0d7a3c1b11")


def cell_uuid(name: str) -> str:
    """Stable uuid of a cell named ``name`` (explain derives HostState.cell_uuid)."""
    return str(uuid_mod.uuid5(CELL_NAMESPACE, name))


@dataclass
class ImageMeta:
    """``properties`` holds coerced ImageMetaProps values (see image.py)."""

    id: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    #: Glance's ``disk_format`` (``qcow2``, ``raw``...): require_image_type_support.
    disk_format: str | None = None


@dataclass
class InstanceGroup:
    name: str | None = None
    uuid: str | None = None
    policy: str | None = None
    rules: dict[str, Any] = field(default_factory=dict)
    members: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)

    @property
    def policies(self) -> list[str]:
        """nova's legacy list form of ``policy``."""
        return [self.policy] if self.policy else []


@dataclass
class Destination:
    """nova's RequestSpec.requested_destination.

    ``aggregates`` holds comma-joined OR-lists of aggregate uuids (one entry
    per list, as nova's prefilters append them); ``forbidden_aggregates``
    the aggregates no host may be in. Both end up as ``member_of`` in the
    Placement query.
    """

    host: str | None = None
    node: str | None = None
    cell: str | None = None
    allow_cross_cell_move: bool = False
    aggregates: list[str] | None = None
    forbidden_aggregates: set[str] | None = None

    def require_aggregates(self, aggregates: list[str]) -> None:
        """AND one more OR-list of aggregates (nova's require_aggregates)."""
        self.aggregates = (self.aggregates or []) + [",".join(aggregates)]

    def forbid_aggregates(self, aggregates: list[str]) -> None:
        """No host may be in any of these (nova's append_forbidden_aggregates)."""
        self.forbidden_aggregates = set(self.forbidden_aggregates or ()) | set(aggregates)

    @property
    def cell_uuid(self) -> str | None:
        return cell_uuid(self.cell) if self.cell else None


@dataclass(frozen=True)
class RequestedNetwork:
    """One ``--nic`` of the boot request: a network, or an existing port."""

    network_id: str | None = None
    port_id: str | None = None


@dataclass
class Retry:
    num_attempts: int = 1
    hosts: list[list[str]] = field(default_factory=list)


@dataclass
class RequestSpec:
    flavor: Flavor = field(default_factory=Flavor)
    image: ImageMeta = field(default_factory=ImageMeta)
    project_id: str = "project"
    user_id: str = "user"
    availability_zone: str | None = None
    num_instances: int = 1
    instance_uuid: str | None = None
    scheduler_hints: dict[str, list[Any]] = field(default_factory=dict)
    instance_group: InstanceGroup | None = None
    requested_destination: Destination | None = None
    ignore_hosts: list[str] | None = None
    force_hosts: list[str] | None = None
    force_nodes: list[str] | None = None
    retry: Retry | None = None
    pci_requests: list[PciRequest] = field(default_factory=list)
    numa_topology: InstanceTopology | None = None
    is_bfv: bool = False
    #: The requested NICs; None when the request named no network (nova then
    #: allocates the network after scheduling and routed_networks_filter passes).
    requested_networks: list[RequestedNetwork] | None = None
    #: RequestGroups from outside the flavor (device profiles, ports, PCI).
    requested_resources: list[RequestGroup] = field(default_factory=list)
    #: Traits the root (compute node) provider must have / must not have.
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)

    def get_request_group_mapping(self) -> dict[str, list[str]]:
        """``{requester_id: provider_uuids}`` of the requested_resources groups."""
        return {group.requester_id: list(group.provider_uuids)
                for group in self.requested_resources
                if group.requester_id and group.provider_uuids}

    def get_scheduler_hint(self, name: str, default: Any = None) -> Any:
        """A hint's value; one-element lists are unwrapped as nova does."""
        value = self.scheduler_hints.get(name, default)
        if isinstance(value, list) and len(value) == 1:
            return value[0]
        return value

    @property
    def is_rebuild(self) -> bool:
        return self.scheduler_hints.get("_nova_check_type") == ["rebuild"]
