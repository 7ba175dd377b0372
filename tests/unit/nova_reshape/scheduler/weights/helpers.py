"""Running weighers through the scheduler and reading their columns back."""

from __future__ import annotations

from nova_reshape.scheduler.result import result_to_dict
from tests.unit.nova_reshape.scheduler.helpers import host, schedule

VCPUS_FREE = [5, 5, 10, 10, 15, 20, 20, 15, 10, 5]


def weigh(hosts, weighers, request=None, aggregates=None, **options):
    config = {"filter_scheduler": dict({"enabled_filters": ["AllHostsFilter"],
                                        "weight_classes": weighers}, **options)}
    metrics = options.pop("metrics", None)
    if metrics is not None:
        config["filter_scheduler"].pop("metrics")
        config["metrics"] = metrics
    return result_to_dict(schedule(hosts, request, config, aggregates))


def column(out, weigher, key="normalized"):
    return {w["host"]: w["weighers"][weigher][key] for w in out["instances"][0]["weighed"]}


def weights(out):
    return {w["host"]: w["weight"] for w in out["instances"][0]["weighed"]}


def cpu_hosts():
    return [host(f"h{i}", vcpus=20, vcpus_used=20 - free) for i, free in enumerate(VCPUS_FREE)]
