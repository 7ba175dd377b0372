"""Which reshapes each nova release's compute service performs at start.

The migration plans what the *target* release's nova-compute would do when
it first starts after a fast-forward upgrade, and nothing else: a reshape
that release does not perform would be undone or doubled by it.

=========================  =====================  ==============================
reshape                    first release          condition
=========================  =====================  ==============================
VGPU per physical GPU      Stein (nova 19)        GPUs described
PCPU for pinned guests     Train (nova 20)        ``cpu_dedicated_set`` set
Cyborg device providers    Ussuri (nova 21)       accelerators described
PCI devices in Placement   Zed (nova 26)          ``[pci] report_in_placement``
NUMA cells in Placement    no nova release        ``--numa-in-placement``
=========================  =====================  ==============================

:class:`DriverOptions` carries the target and the switches the operator
gives; the shims read it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from nova_reshape.nova.conf.compute import NovaConf


class Reshape(enum.Enum):
    """A kind of reshape; the value is the shim's ``kind``."""

    VGPU = "vgpu"
    PCPU = "pcpu"
    NUMA = "numa"
    PCI = "pci"
    CYBORG = "cyborg"


@dataclasses.dataclass(frozen=True)
class Release:
    """One nova release: its major version, series and name."""

    number: int
    series: str
    name: str

    def __str__(self) -> str:
        return f"nova {self.number} ({self.series} {self.name})"


RELEASES: tuple[Release, ...] = (
    Release(19, "stein", "Stein"),
    Release(20, "train", "Train"),
    Release(21, "ussuri", "Ussuri"),
    Release(22, "victoria", "Victoria"),
    Release(23, "wallaby", "Wallaby"),
    Release(24, "xena", "Xena"),
    Release(25, "yoga", "Yoga"),
    Release(26, "zed", "Zed"),
    Release(27, "2023.1", "Antelope"),
    Release(28, "2023.2", "Bobcat"),
    Release(29, "2024.1", "Caracal"),
    Release(30, "2024.2", "Dalmatian"),
    Release(31, "2025.1", "Epoxy"),
    Release(32, "2025.2", "Flamingo"),
    Release(33, "2026.1", "Gazpacho"),
    Release(34, "2026.2", "Hibiscus"),
)

#: The release the migration prepares for unless told otherwise.
DEFAULT_TARGET = RELEASES[-1]

#: First nova version whose compute performs each reshape (None: none does).
SINCE: dict[Reshape, int | None] = {
    Reshape.VGPU: 19,
    Reshape.PCPU: 20,
    Reshape.CYBORG: 21,
    Reshape.PCI: 26,
    Reshape.NUMA: None,
}


def find_release(text: str) -> Release:
    """A release by number (``34``, ``nova 34``), series (``2026.2``) or name.

    ValueError (naming the known ones) for anything else.
    """
    wanted = text.strip().lower().removeprefix("nova").strip()
    for release in RELEASES:
        if wanted in (str(release.number), release.series, release.name.lower()):
            return release
    known = ", ".join(f"{r.number}/{r.series}" for r in RELEASES)
    raise ValueError(f"unknown release {text!r}; known: {known}")


def performed(release: Release, numa_in_placement: bool = False) -> frozenset[Reshape]:
    """The reshapes ``release``'s compute performs (NUMA only when asked for)."""
    done = {kind for kind, since in SINCE.items()
            if since is not None and release.number >= since}
    if numa_in_placement:
        done.add(Reshape.NUMA)
    return frozenset(done)


@dataclasses.dataclass(frozen=True)
class DriverOptions:
    """What the operator chose for a run; the shims read it.

    ``numa_in_placement``: model NUMA cells as providers (no nova release
    does; for a driver that does). ``allow_vgpu_mismatch``: where a
    consumer's mediated devices do not add up to its VGPU allocation, move
    what is counted, as libvirt does, instead of refusing. ``nova_conf``:
    the target's nova.conf when given (``--nova-config``); ``node_confs``:
    nodename -> the nova.conf of a node whose host has its own
    (:mod:`nova_reshape.nova.conf.per_host`), read by :meth:`conf_for`.
    """

    target: Release = DEFAULT_TARGET
    numa_in_placement: bool = False
    allow_vgpu_mismatch: bool = False
    nova_conf: NovaConf | None = None
    node_confs: Mapping[str, NovaConf] = dataclasses.field(default_factory=dict)

    def conf_for(self, nodename: str) -> NovaConf | None:
        """The nova.conf of node ``nodename``: its host's own, else the common one."""
        return self.node_confs.get(nodename, self.nova_conf)

    @property
    def reshapes(self) -> frozenset[Reshape]:
        return performed(self.target, self.numa_in_placement)
