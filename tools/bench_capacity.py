#!/usr/bin/env python
"""Benchmark the whole capacity check (``nova-reshape-scheduler capacity``) at scale.

Seeds a cloud of N hosts straight into fresh databases (Placement's and one
nova cell's, same engine), then runs the command as an operator would,
``--placement-database URL --nova-database URL --flavors-file FILE
--nova-config FILE --assume-up --format json``, for F flavors, and prints JSON figures.

The cloud mixes what the check has to count differently:

* every host: 32 CPUs in two NUMA cells, 64-128 GB RAM, 1,000 GB disk;
  even hosts have a dedicated set (PCPU 16 in Placement, NUMA cells with
  ``pcpuset``), odd ones none (VCPU 32, cells of shared CPUs only);
* one host in four has two per-pGPU children (VGPU 4 each), one in four a
  flat VGPU 8 on its root; one in ten is disabled (trait and service);
* the F flavors cycle through plain (1-8 vCPUs), pinned
  (``hw:cpu_policy=dedicated``: the PCPU query, nova's VCPU fallback,
  NUMATopologyFilter, enabled by the nova.conf given), one VGPU and two VGPU from one provider.

    python tools/bench_capacity.py [--hosts 1000 10000] [--flavors 50]
        [--engine sqlite|postgresql] [--server URL] [--profile N] [--answers DIR]

``--engine postgresql`` creates throwaway databases on the local server
(``--server`` to name another) and drops them at the end. ``--profile N``
prints the N most expensive functions (cProfile) of the first size's run.
``--answers DIR`` keeps each run's output (the JSON document) as
``DIR/capacity-ENGINE-HOSTSxFLAVORS.json``, to compare two versions' answers
byte for byte. The database server's share, PostgreSQL on this machine:
``backend_cpu_seconds``, the CPU seconds of the backends serving the
check's two databases (sampled, :class:`BackendCpu`), and
``server_cpu_seconds``, of every ``postgres`` process during the check
(other sessions on the same server count too).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pathlib
import pstats
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import bench_migrate  # noqa: E402

from nova_reshape.scheduler import cmd  # noqa: E402
from placement_wsgi.db import migration  # noqa: E402
from placement_wsgi.db.database import Database  # noqa: E402
from tests.fixtures import nova_db  # noqa: E402
from tests.functional.nova_reshape.scheduler.seeding import (  # noqa: E402
    Provider,
    compute_node,
    seed,
)

#: The scheduler of a cloud running pinned guests: NUMATopologyFilter bounds them.
NOVA_CONF = ("[filter_scheduler]\nenabled_filters = ComputeFilter,ComputeCapabilitiesFilter,"
             "ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter,"
             "NUMATopologyFilter,PciPassthroughFilter\n")


def host_uuid(index: int) -> str:
    return str(uuid.UUID(int=index + 1))


def providers(count: int) -> list[Provider]:
    """The Placement side of the cloud (see the module)."""
    result = []
    for i in range(count):
        name = f"cn{i:05d}"
        inventories: dict[str, Any] = {}
        if i % 2 == 0:
            inventories["PCPU"] = 16
        if i % 4 == 1:
            inventories["VGPU"] = 8
        children = ([Provider(f"{name}-gpu{k}", inventories={"VGPU": 4}) for k in (0, 1)]
                    if i % 4 == 0 else [])
        result.append(compute_node(
            name, vcpu=16 if i % 2 == 0 else 32, memory_mb=65536 + (i * 7919) % 65536,
            disk_gb=1000, cpu_ratio=4.0, uuid=host_uuid(i), inventories=inventories,
            children=children, traits=["COMPUTE_STATUS_DISABLED"] if i % 10 == 9 else []))
    return result


def _numa(pinned: bool, memory: int) -> str:
    cells = []
    for cell in (0, 1):
        cpus = list(range(16 * cell, 16 * cell + 16))
        shared, dedicated = (cpus[:8], cpus[8:]) if pinned else (cpus, None)
        cells.append(nova_db.host_cell(cell, shared, dedicated, memory // 2))
    return json.dumps(nova_db.envelope("NUMATopology", "1.2", {"cells": cells}))


def nova_cell(url: str, hosts: list[Provider]) -> None:
    """The cell: per host a compute node (its NUMA cells) and an up nova-compute."""
    services, nodes = [], []
    for i, provider in enumerate(hosts):
        memory = provider.inventories["MEMORY_MB"]
        services.append({"id": i + 1, "host": provider.name, "binary": "nova-compute",
                         "topic": "compute", "disabled": i % 10 == 9, "forced_down": False,
                         "deleted": 0, "version": 66, "created_at": nova_db.NOW,
                         "last_seen_up": nova_db.NOW})
        nodes.append(nova_db.compute_row(
            i + 1, provider.name, provider.name, provider.uuid, "QEMU",
            _numa(i % 2 == 0, memory), vcpus=32, memory_mb=memory, memory_mb_used=0,
            free_ram_mb=memory, local_gb=1000, ram_allocation_ratio=1.0))
    nova_db.populate(url, {nova_db.services: services, nova_db.compute_nodes: nodes})


def flavors(count: int) -> list[dict[str, Any]]:
    """``count`` flavors cycling plain, pinned, VGPU and two-VGPU (see the module)."""
    result = []
    for i in range(count):
        kind, size = i % 4, 1 << (i // 4) % 4
        entry: dict[str, Any] = {"name": f"f{i:03d}", "vcpus": size,
                                 "memory_mb": 1024 * size, "root_gb": 10}
        if kind == 1:
            entry["extra_specs"] = {"hw:cpu_policy": "dedicated"}
        elif kind in (2, 3):
            entry["extra_specs"] = {"resources:VGPU": str(kind - 1)}
        result.append(entry)
    return result


@contextlib.contextmanager
def databases(engine: str, server: str | None, directory: str) -> Iterator[list[str]]:
    """Two empty databases: Placement's and the cell's."""
    if engine == "sqlite":
        yield [f"sqlite:///{directory}/{name}.sqlite" for name in ("placement", "cell")]
        return
    with contextlib.ExitStack() as stack:
        base = server or bench_migrate.SERVERS[engine]
        yield [stack.enter_context(bench_migrate.throwaway_database(base)) for _ in range(2)]


def _cpu_ticks(pid: str) -> tuple[str, list[str]] | None:
    """(command line, stat fields after the comm) of a local process, None if gone."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    comm, _, rest = stat.partition(") ")
    if comm.rpartition("(")[2] != "postgres":
        return None
    return cmdline.replace(b"\0", b" ").decode(errors="replace"), rest.split()


