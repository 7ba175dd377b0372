"""Weighers over host counters: RAM, CPU, disk, I/O, instances, version, failures.

Each states its raw value once: a HostState ``attribute``
(``HostAttributeWeigher``) or a list-at-once ``raw_weights``
(``BatchHostWeigher``), so large host lists cost no method call per host.
"""

from __future__ import annotations

from nova_reshape.scheduler.weights.base import BatchHostWeigher, HostAttributeWeigher


class RAMWeigher(HostAttributeWeigher):
    """Free RAM in MB (no allocation ratio). Spreads by default."""

    minval = 0
    multiplier_option = "ram_weight_multiplier"
    attribute = "free_ram_mb"


class CPUWeigher(BatchHostWeigher):
    """Free vCPUs: ``vcpus_total * cpu_allocation_ratio - vcpus_used``."""

    minval = 0
    multiplier_option = "cpu_weight_multiplier"

    def raw_weights(self, hosts, spec_obj):
        return [h.vcpus_total * h.cpu_allocation_ratio - h.vcpus_used for h in hosts]


class DiskWeigher(HostAttributeWeigher):
    """Free disk in MB (``min(free_disk_gb, disk_available_least) * 1024``)."""

    minval = 0
    multiplier_option = "disk_weight_multiplier"
    attribute = "free_disk_mb"


class IoOpsWeigher(HostAttributeWeigher):
    """Concurrent I/O-heavy operations; the default multiplier -1.0 prefers idle hosts."""

    minval = 0
    multiplier_option = "io_ops_weight_multiplier"
    attribute = "num_io_ops"


class NumInstancesWeigher(HostAttributeWeigher):
    """Instance count (from compute stats); multiplier 0.0 by default."""

    multiplier_option = "num_instances_weight_multiplier"
    attribute = "num_instances"


class HypervisorVersionWeigher(BatchHostWeigher):
    """Integer hypervisor version (0 when unknown): newer hosts win."""

    multiplier_option = "hypervisor_version_weight_multiplier"

    def raw_weights(self, hosts, spec_obj):
        return [host.hypervisor_version or 0 for host in hosts]


class BuildFailureWeigher(HostAttributeWeigher):
    """Recent failed builds, with the multiplier negated (default 1e6)."""

    multiplier_option = "build_failure_weight_multiplier"
    multiplier_sign = -1
    attribute = "failed_builds"
