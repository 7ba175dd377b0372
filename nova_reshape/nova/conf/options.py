"""Every nova.conf option nova_reshape reads: nova's group, name, type and default.

Options are declared once, per group (``None`` is ``[DEFAULT]``), in three
tables by reader: :func:`compute_opts` (the migration and the host-file
generator), :func:`scheduler_opts` (the filter scheduler) and
:func:`database_opts` (the connections of nova's API, cell and placement
databases). Each call builds new ``Opt`` objects, so no two ``ConfigOpts``
share state. :func:`register_opts` puts all of them on a ``ConfigOpts``; any
other option of a nova.conf is ignored, as any oslo.config service ignores
options it does not know.
"""

from __future__ import annotations

from oslo_config import cfg

from nova_reshape.nova.hypervisor import ARCHITECTURES

#: nova's default ``[filter_scheduler] enabled_filters``.
DEFAULT_ENABLED_FILTERS = [
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
]

OptTable = dict[str | None, list[cfg.Opt]]


def compute_opts() -> OptTable:
    """What a compute host's nova.conf says about its resources."""
    return {
        "pci": [
            cfg.BoolOpt("report_in_placement", default=False),
            cfg.MultiStrOpt("device_spec", default=[], deprecated_opts=[
                cfg.DeprecatedOpt("passthrough_whitelist", group="pci")]),
        ],
        "compute": [
            cfg.StrOpt("cpu_shared_set"),
            cfg.StrOpt("cpu_dedicated_set"),
        ],
        "devices": [
            cfg.ListOpt("enabled_mdev_types", default=[], deprecated_opts=[
                cfg.DeprecatedOpt("enabled_vgpu_types", group="devices")]),
        ],
        None: [
            cfg.StrOpt("vcpu_pin_set"),
            cfg.FloatOpt("cpu_allocation_ratio", min=0.0),
            cfg.FloatOpt("ram_allocation_ratio", min=0.0),
            cfg.FloatOpt("disk_allocation_ratio", min=0.0),
            cfg.FloatOpt("initial_cpu_allocation_ratio", default=4.0, min=0.0),
            cfg.FloatOpt("initial_ram_allocation_ratio", default=1.0, min=0.0),
            cfg.FloatOpt("initial_disk_allocation_ratio", default=1.0, min=0.0),
            cfg.IntOpt("reserved_host_memory_mb", default=512, min=0),
            cfg.IntOpt("reserved_host_cpus", default=0, min=0),
            cfg.IntOpt("reserved_host_disk_mb", default=0, min=0),
        ],
    }


def _multiplier(name: str, default: float, minimum: float | None = None) -> cfg.Opt:
    return cfg.FloatOpt(name, default=default, min=minimum)


def _filter_scheduler_opts() -> list[cfg.Opt]:
    return [
        cfg.ListOpt("available_filters", default=["nova.scheduler.filters.all_filters"]),
        cfg.ListOpt("enabled_filters", default=list(DEFAULT_ENABLED_FILTERS)),
        cfg.ListOpt("weight_classes", default=["nova.scheduler.weights.all_weighers"]),
        cfg.IntOpt("host_subset_size", default=1, min=1),
        cfg.IntOpt("max_instances_per_host", default=50, min=1),
        cfg.IntOpt("max_io_ops_per_host", default=8, min=0),
        cfg.BoolOpt("track_instance_changes", default=True),
        cfg.ListOpt("isolated_images", default=[]),
        cfg.ListOpt("isolated_hosts", default=[]),
        cfg.BoolOpt("restrict_isolated_hosts_to_isolated_images", default=True),
        cfg.StrOpt("image_properties_default_architecture", choices=sorted(ARCHITECTURES)),
        cfg.StrOpt("aggregate_image_properties_isolation_namespace"),
        cfg.StrOpt("aggregate_image_properties_isolation_separator", default="."),
        _multiplier("ram_weight_multiplier", 1.0),
        _multiplier("cpu_weight_multiplier", 1.0),
        _multiplier("disk_weight_multiplier", 1.0),
        _multiplier("io_ops_weight_multiplier", -1.0),
        _multiplier("pci_weight_multiplier", 1.0, 0.0),
        _multiplier("soft_affinity_weight_multiplier", 1.0, 0.0),
        _multiplier("soft_anti_affinity_weight_multiplier", 1.0, 0.0),
        _multiplier("build_failure_weight_multiplier", 1000000.0),
        _multiplier("cross_cell_move_weight_multiplier", 1000000.0),
        _multiplier("hypervisor_version_weight_multiplier", 1.0),
        _multiplier("num_instances_weight_multiplier", 0.0),
        _multiplier("image_props_weight_multiplier", 0.0),
        cfg.ListOpt("image_props_weight_setting", default=[]),
        cfg.BoolOpt("shuffle_best_same_weighed_hosts", default=False),
        cfg.BoolOpt("pci_in_placement", default=False),
        # nova-reshape extension: "nova" keeps nova's per-weigher minval
        # (0 for RAM/CPU/Disk/IoOps); "minmax" scales every weigher min-max.
        cfg.StrOpt("weight_normalization", default="nova", choices=["nova", "minmax"]),
    ]


def scheduler_opts() -> OptTable:
    """What the filter scheduler reads (the manager and pre-filters included)."""
    return {
        "filter_scheduler": _filter_scheduler_opts(),
        "metrics": [
            cfg.FloatOpt("weight_multiplier", default=1.0),
            cfg.ListOpt("weight_setting", default=[]),
            cfg.BoolOpt("required", default=True),
            cfg.FloatOpt("weight_of_unavailable", default=-10000.0),
        ],
        None: [
            cfg.StrOpt("default_availability_zone", default="nova"),
            cfg.IntOpt("service_down_time", default=60),
        ],
        "pci": [cfg.MultiStrOpt("alias", default=[])],
        "compute": [cfg.BoolOpt("packing_host_numa_cells_allocation_strategy",
                                default=False)],
        "scheduler": [
            cfg.IntOpt("max_attempts", default=3, min=1),
            cfg.IntOpt("max_placement_results", default=1000, min=1),
            *(cfg.BoolOpt(name, default=False) for name in (
                "limit_tenants_to_placement_aggregate",
                "placement_aggregate_required_for_tenants",
                "query_placement_for_image_type_support",
                "enable_isolated_aggregate_filtering", "image_metadata_prefilter",
                "query_placement_for_routed_network_aggregates")),
        ],
        "workarounds": [cfg.BoolOpt("disable_fallback_pcpu_query", default=False)],
    }


def database_opts() -> OptTable:
    """The connection URLs of nova's API database, a cell's database and placement's."""
    return {group: [cfg.StrOpt("connection", secret=True)]
            for group in ("api_database", "database", "placement_database")}


def register_opts(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    """Register every table's options on ``conf`` (returned for chaining)."""
    for table in (compute_opts(), scheduler_opts(), database_opts()):
        for group, options in table.items():
            conf.register_opts(options, group=group)
    return conf
