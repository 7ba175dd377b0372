"""Request pre-filters: what nova adds to the RequestSpec before asking Placement.

nova 34 runs fourteen, always in this order (:data:`REQUEST_FILTERS`); each
decides from its config option and the request whether it applies. The
runner records, per filter, whether it ran and what it added to the request
(root required/forbidden traits, ``member_of`` OR-lists, forbidden
aggregates, request groups), so ``explain`` can show it. See
docs/scheduler.md for the options.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler.accelerator_seam import DeviceProfileResolver
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.prefilters.aggregates import (
    availability_zone,
    isolate_aggregates,
    map_az_to_placement_aggregate,
    require_tenant_aggregate,
)
from nova_reshape.scheduler.prefilters.base import (
    MIN_COMPUTE_VERSION_OWNER_TRAIT,
    NOVA34_COMPUTE_VERSION,
    NetworkService,
    PrefilterContext,
    RequestFilterFailed,
)
from nova_reshape.scheduler.prefilters.devices import (
    accelerators,
    accelerators_filter,
    owner_nova_filter,
)
from nova_reshape.scheduler.prefilters.networks import (
    remote_managed_ports_filter,
    routed_networks_filter,
)
from nova_reshape.scheduler.prefilters.traits import (
    compute_status_filter,
    ephemeral_encryption_filter,
    packed_virtqueue_filter,
    require_image_type_support,
    tpm_secret_security_filter,
    transform_image_metadata,
    virtio_sound_filter,
)
from nova_reshape.scheduler.request_spec import RequestSpec

__all__ = [
    "MIN_COMPUTE_VERSION_OWNER_TRAIT", "NOVA34_COMPUTE_VERSION", "NetworkService",
    "PrefilterContext", "PrefilterStep", "REQUEST_FILTERS", "RequestFilterFailed",
    "accelerators", "availability_zone", "run_prefilters", "run_request_filters",
]

Prefilter = Callable[[RequestSpec, PrefilterContext], bool]

#: nova 34's request filters, in the order it runs them.
REQUEST_FILTERS: tuple[tuple[str, Prefilter], ...] = (
    ("require_tenant_aggregate", require_tenant_aggregate),
    ("map_az_to_placement_aggregate", map_az_to_placement_aggregate),
    ("require_image_type_support", require_image_type_support),
    ("compute_status_filter", compute_status_filter),
    ("isolate_aggregates", isolate_aggregates),
    ("transform_image_metadata", transform_image_metadata),
    ("accelerators_filter", accelerators_filter),
    ("packed_virtqueue_filter", packed_virtqueue_filter),
    ("routed_networks_filter", routed_networks_filter),
    ("remote_managed_ports_filter", remote_managed_ports_filter),
    ("ephemeral_encryption_filter", ephemeral_encryption_filter),
    ("virtio_sound_filter", virtio_sound_filter),
    ("tpm_secret_security_filter", tpm_secret_security_filter),
    ("owner_nova_filter", owner_nova_filter),
)


@dataclass
class PrefilterStep:
    """One request filter's outcome: did it run, what it added, why it refused."""

    name: str
    ran: bool = False
    added: dict[str, list[str]] = field(default_factory=dict)
    failed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "ran": self.ran, "added": self.added}
        if self.failed is not None:
            entry["failed"] = self.failed
        return entry


def _snapshot(spec: RequestSpec) -> dict[str, list[str]]:
    """The parts of the spec a pre-filter may add to, as ordered lists."""
    target = spec.requested_destination
    return {
        "root_required": sorted(spec.root_required),
        "root_forbidden": sorted(spec.root_forbidden),
        "member_of": list(target.aggregates or []) if target else [],
        "forbidden_aggregates": sorted(target.forbidden_aggregates or ()) if target else [],
        "request_groups": [str(group.requester_id) for group in spec.requested_resources],
    }


def _added(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict[str, list[str]]:
    added = {}
    for key, values in after.items():
        new = [value for value in values if value not in before[key]]
        if new:
            added[key] = new
    return added


def run_request_filters(spec: RequestSpec, context: PrefilterContext) -> list[PrefilterStep]:
    """Run the fourteen request filters in nova's order; raises RequestFilterFailed.

    The steps run so far (the failing one last, with ``failed`` set) are on
    the exception's ``steps`` attribute.
    """
    steps = []
    for name, request_filter in REQUEST_FILTERS:
        step = PrefilterStep(name)
        steps.append(step)
        before = _snapshot(spec)
        try:
            step.ran = bool(request_filter(spec, context))
        except RequestFilterFailed as error:
            step.ran, step.failed = True, str(error)
            step.added = _added(before, _snapshot(spec))
            error.steps = list(steps)
            raise
        step.added = _added(before, _snapshot(spec))
    return steps


def run_prefilters(spec: RequestSpec, *, aggregates: Sequence[Aggregate] = (),
                   resolver: DeviceProfileResolver | None = None,
                   require_owner_nova: bool | None = None,
                   conf: SchedulerConfig | None = None,
                   networks: NetworkService | None = None) -> list[PrefilterStep]:
    """:func:`run_request_filters` with the context built from keywords.

    ``require_owner_nova``: ``None`` follows nova 34 (every compute is new
    enough, OWNER_NOVA required); ``False`` models older computes.
    """
    version = None if require_owner_nova in (None, True) else \
        MIN_COMPUTE_VERSION_OWNER_TRAIT - 1
    context = PrefilterContext(conf or SchedulerConfig(), aggregates=aggregates,
                               resolver=resolver, networks=networks,
                               min_compute_version=version)
    return run_request_filters(spec, context)
