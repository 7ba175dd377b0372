"""nova's NUMA records: a host's cells (``NUMATopology``) and a guest's (``InstanceNUMATopology``).

Frozen records of what nova keeps in ``compute_nodes.numa_topology`` and
``instance_extra.numa_topology``, with the rules nova reads from them
(which CPUs back VCPU and PCPU, whether a guest is pinned). Parsing the
stored JSON, every version of it, is :mod:`nova_reshape.novadb.objects`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nova_reshape.nova.flavor import CpuPolicy


@dataclass(frozen=True)
class MemPages:
    """One ``NUMAPagesTopology``: pages of one size on a host cell."""

    size_kb: int
    total: int
    used: int = 0
    reserved: int = 0


@dataclass(frozen=True)
class HostNumaCell:
    """One host ``NUMACell``.

    ``cpuset`` and ``pcpuset`` are as stored. Since NUMACell 1.4 ``cpuset``
    holds the CPUs for shared guests and ``pcpuset`` those for pinned
    guests; a host without ``[compute] cpu_dedicated_set`` stores the same
    CPUs in both (nova's legacy pinning mode, where pinned guests still
    consume VCPU). Before 1.4 only ``cpuset`` exists. :attr:`shared` and
    :attr:`dedicated` give the split the inventory follows.
    """

    id: int
    cpuset: frozenset[int]
    memory_mb: int
    pcpuset: frozenset[int] = frozenset()
    pinned_cpus: frozenset[int] = frozenset()
    siblings: tuple[frozenset[int], ...] = ()
    mempages: tuple[MemPages, ...] = ()
    socket: int | None = None
    #: False for NUMACell before 1.4 (and pre-Liberty data): no pcpuset field.
    has_pcpuset: bool = True
    version: tuple[int, int] = (1, 5)
    #: vCPUs and MB the resource tracker last counted as used on the cell.
    cpu_usage: int = 0
    memory_usage: int = 0

    @property
    def shared(self) -> frozenset[int]:
        """CPUs that back VCPU: ``cpuset``."""
        return self.cpuset

    @property
    def dedicated(self) -> frozenset[int]:
        """CPUs that back PCPU: ``pcpuset`` minus CPUs also in ``cpuset`` (legacy mode)."""
        return self.pcpuset - self.cpuset

    @property
    def legacy_pinning(self) -> bool:
        """True when pinned guests draw on the shared CPUs (no separate dedicated set)."""
        return not self.has_pcpuset or bool(self.cpuset & self.pcpuset)


@dataclass(frozen=True)
class HostNumaTopology:
    cells: tuple[HostNumaCell, ...]
    #: True when the column held the pre-Liberty unversioned form.
    legacy_format: bool = False


@dataclass(frozen=True)
class InstanceNumaCell:
    """One ``InstanceNUMACell``: the guest cell and the host cell (``id``) it is on.

    ``cpuset`` holds the guest's shared vCPUs and ``pcpuset`` its pinned
    ones, whatever the stored version: a cell from before 1.5 with policy
    dedicated (or, before 1.3, with a pinning) had its pinned vCPUs in
    ``cpuset`` and is read as nova's own data migration rewrites it.
    """

    id: int
    cpuset: frozenset[int]
    pcpuset: frozenset[int]
    memory_mb: int
    pagesize: int | None = None
    cpu_policy: CpuPolicy | None = None
    cpu_thread_policy: str | None = None
    #: guest vCPU -> host CPU, for pinned cells.
    cpu_pinning: Mapping[int, int] = field(default_factory=dict)
    version: tuple[int, int] = (1, 6)

    @property
    def pinned(self) -> bool:
        """Dedicated policy, or a pinning recorded before policies were stored."""
        if self.cpu_policy is not None:
            return self.cpu_policy is CpuPolicy.DEDICATED
        return bool(self.cpu_pinning)


@dataclass(frozen=True)
class InstanceNumaTopology:
    cells: tuple[InstanceNumaCell, ...]
    emulator_threads_policy: str | None = None
    legacy_format: bool = False

    @property
    def pinned(self) -> bool:
        """Some cell of the guest is pinned with the dedicated policy."""
        return any(cell.pinned for cell in self.cells)
