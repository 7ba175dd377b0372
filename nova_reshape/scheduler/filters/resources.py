"""Capacity and load filters.

NumInstances/IoOps (and their aggregate variants) are nova 34's. The
Aggregate{Core,Ram,Disk}Filter were removed in Victoria (Placement does this
now) and follow their last released behaviour (nova 21.2.4), including
filling ``host_state.limits``.
"""

from __future__ import annotations

from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


class AggregateCoreFilter(PreparedHostFilter):
    """(legacy) vCPUs: ``vcpus_total * ratio - vcpus_used >= flavor.vcpus``.

    The ratio is the minimum aggregate ``cpu_allocation_ratio`` (else the
    host's). A host with no ``vcpus_total`` passes; an instance never
    overcommits against itself (``flavor.vcpus <= vcpus_total``).
    """

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        wanted = spec_obj.flavor.vcpus
        reject = self.reject

        def check(host_state):
            if not host_state.vcpus_total:
                return True
            ratio = host_state.cpu_allocation_ratio
            if "cpu_allocation_ratio" in host_state.aggregate_metadata:
                ratio = host_state.aggregate_number("cpu_allocation_ratio", ratio)
            limit = host_state.vcpus_total * ratio
            if limit > 0:
                host_state.limits["vcpu"] = limit
                if wanted > host_state.vcpus_total:
                    return reject("flavor needs %d vCPUs, the host has %d in total",
                                  wanted, host_state.vcpus_total)
            free = limit - host_state.vcpus_used
            if free < wanted:
                return reject("%g vCPUs free (%d x %g - %d used), %d needed",
                              free, host_state.vcpus_total, ratio, host_state.vcpus_used,
                              wanted)
            return True
        return check


class AggregateRamFilter(PreparedHostFilter):
    """(legacy) RAM: ``total * ratio - (total - free) >= flavor.memory_mb``."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        wanted = spec_obj.flavor.memory_mb
        reject = self.reject

        def check(host_state):
            total = host_state.total_usable_ram_mb
            if not total >= wanted:
                return reject("flavor needs %d MB RAM, the host has %d MB in total",
                              wanted, total)
            ratio = host_state.ram_allocation_ratio
            if "ram_allocation_ratio" in host_state.aggregate_metadata:
                ratio = host_state.aggregate_number("ram_allocation_ratio", ratio)
            limit = total * ratio
            usable = limit - (total - host_state.free_ram_mb)
            if not usable >= wanted:
                return reject("%g MB RAM usable (ratio %g), %d MB needed", usable, ratio, wanted)
            host_state.limits["memory_mb"] = limit
            return True
        return check


class AggregateDiskFilter(PreparedHostFilter):
    """(legacy) Disk: ``(root + ephemeral) * 1024 + swap`` MB, swap counted."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        flavor = spec_obj.flavor
        wanted = 1024 * (flavor.root_gb + flavor.ephemeral_gb) + flavor.swap
        reject = self.reject

        def check(host_state):
            total = host_state.total_usable_disk_gb * 1024
            if total < wanted:
                return reject("flavor needs %d MB disk, the host has %d MB in total",
                              wanted, total)
            ratio = host_state.disk_allocation_ratio
            if "disk_allocation_ratio" in host_state.aggregate_metadata:
                ratio = host_state.aggregate_number("disk_allocation_ratio", ratio)
            limit = total * ratio
            usable = limit - (total - host_state.free_disk_mb)
            if not usable >= wanted:
                return reject("%g MB disk usable (ratio %g), %d MB needed", usable, ratio, wanted)
            host_state.limits["disk_gb"] = limit / 1024
            return True
        return check


class NumInstancesFilter(PreparedHostFilter):
    """Keeps hosts with fewer than ``max_instances_per_host`` instances."""

    def _maximum(self, host_state) -> int:
        return self.conf.filter_scheduler.max_instances_per_host

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        maximum = self._maximum
        reject = self.reject

        def check(host_state):
            limit = maximum(host_state)
            if host_state.num_instances < limit:
                return True
            return reject("%d instances, the maximum is %d", host_state.num_instances, limit)
        return check


class AggregateNumInstancesFilter(NumInstancesFilter):
    """NumInstancesFilter with the minimum aggregate ``max_instances_per_host`` (int)."""

    def _maximum(self, host_state) -> int:
        default = self.conf.filter_scheduler.max_instances_per_host
        if "max_instances_per_host" not in host_state.aggregate_metadata:
            return default
        return host_state.aggregate_number("max_instances_per_host", default, int)


class IoOpsFilter(PreparedHostFilter):
    """Keeps hosts with fewer than ``max_io_ops_per_host`` I/O-heavy operations."""

    def _maximum(self, host_state) -> int:
        return self.conf.filter_scheduler.max_io_ops_per_host

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        maximum = self._maximum
        reject = self.reject

        def check(host_state):
            limit = maximum(host_state)
            if host_state.num_io_ops < limit:
                return True
            return reject("%d I/O operations, the maximum is %d", host_state.num_io_ops, limit)
        return check


class AggregateIoOpsFilter(IoOpsFilter):
    """IoOpsFilter with the minimum aggregate ``max_io_ops_per_host`` (int)."""

    def _maximum(self, host_state) -> int:
        default = self.conf.filter_scheduler.max_io_ops_per_host
        if "max_io_ops_per_host" not in host_state.aggregate_metadata:
            return default
        return host_state.aggregate_number("max_io_ops_per_host", default, int)
