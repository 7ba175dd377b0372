"""Tenant and flavor isolation through aggregate metadata."""

from __future__ import annotations

from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


class AggregateMultiTenancyIsolation(PreparedHostFilter):
    """Hosts in aggregates with ``filter_tenant_id*`` keys take only those projects.

    A host passes if it has no aggregate metadata or no key starting with
    ``filter_tenant_id``; otherwise the request's project must be in the
    union of those keys' comma-split values.
    """

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        project = spec_obj.project_id
        reject = self.reject

        def check(host_state):
            metadata = host_state.aggregate_metadata
            if not metadata:
                return True
            allowed: set[str] = set()
            for key in metadata:
                if key.startswith("filter_tenant_id"):
                    allowed |= host_state.aggregate_values_split(key)
            if not allowed or project in allowed:
                return True
            return reject("project %s is not among the aggregate's tenants %s",
                          project, ", ".join(sorted(allowed)))
        return check


class AggregateTypeAffinityFilter(PreparedHostFilter):
    """Hosts in aggregates with ``instance_type`` metadata take only those flavors."""

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        flavor_name = spec_obj.flavor.name
        reject = self.reject

        def check(host_state):
            values = host_state.aggregate_values("instance_type")
            if not values:
                return True
            for value in values:
                if flavor_name in [part.strip() for part in value.split(",")]:
                    return True
            return reject("flavor %s is not in the aggregate instance_type %s",
                          flavor_name, "; ".join(values))
        return check
