"""Weighers over host counters: RAM, CPU, disk, I/O, instances, version, failures.

Each has the per-host ``_weigh_object`` of the plug-in interface and a
list-at-once ``raw_weights`` with the same meaning, which avoids a method
call per host on large host lists.
"""

from __future__ import annotations

from nova_reshape.scheduler.weights.base import BaseHostWeigher


class RAMWeigher(BaseHostWeigher):
    """Free RAM in MB (no allocation ratio). Spreads by default."""

    minval = 0
    multiplier_option = "ram_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.free_ram_mb

    def raw_weights(self, hosts, spec_obj):
        return [host.free_ram_mb for host in hosts]


class CPUWeigher(BaseHostWeigher):
    """Free vCPUs: ``vcpus_total * cpu_allocation_ratio - vcpus_used``."""

    minval = 0
    multiplier_option = "cpu_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.vcpus_total * host_state.cpu_allocation_ratio - host_state.vcpus_used

    def raw_weights(self, hosts, spec_obj):
        return [h.vcpus_total * h.cpu_allocation_ratio - h.vcpus_used for h in hosts]


class DiskWeigher(BaseHostWeigher):
    """Free disk in MB (``min(free_disk_gb, disk_available_least) * 1024``)."""

    minval = 0
    multiplier_option = "disk_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.free_disk_mb

    def raw_weights(self, hosts, spec_obj):
        return [host.free_disk_mb for host in hosts]


class IoOpsWeigher(BaseHostWeigher):
    """Concurrent I/O-heavy operations; the default multiplier -1.0 prefers idle hosts."""

    minval = 0
    multiplier_option = "io_ops_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.num_io_ops

    def raw_weights(self, hosts, spec_obj):
        return [host.num_io_ops for host in hosts]


class NumInstancesWeigher(BaseHostWeigher):
    """Instance count (from compute stats); multiplier 0.0 by default."""

    multiplier_option = "num_instances_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.num_instances

    def raw_weights(self, hosts, spec_obj):
        return [host.num_instances for host in hosts]


class HypervisorVersionWeigher(BaseHostWeigher):
    """Integer hypervisor version (0 when unknown): newer hosts win."""

    multiplier_option = "hypervisor_version_weight_multiplier"

    def _weigh_object(self, host_state, spec_obj):
        return host_state.hypervisor_version or 0

    def raw_weights(self, hosts, spec_obj):
        return [host.hypervisor_version or 0 for host in hosts]


class BuildFailureWeigher(BaseHostWeigher):
    """Recent failed builds, with the multiplier negated (default 1e6)."""

    multiplier_option = "build_failure_weight_multiplier"
    multiplier_sign = -1

    def _weigh_object(self, host_state, spec_obj):
        return host_state.failed_builds

    def raw_weights(self, hosts, spec_obj):
        return [host.failed_builds for host in hosts]