def server_cpu_seconds() -> float:
    """CPU seconds used so far by every local ``postgres`` process (the server, its
    live backends, and through the server's children's times the backends that
    ended): the server's share of a run is the difference, of ALL its sessions
    (other users of the server included). 0 where /proc is not."""
    total = 0
    for path in pathlib.Path("/proc").glob("[0-9]*"):
        found = _cpu_ticks(path.name)
        if found:
            # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the comm
            total += sum(int(value) for value in found[1][11:15])
    return total / os.sysconf("SC_CLK_TCK")


class BackendCpu:
    """CPU seconds of the PostgreSQL backends serving the check's own databases
    (and their parallel workers), sampled every ``every`` seconds while it runs:
    the server's share of this check alone (a backend's last fraction of a
    sample before it ends is missed)."""

    def __init__(self, names: list[str], every: float = 0.2) -> None:
        self.names = [f" {name} " for name in names]
        self.every = every
        self.ticks: dict[str, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            mine: set[str] = set()
            for path in pathlib.Path("/proc").glob("[0-9]*"):
                found = _cpu_ticks(path.name)
                if found is None:
                    continue
                cmdline, fields = found
                leader = cmdline.partition("parallel worker for PID ")[2].strip()
                if any(name in f"{cmdline} " for name in self.names) or leader in mine:
                    mine.add(path.name)
                    self.ticks[path.name] = int(fields[11]) + int(fields[12])
            if self.done.wait(self.every):
                return

    def __enter__(self) -> BackendCpu:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.ticks.values()) / os.sysconf("SC_CLK_TCK")


