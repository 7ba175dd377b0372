"""Scheduler configuration: nova's option names, types and defaults.

The configuration is laid out like ``nova.conf`` (section -> option -> value)
and validated with oslo.config's own types, so a value nova would refuse at
startup (a negative ``pci_weight_multiplier``, ``host_subset_size = 0`` ...)
is refused here with a ``ConfigError``. Sections fully modelled here reject
unknown option names so that typos do not silently fall back to defaults;
other sections (nova has hundreds of options) are accepted and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from oslo_config import types

from nova_reshape.scheduler import image as image_mod
from nova_reshape.scheduler import pci as pci_mod
from nova_reshape.scheduler.errors import ConfigError

DEFAULT_ENABLED_FILTERS = [
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]

_LIST = types.List()
_STR = types.String()
_BOOL = types.Boolean()
_FLOAT = types.Float()
_NONNEG_FLOAT = types.Float(min=0.0)

#: section -> option -> (oslo type, default). ``None`` defaults are nullable.
OPTIONS: dict[str, dict[str, tuple[Any, Any]]] = {
    "filter_scheduler": {
        "available_filters": (_LIST, ["nova.scheduler.filters.all_filters"]),
        "enabled_filters": (_LIST, list(DEFAULT_ENABLED_FILTERS)),
        "weight_classes": (_LIST, ["nova.scheduler.weights.all_weighers"]),
        "host_subset_size": (types.Integer(min=1), 1),
        "max_instances_per_host": (types.Integer(min=1), 50),
        "max_io_ops_per_host": (types.Integer(min=0), 8),
        "track_instance_changes": (_BOOL, True),
        "isolated_images": (_LIST, []),
        "isolated_hosts": (_LIST, []),
        "restrict_isolated_hosts_to_isolated_images": (_BOOL, True),
        "image_properties_default_architecture": (
            types.String(choices=sorted(image_mod.ARCHITECTURES)), None),
        "aggregate_image_properties_isolation_namespace": (_STR, None),
        "aggregate_image_properties_isolation_separator": (_STR, "."),
        "ram_weight_multiplier": (_FLOAT, 1.0),
        "cpu_weight_multiplier": (_FLOAT, 1.0),
        "disk_weight_multiplier": (_FLOAT, 1.0),
        "io_ops_weight_multiplier": (_FLOAT, -1.0),
        "pci_weight_multiplier": (_NONNEG_FLOAT, 1.0),
        "soft_affinity_weight_multiplier": (_NONNEG_FLOAT, 1.0),
        "soft_anti_affinity_weight_multiplier": (_NONNEG_FLOAT, 1.0),
        "build_failure_weight_multiplier": (_FLOAT, 1000000.0),
        "cross_cell_move_weight_multiplier": (_FLOAT, 1000000.0),
        "hypervisor_version_weight_multiplier": (_FLOAT, 1.0),
        "num_instances_weight_multiplier": (_FLOAT, 0.0),
        "image_props_weight_multiplier": (_FLOAT, 0.0),
        "image_props_weight_setting": (_LIST, []),
        "shuffle_best_same_weighed_hosts": (_BOOL, False),
        "pci_in_placement": (_BOOL, False),
        # nova-reshape extension: "nova" keeps nova's per-weigher minval
        # (0 for RAM/CPU/Disk/IoOps); "minmax" scales every weigher min-max.
        "weight_normalization": (types.String(choices=["nova", "minmax"]), "nova"),
    },
    "metrics": {
        "weight_multiplier": (_FLOAT, 1.0),
        "weight_setting": (_LIST, []),
        "required": (_BOOL, True),
        "weight_of_unavailable": (_FLOAT, -10000.0),
    },
    "DEFAULT": {
        "default_availability_zone": (_STR, "nova"),
        "service_down_time": (types.Integer(), 60),
    },
    "pci": {
        "alias": (None, []),
    },
    "compute": {
        "packing_host_numa_cells_allocation_strategy": (_BOOL, False),
    },
    # Read by the manager and the request pre-filters, not by filters.
    "scheduler": {
        "max_attempts": (types.Integer(min=1), 3),
        "max_placement_results": (types.Integer(min=1), 1000),
        "limit_tenants_to_placement_aggregate": (_BOOL, False),
        "placement_aggregate_required_for_tenants": (_BOOL, False),
        "query_placement_for_image_type_support": (_BOOL, False),
        "enable_isolated_aggregate_filtering": (_BOOL, False),
        "image_metadata_prefilter": (_BOOL, False),
        "query_placement_for_routed_network_aggregates": (_BOOL, False),
    },
    "workarounds": {
        "disable_fallback_pcpu_query": (_BOOL, False),
    },
}

#: Sections whose unknown option names are rejected.
STRICT_SECTIONS = frozenset({"filter_scheduler", "metrics"})


class Configured:
    """What the scheduler configures once, before any request: filters and weighers."""

    def __init__(self) -> None:
        self.conf: SchedulerConfig | None = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def configure(self, conf: SchedulerConfig) -> None:
        """Receive the scheduler configuration once, before any request."""
        self.conf = conf


class SchedulerConfig:
    """Validated options, read as ``conf.filter_scheduler.host_subset_size``.

    Also carries the pre-parsed forms that nova computes from list options
    (``metrics_weight_setting``, ``image_props_weight_setting``) so that no
    filter or weigher parses them per host.
    """

    def __init__(self, sections: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        sections = sections or {}
        if not isinstance(sections, Mapping):
            raise ConfigError("config must be an object of sections")
        for name, options in sections.items():
            if not isinstance(options, Mapping):
                raise ConfigError(f"config section [{name}] must be an object")
            if name in STRICT_SECTIONS:
                unknown = sorted(set(options) - set(OPTIONS[name]))
                if unknown:
                    raise ConfigError(
                        f"unknown option(s) in [{name}]: {', '.join(unknown)}")
        for section, options in OPTIONS.items():
            given = sections.get(section, {})
            values = {}
            for option, (otype, default) in options.items():
                if option in given and given[option] is not None:
                    values[option] = _convert(section, option, otype, given[option])
                else:
                    values[option] = _copy(default)
            setattr(self, section, SimpleNamespace(**values))
        self.metrics_weight_setting = parse_weight_setting(self.metrics.weight_setting)
        self.image_props_weight_setting = dict(
            parse_weight_setting(self.filter_scheduler.image_props_weight_setting))
        self.pci_aliases = pci_mod.parse_aliases(self.pci.alias)

    filter_scheduler: SimpleNamespace
    metrics: SimpleNamespace
    DEFAULT: SimpleNamespace
    pci: SimpleNamespace
    compute: SimpleNamespace
    scheduler: SimpleNamespace
    workarounds: SimpleNamespace


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _convert(section: str, option: str, otype: Any, value: Any) -> Any:
    if otype is None:
        return value
    if isinstance(otype, types.List) and isinstance(value, str):
        value = _LIST(value)
    try:
        return otype(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid value for [{section}] {option}: {value!r}: {exc}") from exc


def parse_weight_setting(entries: list[str]) -> list[tuple[str, float]]:
    """Parse ``name=ratio`` entries the way nova does.

    Entries without exactly one ``=`` or whose ratio is not a float are
    dropped (nova logs a warning and ignores them); order is kept.
    """
    parsed = []
    for entry in entries:
        parts = str(entry).split("=")
        if len(parts) != 2:
            continue
        name, ratio = parts[0].strip(), parts[1].strip()
        try:
            parsed.append((name, float(ratio)))
        except ValueError:
            continue
    return parsed
