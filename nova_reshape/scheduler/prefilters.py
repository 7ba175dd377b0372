"""Request prefilters: what nova adds to the RequestSpec before asking Placement.

nova-side.md §5.1 step 2 and §5.2 (prefilters row). Each prefilter edits
the spec (root traits, destination aggregates, request groups) and may
refuse the request with :class:`RequestFilterFailed`, which the manager
turns into NoValidHost. The ones modelled:

* ``compute_status``: always ``root_required=!COMPUTE_STATUS_DISABLED``;
* ``availability_zone``: the request's AZ -> ``member_of=in:<aggregates of
  that AZ>`` (nova's ``map_az_to_placement_aggregate``; nothing when no
  aggregate carries the zone);
* ``accelerators``: ``accel:device_profile`` -> ``COMPUTE_ACCELERATORS`` on
  the root and the profile's groups in ``requested_resources``
  (``device_profile_<N>``), resolved once per request;
* ``owner_nova`` (master, optional): ``OWNER_NOVA`` on the root.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nova_reshape.scheduler.accelerator_seam import (
    GROUP_PREFIX,
    DeviceProfileResolver,
    as_request_group,
    device_profile_name,
)
from nova_reshape.scheduler.errors import SchedulerError
from nova_reshape.scheduler.host_state import Aggregate
from nova_reshape.scheduler.request_spec import Destination, RequestSpec


class RequestFilterFailed(SchedulerError):
    """A prefilter refused the request (ends as NoValidHost)."""


def compute_status(spec: RequestSpec) -> None:
    spec.root_forbidden.add("COMPUTE_STATUS_DISABLED")


def availability_zone(spec: RequestSpec, aggregates: Iterable[Aggregate]) -> None:
    zone = spec.availability_zone
    if not zone:
        return
    uuids = sorted({aggregate.uuid for aggregate in aggregates
                    if aggregate.uuid and aggregate.metadata.get("availability_zone") == zone})
    if not uuids:
        return
    if spec.requested_destination is None:
        spec.requested_destination = Destination()
    if ",".join(uuids) not in (spec.requested_destination.aggregates or []):
        spec.requested_destination.require_aggregates(uuids)


def accelerators(spec: RequestSpec, resolver: DeviceProfileResolver | None) -> None:
    name = device_profile_name(spec.flavor.extra_specs)
    if name is None:
        return
    spec.root_required.add("COMPUTE_ACCELERATORS")
    if any((group.requester_id or "").startswith(GROUP_PREFIX)
           for group in spec.requested_resources):
        return
    if resolver is None:
        raise RequestFilterFailed(
            f"flavor asks for device profile {name} but no accelerator service is configured")
    try:
        groups = [as_request_group(g) for g in resolver.get_device_profile_request_groups(name)]
    except Exception as error:
        raise RequestFilterFailed(f"device profile {name}: {error}") from error
    if not groups:
        raise RequestFilterFailed(f"device profile {name} has no request group")
    spec.requested_resources.extend(groups)


def owner_nova(spec: RequestSpec) -> None:
    spec.root_required.add("OWNER_NOVA")


def run_prefilters(spec: RequestSpec, *, aggregates: Sequence[Aggregate] = (),
                   resolver: DeviceProfileResolver | None = None,
                   require_owner_nova: bool = False) -> None:
    """Every prefilter, in nova's spirit: cheap, spec-only, may refuse the request."""
    compute_status(spec)
    availability_zone(spec, aggregates)
    accelerators(spec, resolver)
    if require_owner_nova:
        owner_nova(spec)
