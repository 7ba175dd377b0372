"""PCI device pools (nova's PciDeviceStats) and PCI requests from aliases.

A host's free PCI devices are grouped in pools: devices with the same
vendor/product/NUMA node/type/tags. A request (``count`` devices matching any
of its ``spec`` dicts) is satisfied when the matching pools hold at least
``count`` devices; they are then taken from those pools in order, so a later
request of the same instance sees fewer.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.scheduler.errors import ConfigError, ScenarioError

#: Spec keys that never take part in pool matching.
IGNORED_SPEC_KEYS = frozenset({"resource_class", "traits", "rp_uuids"})
NUMA_POLICIES = frozenset({"legacy", "required", "preferred", "socket"})


@dataclass
class PciRequest:
    """One InstancePCIRequest: ``count`` devices matching any dict of ``spec``."""

    count: int
    spec: list[dict[str, str]]
    alias_name: str | None = None
    numa_policy: str = "legacy"
    request_id: str | None = None


@dataclass
class PciDeviceStats:
    """A host's PCI pools, kept sorted by their number of keys (nova's order)."""

    pools: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pools.sort(key=len)

    def copy(self) -> PciDeviceStats:
        return PciDeviceStats(copy.deepcopy(self.pools))

    def free_count(self) -> int:
        return sum(pool["count"] for pool in self.pools)

    def support_requests(self, requests: Iterable[PciRequest],
                         numa: NumaPlacement | None = None) -> bool:
        """Can every request be met, one after the other, from a copy of the pools?"""
        trial = self.copy()
        try:
            trial.apply_requests(requests, numa)
        except PciDeviceRequestFailed:
            return False
        return True

    def apply_requests(self, requests: Iterable[PciRequest],
                       numa: NumaPlacement | None = None) -> None:
        """Take the requested devices from the pools (raises if one does not fit)."""
        for request in requests:
            pools = self._pools_for(request, numa)
            if sum(pool["count"] for pool in pools) < request.count:
                raise PciDeviceRequestFailed(
                    f"not enough devices for {_describe(request)}: need {request.count}, "
                    f"matching pools hold {sum(p['count'] for p in pools)}")
            wanted = request.count
            for pool in pools:
                taken = min(wanted, pool["count"])
                pool["count"] -= taken
                wanted -= taken
                if not wanted:
                    break
            self.pools = [pool for pool in self.pools if pool["count"] > 0]

    def _pools_for(self, request: PciRequest,
                   numa: NumaPlacement | None) -> list[dict[str, Any]]:
        specs = [{k: str(v).lower() for k, v in spec.items() if k not in IGNORED_SPEC_KEYS}
                 for spec in request.spec]
        pools = [pool for pool in self.pools if _pool_allowed(pool, specs)
                 and any(_spec_matches(pool, spec) for spec in specs)]
        if numa is None or request.numa_policy == "preferred" and not _numa_subset(
                pools, request, numa):
            return pools
        return _numa_subset(pools, request, numa)


class PciDeviceRequestFailed(Exception):
    """A PCI request cannot be met from the pools."""


@dataclass(frozen=True)
class NumaPlacement:
    """Host NUMA cells the instance landed on, for PCI NUMA affinity."""

    cell_ids: frozenset[int]
    sockets: frozenset[int] = frozenset()
    socket_of: Mapping[int, int] = field(default_factory=dict)


def _numa_subset(pools: list[dict[str, Any]], request: PciRequest,
                 numa: NumaPlacement) -> list[dict[str, Any]]:
    policy = request.numa_policy
    if policy == "socket":
        return [p for p in pools if numa.socket_of.get(p.get("numa_node")) in numa.sockets]
    if policy == "legacy":
        return [p for p in pools
                if p.get("numa_node") is None or p.get("numa_node") in numa.cell_ids]
    return [p for p in pools if p.get("numa_node") in numa.cell_ids]


def _pool_allowed(pool: Mapping[str, Any], specs: list[dict[str, str]]) -> bool:
    """PF, vDPA and remote-managed pools serve only specs that ask for them."""
    dev_type = str(pool.get("dev_type", "")).lower()
    if dev_type in ("type-pf", "vdpa") and not any(
            spec.get("dev_type") == dev_type for spec in specs):
        return False
    if str(pool.get("remote_managed", "false")).lower() == "true" and not any(
            spec.get("remote_managed") == "true" for spec in specs):
        return False
    return True


def _spec_matches(pool: Mapping[str, Any], spec: Mapping[str, str]) -> bool:
    for key, wanted in spec.items():
        if key not in pool:
            if key == "live_migratable" and wanted == "false":
                continue
            return False
        if str(pool[key]).lower() != wanted:
            return False
    return True


def _describe(request: PciRequest) -> str:
    return f"alias {request.alias_name}" if request.alias_name else f"spec {request.spec}"


def load_pools(raw: Any) -> PciDeviceStats:
    """Scenario ``pci_device_pools`` -> PciDeviceStats (tags are flattened into the pool)."""
    if raw is None:
        return PciDeviceStats()
    if not isinstance(raw, list):
        raise ScenarioError("pci_device_pools must be a list")
    pools = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            raise ScenarioError(f"invalid PCI pool {entry!r}")
        pool = {k: v for k, v in entry.items() if k != "tags"}
        tags = entry.get("tags") or {}
        if not isinstance(tags, Mapping):
            raise ScenarioError(f"invalid PCI pool tags {tags!r}")
        pool.update(tags)
        count = pool.get("count", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ScenarioError(f"PCI pool count must be an integer >= 0, got {count!r}")
        pool["count"] = count
        pools.append(pool)
    return PciDeviceStats(pools)


def parse_aliases(raw: Any) -> dict[str, dict[str, Any]]:
    """``[pci] alias`` entries (objects or JSON strings) grouped by name.

    Entries sharing a name add alternative specs, as nova allows.
    """
    if isinstance(raw, (str, Mapping)):
        raw = [raw]
    if not isinstance(raw, list):
        raise ConfigError("[pci] alias must be a list of alias objects or JSON strings")
    aliases: dict[str, dict[str, Any]] = {}
    for entry in raw:
        if isinstance(entry, str):
            try:
                entry = json.loads(entry)
            except ValueError as exc:
                raise ConfigError(f"invalid [pci] alias {entry!r}: {exc}") from exc
        if not isinstance(entry, Mapping) or not entry.get("name"):
            raise ConfigError(f"invalid [pci] alias {entry!r}: needs a name")
        policy = entry.get("numa_policy", "legacy")
        if policy not in NUMA_POLICIES:
            raise ConfigError(f"invalid [pci] alias numa_policy {policy!r}")
        spec = {k: str(v) for k, v in entry.items()
                if k not in ("name", "numa_policy", "device_type")}
        if "device_type" in entry:
            spec["dev_type"] = str(entry["device_type"])
        alias = aliases.setdefault(str(entry["name"]), {"numa_policy": policy, "specs": []})
        alias["specs"].append(spec)
    return aliases


def requests_from_flavor(extra_specs: Mapping[str, str],
                         aliases: Mapping[str, dict[str, Any]]) -> list[PciRequest]:
    """PCI requests from ``pci_passthrough:alias = "a1:2, a2"`` (count defaults to 1)."""
    value = extra_specs.get("pci_passthrough:alias")
    if not value:
        return []
    requests = []
    for item in str(value).split(","):
        name, _, count = item.strip().partition(":")
        alias = aliases.get(name.strip())
        if alias is None:
            raise ScenarioError(f"PCI alias {name.strip()} is not defined")
        try:
            number = int(count) if count else 1
        except ValueError as exc:
            raise ScenarioError(f"invalid PCI alias count in {item!r}") from exc
        policy = extra_specs.get("hw:pci_numa_affinity_policy", alias["numa_policy"])
        requests.append(PciRequest(count=number, spec=copy.deepcopy(alias["specs"]),
                                   alias_name=name.strip(), numa_policy=policy))
    return requests


def parse_requests(raw: Any) -> list[PciRequest]:
    """Scenario ``pci_requests`` -> PciRequest list."""
    if not isinstance(raw, list):
        raise ScenarioError("pci_requests must be a list")
    requests = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            raise ScenarioError(f"invalid PCI request {entry!r}")
        unknown = set(entry) - {"count", "spec", "alias_name", "numa_policy", "request_id"}
        if unknown:
            raise ScenarioError(f"unknown PCI request key(s): {', '.join(sorted(unknown))}")
        count = entry.get("count", 1)
        spec = entry.get("spec", [])
        # nova reads a null (or empty) policy as the default, legacy.
        policy = entry.get("numa_policy") or "legacy"
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ScenarioError(f"PCI request count must be an integer >= 1, got {count!r}")
        if not isinstance(spec, list) or not all(isinstance(s, Mapping) for s in spec):
            raise ScenarioError("PCI request spec must be a list of objects")
        if policy not in NUMA_POLICIES:
            raise ScenarioError(f"invalid PCI numa_policy {policy!r}")
        requests.append(PciRequest(count=count, spec=[dict(s) for s in spec],
                                   alias_name=entry.get("alias_name"), numa_policy=policy,
                                   request_id=entry.get("request_id")))
    return requests
