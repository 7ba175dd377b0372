"""HostState: what the scheduler knows about one compute node.

Attribute names are nova's, because filters and operators address them by
name (``capabilities:free_ram_mb``, JsonFilter ``$free_ram_mb``). The object
is mutable in exactly nova's ways: ``consume_from_request`` updates the
resource counters between the instances of one multi-create, and candidate
aware filters prune ``allocation_candidates``.

HostStates are built by a source (``scenario.py`` for explain, ``sources.py``
for Placement allocation candidates); nothing here knows where data came
from.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import operator
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler import numa as numa_mod
from nova_reshape.scheduler.pci import NumaPlacement, PciDeviceRequestFailed, PciDeviceStats

if TYPE_CHECKING:
    from nova_reshape.scheduler.request_spec import RequestSpec


@dataclass
class InstanceInfo:
    """An instance already on the host (uuid and, for the image weigher, its image).

    ``image_properties`` are coerced ImageMetaProps values (image.image_properties).
    """

    uuid: str
    image_id: str | None = None
    image_properties: dict[str, Any] = field(default_factory=dict)
    #: nova's stub ``Instance(uuid=...)`` for an instance of the request being
    #: placed (no context, not in the cell database yet).
    stub: bool = False


@dataclass
class Service:
    """The nova-compute service record of the host (timestamps are epoch seconds)."""

    disabled: bool = False
    disabled_reason: str | None = None
    forced_down: bool = False
    last_seen_up: float | None = None
    created_at: float | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """A field by name: nova keeps the service as a dict, so JsonFilter's
        ``$service.disabled`` looks it up with ``.get``."""
        return getattr(self, key) if key in SERVICE_FIELDS else default


SERVICE_FIELDS = frozenset(f.name for f in fields(Service))


#: Public data attributes: what ComputeCapabilitiesFilter's ``hasattr`` sees.
HOST_STATE_FIELDS = frozenset({
    "host", "nodename", "uuid", "cell_uuid", "host_ip", "total_usable_ram_mb",
    "free_ram_mb", "free_disk_mb", "total_usable_disk_gb", "disk_mb_used",
    "vcpus_total", "vcpus_used", "cpu_allocation_ratio", "ram_allocation_ratio",
    "disk_allocation_ratio", "numa_topology", "pci_stats", "num_instances",
    "num_io_ops", "failed_builds", "hypervisor_type", "hypervisor_version",
    "hypervisor_hostname", "cpu_info", "supported_instances", "metrics", "stats",
    "aggregates", "instances", "service", "limits", "updated", "allocation_candidates",
})


class HostState:
    """Mutable per-node scheduling state (nova's HostState)."""

    __slots__ = tuple(sorted(HOST_STATE_FIELDS)) + (
        "cell_name", "aggregate_metadata", "_cpu_info_cache")

    def __init__(self, host: str, nodename: str | None = None, **values: Any) -> None:
        self.host = host
        self.nodename = nodename if nodename is not None else host
        self.uuid: str | None = None
        self.cell_uuid: str | None = None
        self.cell_name: str | None = None
        self.host_ip = "127.0.0.1"
        self.total_usable_ram_mb = 0
        self.free_ram_mb = 0
        self.free_disk_mb = 0
        self.total_usable_disk_gb = 0
        self.disk_mb_used = 0
        self.vcpus_total = 0
        self.vcpus_used = 0
        self.cpu_allocation_ratio = 4.0
        self.ram_allocation_ratio = 1.0
        self.disk_allocation_ratio = 1.0
        self.numa_topology: numa_mod.NUMATopology | None = None
        self.pci_stats = PciDeviceStats()
        self.num_instances = 0
        self.num_io_ops = 0
        self.failed_builds = 0
        self.hypervisor_type = "QEMU"
        self.hypervisor_version = 0
        self.hypervisor_hostname = self.nodename
        self.cpu_info: str | None = None
        self.supported_instances: list[list[str]] = []
        self.metrics: dict[str, int] = {}
        self.stats: dict[str, str] = {}
        self.instances: dict[str, InstanceInfo] = {}
        self.service = Service()
        self.limits: dict[str, Any] = {}
        self.updated: float | None = None
        self.allocation_candidates: list[dict[str, Any]] | None = None
        self._cpu_info_cache: Any = None
        self.aggregates: list[Aggregate] = []
        for name, value in values.items():
            if name not in HOST_STATE_FIELDS:
                raise TypeError(f"HostState has no field {name!r}")
            setattr(self, name, value)
        self.set_aggregates(self.aggregates)

    @property
    def label(self) -> str:
        """``host`` when the node is named like its host, else ``host/nodename``."""
        return self.host if self.nodename == self.host else f"{self.host}/{self.nodename}"

    def __repr__(self) -> str:
        return f"<HostState {self.label}>"

    # -- aggregates -------------------------------------------------------

    def set_aggregates(self, aggregates: Iterable[Aggregate]) -> None:
        """Replace the aggregates and index their metadata (key -> distinct values)."""
        self.aggregates = list(aggregates)
        index: dict[str, list[str]] = {}
        for aggregate in self.aggregates:
            for key, value in aggregate.metadata.items():
                values = index.setdefault(key, [])
                if value not in values:
                    values.append(value)
        #: key -> distinct raw values over all the host's aggregates (read-only).
        self.aggregate_metadata: dict[str, list[str]] = index

    def aggregate_values(self, key: str) -> list[str]:
        """Distinct raw values of metadata ``key`` over all the host's aggregates."""
        return self.aggregate_metadata.get(key, [])

    def aggregate_values_split(self, key: str) -> set[str]:
        """Values of ``key``, each split on ``,`` and stripped (nova's metadata sets)."""
        return {part.strip() for value in self.aggregate_values(key)
                for part in value.split(",")}

    def aggregate_number(self, key: str, default: Any, cast: Any = float) -> Any:
        """Minimum of ``cast(value)`` over the aggregates' values of ``key``.

        nova's rule for per-aggregate overrides: values are not split; if any
        fails to cast, the whole set is ignored and ``default`` is used.
        """
        values = self.aggregate_metadata.get(key)
        if not values:
            return default
        try:
            return min(cast(value) for value in values)
        except (TypeError, ValueError):
            return default

    # -- helpers ----------------------------------------------------------

    def cpu_info_dict(self) -> Any:
        """``cpu_info`` parsed from its JSON string (cached; raises ValueError)."""
        if self._cpu_info_cache is None and self.cpu_info:
            self._cpu_info_cache = json.loads(self.cpu_info)
        return self._cpu_info_cache

    def fork(self, consumable: bool = False, later: float = 0.0) -> HostState:
        """A copy one request may filter (and, ``consumable``, consume) without
        touching this one; ``later`` seconds after this one was built: the
        service's timestamps move with the clock, so the copy's heartbeat is as
        old as a HostState built now from the same records would have it.

        What filters change is new: ``limits`` (NUMATopologyFilter and the
        aggregate resource filters set them) and the ``allocation_candidates``
        list (pruned by reassignment). ``consumable`` also deep-copies what
        :meth:`consume_from_request` changes in place: the NUMA cells' usage and
        the PCI pools (its counters are plain numbers, set anew). Everything else
        (instances, aggregates, service, stats ...) is shared, read only.
        """
        twin = _shallow_copy(self)
        twin.limits = dict(self.limits)
        if later:
            service = self.service
            twin.service = dataclasses.replace(
                service,
                last_seen_up=None if service.last_seen_up is None else service.last_seen_up + later,
                created_at=None if service.created_at is None else service.created_at + later)
        if self.allocation_candidates is not None:
            twin.allocation_candidates = list(self.allocation_candidates)
        if consumable:
            if self.numa_topology is not None:
                twin.numa_topology = self.numa_topology.usage_copy()
            twin.pci_stats = self.pci_stats.copy()
        return twin

    def consume_from_request(self, spec: RequestSpec) -> None:
        """Account one instance of ``spec`` on this host (nova's consume_from_request).

        In nova's order: RAM and disk (root + ephemeral, not swap) are
        subtracted, vCPUs and the instance counter incremented, then the NUMA
        fit is redone with the limits NUMATopologyFilter left on the host and
        its result replaces ``spec.numa_topology`` (``None`` when it does not
        fit, so later instances of the request carry no NUMA topology), then
        the PCI devices are taken. Only when that succeeds are the I/O counter
        and ``updated`` advanced: nova logs a PCI failure and skips the rest.
        """
        flavor = spec.flavor
        self.free_ram_mb -= flavor.memory_mb
        self.free_disk_mb -= (flavor.root_gb + flavor.ephemeral_gb) * 1024
        self.vcpus_used += flavor.vcpus
        self.num_instances += 1
        try:
            self._consume_devices(spec)
        except PciDeviceRequestFailed:
            return
        self.num_io_ops += 1
        self.updated = time.time()

    def _consume_devices(self, spec: RequestSpec) -> None:
        """NUMA then PCI usage of one instance; raises PciDeviceRequestFailed."""
        if self.numa_topology is not None and spec.numa_topology is not None:
            fitted, _ = numa_mod.fit_instance_to_host(
                self.numa_topology, spec.numa_topology, self.limits.get("numa_topology"),
                spec.pci_requests, self.pci_stats)
            spec.numa_topology = fitted
            if fitted is not None:
                numa_mod.apply_usage(self.numa_topology, fitted)
        placement = None
        if spec.numa_topology is not None and self.numa_topology is not None:
            placement = _placement(self.numa_topology,
                                   {c.host_id for c in spec.numa_topology.cells})
        if spec.pci_requests:
            self.pci_stats.apply_requests(spec.pci_requests, placement)

def _placement(topology: numa_mod.NUMATopology, cell_ids: set[int | None]) -> NumaPlacement:
    chosen = [c for c in topology.cells if c.id in cell_ids]
    return NumaPlacement(cell_ids=frozenset(c.id for c in chosen),
                         sockets=frozenset(c.socket for c in chosen if c.socket is not None),
                         socket_of={c.id: c.socket for c in topology.cells})


#: Every slot of a HostState, read at once, and each slot's setter.
_SLOT_VALUES = operator.attrgetter(*HostState.__slots__)
_SLOT_SETTERS = tuple(getattr(HostState, name).__set__ for name in HostState.__slots__)


def _shallow_copy(host: HostState) -> HostState:
    """``copy.copy(host)``, slot by slot without the pickle protocol's detour (a
    capacity check forks a HostState per host and flavor); a subclass's own
    attributes are copied by ``copy.copy``."""
    if type(host) is not HostState:
        return copy.copy(host)
    twin = HostState.__new__(HostState)
    for setter, value in zip(_SLOT_SETTERS, _SLOT_VALUES(host), strict=True):
        setter(twin, value)
    return twin
