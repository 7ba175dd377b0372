"""Host liveness and the legacy placement-era filters.

AllHostsFilter and ComputeFilter are nova 34's; RetryFilter and
AvailabilityZoneFilter were removed from nova (Victoria / 2023.2) and are run
here from their last released behaviour, for old configurations.
"""

from __future__ import annotations

import time

from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


class AllHostsFilter(PreparedHostFilter):
    """Passes every host."""

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        return None


class ComputeFilter(PreparedHostFilter):
    """Drops hosts whose compute service is disabled, forced down or not heartbeating.

    A service is down when its last heartbeat (``last_seen_up``, else
    ``created_at``) is more than ``[DEFAULT] service_down_time`` seconds away
    from now, in either direction. ``now`` can be pinned for reproducible runs.
    """

    run_filter_once_per_request = True
    now: float | None = None

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        now = self.now if self.now is not None else time.time()
        down_time = self.conf.DEFAULT.service_down_time
        reject = self.reject

        def check(host_state):
            service = host_state.service
            if service.disabled:
                if service.disabled_reason:
                    return reject("compute service is disabled (%s)", service.disabled_reason)
                return reject("compute service is disabled")
            if service.forced_down:
                return reject("compute service is forced down")
            heartbeat = service.last_seen_up
            if heartbeat is None:
                heartbeat = service.created_at
            if heartbeat is None:
                return reject("compute service has never reported")
            if abs(now - heartbeat) > down_time:
                return reject("compute service is down: last heartbeat %ds ago "
                              "(service_down_time %ds)", now - heartbeat, down_time)
            return True
        return check


class RetryFilter(PreparedHostFilter):
    """(legacy) Drops ``[host, node]`` pairs already tried by this request."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        retry = spec_obj.retry
        if not retry or not retry.hosts:
            return None
        tried = {tuple(pair) for pair in retry.hosts}
        reject = self.reject

        def check(host_state):
            if (host_state.host, host_state.nodename) in tried:
                return reject("host/node already tried by this request (attempt %d)",
                              retry.num_attempts)
            return True
        return check


class AvailabilityZoneFilter(PreparedHostFilter):
    """(legacy) Keeps hosts in the requested availability zone.

    A host's zones are the comma-split ``availability_zone`` values of its
    aggregates, or ``[DEFAULT] default_availability_zone`` when it has none.
    """

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        wanted = spec_obj.availability_zone
        if not wanted:
            return None
        default_zone = self.conf.DEFAULT.default_availability_zone
        reject = self.reject

        def check(host_state):
            zones = host_state.aggregate_values_split("availability_zone") \
                if "availability_zone" in host_state.aggregate_metadata else None
            if zones:
                if wanted in zones:
                    return True
                return reject("host is in availability zone(s) %s, not %s",
                              ", ".join(sorted(zones)), wanted)
            if wanted == default_zone:
                return True
            return reject("host is in the default availability zone %s, not %s",
                          default_zone, wanted)
        return check