def run_check(argv: list[str], profile: int, databases: list[str]
              ) -> tuple[int, float, float, dict[str, float], str]:
    """The command's exit status, wall and CPU seconds, the database server's CPU
    seconds meanwhile (``server``: :func:`server_cpu_seconds`; ``backends``:
    :class:`BackendCpu` of ``databases``), and its output (the JSON document)."""
    out = io.StringIO()
    profiler = cProfile.Profile() if profile else None
    server = server_cpu_seconds()
    start, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), BackendCpu(databases) as backends:
        if profiler:
            profiler.enable()
        code = cmd.main(["capacity", *argv])
        if profiler:
            profiler.disable()
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    shares = {"server": server_cpu_seconds() - server, "backends": backends.seconds}
    if profiler:
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
    return code, wall, used, shares, out.getvalue()


def bench(args: argparse.Namespace, count: int, directory: str) -> dict[str, Any]:
    with databases(args.engine, args.server, directory) as (placement, cell):
        start = time.perf_counter()
        database = Database(placement)
        migration.upgrade(database)
        database.dispose()
        hosts = providers(count)
        seed(placement, hosts)
        nova_cell(cell, hosts)
        if args.engine != "sqlite":
            for url in (placement, cell):
                bench_migrate.analyze(url)
        seeded = time.perf_counter() - start
        path = os.path.join(directory, f"flavors-{count}.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"flavors": flavors(args.flavors)}, handle)
        conf = os.path.join(directory, "nova.conf")
        with open(conf, "w", encoding="utf-8") as handle:
            handle.write(NOVA_CONF)
        load = os.getloadavg()[0]
        code, wall, cpu, shares, output = run_check(
            ["--placement-database", placement, "--nova-database", cell,
             "--flavors-file", path, "--nova-config", conf, "--assume-up", "--format", "json"],
            args.profile, [url.rpartition("/")[2] for url in (placement, cell)])
    if args.answers:
        name = f"capacity-{args.engine}-{count}x{args.flavors}.json"
        with open(os.path.join(args.answers, name), "w", encoding="utf-8") as handle:
            handle.write(output)
    tables = json.loads(output).get("flavors", []) if code == 0 else []
    return {"engine": args.engine, "hosts": count, "flavors": args.flavors,
            "seed_seconds": round(seeded, 1), "load_average": round(load, 1),
            "check_exit": code, "check_seconds": round(wall, 2),
            "check_cpu_seconds": round(cpu, 2),
            "server_cpu_seconds": (round(shares["server"], 2) if args.engine != "sqlite"
                                   else None),
            "backend_cpu_seconds": (round(shares["backends"], 2) if args.engine != "sqlite"
                                    else None),
            "load_average_after": round(os.getloadavg()[0], 1),
            "valid_host_rows": sum(h["valid"] for t in tables for h in t["hosts"]),
            "total_fits": sum(t["total"] for t in tables)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1000])
    parser.add_argument("--flavors", type=int, default=50)
    parser.add_argument("--engine", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--server", help="database server URL (no database part)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N most expensive functions of the first run")
    parser.add_argument("--answers", metavar="DIR",
                        help="keep each run's JSON document in DIR")
    args = parser.parse_args(argv)
    reports = []
    with tempfile.TemporaryDirectory(prefix="bench-capacity-") as directory:
        for count in args.hosts:
            reports.append(bench(args, count, directory))
            args.profile = 0
    json.dump({"runs": reports}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0 if all(report["check_exit"] == 0 for report in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
