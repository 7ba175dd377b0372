"""Host weighers and their loading (``weight_classes``).

``weight_classes`` entries are class names (``"RAMWeigher"``), ``"all"``,
nova's ``nova.scheduler.weights.all_weighers`` (or this package's
``all_weighers``), nova dotted paths of built-ins
(``nova.scheduler.weights.ram.RAMWeigher``) or third-party dotted paths of
``BaseHostWeigher`` subclasses (base.py: which method each base asks for).
"all" runs the built-ins in nova's module order (nova itself uses the
filesystem's listing order).
"""

from __future__ import annotations

from nova_reshape.scheduler.plugins import PluginKind
from nova_reshape.scheduler.weights.base import (
    BaseHostWeigher,
    BatchHostWeigher,
    HostAttributeWeigher,
    normalize,
)
from nova_reshape.scheduler.weights.other import (
    CrossCellWeigher,
    ImagePropertiesWeigher,
    MetricsWeigher,
    PCIWeigher,
    ServerGroupSoftAffinityWeigher,
    ServerGroupSoftAntiAffinityWeigher,
)
from nova_reshape.scheduler.weights.resources import (
    BuildFailureWeigher,
    CPUWeigher,
    DiskWeigher,
    HypervisorVersionWeigher,
    IoOpsWeigher,
    NumInstancesWeigher,
    RAMWeigher,
)

__all__ = ["BaseHostWeigher", "BatchHostWeigher", "HostAttributeWeigher", "normalize",
           "all_weighers", "load_weighers"]

# nova's module order: affinity, compute, cpu, cross_cell, disk,
# hypervisor_version, image_props, io_ops, metrics, num_instances, pci, ram.
_BUILTIN: tuple[type[BaseHostWeigher], ...] = (
    ServerGroupSoftAffinityWeigher, ServerGroupSoftAntiAffinityWeigher, BuildFailureWeigher,
    CPUWeigher, CrossCellWeigher, DiskWeigher, HypervisorVersionWeigher,
    ImagePropertiesWeigher, IoOpsWeigher, MetricsWeigher, NumInstancesWeigher, PCIWeigher,
    RAMWeigher,
)
BUILTIN_BY_NAME = {cls.__name__: cls for cls in _BUILTIN}
ALL_PATHS = frozenset({"all", "nova.scheduler.weights.all_weighers",
                       "nova_reshape.scheduler.weights.all_weighers"})
WEIGHERS = PluginKind("weigher", BaseHostWeigher, _BUILTIN, ALL_PATHS, "nova.scheduler.weights",
                      bare_names=True)


def all_weighers() -> list[type[BaseHostWeigher]]:
    """Every built-in weigher class, in nova's module order."""
    return list(_BUILTIN)


def load_weighers(conf) -> list[BaseHostWeigher]:
    """Configured weigher instances in ``weight_classes`` order."""
    result = []
    for entry in conf.filter_scheduler.weight_classes:
        for cls in WEIGHERS.resolve(entry):
            weigher = cls()
            weigher.configure(conf)
            result.append(weigher)
    return result
