"""What every request pre-filter shares: its inputs, its failure, the spec edits.

A pre-filter is a plain function ``(spec, context) -> bool``: it edits the
RequestSpec (root traits, destination aggregates, request groups) and says
whether it ran (``False`` when disabled by config or not asked for by the
request), as nova's request filters do. It refuses the request by raising
:class:`RequestFilterFailed`, which ends as NoValidHost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError, SchedulerError
from nova_reshape.scheduler.numa import unique_flavor_image_value
from nova_reshape.scheduler.request_spec import Destination, RequestSpec

if TYPE_CHECKING:
    from nova_reshape.nova.aggregate import Aggregate
    from nova_reshape.scheduler.accelerator_seam import DeviceProfileResolver

#: nova 34's nova-compute service version; OWNER_NOVA is required once every
#: compute reports at least MIN_COMPUTE_VERSION_OWNER_TRAIT.
NOVA34_COMPUTE_VERSION = 73
MIN_COMPUTE_VERSION_OWNER_TRAIT = 73


class RequestFilterFailed(SchedulerError):
    """A pre-filter refused the request (ends as NoValidHost).

    ``steps`` holds the pre-filter outcomes up to the refusing one once the
    runner has seen it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.steps: list[Any] = []


class NetworkService(Protocol):
    """The Neutron questions routed_networks_filter and remote_managed_ports_filter ask.

    ``aggregates_for_network`` / ``aggregates_for_subnet`` return the
    Placement aggregates of the network's (subnet's) segments and raise
    LookupError when the routed network is misconfigured.
    """

    def show_port(self, port_id: str) -> Mapping[str, Any]: ...

    def is_remote_managed_port(self, port_id: str) -> bool: ...

    def aggregates_for_network(self, network_id: str) -> list[str]: ...

    def aggregates_for_subnet(self, subnet_id: str) -> list[str]: ...


@dataclass
class PrefilterContext:
    """What pre-filters read besides the spec.

    ``aggregates``: nova's host aggregates (uuid and metadata);
    ``resolver``: the device-profile service; ``networks``: Neutron;
    ``min_compute_version``: the lowest nova-compute service version over all
    cells, ``None`` meaning every compute runs nova 34.
    """

    conf: SchedulerConfig
    aggregates: Sequence[Aggregate] = ()
    resolver: DeviceProfileResolver | None = None
    networks: NetworkService | None = None
    min_compute_version: int | None = None


def destination(spec: RequestSpec) -> Destination:
    """``spec.requested_destination``, created empty when missing (as nova does)."""
    if spec.requested_destination is None:
        spec.requested_destination = Destination()
    return spec.requested_destination


def aggregate_id(aggregate: Aggregate) -> str:
    """The aggregate's uuid (its name when a scenario gave none)."""
    return aggregate.uuid or aggregate.name


def flavor_or_image(spec: RequestSpec, key: str) -> Any:
    """nova's unique flavor-or-image value of ``hw:<key>``/``hw_<key>``; a conflict refuses."""
    try:
        return unique_flavor_image_value(spec.flavor.extra_specs, spec.image.properties, key)
    except ScenarioError as error:
        raise RequestFilterFailed(str(error)) from error
