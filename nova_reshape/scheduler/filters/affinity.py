"""Instance affinity hints and server-group (anti-)affinity."""

from __future__ import annotations

import ipaddress
import socket

from nova_reshape.scheduler.filters.base import HostCheck, PreparedHostFilter
from nova_reshape.scheduler.request_spec import RequestSpec


class AddrFormatError(ValueError):
    """An invalid ``build_near_host_ip``/``cidr`` (named after netaddr's error)."""


def _uuid_set(hint) -> frozenset[str]:
    if isinstance(hint, str):
        return frozenset({hint})
    return frozenset(hint)


class DifferentHostFilter(PreparedHostFilter):
    """Drops hosts running any instance named in the ``different_host`` hint."""

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        hint = spec_obj.get_scheduler_hint("different_host")
        if not hint:
            return None
        uuids = _uuid_set(hint)
        reject = self.reject

        def check(host_state):
            instances = host_state.instances
            if not instances or uuids.isdisjoint(instances):
                return True
            overlap = uuids.intersection(instances)
            if overlap:
                return reject("host runs %s (different_host)", ", ".join(sorted(overlap)))
            return True
        return check


class SameHostFilter(PreparedHostFilter):
    """Keeps only hosts running an instance named in the ``same_host`` hint."""

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        hint = spec_obj.get_scheduler_hint("same_host")
        if not hint:
            return None
        uuids = _uuid_set(hint)
        reject = self.reject

        def check(host_state):
            if uuids.isdisjoint(host_state.instances):
                return reject("host runs none of the same_host instances")
            return True
        return check


class SimpleCIDRAffinityFilter(PreparedHostFilter):
    """Keeps hosts whose ``host_ip`` is in ``build_near_host_ip`` + ``cidr`` (default /24).

    The network is built by string concatenation, as nova does, so
    ``cidr: "24"`` turns ``192.168.1.1`` into ``192.168.1.124/32``.
    """

    run_filter_once_per_request = True

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        near = spec_obj.get_scheduler_hint("build_near_host_ip")
        if not near:
            return None
        cidr = spec_obj.get_scheduler_hint("cidr", "/24")
        text = f"{near}{cidr}"
        try:
            network = ipaddress.ip_network(text, strict=False)
        except ValueError as exc:
            raise AddrFormatError(f"invalid IPNetwork {text}") from exc
        reject = self.reject
        family = socket.AF_INET if network.version == 4 else socket.AF_INET6
        net_int = int(network.network_address)
        mask = int(network.netmask)

        def check(host_state):
            # inet_pton is strict and fast; an address of the other family is
            # never inside the network (as with netaddr).
            text = host_state.host_ip
            try:
                packed = socket.inet_pton(family, text)
            except (OSError, TypeError, ValueError):
                try:
                    ipaddress.ip_address(text)
                except ValueError as exc:
                    raise AddrFormatError(f"invalid IPAddress {text}") from exc
                return reject("host_ip %s is not in %s", text, network)
            if int.from_bytes(packed, "big") & mask == net_int:
                return True
            return reject("host_ip %s is not in %s", text, network)
        return check


class ServerGroupAffinityFilter(PreparedHostFilter):
    """``affinity`` groups: once the group has hosts, only those (service) hosts pass."""

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        group = spec_obj.instance_group
        if group is None or "affinity" not in group.policies or not group.hosts:
            return None
        hosts = frozenset(group.hosts)
        reject = self.reject

        def check(host_state):
            if host_state.host in hosts:
                return True
            return reject("server group %s (affinity) is on %s", group.name or group.uuid,
                          ", ".join(group.hosts))
        return check


class ServerGroupAntiAffinityFilter(PreparedHostFilter):
    """``anti-affinity`` groups: fewer than ``max_server_per_host`` members per host.

    A host already running the instance being scheduled passes (a move).
    """

    def checker(self, spec_obj: RequestSpec) -> HostCheck | None:
        group = spec_obj.instance_group
        if group is None or group.policy != "anti-affinity":
            return None
        members = frozenset(group.members)
        rules = group.rules or {}
        maximum = rules["max_server_per_host"] if "max_server_per_host" in rules else 1
        instance_uuid = spec_obj.instance_uuid
        reject = self.reject

        def check(host_state):
            instances = host_state.instances
            if instance_uuid in instances:
                return True
            on_host = members.intersection(instances)
            if len(on_host) < maximum:
                return True
            return reject("host already runs %d member(s) of server group %s "
                          "(anti-affinity, max_server_per_host %d)",
                          len(on_host), group.name or group.uuid, maximum)
        return check
