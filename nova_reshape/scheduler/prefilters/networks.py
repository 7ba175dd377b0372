"""Pre-filters that ask Neutron about the requested NICs.

* ``routed_networks_filter`` (``[scheduler]
  query_placement_for_routed_network_aggregates``): each requested network,
  or port, requires the Placement aggregates of its segments (a port with a
  fixed IP sticks to its subnet's segment). A request without networks
  passes: nova allocates the network after scheduling.
* ``remote_managed_ports_filter``: a remote-managed (SmartNIC DPU) port
  requires ``COMPUTE_REMOTE_MANAGED_PORTS`` on the root.
"""

from __future__ import annotations

import os_traits

from nova_reshape.scheduler.prefilters.base import (
    NetworkService,
    PrefilterContext,
    RequestFilterFailed,
    destination,
)
from nova_reshape.scheduler.request_spec import RequestSpec


def _network_service(context: PrefilterContext) -> NetworkService:
    if context.networks is None:
        raise RequestFilterFailed("the request names ports or networks but no network "
                                  "service is configured")
    return context.networks


def routed_networks_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    if not context.conf.scheduler.query_placement_for_routed_network_aggregates:
        return False
    if spec.requested_networks is None:
        return True
    target = destination(spec)
    for requested in spec.requested_networks:
        aggregates: list[str] = []
        network_id = None
        if requested.port_id:
            port = _network_service(context).show_port(requested.port_id)
            if port.get("fixed_ips"):
                subnet_id = port["fixed_ips"][0]["subnet_id"]
                try:
                    aggregates = _network_service(context).aggregates_for_subnet(subnet_id)
                except LookupError as error:
                    raise RequestFilterFailed(
                        f"Aggregates not found for the subnet {subnet_id}") from error
            else:
                network_id = port.get("network_id")
        elif requested.network_id:
            network_id = requested.network_id
        if network_id:
            try:
                aggregates = _network_service(context).aggregates_for_network(network_id)
            except LookupError as error:
                raise RequestFilterFailed(
                    f"Aggregates not found for the network {network_id}") from error
        if aggregates:
            target.require_aggregates(list(aggregates))
    return True


def remote_managed_ports_filter(spec: RequestSpec, context: PrefilterContext) -> bool:
    for requested in spec.requested_networks or []:
        if requested.port_id and _network_service(context).is_remote_managed_port(
                requested.port_id):
            spec.root_required.add(os_traits.COMPUTE_REMOTE_MANAGED_PORTS)
    return True
