"""Host filters and their loading (``available_filters`` / ``enabled_filters``).

``available_filters`` lists dotted paths, as in nova: the special
``nova.scheduler.filters.all_filters`` (or this package's ``all_filters``)
stands for every built-in filter; ``nova.scheduler.filters.<module>.<Class>``
names a built-in by class name; any other ``package.module.Class`` is
imported (a third-party ``BaseHostFilter`` subclass, or a callable returning
a list of them; base.py says which method each base asks for).
``enabled_filters`` then names classes among those.
"""

from __future__ import annotations

from collections.abc import Iterable

from nova_reshape.scheduler.errors import PluginNotFound
from nova_reshape.scheduler.filters.affinity import (
    DifferentHostFilter,
    SameHostFilter,
    ServerGroupAffinityFilter,
    ServerGroupAntiAffinityFilter,
    SimpleCIDRAffinityFilter,
)
from nova_reshape.scheduler.filters.aggregate import (
    AggregateMultiTenancyIsolation,
    AggregateTypeAffinityFilter,
)
from nova_reshape.scheduler.filters.base import (
    BaseHostFilter,
    PreparedHostFilter,
    Rejection,
    reject,
)
from nova_reshape.scheduler.filters.capabilities import (
    AggregateInstanceExtraSpecsFilter,
    ComputeCapabilitiesFilter,
)
from nova_reshape.scheduler.filters.core import (
    AllHostsFilter,
    AvailabilityZoneFilter,
    ComputeFilter,
    RetryFilter,
)
from nova_reshape.scheduler.filters.devices import (
    MetricsFilter,
    NUMATopologyFilter,
    PciPassthroughFilter,
)
from nova_reshape.scheduler.filters.image import (
    AggregateImagePropertiesIsolation,
    ImagePropertiesFilter,
    IsolatedHostsFilter,
)
from nova_reshape.scheduler.filters.json_filter import JsonFilter
from nova_reshape.scheduler.filters.resources import (
    AggregateCoreFilter,
    AggregateDiskFilter,
    AggregateIoOpsFilter,
    AggregateNumInstancesFilter,
    AggregateRamFilter,
    IoOpsFilter,
    NumInstancesFilter,
)
from nova_reshape.scheduler.plugins import PluginKind

__all__ = ["BaseHostFilter", "PreparedHostFilter", "Rejection", "reject", "all_filters",
           "load_filters"]

_BUILTIN: tuple[type[BaseHostFilter], ...] = (
    AllHostsFilter, ImagePropertiesFilter, AvailabilityZoneFilter, ComputeCapabilitiesFilter,
    AggregateInstanceExtraSpecsFilter, ComputeFilter, AggregateCoreFilter, AggregateRamFilter,
    AggregateDiskFilter, IsolatedHostsFilter, JsonFilter, NumInstancesFilter,
    AggregateNumInstancesFilter, IoOpsFilter, AggregateIoOpsFilter, PciPassthroughFilter,
    SimpleCIDRAffinityFilter, DifferentHostFilter, SameHostFilter, RetryFilter,
    AggregateTypeAffinityFilter, ServerGroupAntiAffinityFilter, ServerGroupAffinityFilter,
    AggregateMultiTenancyIsolation, AggregateImagePropertiesIsolation, MetricsFilter,
    NUMATopologyFilter,
)
BUILTIN_BY_NAME = {cls.__name__: cls for cls in _BUILTIN}
ALL_FILTERS_PATHS = frozenset({
    "nova.scheduler.filters.all_filters",
    "nova_reshape.scheduler.filters.all_filters",
})
FILTERS = PluginKind("filter", BaseHostFilter, _BUILTIN, ALL_FILTERS_PATHS,
                     "nova.scheduler.filters")


def all_filters() -> list[type[BaseHostFilter]]:
    """Every built-in filter class (what ``...filters.all_filters`` stands for)."""
    return list(_BUILTIN)


def available_filter_classes(paths: Iterable[str]) -> dict[str, type[BaseHostFilter]]:
    """Class name -> class for everything ``available_filters`` makes loadable."""
    classes: dict[str, type[BaseHostFilter]] = {}
    for path in paths:
        for cls in FILTERS.resolve(path):
            classes.setdefault(cls.__name__, cls)
    return classes


def load_filters(conf) -> list[BaseHostFilter]:
    """Configured filter instances in ``enabled_filters`` order.

    A name listed twice yields the same instance twice (nova runs it twice).
    """
    available = available_filter_classes(conf.filter_scheduler.available_filters)
    instances: dict[str, BaseHostFilter] = {}
    result = []
    for name in conf.filter_scheduler.enabled_filters:
        short = name.rpartition(".")[2]
        if short not in available:
            raise PluginNotFound(f"Filter {name} not found in available_filters")
        if short not in instances:
            instance = available[short]()
            instance.configure(conf)
            instances[short] = instance
        result.append(instances[short])
    return result
