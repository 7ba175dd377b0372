"""Weighers over groups, cells, devices, metrics and images."""

from __future__ import annotations

from nova_reshape.scheduler.errors import ComputeHostMetricNotFound, OrphanedObjectError
from nova_reshape.scheduler.weights.base import BatchHostWeigher

MAX_PCI_DEVICES = 100


class _SoftAffinityBase(BatchHostWeigher):
    policy_name = ""
    sign = 1

    def raw_weights(self, hosts, spec_obj):
        group = spec_obj.instance_group
        if group is None or group.policy != self.policy_name:
            return [0] * len(hosts)
        members = frozenset(group.members)
        sign = self.sign
        return [sign * len(members.intersection(host.instances)) for host in hosts]


class ServerGroupSoftAffinityWeigher(_SoftAffinityBase):
    """``soft-affinity`` groups: hosts with more group members win (rules ignored)."""

    policy_name = "soft-affinity"
    multiplier_option = "soft_affinity_weight_multiplier"


class ServerGroupSoftAntiAffinityWeigher(_SoftAffinityBase):
    """``soft-anti-affinity`` groups: hosts with fewer group members win."""

    policy_name = "soft-anti-affinity"
    multiplier_option = "soft_anti_affinity_weight_multiplier"
    sign = -1


class CrossCellWeigher(BatchHostWeigher):
    """Cross-cell moves: +1 in the requested cell, -1 elsewhere, else 0 for all."""

    multiplier_option = "cross_cell_move_weight_multiplier"

    def raw_weights(self, hosts, spec_obj):
        destination = spec_obj.requested_destination
        if destination is None or not destination.cell or \
                not destination.allow_cross_cell_move:
            return [0] * len(hosts)
        wanted = destination.cell_uuid
        return [1 if host.cell_uuid == wanted else -1 for host in hosts]


class PCIWeigher(BatchHostWeigher):
    """``100 - min(free PCI devices, 99)``: keeps PCI hosts free, stacks PCI requests."""

    multiplier_option = "pci_weight_multiplier"

    def raw_weights(self, hosts, spec_obj):
        top = MAX_PCI_DEVICES
        return [top - min(host.pci_stats.free_count(), top - 1)
                if host.pci_stats and host.pci_stats.pools else top for host in hosts]


class MetricsWeigher(BatchHostWeigher):
    """``sum(metric value * ratio)`` over ``[metrics] weight_setting``.

    A missing metric raises ComputeHostMetricNotFound when
    ``[metrics] required`` is set; otherwise, if ``ratio * multiplier != 0``,
    the host's whole raw value is ``weight_of_unavailable``.
    """

    multiplier_option = "metrics_weight_multiplier"

    def config_multiplier(self):
        return self.conf.metrics.weight_multiplier

    def raw_weights(self, hosts, spec_obj):
        if not self.conf.metrics_weight_setting:
            return [0.0] * len(hosts)
        value = self._value
        return [value(host) for host in hosts]

    def _value(self, host_state):
        value = 0.0
        metrics = host_state.metrics
        for name, ratio in self.conf.metrics_weight_setting:
            if name in metrics:
                value += metrics[name] * ratio
                continue
            if self.conf.metrics.required:
                raise ComputeHostMetricNotFound(host_state.host, host_state.nodename, name)
            if ratio * self.weight_multiplier(host_state) != 0:
                return self.conf.metrics.weight_of_unavailable
        return value


class ImagePropertiesWeigher(BatchHostWeigher):
    """Hosts whose instances share image properties with the request win.

    Counts ``(property, str(value))`` pairs of the host's instances' images
    that the requested image also has, weighted by
    ``image_props_weight_setting`` when set (unlisted properties count 0).
    Returns 0 everywhere when the *configured* multiplier is 0. Otherwise it
    reads every instance's image metadata, as nova does from the cell
    database; the stub nova leaves on a host between the instances of a
    multi-create in a server group has no context, and reading it raises
    OrphanedObjectError in nova, so it does here.
    """

    multiplier_option = "image_props_weight_multiplier"

    def raw_weights(self, hosts, spec_obj):
        if self.config_multiplier() == 0.0:
            return [0.0] * len(hosts)
        wanted = {key: str(value) for key, value in spec_obj.image.properties.items()}
        setting = self.conf.image_props_weight_setting
        weights = []
        for host_state in hosts:
            weight = 0.0
            for instance in host_state.instances.values():
                if instance.stub:
                    raise OrphanedObjectError()
                if not instance.image_properties:
                    continue
                for prop, value in instance.image_properties.items():
                    if prop in wanted and wanted[prop] == str(value):
                        weight += setting.get(prop, 0.0) if setting else 1.0
            weights.append(weight)
        return weights

