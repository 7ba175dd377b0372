"""A nova instance as the offline tools see it: its row and its ``instance_extra`` parsed.

:class:`InstanceRecord` is what :func:`nova_reshape.novadb.reader.read_cell`
returns per live instance; the rules nova applies to it (its extra specs,
whether it is pinned) live here with it.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass

from nova_reshape.nova.flavor import CpuPolicy, FlavorInfo
from nova_reshape.nova.numa import InstanceNumaTopology
from nova_reshape.nova.pci import PciRequest


@dataclass(frozen=True)
class InstanceRecord:
    """An ``instances`` row with its ``instance_extra`` columns parsed."""

    uuid: str
    host: str | None
    node: str | None
    vcpus: int | None = None
    memory_mb: int | None = None
    root_gb: int | None = None
    ephemeral_gb: int | None = None
    vm_state: str | None = None
    task_state: str | None = None
    project_id: str | None = None
    numa_topology: InstanceNumaTopology | None = None
    pci_requests: tuple[PciRequest, ...] = ()
    flavor: FlavorInfo | None = None
    user_id: str | None = None
    #: Empty for an instance booted from a volume (nova's fallback when no root
    #: block device mapping says so).
    image_ref: str | None = None
    #: Naive UTC as nova stores it; nova walks a cell's instances oldest first.
    created_at: datetime.datetime | None = None

    @property
    def extra_specs(self) -> Mapping[str, str]:
        return self.flavor.cur.extra_specs if self.flavor else {}

    @property
    def cpu_policy(self) -> CpuPolicy | None:
        """DEDICATED when the guest is pinned (its NUMA cells or hw:cpu_policy), else
        the flavor's policy (None when it sets none)."""
        if self.numa_topology is not None and self.numa_topology.pinned:
            return CpuPolicy.DEDICATED
        return self.flavor.cur.cpu_policy if self.flavor else None
