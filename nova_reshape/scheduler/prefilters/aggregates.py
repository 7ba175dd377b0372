"""Pre-filters that turn nova host aggregates into Placement ``member_of``.

* ``require_tenant_aggregate``: with ``[scheduler]
  limit_tenants_to_placement_aggregate``, aggregates whose metadata has a
  ``filter_tenant_id*`` key and some value equal to the project are required;
  none found and ``placement_aggregate_required_for_tenants`` set refuses.
* ``map_az_to_placement_aggregate``: the request's AZ requires the
  aggregates whose ``availability_zone`` metadata equals it (always on).
* ``isolate_aggregates``: with ``enable_isolated_aggregate_filtering``,
  aggregates carrying ``trait:<T>=required`` for a trait the flavor and image
  do not require become forbidden aggregates.
"""

from __future__ import annotations

from collections.abc import Iterable

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.scheduler import resource_request as rr
from nova_reshape.scheduler.prefilters.base import (
    PrefilterContext,
    RequestFilterFailed,
    aggregate_id,
    destination,
)
from nova_reshape.scheduler.request_spec import RequestSpec

TENANT_METADATA_KEY = "filter_tenant_id"


def require_tenant_aggregate(spec: RequestSpec, context: PrefilterContext) -> bool:
    options = context.conf.scheduler
    if not options.limit_tenants_to_placement_aggregate:
        return False
    uuids = []
    for aggregate in context.aggregates:
        metadata = aggregate.metadata
        if spec.project_id in metadata.values() and any(
                key.startswith(TENANT_METADATA_KEY) for key in metadata):
            uuids.append(aggregate_id(aggregate))
    if uuids:
        destination(spec).require_aggregates(sorted(set(uuids)))
    elif options.placement_aggregate_required_for_tenants:
        raise RequestFilterFailed(f"No hosts available for tenant {spec.project_id}")
    return True


def availability_zone(spec: RequestSpec, aggregates: Iterable[Aggregate]) -> bool:
    """The request's AZ as a required OR-list of the aggregates carrying it."""
    zone = spec.availability_zone
    if not zone:
        return False
    uuids = sorted({aggregate_id(aggregate) for aggregate in aggregates
                    if aggregate.metadata.get("availability_zone") == zone})
    if uuids and ",".join(uuids) not in (destination(spec).aggregates or []):
        spec.requested_destination.require_aggregates(uuids)
    return True


def map_az_to_placement_aggregate(spec: RequestSpec, context: PrefilterContext) -> bool:
    return availability_zone(spec, context.aggregates)


def isolate_aggregates(spec: RequestSpec, context: PrefilterContext) -> bool:
    if not context.conf.scheduler.enable_isolated_aggregate_filtering:
        return False
    request = rr.from_request_spec(
        spec, pci_in_placement=context.conf.filter_scheduler.pci_in_placement)
    required = {trait for group in request.groups().values()
                for trait in group.required_traits}
    isolated = sorted({
        aggregate_id(aggregate) for aggregate in context.aggregates
        if any(key.startswith("trait:") and value == "required"
               and key[len("trait:"):] not in required
               for key, value in aggregate.metadata.items())})
    if isolated:
        destination(spec).forbid_aggregates(isolated)
    return True
