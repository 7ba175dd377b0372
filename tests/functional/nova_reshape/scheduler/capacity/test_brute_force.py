"""The "how many more fit" count against an exhaustive placement, on small random clouds.

Each seeded cloud holds hosts drawn at random: VCPU, MEMORY_MB, DISK_GB,
sometimes PCPU, VGPU on the root or on one or two per-pGPU children, one or
two NUMA cells with a few dedicated CPUs each. Each flavor is drawn too:
1-2 vCPUs, pinned or not, 0, 1 or 2 VGPU. NUMATopologyFilter is on.

The exhaustive count is written here from the rules alone, not from the
scheduler: an instance takes its vCPUs as PCPU (pinned, when the host has
PCPU) or VCPU (unpinned, or nova's VCPU fallback of a pinned flavor), its
RAM and disk from the root, its VGPU amount whole from ONE provider holding
VGPU, and, pinned, that many free dedicated CPUs of ONE NUMA cell; every
assignment of every instance is tried, and the most instances that fit is
the answer. The capacity check's count must equal it on every host.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

import pytest

from nova_reshape.nova.flavor import Flavor
from nova_reshape.scheduler.capacity.core import CapacityCheck
from nova_reshape.scheduler.config import SchedulerConfig
from nova_reshape.scheduler.live.placement import read_database, read_view
from nova_reshape.scheduler.sources import candidate_host_states
from tests.functional.nova_reshape.scheduler.seeding import Provider, compute_node, seed

FILTERS = ["ComputeFilter", "ImagePropertiesFilter", "NUMATopologyFilter"]
#: The counts' shortcuts (claims in a row, NUMA slots) and nova's loop itself:
#: NumInstancesFilter reads a counter every claim changes, so with it every
#: count is the loop's (its limit is never reached here).
CONFS = {"shortcuts": SchedulerConfig({"filter_scheduler": {"enabled_filters": FILTERS}}),
         "loop": SchedulerConfig({"filter_scheduler": {
             "enabled_filters": [*FILTERS, "NumInstancesFilter"],
             "max_instances_per_host": 1000}})}
#: Plenty of NUMA memory: the cells bound pinned guests by their CPUs only.
CELL_MEMORY = 1 << 20
DISK_GB = 10


@dataclass
class Host:
    name: str
    vcpu: int
    memory_mb: int
    disk_gb: int
    pcpu: int
    vgpu_root: int
    vgpu_children: list[int]
    #: Per NUMA cell, its dedicated CPUs (ids unique on the host).
    cells: list[list[int]] = field(default_factory=list)

    def provider(self) -> Provider:
        inventories = {"PCPU": self.pcpu} if self.pcpu else {}
        if self.vgpu_root:
            inventories["VGPU"] = self.vgpu_root
        children = [Provider(f"{self.name}-gpu{index}", inventories={"VGPU": total})
                    for index, total in enumerate(self.vgpu_children)]
        return compute_node(self.name, vcpu=self.vcpu, memory_mb=self.memory_mb,
                            disk_gb=self.disk_gb, inventories=inventories, children=children)

    def numa(self) -> dict:
        shared = iter(range(100, 200))
        return {"cells": [{"id": index, "cpuset": [next(shared), next(shared)],
                           "pcpuset": cpus, "memory": CELL_MEMORY}
                          for index, cpus in enumerate(self.cells)]}


def random_host(rng: random.Random, index: int) -> Host:
    gpus = rng.choice(["none", "root", "children"])
    cpus = iter(range(64))
    return Host(f"h{index:03d}", vcpu=rng.choice([2, 3, 4, 6]),
                memory_mb=rng.choice([1024, 2048, 3072, 4096]),
                disk_gb=rng.choice([20, 30, 50, 80]), pcpu=rng.choice([0, 0, 2, 3, 4]),
                vgpu_root=rng.randint(1, 4) if gpus == "root" else 0,
                vgpu_children=[rng.randint(1, 3) for _ in range(rng.randint(1, 2))]
                if gpus == "children" else [],
                cells=[[next(cpus) for _ in range(rng.randint(0, 3))]
                       for _ in range(rng.randint(1, 2))])


def random_flavor(rng: random.Random, index: int) -> Flavor:
    specs = {}
    if rng.random() < 0.4:
        specs["hw:cpu_policy"] = "dedicated"
    vgpus = rng.choice([0, 0, 1, 2])
    if vgpus:
        specs["resources:VGPU"] = str(vgpus)
    return Flavor(f"f{index}", rng.choice([1, 2]), rng.choice([256, 512, 1024]), DISK_GB,
                  extra_specs=specs)


def exhaustive(host: Host, flavor: Flavor) -> int:
    """The most instances of ``flavor`` the host takes, over every assignment."""
    pinned = flavor.extra_specs.get("hw:cpu_policy") == "dedicated"
    vgpus = int(flavor.extra_specs.get("resources:VGPU", 0))
    cpu_sources = (["PCPU"] if pinned and host.pcpu else []) + ["VCPU"]

    @functools.cache
    def most(vcpu: int, pcpu: int, ram: int, disk: int, gpus: tuple[int, ...],
             cells: tuple[int, ...]) -> int:
        if ram < flavor.memory_mb or disk < flavor.root_gb:
            return 0
        best = 0
        gpu_choices = [i for i, free in enumerate(gpus) if free >= vgpus] if vgpus else [None]
        cell_choices = ([i for i, free in enumerate(cells) if free >= flavor.vcpus]
                        if pinned else [None])
        for source in cpu_sources:
            free = pcpu if source == "PCPU" else vcpu
            if free < flavor.vcpus:
                continue
            for gpu in gpu_choices:
                for cell in cell_choices:
                    left_gpus = list(gpus)
                    if gpu is not None:
                        left_gpus[gpu] -= vgpus
                    left_cells = list(cells)
                    if cell is not None:
                        left_cells[cell] -= flavor.vcpus
                    best = max(best, 1 + most(
                        vcpu - flavor.vcpus * (source == "VCPU"),
                        pcpu - flavor.vcpus * (source == "PCPU"), ram - flavor.memory_mb,
                        disk - flavor.root_gb, tuple(left_gpus), tuple(left_cells)))
        return best

    gpus = tuple(([host.vgpu_root] if host.vgpu_root else []) + host.vgpu_children)
    return most(host.vcpu, host.pcpu, host.memory_mb, host.disk_gb, gpus,
                tuple(len(cell) for cell in host.cells))


class NumaHosts:
    """HostStates from Placement, with each host's NUMA cells (a HostState source)."""

    def __init__(self, hosts: list[Host]) -> None:
        self.numa = {host.name: host.numa() for host in hosts}

    def aggregates(self) -> list:
        return []

    def skipped(self) -> list[str]:
        return []

    def host_states(self, body, roots, conf):
        nodes = {uuid: {"host": name, "numa_topology": self.numa[name]}
                 for uuid, name in roots.items() if name in self.numa}
        return candidate_host_states(body, nodes, conf)


@pytest.mark.parametrize("way", sorted(CONFS))
@pytest.mark.parametrize("cloud", [1, 2, 3])
def test_the_count_equals_an_exhaustive_placement(db_url, cloud, way):
    rng = random.Random(cloud)
    hosts = [random_host(rng, index) for index in range(24)]
    flavors = [random_flavor(rng, index) for index in range(8)]
    seed(db_url, [host.provider() for host in hosts])
    check = CapacityCheck(CONFS[way], NumaHosts(hosts))
    report = read_database(db_url, lambda connection: check.run(
        flavors, functools.partial(read_view, connection)))
    by_name = {host.name: host for host in hosts}
    counted = {(table.name, row.name): row.fits for table in report for row in table.hosts}
    expected = {(flavor.name, host.name): exhaustive(by_name[host.name], flavor)
                for flavor in flavors for host in hosts}
    assert counted == expected
    # the draw reaches what the test is about: pinned and multi-VGPU counts above zero
    assert any(expected[(f.name, h)] for f in flavors for h in by_name
               if f.extra_specs.get("hw:cpu_policy") == "dedicated")
    assert any(expected[(f.name, h)] for f in flavors for h in by_name
               if f.extra_specs.get("resources:VGPU") == "2")
