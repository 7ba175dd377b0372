"""Loading ``scheduler-scenario/1`` documents (the input of ``explain``).

Every level rejects unknown keys so that typos surface as a ScenarioError
instead of a silently ignored setting. ``build_host_state`` turns one
``hosts[]`` entry into a HostState and is reused by sources.py, so the
scenario vocabulary is also how other sources describe compute nodes.
"""

from __future__ import annotations

import json
import time
import uuid as uuid_mod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nova_reshape.nova.aggregate import Aggregate
from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler import image as image_mod
from nova_reshape.scheduler import numa as numa_mod
from nova_reshape.scheduler import pci as pci_mod
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.errors import ScenarioError
from nova_reshape.scheduler.host_state import HostState, InstanceInfo, Service
from nova_reshape.scheduler.metrics import load_metrics
from nova_reshape.scheduler.request_spec import (
    Destination,
    ImageMeta,
    InstanceGroup,
    RequestSpec,
    Retry,
    cell_uuid,
)

FORMAT = "scheduler-scenario/1"
TOP_KEYS = {"format", "description", "config", "aggregates", "hosts", "request", "expect"}
HOST_KEYS = {
    "host", "nodename", "uuid", "cell", "availability_zone", "host_ip", "enabled",
    "disabled_reason", "up", "last_heartbeat_age_s", "forced_down", "vcpus", "vcpus_used",
    "memory_mb", "memory_mb_used", "free_ram_mb", "local_gb", "local_gb_used", "free_disk_gb",
    "disk_available_least", "cpu_allocation_ratio", "ram_allocation_ratio",
    "disk_allocation_ratio", "num_instances", "num_io_ops", "failed_builds",
    "hypervisor_type", "hypervisor_version", "hypervisor_hostname", "cpu_info",
    "supported_instances", "stats", "metrics", "pci_device_pools", "numa_topology",
    "instances",
}
REQUEST_KEYS = {
    "flavor", "image", "project_id", "user_id", "availability_zone", "num_instances",
    "instance_uuids", "scheduler_hints", "instance_group", "requested_destination",
    "ignore_hosts", "force_hosts", "force_nodes", "retry", "pci_requests", "rebuild",
    "is_bfv", "subset_choices",
}
FLAVOR_KEYS = {"name", "vcpus", "memory_mb", "root_gb", "ephemeral_gb", "swap", "extra_specs"}
NAMESPACE = uuid_mod.UUID("0b8f3a52-7f55-4d0e-9a57-8a4f5f7c2d10")


@dataclass
class Scenario:
    """A loaded scenario: everything FilterScheduler.schedule needs."""

    conf: SchedulerConfig
    hosts: list[HostState]
    spec: RequestSpec
    instance_uuids: list[str]
    subset_choices: list[int]
    now: float
    description: str = ""
    expect: dict[str, Any] = field(default_factory=dict)
    aggregates: list[Aggregate] = field(default_factory=list)


# -- small validators -------------------------------------------------------

