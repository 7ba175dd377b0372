"""Filters over devices and topology: metrics, PCI passthrough, NUMA."""

from __future__ import annotations

from nova_reshape.scheduler import numa as numa_mod
from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter, prune_candidates
from nova_reshape.scheduler.request_spec import RequestSpec


class MetricsFilter(PreparedHostFilter):
    """Keeps hosts reporting every metric named in ``[metrics] weight_setting``."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        names = sorted({name for name, _ in self.conf.metrics_weight_setting})
        if not names:
            return None
        reject = self.reject

        def check(host_state):
            metrics = host_state.metrics
            if all([name in metrics for name in names]):
                return True
            missing = [name for name in names if name not in metrics]
            if missing:
                return reject("host does not report metric(s) %s", ", ".join(missing))
            return True
        return check


class PciPassthroughFilter(PreparedHostFilter):
    """Keeps hosts whose PCI pools can satisfy every PCI request of the instance.

    Requests are applied in turn to a copy of the pools; allocation
    candidates that do not fit are pruned and a host left without any fails.
    """

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        requests = spec_obj.pci_requests
        if not requests:
            return None
        reject = self.reject

        def check(host_state):
            stats = host_state.pci_stats
            if not stats.pools:
                return reject("host has no PCI devices")
            if not stats.support_requests(requests):
                return reject("PCI pools cannot satisfy %s", _describe(requests))
            # Our pool check does not depend on a candidate's provider mappings
            # (PCI in Placement is not modelled), so every candidate fits alike.
            if not prune_candidates(host_state, lambda candidate: True):
                return reject("no allocation candidate fits the PCI requests")
            return True
        return check


def _describe(requests) -> str:
    return ", ".join(f"{r.count} x {r.alias_name or r.spec}" for r in requests)


class NUMATopologyFilter(PreparedHostFilter):
    """Keeps hosts onto whose NUMA cells the requested guest topology fits.

    With no requested topology every host passes; a host without a NUMA
    topology fails; a dedicated-CPU request with thread policy ``require``
    fails hosts without SMT. Limits are the host's cpu/ram allocation ratios
    and PCI requests must fit on the chosen cells. On success
    ``host_state.limits["numa_topology"]`` is set.
    """

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        requested = spec_obj.numa_topology
        if requested is None:
            return None
        requests = spec_obj.pci_requests
        needs_smt = requested.cpu_pinning_requested and requested.thread_policy == "require"
        packing = self.conf.compute.packing_host_numa_cells_allocation_strategy
        reject = self.reject

        def check(host_state):
            topology = host_state.numa_topology
            if topology is None:
                return reject("host has no NUMA topology")
            if needs_smt and not any(cell.has_smt for cell in topology.cells):
                return reject("thread policy 'require' needs SMT, the host has none")
            limits = numa_mod.Limits(host_state.cpu_allocation_ratio,
                                     host_state.ram_allocation_ratio)
            fitted, why = numa_mod.fit_instance_to_host(
                topology, requested, limits, requests, host_state.pci_stats, packing)
            if fitted is None:
                return reject("NUMA topology does not fit: %s", why)
            if not prune_candidates(host_state, lambda candidate: True):
                return reject("no allocation candidate fits the NUMA topology")
            host_state.limits["numa_topology"] = limits
            return True
        return check
