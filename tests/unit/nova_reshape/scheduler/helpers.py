"""Builders shared by the scheduler tests (scenario vocabulary, in memory)."""

from __future__ import annotations

from typing import Any

from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.filters import load_filters
from nova_reshape.scheduler.pipeline import FilterScheduler
from nova_reshape.scheduler.scenario import Scenario, load_scenario

NOW = 1_700_000_000.0


def host(name: str, **fields: Any) -> dict[str, Any]:
    """A scenario host entry with roomy defaults."""
    entry = {"host": name, "vcpus": 16, "cpu_allocation_ratio": 1.0, "memory_mb": 16384,
             "local_gb": 100}
    entry.update(fields)
    return entry


def scenario(hosts: list[dict[str, Any]], request: dict[str, Any] | None = None,
             config: dict[str, Any] | None = None,
             aggregates: list[dict[str, Any]] | None = None) -> Scenario:
    document: dict[str, Any] = {"hosts": hosts, "request": request or {}}
    if config is not None:
        document["config"] = config
    if aggregates is not None:
        document["aggregates"] = aggregates
    return load_scenario(document, now=NOW)


def run_filter(name: str, hosts: list[dict[str, Any]], request: dict[str, Any] | None = None,
               config: dict[str, Any] | None = None,
               aggregates: list[dict[str, Any]] | None = None,
               ) -> tuple[list[str], dict[str, str]]:
    """Run one filter over the hosts: (labels kept, {label: reason} dropped)."""
    fs = dict(config.get("filter_scheduler", {})) if config else {}
    fs["enabled_filters"] = [name]
    conf_dict = dict(config or {})
    conf_dict["filter_scheduler"] = fs
    loaded = scenario(hosts, request, conf_dict, aggregates)
    (host_filter,) = load_filters(loaded.conf)
    if hasattr(type(host_filter), "now"):
        host_filter.now = NOW
    loaded.spec.instance_uuid = loaded.instance_uuids[0]
    passed, rejected = host_filter.filter_all(loaded.hosts, loaded.spec)
    return [h.label for h in passed], rejected


def passes(name: str, hosts: list[dict[str, Any]], **kwargs: Any) -> list[str]:
    return run_filter(name, hosts, **kwargs)[0]


def schedule(hosts: list[dict[str, Any]], request: dict[str, Any] | None = None,
             config: dict[str, Any] | None = None,
             aggregates: list[dict[str, Any]] | None = None):
    loaded = scenario(hosts, request, config, aggregates)
    scheduler = FilterScheduler(loaded.conf, now=loaded.now)
    return scheduler.schedule(loaded.hosts, loaded.spec, loaded.instance_uuids,
                              subset_choices=loaded.subset_choices)


def conf(**sections: Any) -> SchedulerConfig:
    return SchedulerConfig(sections)