def _object(value: Any, where: str, keys: set[str] | None = None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(f"{where} must be an object")
    if keys is not None:
        unknown = sorted(set(value) - keys)
        if unknown:
            raise ScenarioError(f"unknown key(s) in {where}: {', '.join(unknown)}")
    return value


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{where} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(f"{where} must be >= {minimum}, got {value}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError(f"{where} must be a number, got {value!r}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(f"{where} must be true or false, got {value!r}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ScenarioError(f"{where} must be a string, got {value!r}")
    return value


def _str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where} must be a list of strings")
    return list(value)


def _stringify(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ScenarioError(f"{where} must be a string or number, got {value!r}")


# -- hosts -------------------------------------------------------------------

def build_host_state(entry: Mapping[str, Any], *, now: float, service_down_time: int = 60,
                     where: str = "host") -> HostState:
    """One ``hosts[]`` entry -> HostState (aggregates are attached separately)."""
    entry = _object(entry, where, HOST_KEYS)
    if "host" not in entry:
        raise ScenarioError(f"{where}: 'host' is required")
    name = _str(entry["host"], f"{where}.host")
    node = _str(entry.get("nodename", name), f"{where}.nodename")
    where = f"host {name}" + ("" if node == name else f"/{node}")
    get = entry.get

    def integer(key: str, default: int = 0, minimum: int | None = None) -> int:
        return _int(get(key, default), f"{where}.{key}", minimum)

    instances = {info.uuid: info
                 for info in (_instance(item, where) for item in get("instances", []) or [])}
    memory_mb = integer("memory_mb", minimum=0)
    local_gb = integer("local_gb", minimum=0)
    free_disk_gb = _free_disk_gb(entry, where, local_gb - integer("local_gb_used"))
    stats = _stats(get("stats", {}) or {}, where)
    num_instances = integer("num_instances", len(instances), 0)
    num_io_ops = integer("num_io_ops", 0, 0)
    failed_builds = integer("failed_builds", 0, 0)
    for key, count in (("num_instances", num_instances), ("io_workload", num_io_ops),
                       ("failed_builds", failed_builds)):
        stats.setdefault(key, str(count))

    heartbeat = _heartbeat(entry, where, now, service_down_time)
    cpu_info = _cpu_info(get("cpu_info"))
    supported = _supported_instances(get("supported_instances", []) or [], where)
    cell = _str(get("cell", "cell1"), f"{where}.cell")
    version = integer("hypervisor_version", 0, 0)
    state = HostState(
        name, node,
        uuid=_host_uuid(entry, where, name, node),
        cell_uuid=cell_uuid(cell),
        host_ip=_str(get("host_ip", "127.0.0.1"), f"{where}.host_ip"),
        total_usable_ram_mb=memory_mb,
        free_ram_mb=_int(get("free_ram_mb", memory_mb - integer("memory_mb_used")),
                         f"{where}.free_ram_mb"),
        free_disk_mb=int(free_disk_gb * 1024),
        total_usable_disk_gb=local_gb,
        disk_mb_used=integer("local_gb_used") * 1024,
        vcpus_total=integer("vcpus", minimum=0), vcpus_used=integer("vcpus_used"),
        **_allocation_ratios(entry, where),
        numa_topology=numa_mod.load_host_topology(get("numa_topology")),
        pci_stats=pci_mod.load_pools(get("pci_device_pools")),
        num_instances=num_instances, num_io_ops=num_io_ops, failed_builds=failed_builds,
        hypervisor_type=_str(get("hypervisor_type", "QEMU"), f"{where}.hypervisor_type"),
        hypervisor_version=version,
        hypervisor_hostname=_str(get("hypervisor_hostname", node),
                                 f"{where}.hypervisor_hostname"),
        cpu_info=cpu_info, supported_instances=supported,
        metrics=load_metrics(get("metrics")), stats=stats, instances=instances,
        service=_service(entry, where, heartbeat),
    )
    state.cell_name = cell
    return state


def _stats(raw: Any, where: str) -> dict[str, str]:
    """The host's ``stats`` mapping, every value as the string nova keeps."""
    return {str(k): _stringify(v, f"{where}.stats.{k}")
            for k, v in _object(raw, f"{where}.stats").items()}


def _cpu_info(value: Any) -> str | None:
    """``cpu_info`` as nova stores it: a JSON string (a mapping given inline is encoded)."""
    if value is not None and not isinstance(value, str):
        return json.dumps(value)
    return value


def _host_uuid(entry: Mapping[str, Any], where: str, name: str, node: str) -> str:
    """The node's given uuid, else one derived from host and node name (stable per run)."""
    if entry.get("uuid"):
        return _str(entry.get("uuid"), f"{where}.uuid")
    return str(uuid_mod.uuid5(NAMESPACE, f"{name}/{node}"))


def _service(entry: Mapping[str, Any], where: str, heartbeat: float) -> Service:
    """The host's compute service: enabled or not, forced down or not, last heard at heartbeat."""
    return Service(disabled=not _bool(entry.get("enabled", True), f"{where}.enabled"),
                   disabled_reason=entry.get("disabled_reason"),
                   forced_down=_bool(entry.get("forced_down", False), f"{where}.forced_down"),
                   last_seen_up=heartbeat, created_at=heartbeat)


def _free_disk_gb(entry: Mapping[str, Any], where: str, default: int) -> float:
    """``free_disk_gb`` (else ``default``), capped by ``disk_available_least`` if given."""
    free_disk_gb = _number(entry.get("free_disk_gb", default), f"{where}.free_disk_gb")
    least = entry.get("disk_available_least")
    if least is None:
        return free_disk_gb
    return min(free_disk_gb, _number(least, f"{where}.disk_available_least"))


def _heartbeat(entry: Mapping[str, Any], where: str, now: float,
               service_down_time: int) -> float:
    """When the host's service last reported: its given age, now if up, else long ago."""
    if "last_heartbeat_age_s" in entry:
        return now - _number(entry["last_heartbeat_age_s"], f"{where}.last_heartbeat_age_s")
    if _bool(entry.get("up", True), f"{where}.up"):
        return now
    return now - (service_down_time + 3600)


def _supported_instances(items: Any, where: str) -> list[list[str]]:
    """``[arch, hv_type, vm_mode]`` triples, each part in its canonical spelling."""
    supported = []
    for item in items:
        if not isinstance(item, list) or len(item) != 3:
            raise ScenarioError(f"{where}.supported_instances entries are [arch, hv_type, vm_mode]")
        supported.append([image_mod.canonical_arch(item[0]), image_mod.canonical_hv_type(item[1]),
                          image_mod.canonical_vm_mode(item[2])])
    return supported


def _allocation_ratios(entry: Mapping[str, Any], where: str) -> dict[str, float]:
    """The three allocation ratios (nova's defaults where absent), as HostState keywords."""
    return {key: _number(entry.get(key, default), f"{where}.{key}")
            for key, default in (("cpu_allocation_ratio", 4.0), ("ram_allocation_ratio", 1.0),
                                 ("disk_allocation_ratio", 1.0))}


def _instance(item: Any, where: str) -> InstanceInfo:
    if isinstance(item, str):
        return InstanceInfo(uuid=item)
    item = _object(item, f"{where}.instances[]", {"uuid", "image_id", "image_properties"})
    if "uuid" not in item:
        raise ScenarioError(f"{where}.instances[]: 'uuid' is required")
    props = _object(item.get("image_properties", {}) or {}, f"{where}.instances[].image_properties")
    return InstanceInfo(uuid=_str(item["uuid"], f"{where}.instances[].uuid"),
                        image_id=item.get("image_id"),
                        image_properties=image_mod.image_properties(props))


def _aggregates(raw: Any, hosts: list[Mapping[str, Any]]) -> list[Aggregate]:
    if not isinstance(raw, list):
        raise ScenarioError("aggregates must be a list")
    result = []
    for index, entry in enumerate(raw):
        where = f"aggregates[{index}]"
        entry = _object(entry, where, {"name", "hosts", "metadata", "uuid"})
        metadata = {str(k): _stringify(v, f"{where}.metadata.{k}")
                    for k, v in _object(entry.get("metadata", {}) or {},
                                        f"{where}.metadata").items()}
        result.append(Aggregate(name=_str(entry.get("name", f"agg{index}"), f"{where}.name"),
                                hosts=frozenset(_str_list(entry.get("hosts", []),
                                                          f"{where}.hosts")),
                                metadata=metadata, uuid=entry.get("uuid")))
    zones: dict[str, set[str]] = {}
    for host in hosts:
        zone = host.get("availability_zone")
        if zone is not None:
            zones.setdefault(_str(zone, "host availability_zone"), set()).add(host["host"])
    for zone, members in zones.items():
        result.append(Aggregate(name=f"az-{zone}", hosts=frozenset(members),
                                metadata={"availability_zone": zone}))
    return result


def attach_aggregates(hosts: Sequence[HostState], aggregates: Sequence[Aggregate]) -> None:
    """Give every HostState the aggregates naming its service host."""
    by_host: dict[str, list[Aggregate]] = {}
    for aggregate in aggregates:
        for name in aggregate.hosts:
            by_host.setdefault(name, []).append(aggregate)
    for state in hosts:
        state.set_aggregates(by_host.get(state.host, []))


# -- request -------------------------------------------------------------------

def _flavor(raw: Any) -> Flavor:
    raw = _object(raw if raw is not None else {}, "request.flavor", FLAVOR_KEYS)
    extra = _object(raw.get("extra_specs", {}) or {}, "request.flavor.extra_specs")
    return Flavor(
        name=_str(raw.get("name", "flavor"), "request.flavor.name"),
        vcpus=_int(raw.get("vcpus", 1), "request.flavor.vcpus", 0),
        memory_mb=_int(raw.get("memory_mb", 512), "request.flavor.memory_mb", 0),
        root_gb=_int(raw.get("root_gb", 0), "request.flavor.root_gb", 0),
        ephemeral_gb=_int(raw.get("ephemeral_gb", 0), "request.flavor.ephemeral_gb", 0),
        swap=_int(raw.get("swap", 0), "request.flavor.swap", 0),
        extra_specs={str(k): _stringify(v, f"extra spec {k}") for k, v in extra.items()})


def _hints(raw: Any) -> dict[str, list[Any]]:
    hints: dict[str, list[Any]] = {}
    for name, value in _object(raw or {}, "request.scheduler_hints").items():
        if name == "query" and value is not None and not isinstance(value, str):
            value = json.dumps(value)
        hints[str(name)] = list(value) if isinstance(value, list) else [value]
    return hints


def _group(raw: Any, hosts: list[HostState]) -> InstanceGroup | None:
    if raw is None:
        return None
    raw = _object(raw, "request.instance_group",
                  {"name", "uuid", "policy", "policies", "rules", "members", "hosts"})
    policy = raw.get("policy")
    if policy is None and raw.get("policies"):
        policy = _str_list(raw["policies"], "request.instance_group.policies")[0]
    if policy is not None and policy not in (
            "affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity"):
        raise ScenarioError(f"invalid server group policy {policy!r}")
    rules = dict(_object(raw.get("rules", {}) or {}, "request.instance_group.rules"))
    if "max_server_per_host" in rules:
        try:
            rules["max_server_per_host"] = int(rules["max_server_per_host"])
        except (TypeError, ValueError) as exc:
            raise ScenarioError("max_server_per_host must be an integer") from exc
        if rules["max_server_per_host"] < 1:
            raise ScenarioError("max_server_per_host must be >= 1")
    members = _str_list(raw.get("members", []), "request.instance_group.members")
    if "hosts" in raw:
        group_hosts = _str_list(raw["hosts"], "request.instance_group.hosts")
    else:
        member_set = set(members)
        group_hosts = []
        for state in hosts:
            if state.host not in group_hosts and member_set.intersection(state.instances):
                group_hosts.append(state.host)
    return InstanceGroup(name=raw.get("name"), uuid=raw.get("uuid"), policy=policy,
                         rules=rules, members=members, hosts=group_hosts)


def _destination(raw: Any) -> Destination | None:
    if raw is None:
        return None
    raw = _object(raw, "request.requested_destination",
                  {"host", "node", "cell", "allow_cross_cell_move"})
    return Destination(host=raw.get("host"), node=raw.get("node"), cell=raw.get("cell"),
                       allow_cross_cell_move=_bool(raw.get("allow_cross_cell_move", False),
                                                   "allow_cross_cell_move"))


def _retry(raw: Any) -> Retry | None:
    if raw is None:
        return None
    raw = _object(raw, "request.retry", {"num_attempts", "hosts"})
    pairs = raw.get("hosts", [])
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in pairs):
        raise ScenarioError("request.retry.hosts must be a list of [host, node] pairs")
    return Retry(num_attempts=_int(raw.get("num_attempts", 1), "retry.num_attempts", 0),
                 hosts=[list(p) for p in pairs])


def build_request(raw: Any, conf: SchedulerConfig, hosts: list[HostState]
                  ) -> tuple[RequestSpec, list[str], list[int]]:
    """``request`` -> (RequestSpec, instance uuids, subset choices)."""
    raw = _object(raw if raw is not None else {}, "request", REQUEST_KEYS)
    flavor = _flavor(raw.get("flavor"))
    image_raw = _object(raw.get("image", {}) or {}, "request.image",
                        {"id", "properties", "disk_format"})
    disk_format = image_raw.get("disk_format")
    image = ImageMeta(id=image_raw.get("id"), properties=image_mod.image_properties(
        _object(image_raw.get("properties", {}) or {}, "request.image.properties")),
        disk_format=None if disk_format is None else _str(disk_format,
                                                          "request.image.disk_format"))
    count = _int(raw.get("num_instances", 1), "request.num_instances", 1)
    uuids = raw.get("instance_uuids")
    if uuids is None:
        uuids = [f"00000000-0000-4000-8000-{i + 1:012x}" for i in range(count)]
    uuids = _str_list(uuids, "request.instance_uuids")
    if len(uuids) != count:
        raise ScenarioError(f"request.instance_uuids has {len(uuids)} entries, "
                            f"num_instances is {count}")
    choices = raw.get("subset_choices", [0] * count)
    if not isinstance(choices, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in choices):
        raise ScenarioError("request.subset_choices must be a list of integers >= 0")
    hints = _hints(raw.get("scheduler_hints"))
    if _bool(raw.get("rebuild", False), "request.rebuild"):
        hints["_nova_check_type"] = ["rebuild"]
    if raw.get("pci_requests") is not None:
        pci_requests = pci_mod.parse_requests(raw["pci_requests"])
    else:
        pci_requests = pci_mod.requests_from_flavor(flavor.extra_specs, conf.pci_aliases)
    numa_topology = numa_mod.numa_get_constraints(
        flavor.vcpus, flavor.memory_mb, flavor.extra_specs, image.properties)
    optional_lists = {}
    for key in ("ignore_hosts", "force_hosts", "force_nodes"):
        value = raw.get(key)
        optional_lists[key] = None if value is None else _str_list(value, f"request.{key}")
    zone = raw.get("availability_zone")
    spec = RequestSpec(
        flavor=flavor, image=image,
        project_id=_str(raw.get("project_id", "project"), "request.project_id"),
        user_id=_str(raw.get("user_id", "user"), "request.user_id"),
        availability_zone=None if zone is None else _str(zone, "request.availability_zone"),
        num_instances=count, scheduler_hints=hints,
        instance_group=_group(raw.get("instance_group"), hosts),
        requested_destination=_destination(raw.get("requested_destination")),
        retry=_retry(raw.get("retry")), pci_requests=pci_requests,
        numa_topology=numa_topology, is_bfv=_bool(raw.get("is_bfv", False), "request.is_bfv"),
        **optional_lists)
    return spec, uuids, choices


def load_scenario(document: Any, *, now: float | None = None) -> Scenario:
    """Validate a parsed scenario document and build its objects."""
    document = _object(document, "scenario", TOP_KEYS)
    if document.get("format", FORMAT) != FORMAT:
        raise ScenarioError(f"unsupported format {document.get('format')!r}; expected {FORMAT}")
    now = time.time() if now is None else now
    conf = SchedulerConfig(document.get("config") or {})
    raw_hosts = document.get("hosts", [])
    if not isinstance(raw_hosts, list):
        raise ScenarioError("hosts must be a list")
    hosts = []
    seen = set()
    for index, entry in enumerate(raw_hosts):
        state = build_host_state(entry, now=now,
                                 service_down_time=conf.DEFAULT.service_down_time,
                                 where=f"hosts[{index}]")
        if (state.host, state.nodename) in seen:
            raise ScenarioError(f"duplicate host/nodename {state.label}")
        seen.add((state.host, state.nodename))
        hosts.append(state)
    aggregates = _aggregates(document.get("aggregates", []), raw_hosts)
    attach_aggregates(hosts, aggregates)
    spec, uuids, choices = build_request(document.get("request"), conf, hosts)
    expect = document.get("expect") or {}
    return Scenario(conf=conf, hosts=hosts, spec=spec, instance_uuids=uuids,
                    subset_choices=choices, now=now,
                    description=str(document.get("description", "")),
                    expect=dict(expect) if isinstance(expect, Mapping) else {},
                    aggregates=list(aggregates))
